package upstream

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

// plainWriter is an io.Writer without spare capacity to offer.
type plainWriter struct{ strings.Builder }

func (w *plainWriter) Write(p []byte) (int, error) { return w.Builder.Write(p) }

// TestScalarsWriteWithoutAllocating: gqlgen writes a response into a
// bytes.Buffer; a scalar or enum value is appended into its spare
// capacity, costing no allocation (a response holds thousands of them).
// Any other writer gets the same bytes.
func TestScalarsWriteWithoutAllocating(t *testing.T) {
	ctx := context.Background()
	for _, m := range []gqlMarshaler{
		Int64(math.MinInt64), Uint64(math.MaxUint64), Int32(-7),
		UnixNanos(1710446400123456789), UnixSeconds(1710446400),
		Time{time.Date(2024, 3, 14, 12, 0, 2, 0, time.UTC)},
		SideBuy, TimeInForceGTC, AssetStatusEnabled,
	} {
		var plain plainWriter
		if err := m.MarshalGQLContext(ctx, &plain); err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		var buf bytes.Buffer
		buf.Grow(64)
		if n := testing.AllocsPerRun(100, func() {
			buf.Reset()
			_ = m.MarshalGQLContext(ctx, &buf)
		}); n != 0 {
			t.Errorf("%T into a bytes.Buffer: %.0f allocations, want 0", m, n)
		}
		if buf.String() != plain.String() {
			t.Errorf("%T: %q into a bytes.Buffer, %q into another writer", m, buf.String(), plain.String())
		}
		var out bytes.Buffer
		bw := bufio.NewWriterSize(&out, 16) // smaller than some values: they spill
		if err := m.MarshalGQLContext(ctx, bw); err != nil || bw.Flush() != nil || out.String() != plain.String() {
			t.Errorf("%T through a small bufio.Writer: %q, %v; want %q", m, out.String(), err, plain.String())
		}
	}
}
