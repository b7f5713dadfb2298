package upstream

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

func TestCursorPackRoundTrips(t *testing.T) {
	dn := Cursor(base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"2024-03-14T12:00:00.123456Z","partyId":"ab","nodeId":"cd","epochId":12}`)))
	for _, c := range []Cursor{dn, "", "34514203.2", "not base64!", "YQ", "YQ==", "a+/=", "\x00\xff"} {
		packed := c.Pack()
		got, err := UnpackCursor(packed)
		if err != nil || got != c {
			t.Errorf("Unpack(Pack(%q)) = %q, %v", c, got, err)
		}
	}
	if n, m := len(dn.Pack()), len(dn); n > m*3/4+2 {
		t.Errorf("a data-node cursor of %d bytes packs into %d", m, n)
	}
	for _, bad := range [][]byte{nil, {}, {'x', 'y'}} {
		if _, err := UnpackCursor(bad); err == nil {
			t.Errorf("UnpackCursor(%q) accepted", bad)
		}
	}
}

// sampleCursors fetches every cursor the sample service emits (edges and
// page info) for every data-node list, over loopback: all pages of
// assets, delegations of every epoch (all of them, paged), and the funding
// payments of several parties (their first page: the data node cannot
// page funding payments: docs/wire.md, Known defects, 1).
func sampleCursors(t *testing.T) map[string][]Cursor {
	t.Helper()
	srv := startSampleT(t, false)
	c, err := New(Config{DataNodeURL: srv.URL, ExplorerURL: srv.URL + "/rest"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out := map[string][]Cursor{}
	size := int32(5000)
	collect := func(list string, edges []Cursor, info PageBounds) {
		out[list] = append(out[list], edges...)
		out[list] = append(out[list], info.StartCursor, info.EndCursor)
	}
	for after := Cursor(""); ; {
		pg, err := c.ListAssets(ctx, AssetsParams{Pagination: Pagination{First: &size, After: after}})
		if err != nil {
			t.Fatal(err)
		}
		collect("assets", edgeCursors(pg.Edges), pg.PageInfo)
		if !pg.PageInfo.HasNextPage {
			break
		}
		after = pg.PageInfo.EndCursor
	}
	epochs := map[string]bool{}
	for after := Cursor(""); ; {
		pg, err := c.ListDelegations(ctx, DelegationsParams{Pagination: Pagination{First: &size, After: after}})
		if err != nil {
			t.Fatal(err)
		}
		collect("delegations", edgeCursors(pg.Edges), pg.PageInfo)
		for _, e := range pg.Edges {
			epochs[string(e.Node.EpochSeq)] = true
		}
		if !pg.PageInfo.HasNextPage {
			break
		}
		after = pg.PageInfo.EndCursor
	}
	if len(epochs) < 2 {
		t.Fatalf("delegations of %d epochs, want several", len(epochs))
	}
	var parties []string
	for _, p := range srv.FundingParties {
		if !slices.Contains(parties, p) {
			parties = append(parties, p)
		}
		if len(parties) == 5 {
			break
		}
	}
	for _, party := range parties {
		pg, err := c.ListFundingPayments(ctx, FundingPaymentsParams{PartyID: party, Pagination: Pagination{First: &size}})
		if err != nil {
			t.Fatal(err)
		}
		collect("funding payments", edgeCursors(pg.Edges), pg.PageInfo)
	}
	for list, cs := range out {
		if len(cs) < 10 {
			t.Fatalf("%s: only %d cursors", list, len(cs))
		}
	}
	return out
}

func edgeCursors[T any](edges []Edge[T]) []Cursor {
	out := make([]Cursor, len(edges))
	for i, e := range edges {
		out[i] = e.Cursor
	}
	return out
}

// TestCursorPackSampleServiceCursors: every real cursor packs in the
// compact form and unpacks to itself.
func TestCursorPackSampleServiceCursors(t *testing.T) {
	for list, cs := range sampleCursors(t) {
		var packed, old int
		for _, c := range cs {
			p := c.Pack()
			if p[0] != packedJSON {
				t.Fatalf("%s: cursor %q packs in form %q, want the compact form", list, c, p[0])
			}
			got, err := UnpackCursor(p)
			if err != nil || got != c {
				t.Fatalf("%s: Unpack(Pack(%q)) = %q, %v", list, c, got, err)
			}
			packed += len(p)
			old += len(oldPack(t, c))
		}
		t.Logf("%s: %d cursors, packed %d bytes on average (the 'b' form: %d)", list, len(cs), packed/len(cs), old/len(cs))
	}
}

// oldPack is the 'b' form, as earlier gateways packed data-node cursors.
func oldPack(t *testing.T, c Cursor) []byte {
	t.Helper()
	js, err := base64.StdEncoding.DecodeString(string(c))
	if err != nil {
		t.Fatalf("%q is not base64: %v", c, err)
	}
	return append([]byte{packedBase64}, js...)
}

// TestCursorPackCompactSize: a real delegation cursor's compact form is
// at most 45% of the 'b' form; an asset's and a funding payment's shrink
// too.
func TestCursorPackCompactSize(t *testing.T) {
	cursors := sampleCursors(t)
	for list, limit := range map[string]int{"delegations": 45, "assets": 50, "funding payments": 50} {
		c := cursors[list][0]
		compact, old := len(c.Pack()), len(oldPack(t, c))
		t.Logf("%s: cursor of %d characters, 'b' form %d bytes, compact %d bytes (%d%%)", list, len(c), old, compact, compact*100/old)
		if compact*100 > old*limit {
			t.Errorf("%s: compact form %d bytes, 'b' form %d: want at most %d%%", list, compact, old, limit)
		}
	}
}

// TestCursorPackEdgeCases: JSON the compact form cannot hold falls back to
// the 'b' form; either way the cursor unpacks to itself.
func TestCursorPackEdgeCases(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		json    string
		compact bool
	}{
		{`{"vegaTime":"2024-03-14T04:00:00.437Z","partyId":"` + hex64 + `","nodeId":"` + hex64 + `","epochId":1261}`, true},
		{`{"id":"` + hex64 + `"}`, true},
		{`{"vegaTime":"2024-03-14T20:00:00.123456Z","marketID":"` + hex64 + `","partyID":"` + hex64 + `"}`, true},
		// Strings: escapes and unicode are kept as written.
		{`{"id":"a\"b\\c\/d\n\t\u00e9\u2028"}`, true},
		{`{"id":"héllo 世界 😀"}`, true},
		{`{"id":"<&>"}`, true},
		{`{"id":"\u003c\u0026\u003e"}`, true},
		{`{"id":"\x"}`, false},       // bad escape
		{`{"id":"\u12G4"}`, false},   // bad \u escape
		{"{\"id\":\"a\tb\"}", false}, // raw control character
		{`{"id":"` + strings.ToUpper(hex64) + `"}`, true},
		{`{"id":"` + hex64[:63] + `"}`, true},
		{`{"id":"` + hex64 + `0"}`, true},
		{`{"id":""}`, true},
		// Timestamps: 0, 3, 6, 9 fractional digits; trailing zeros; offsets.
		{`{"vegaTime":"2024-03-14T04:00:00Z"}`, true},
		{`{"vegaTime":"2024-03-14T04:00:00.437Z"}`, true},
		{`{"vegaTime":"2024-03-14T04:00:00.123456Z"}`, true},
		{`{"vegaTime":"2024-03-14T04:00:00.123456789Z"}`, true},
		{`{"vegaTime":"2024-03-14T04:00:00.000000000Z"}`, true},
		{`{"vegaTime":"2024-03-14T04:00:00.4370Z"}`, true},
		{`{"vegaTime":"2024-03-14T04:00:00.0000000001Z"}`, true}, // 10 digits: a plain string
		{`{"vegaTime":"2024-03-14T04:00:00+05:30"}`, true},
		{`{"vegaTime":"2024-03-14T04:00:00.5-08:00"}`, true},
		{`{"vegaTime":"2024-03-14T04:00:00-00:00"}`, true},
		{`{"vegaTime":"2024-03-14T04:00:00+00:00"}`, true},
		{`{"vegaTime":"0000-01-01T00:00:00Z"}`, true},
		{`{"vegaTime":"1969-12-31T23:59:59.999999999Z"}`, true},
		{`{"vegaTime":"9999-12-31T23:59:59.999999999Z"}`, true},
		{`{"vegaTime":"2024-02-30T04:00:00Z"}`, true}, // no such day: a plain string
		{`{"vegaTime":"2016-12-31T23:59:60Z"}`, true}, // leap second: a plain string
		{`{"vegaTime":"2024-03-14t04:00:00z"}`, true}, // lowercase: a plain string
		{`{"vegaTime":"2024-03-14T04:00:00."}`, true}, // no fraction digits: a plain string
		{`{"vegaTime":"2024-03-14T04:00:00+24:00"}`, true},
		{`{"vegaTime":"2024-03-14 04:00:00Z"}`, true},
		{`{"vegaTime":"+2024-03-14T04:00:00Z"}`, true},
		// Integers.
		{`{"epochId":0}`, true},
		{`{"epochId":-1}`, true},
		{`{"epochId":9223372036854775807}`, true},
		{`{"epochId":-9223372036854775808}`, true},
		{`{"epochId":9223372036854775808}`, false},
		{`{"epochId":-9223372036854775809}`, false},
		{`{"epochId":18446744073709551616}`, false},
		{`{"epochId":123456789012345678901234567890}`, false},
		{`{"epochId":-0}`, false},
		{`{"epochId":01}`, false},
		{`{"epochId":1.5}`, false},
		{`{"epochId":1e3}`, false},
		{`{"epochId":-}`, false},
		// Objects.
		{`{"id":"a","id":"b"}`, true}, // duplicate keys, in order
		{`{"epochId":2,"vegaTime":"2024-03-14T04:00:00Z","partyId":"x"}`, true},
		{`{}`, true},
		{`{"unknownKey":"` + hex64 + `","":1,"\u0069d":"x"}`, true},
		{`{"` + strings.Repeat("k", 300) + `":1}`, true},
		{`{"id":"x"} `, false}, // trailing whitespace
		{`{"id":"x"}` + "\n", false},
		{`{ "id":"x"}`, false},
		{`{"id" : "x"}`, false},
		{`{"id":"x",}`, false},
		{`{"id":"x"`, false},
		{`{"id":"x}`, false},
		{`{"id"}`, false},
		{`{"id":}`, false},
		{`{"id":true}`, false},
		{`{"id":null}`, false},
		{`{"id":{"a":1}}`, false},
		{`{"id":[1]}`, false},
		{`[]`, false},
		{`{`, false},
		{`"x"`, false},
		{`null`, false},
		{"\x00\xff\xfe", false}, // not JSON at all
		{"", false},
	} {
		c := Cursor(base64.StdEncoding.EncodeToString([]byte(tc.json)))
		p := c.Pack()
		want := byte(packedBase64)
		if tc.compact {
			want = packedJSON
		}
		if p[0] != want {
			t.Errorf("%s: packed in form %q, want %q", tc.json, p[0], want)
		}
		got, err := UnpackCursor(p)
		if err != nil || got != c {
			t.Errorf("%s: Unpack(Pack(%q)) = %q, %v", tc.json, c, got, err)
		}
	}
	// Not base64, or not strictly padded base64: kept raw.
	for _, c := range []Cursor{"eyJpZCI6IngifQ", "eyJpZCI6IngifQ==\n", "eyJpZCI6Ing-fQ==", "34514203.2", Cursor(strings.Repeat("A", maxPackBuffer+4))} {
		p := c.Pack()
		if got, err := UnpackCursor(p); p[0] != packedRaw || err != nil || got != c {
			t.Errorf("%q: form %q, unpacks to %q, %v", c, p[0], got, err)
		}
	}
}

// TestCursorUnpackOldForms: cursors clients hold from earlier gateways
// ('b' and 's' forms) unpack as before.
func TestCursorUnpackOldForms(t *testing.T) {
	js := `{"vegaTime":"2024-03-14T04:00:00.437Z","partyId":"` + strings.Repeat("a1", 32) + `","nodeId":"` + strings.Repeat("b2", 32) + `","epochId":1261}`
	want := Cursor(base64.StdEncoding.EncodeToString([]byte(js)))
	for _, tc := range []struct {
		packed []byte
		want   Cursor
	}{
		{append([]byte("b"), js...), want},
		{[]byte(`b{"id":"ab"}`), "eyJpZCI6ImFiIn0="},
		{[]byte("b"), ""},
		{[]byte("s34514203.2"), "34514203.2"},
		{[]byte("s"), ""},
	} {
		if got, err := UnpackCursor(tc.packed); err != nil || got != tc.want {
			t.Errorf("UnpackCursor(%q) = %q, %v; want %q", tc.packed, got, err, tc.want)
		}
	}
	if p := want.Pack(); p[0] != packedJSON {
		t.Errorf("the cursor now packs in form %q, want the compact form", p[0])
	}
}

// TestCursorUnpackMalformed: forged or damaged compact forms are refused
// with an error.
func TestCursorUnpackMalformed(t *testing.T) {
	good := Cursor(base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"2024-03-14T04:00:00.437+01:00","partyId":"` + strings.Repeat("a1", 32) + `","epochId":1261,"other":"x"}`))).Pack()
	for n := 2; n < len(good); n++ {
		if c, err := UnpackCursor(good[:n]); err == nil {
			// Some prefixes end between members and are whole objects.
			if p := c.Pack(); !slices.Equal(p, good[:n]) {
				t.Errorf("UnpackCursor(%q) = %q, which packs to %q", good[:n], c, p)
			}
		}
	}
	for _, bad := range [][]byte{
		{'j', kindInt<<5 | 3},                     // no value
		{'j', kindInt<<5 | 3, 0x80},               // unfinished varint
		{'j', kindHex<<5 | 4, 1, 2},               // short id
		{'j', kindString<<5 | 4, 5, 'a'},          // short string
		{'j', kindString<<5 | literalKey, 9, 'a'}, // short key
		{'j', 4<<5 | 4, 0},                        // unknown kind
		{'j', kindInt<<5 | 30, 0},                 // unknown key
		{'j', kindTime << 5, 0x0a, 0},             // 10 fraction digits
		{'j', kindTime << 5, 0x30, 0},             // unknown offset kind
		{'j', kindTime << 5, 0x03, 0, 0xe8, 0x07}, // fraction 1000 with 3 digits
		{'j', kindTime << 5, 0x10, 0, 0xa0, 0x0b}, // offset of 24 hours
		{'j', kindTime << 5, 0x00, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // year beyond 9999
		{'j', kindTime << 5, 0x00}, // no seconds
	} {
		if c, err := UnpackCursor(bad); err == nil {
			t.Errorf("UnpackCursor(%q) = %q, want an error", bad, c)
		}
	}
}

// TestCursorPackAllocations: packing into a buffer with room allocates
// nothing, in any form; unpacking allocates the cursor only.
func TestCursorPackAllocations(t *testing.T) {
	compact := Cursor(base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"2024-03-14T04:00:00.437Z","partyId":"` + strings.Repeat("a1", 32) + `","nodeId":"` + strings.Repeat("b2", 32) + `","epochId":1261}`)))
	fallback := Cursor(base64.StdEncoding.EncodeToString([]byte(`{"id":1.5}`)))
	buf := make([]byte, 0, 1024)
	for _, c := range []Cursor{compact, fallback, "34514203.2"} {
		if n := testing.AllocsPerRun(100, func() { buf = c.AppendPack(buf[:0]) }); n != 0 {
			t.Errorf("AppendPack(%q): %.0f allocations, want 0", c, n)
		}
		p := c.Pack()
		if n := testing.AllocsPerRun(100, func() { _, _ = UnpackCursor(p) }); n > 1 {
			t.Errorf("UnpackCursor(%q): %.0f allocations, want at most 1", p, n)
		}
	}
}

