package upstream

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tradenet/gateway/internal/jsonscan"
)

// skipStringByBytes is skipString as a plain byte loop: a backslash
// escapes the byte after it. The reference of FuzzSkipString.
func skipStringByBytes(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// FuzzSkipString: skipString ends every string where the byte loop does,
// on any bytes; on valid JSON, skipValue ends where the value ends.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"a\\"b"`, `"\\\\\"x"`, `"\\\\\\"`, `"unterminated\"`, `""`, `"\u0022"`,
		`{"a":["x\"]",{"b":"\\"}],"c":1}`, `["\\\\", "\"", 12.5e3, true, null]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && b[0] == '"' {
			gotEnd, gotOK := skipString(b, 0)
			wantEnd, wantOK := skipStringByBytes(b, 0)
			if gotEnd != wantEnd || gotOK != wantOK {
				t.Fatalf("skipString(%q) = %d, %v; the byte loop %d, %v", b, gotEnd, gotOK, wantEnd, wantOK)
			}
		}
		if json.Valid(b) {
			v := bytes.TrimSpace(b)
			i := jsonscan.SkipSpace(b, 0)
			end, ok := skipValue(b, i)
			if !ok || end != i+len(v) {
				t.Fatalf("skipValue(%q) = %d, %v; the value ends at %d", b, end, ok, i+len(v))
			}
		}
	})
}
