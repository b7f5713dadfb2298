package upstream

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzCompactMatchesEncodingJSON: whenever appendCompact accepts an input,
// json.Compact accepts it too and writes the same bytes; compactJSON's
// result and error are always json.Compact's.
func FuzzCompactMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, ` { "a" : [ 1 , -2.5e+10 , true , false , null , "x\"\\\/\b\f\n\r\t\u00e9" ] } `,
		`{"nested":{"deep":[[[{"k":"v"}]]]}}`, "\"\xff invalid utf-8\"", `"\u12"`, `"\x"`, "\"ctl\x01\"",
		`01`, `-`, `1.`, `1e`, `.5`, `+1`, `tru`, `nul`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `1 2`,
		`{"a":1}}`, `"`, ``, ` `, strings.Repeat("[", 600) + strings.Repeat("]", 600), "\t\n\r 12 \n",
		`{"a":"<>&\u2028"}`, `-0`, `0.0e-0`, `1E+2`, `123456789012345678901234567890`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		wantErr := json.Compact(&want, []byte(s))
		if got, ok := appendCompact(nil, []byte(s)); ok {
			if wantErr != nil {
				t.Fatalf("%q: accepted, json.Compact refused it: %v", s, wantErr)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("%q: %q, json.Compact %q", s, got, want.Bytes())
			}
		}
		got, err := compactJSON([]byte(s))
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("%q: error %v, json.Compact's %v", s, err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%q: %q, json.Compact %q", s, got, want.Bytes())
		}
	})
}

func BenchmarkCompact(b *testing.B) {
	raw := []byte(strings.Repeat(`{ "transfer" : { "fromAccountType" : "ACCOUNT_TYPE_GENERAL", "to" : "3b6c2a1f9e8d7c6b5a4f3e2d1c0b9a8f", "amount" : "1000000", "reference" : "a \"quoted\" ref", "kind" : { "oneOff" : { "deliverOn" : "0" } } } }`+"\n", 1))
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var buf bytes.Buffer
			_ = json.Compact(&buf, raw)
		}
	})
	b.Run("appendCompact", func(b *testing.B) {
		for b.Loop() {
			_, _ = appendCompact(make([]byte, 0, len(raw)), raw)
		}
	})
}