// FuzzCursorPack: for any string, as a cursor and as the JSON inside a
// data-node cursor, UnpackCursor(Pack(c)) == c; as packed bytes (of any
// form, and of the compact form), UnpackCursor never panics, and what it
// unpacks to packs and unpacks to itself. The seed corpus (f.Add and
// testdata/fuzz/FuzzCursorPack) runs with go test; go test
// -fuzz=FuzzCursorPack ./upstream explores further.
func FuzzCursorPack(f *testing.F) {
	hex64 := strings.Repeat("0f", 32)
	for _, s := range []string{
		"", "34514203.2", "YQ==", "e30=",
		`{"vegaTime":"2024-03-14T04:00:00.437Z","partyId":"` + hex64 + `","nodeId":"` + hex64 + `","epochId":1261}`,
		`{"id":"` + hex64 + `"}`,
		`{"vegaTime":"2024-03-14T20:00:00.123456789+05:30","marketID":"x","partyID":"\u00e9"}`,
		`{"epochId":-9223372036854775808,"x":1}`,
		"j\x44\x03\xe0\xc6\xca\xaf\x0c\xb4\x06",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range []Cursor{Cursor(s), Cursor(base64.StdEncoding.EncodeToString([]byte(s)))} {
			p := c.Pack()
			if got, err := UnpackCursor(p); err != nil || got != c {
				t.Fatalf("Unpack(Pack(%q)) = %q, %v (packed %q)", c, got, err, p)
			}
		}
		for _, p := range [][]byte{[]byte(s), append([]byte{packedJSON}, s...)} {
			c, err := UnpackCursor(p)
			if err != nil {
				continue
			}
			if again, err := UnpackCursor(c.Pack()); err != nil || again != c {
				t.Fatalf("UnpackCursor(%q) = %q, which packs and unpacks to %q, %v", p, c, again, err)
			}
		}
	})
}

