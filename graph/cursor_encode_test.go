package graph

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/tradenet/gateway/upstream"
)

// referenceCursor is a cursor as encoding/json writes its payload: what
// the lists' own encoders must reproduce byte for byte, so that cursors
// already issued (and the golden files) stay valid.
func referenceCursor(t *testing.T, list cursorList, payload any) string {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(string(cursorVersion) + ":" + string(list) + ":" + string(body)))
}

func TestCursorEncodersMatchEncodingJSON(t *testing.T) {
	strs := []string{
		"", "e63a4d13", "eyJpZCI6IjAwMDEifQ==", "a+b/c=", `quote"back\slash`, "<html>&amp;",
		"tab\there", "\x00\x1f\x7f", "ünïcödé", "\u2028\u2029", "invalid \xff utf-8",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		strs = append(strs, string(b))
	}
	lists := []cursorList{listAssets, listDelegations, listFundingPayments, listTransactions}
	for i, s := range strs {
		c := dataNodeCursor{C: upstream.Cursor(s)}
		for _, list := range lists {
			// Version 2 (packed) round-trips, and a version 1 cursor
			// issued by earlier gateways still reads the same.
			// (JSON cannot carry invalid UTF-8, so v1 only for valid text.)
			cursors := []string{c.encode(list)}
			if utf8.ValidString(s) {
				cursors = append(cursors, referenceCursor(t, list, c))
			}
			for _, cursor := range cursors {
				got, err := decodeDataNodeCursor("after", cursor, list)
				if s == "" {
					if err == nil {
						t.Fatalf("an empty data-node cursor decoded")
					}
					continue
				}
				if err != nil || got != c.C {
					t.Fatalf("dataNodeCursor %q for %s: decoded %q, %v", s, list, got, err)
				}
			}
		}
		f := fundingCursor{K: fundingKey{T: rng.Int64() - math.MaxInt64/2, M: s, S: rng.Uint64(), P: strs[(i+1)%len(strs)]}, H: i%2 == 0, D: rng.IntN(10000)}
		if got, want := encodeCursor(listFundingPayments, f), f.encode(); got != want {
			t.Fatalf("encodeCursor(fundingCursor) differs from its encode")
		}
		// Version 2 round trip; version 1 (JSON, as encoding/json writes
		// it: what earlier gateways issued) still read.
		cursors := []string{f.encode()}
		if utf8.ValidString(f.K.M) && utf8.ValidString(f.K.P) { // JSON replaces invalid UTF-8
			cursors = append(cursors, referenceCursor(t, listFundingPayments, f))
		}
		for _, cursor := range cursors {
			back, err := decodeFundingCursor("after", cursor)
			if err != nil || back != f {
				t.Fatalf("fundingCursor %+v from %s: %+v, %v", f, cursor, back, err)
			}
		}
	}
	for _, c := range []txCursor{{}, {B: 34514203, I: 2}, {B: math.MaxUint64, I: math.MaxUint32}, {B: rng.Uint64(), I: rng.Uint32()}} {
		if got, want := c.encode(), referenceCursor(t, listTransactions, c); got != want {
			t.Fatalf("txCursor %+v:\n got %s\nwant %s", c, got, want)
		}
		var back txCursor
		if err := decodeCursor("after", c.encode(), listTransactions, &back); err != nil || back != c {
			t.Fatalf("txCursor %+v round trip: %+v, %v", c, back, err)
		}
	}
}

// TestCursorEncodingAllocations: a cursor costs one allocation, its
// string (a page of 1000 rows builds 1000 of them).
func TestCursorEncodingAllocations(t *testing.T) {
	long := upstream.Cursor(base64.StdEncoding.EncodeToString(make([]byte, 200)))
	for name, fn := range map[string]func(){
		"transactions": func() { _ = txCursor{B: 34514203, I: 2}.encode() },
		"data node":    func() { _ = dataNodeCursor{C: long}.encode(listDelegations) },
		"funding": func() {
			_ = fundingCursor{K: fundingKey{T: 1710446400123456000, M: "e63a4d13e63a4d13e63a4d13e63a4d13e63a4d13e63a4d13e63a4d13e63a4d13", S: 12, P: "3b6c"}, H: true, D: 7}.encode()
		},
	} {
		if n := testing.AllocsPerRun(100, fn); n > 1 {
			t.Errorf("%s cursor: %.0f allocations, want 1", name, n)
		}
	}
}

func TestPackedDataNodeCursorsAreShorter(t *testing.T) {
	up := upstream.Cursor(base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"2024-03-14T12:00:00.123456Z","partyId":"` +
		"a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1" + `","nodeId":"` +
		"b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2" + `","epochId":12}`)))
	c := dataNodeCursor{C: up}
	v2, v1 := c.encode(listDelegations), referenceCursor(t, listDelegations, c)
	if len(v2)*4 > len(v1)*3 {
		t.Fatalf("packed cursor %d bytes, JSON-wrapped %d: want at least a quarter shorter", len(v2), len(v1))
	}
}