// TestCursorPackValueKinds: values are held by their kind (an id as 32
// bytes, a timestamp as numbers, an integer as a varint); what is not
// quite one of them is a plain string.
func TestCursorPackValueKinds(t *testing.T) {
	for _, tc := range []struct {
		value string
		kind  byte
	}{
		{`"` + strings.Repeat("9f", 32) + `"`, kindHex},
		{`"` + strings.Repeat("9F", 32) + `"`, kindString},
		{`"` + strings.Repeat("9f", 32) + `0"`, kindString},
		{`"` + strings.Repeat("9f", 31) + `f"`, kindString},
		{`"2024-03-14T04:00:00Z"`, kindTime},
		{`"2024-03-14T04:00:00.437Z"`, kindTime},
		{`"2024-03-14T04:00:00.437000Z"`, kindTime},
		{`"2024-03-14T04:00:00.123456789-08:00"`, kindTime},
		{`"2024-03-14T04:00:00.1234567890Z"`, kindString},
		{`"2024-02-29T04:00:00Z"`, kindTime},
		{`"2023-02-29T04:00:00Z"`, kindString},
		{`"2016-12-31T23:59:60Z"`, kindString},
		{`"2024-03-14T04:00:00+24:00"`, kindString},
		{`"x"`, kindString},
		{`-42`, kindInt},
	} {
		c := Cursor(base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":` + tc.value + `}`)))
		p := c.Pack()
		if len(p) < 2 || p[0] != packedJSON || p[1]>>5 != tc.kind || p[1]&literalKey != 0 {
			t.Errorf("%s: packed %q, want kind %d", tc.value, p, tc.kind)
		}
	}
	p := Cursor(base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"2024-03-14T04:00:00.437Z"}`))).Pack()
	if len(p) > 1+1+1+5+2 {
		t.Errorf("a timestamp packs into %d bytes: %q", len(p), p)
	}
}

// BenchmarkCursorPack packs a delegation cursor (per row of a page) in
// the compact form and, for comparison, one that falls back to the 'b'
// form (an epoch of 1261.0 instead of 1261).
func BenchmarkCursorPack(b *testing.B) {
	js := `{"vegaTime":"2024-03-14T04:00:00.437Z","partyId":"` + strings.Repeat("a1", 32) + `","nodeId":"` + strings.Repeat("b2", 32) + `","epochId":1261`
	for _, bc := range []struct {
		name string
		c    Cursor
	}{
		{"compact", Cursor(base64.StdEncoding.EncodeToString([]byte(js + "}")))},
		{"fallback", Cursor(base64.StdEncoding.EncodeToString([]byte(js + ".0}")))},
	} {
		buf := make([]byte, 0, 512)
		b.Run(bc.name+"/pack", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = bc.c.AppendPack(buf[:0])
			}
		})
		p := bc.c.Pack()
		b.Run(bc.name+"/unpack", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = UnpackCursor(p)
			}
		})
	}
}
