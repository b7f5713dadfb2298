package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
)

// referenceParams decodes body as gqlgen's POST transport does, with a
// persisted document's id as decodePOST's slow path reads it.
func referenceParams(body []byte) (graphql.RawParams, error) {
	var p graphql.RawParams
	decoded := struct {
		*graphql.RawParams
		documentRef
	}{RawParams: &p}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&decoded); err != nil {
		return p, err
	}
	if msg := decoded.apply(&p); msg != "" {
		return p, errors.New(msg)
	}
	return p, nil
}

// checkFastParams fails if fastParams decodes body to anything but what
// gqlgen's transport decodes, or decodes what gqlgen's refuses.
func checkFastParams(t *testing.T, body []byte) bool {
	t.Helper()
	got, ok := fastParams(body)
	if !ok {
		return false
	}
	want, err := referenceParams(body)
	if err != nil {
		t.Fatalf("fastParams decoded %q, which encoding/json refuses: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fastParams(%q) = %#v, encoding/json %#v", body, got, want)
	}
	return true
}

// TestFastParamsTakesClientBodies: the bodies clients send (as
// JSON.stringify or json.Marshal write them) take the fast path, and
// decode to what gqlgen's transport decodes.
func TestFastParamsTakesClientBodies(t *testing.T) {
	query := "query Page($n: Int!) {\n  transactions(first: $n) {\n    edges { node { hash } }\n  }\n}\n# \"quoted\" \\ tab\t é 中文 🙂 </script>"
	bodies := []any{
		map[string]any{"query": query},
		map[string]any{"query": query, "variables": map[string]any{"n": 50, "big": json.Number("12345678901234567890"), "f": 1.5, "s": "x", "l": []any{1, "2", nil, true}}, "operationName": "Page"},
		map[string]any{"query": query, "variables": nil, "operationName": nil, "extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.Repeat("ab", 32)}}},
		map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1}}},
		map[string]any{},
		map[string]any{"documentId": "sha256:" + strings.Repeat("ab", 32), "variables": map[string]any{"n": 5}, "operationName": "Page"},
		map[string]any{"doc_id": "3be4abb81fa595e25eb725b2c6a87508", "variables": map[string]any{"n": 5}},
		map[string]any{"documentId": "a", "doc_id": "a", "query": nil},
	}
	for _, b := range bodies {
		body, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, variant := range [][]byte{body, append(append([]byte(" \n"), body...), "\r\n\t "...)} {
			if !checkFastParams(t, variant) {
				t.Errorf("%s: not taken by the fast path", variant)
			}
		}
	}
	for _, body := range []string{
		// JSON.stringify leaves <, > and & as they are.
		`{"query":"{ a } # <b> & c","variables":{}}`,
		// \u escapes: a BMP rune, a pair, lone surrogates (U+FFFD), a
		// high surrogate followed by another escape.
		`{"query":"\u0041\u00E9\u4e2d\ud83d\ude42\ud83d\udc00x\ud800\udc00\ude42 \ud800 \ud800\u0041 \udfff\ud800"}`,
	} {
		if !checkFastParams(t, []byte(body)) {
			t.Errorf("%s: not taken by the fast path", body)
		}
	}
}

// TestFastParamsAtEveryOffset: the fast path skips ordinary bytes eight
// at a time; a special one (an escape, a quote, a multi-byte rune, a
// control character, invalid UTF-8) at any offset of a long string is
// still decoded as encoding/json decodes it, or left to it, and so is
// the string's end at any offset.
func TestFastParamsAtEveryOffset(t *testing.T) {
	const run = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
	for _, special := range []string{`\"`, `\\`, `\n`, `\u00e9`, "é", "🙂", "\x01", "\x7f", "\xff", "\xe2\x82"} {
		for at := 0; at <= len(run); at++ {
			body := `{"query":"` + run[:at] + special + run[at:] + `"}`
			taken := checkFastParams(t, []byte(body))
			refused := special == "\x01" || special == "\xff" || special == "\xe2\x82"
			if taken == refused {
				t.Errorf("%q: taken by the fast path: %t", body, taken)
			}
		}
	}
	for n := 0; n <= len(run); n++ {
		body := `{"query":"` + run[:n] + `","operationName":"` + run[n:] + `"}`
		if !checkFastParams(t, []byte(body)) {
			t.Errorf("%q: not taken by the fast path", body)
		}
	}
}

// TestFastParamsLeavesTheRestToGqlgen: bodies whose decoding is
// encoding/json's business (case-insensitive keys, duplicates, escapes it
// replaces, trailing data, errors) are not decoded by the fast path.
func TestFastParamsLeavesTheRestToGqlgen(t *testing.T) {
	for _, body := range []string{
		``, ` `, `null`, `[]`, `"query"`, `{`, `{"query"`, `{"query":}`, `{"query":"a"`, `{"query":"a",}`,
		`{"Query":"a"}`, `{"query":"a","query":"b"}`, `{"variables":{"a":1},"variables":{"b":2}}`,
		`{"query":"\u004"}`, `{"query":"\u00g1"}`, `{"query":"a\x"}`, "{\"query\":\"a\x01\"}", "{\"query\":\"\xff\"}", "{\"query\":\"\xed\xa0\x80\"}",
		`{"query":5}`, `{"query":"a"} {"query":"b"}`, `{"query":"a"}x`, `{"variables":[]}`, `{"variables":{"a":}}`,
		`{"headers":{"a":["b"]}}`, `{"qu\u0065ry":"a"}`, `{"query":nul}`, `{"query":nullx}`,
		`{"documentId":"a","doc_id":"b"}`, `{"documentId":5}`, `{"documentId":"a","documentId":"b"}`, `{"DocumentId":"a"}`,
	} {
		if checkFastParams(t, []byte(body)) {
			t.Errorf("%q: taken by the fast path", body)
		}
	}
}

// FuzzFastParams: on any body, the fast path decodes what gqlgen's
// transport decodes, or leaves it.
func FuzzFastParams(f *testing.F) {
	for _, s := range []string{
		`{"query":"{ a }"}`, `{"query":"x\ny\"z\\","operationName":"Op","variables":{"n":1,"m":[1.5e3,"s",null]}}`,
		`{"extensions":{"persistedQuery":{"version":1}}}`, ` { } `, `{"query":null,"variables":null}`, "{\"query\":\"é\"}",
		`{"query":"\u00e9"}`, `{"query":"a"}garbage`, `{"documentId":"x","variables":{}}`, `{"doc_id":"y","documentId":"z"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkFastParams(t, body)
	})
}

// BenchmarkFastParams decodes the body of a 35 kB query as clients write
// it (JSON.stringify of a multi-line text): the one read of the query
// text each request makes.
func BenchmarkFastParams(b *testing.B) {
	line := "      ... on BatchProposalSubmission { terms { closingTimestamp enactmentTimestamp } }\n"
	body, err := json.Marshal(map[string]any{"query": "query Q {\n" + strings.Repeat(line, 35<<10/len(line)) + "}\n", "variables": map[string]any{"first": 1}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := fastParams(body); !ok {
			b.Fatal("not taken by the fast path")
		}
	}
}

// TestQueryTextsAreKept: a long query text is unquoted once; the same
// bytes again give the same string (the same memory, which the
// executor's document cache finds by its address), decoded as
// encoding/json decodes it; a text that does not decode is not kept; the
// texts kept are bounded in number and in bytes.
func TestQueryTextsAreKept(t *testing.T) {
	query := "query Kept {\n" + strings.Repeat("  transactions(first: 1) { edges { node { hash } } } # \"é\" \\ \t\n", 20) + "}"
	body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"n": 1}})
	before := queryTexts.unquoted.Load()
	first, ok := fastParams(body)
	if !ok || first.Query != query {
		t.Fatalf("%t %q", ok, first.Query)
	}
	for range 3 {
		if !checkFastParams(t, append([]byte(nil), body...)) {
			t.Fatal("not taken by the fast path")
		}
		again, _ := fastParams(append([]byte(nil), body...))
		if unsafe.StringData(again.Query) != unsafe.StringData(first.Query) {
			t.Fatal("the same text read again is another string")
		}
	}
	if n := queryTexts.unquoted.Load() - before; n != 1 {
		t.Fatalf("the text was unquoted %d times, want once", n)
	}
	bad := []byte(`{"query":"` + strings.Repeat("a", 600) + "\x01" + `"}`)
	for range 2 {
		if checkFastParams(t, bad) {
			t.Fatal("a control character taken by the fast path")
		}
	}
	if n := queryTexts.unquoted.Load() - before; n != 3 {
		t.Fatalf("the text that does not decode was unquoted %d times in all, want each time", n-1)
	}

	c := newTextCache(3, 10_000)
	for i := range 5 {
		c.add(fmt.Sprintf("key %d %s", i, strings.Repeat("k", 1000)), strings.Repeat("t", 1000))
	}
	if n, size := c.len(); n != 3 || size > 10_000 {
		t.Fatalf("%d texts of %d bytes kept, over 3 texts", n, size)
	}
	c = newTextCache(100, 5000)
	for i := range 5 {
		c.add(fmt.Sprintf("key %d %s", i, strings.Repeat("k", 1000)), strings.Repeat("t", 1000))
	}
	if n, size := c.len(); n != 2 || size > 5000 {
		t.Fatalf("%d texts of %d bytes kept, over 5000 bytes", n, size)
	}
	if _, ok := c.texts["key 4 "+strings.Repeat("k", 1000)]; !ok {
		t.Fatal("the newest text was evicted")
	}
}

// TestStringEnd: the end of a string is its first quote after an even
// number of backslashes.
func TestStringEnd(t *testing.T) {
	for body, want := range map[string]int{
		`"abc"`: 4, `"a\"b"`: 5, `"a\\"b"`: 4, `"a\\\"b"`: 7, `"\\\\"`: 5, `""`: 1, `"abc`: -1, `"a\"`: -1, `x"a"`: -1,
	} {
		if got := stringEnd([]byte(body), 0); got != want {
			t.Errorf("stringEnd(%s) = %d, want %d", body, got, want)
		}
	}
}

// TestReadRequestBody: a body is read whole, or one byte over the limit;
// of the size it declares, it is read into one buffer (io.ReadAll would
// copy a 35 kB body as its buffer doubled); a declared size beyond what
// comes, or beyond the preallocation bound, changes nothing read.
func TestReadRequestBody(t *testing.T) {
	body := bytes.Repeat([]byte("q"), 35<<10)
	for _, c := range []struct {
		name            string
		declared, limit int64
		want            int
	}{
		{"declared", int64(len(body)), 1 << 20, len(body)},
		{"undeclared", -1, 1 << 20, len(body)},
		{"declared larger than sent", 1 << 20, 1 << 20, len(body)},
		{"declared larger than the bound", 8 << 20, 16 << 20, len(body)},
		{"over the limit", int64(len(body)), 1000, 1001},
	} {
		got, err := readRequestBody(bytes.NewReader(body), c.declared, c.limit)
		if err != nil || len(got) != c.want || !bytes.Equal(got, body[:c.want]) {
			t.Errorf("%s: %d bytes, %v; want %d", c.name, len(got), err, c.want)
		}
	}
	allocs := func(declared int64) float64 {
		return testing.AllocsPerRun(20, func() {
			if _, err := readRequestBody(bytes.NewReader(body), declared, 1<<20); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The reader, the bytes.Buffer, and its one buffer; undeclared, the
	// buffer grows as the body arrives.
	if declared, undeclared := allocs(int64(len(body))), allocs(-1); declared > 3 || undeclared <= declared {
		t.Errorf("a declared body took %.0f allocations, an undeclared one %.0f; want 3 and more", declared, undeclared)
	}
}

// TestGetParamsReadQueryTextsOnce: a GET request's query text is unescaped
// once however often it is sent, and getParams reads every URL as
// url.ParseQuery reads it whole, fallbacks included.
func TestGetParamsReadQueryTextsOnce(t *testing.T) {
	long := "{ transactions(first: 1) { edges { node { hash " + strings.Repeat("__typename ", 80) + "} } } }"
	enc := url.QueryEscape(long)
	for _, raw := range []string{
		"query=" + enc,
		"operationName=A&query=" + enc + "&variables=%7B%7D",
		"query=" + enc + "&query=%7B%20a%20%7D",        // the first wins
		"qu%65ry=%7B%20a%20%7D&query=" + enc,           // an escaped key first: read whole
		"query=" + enc + "%3B&x=1",                     // an escaped semicolon is text
		"query=%7Ba%3Bb%7D;x",                          // a raw semicolon: refused, as url.ParseQuery does
		"query=%zz" + enc,                              // a malformed escape
		"variables=%7B%22query%22%3A1%7D&query=" + enc, // "query" elsewhere: read whole
		"documentId=sha256%3Aabc",                      // no query at all
	} {
		want, wantErr := url.ParseQuery(raw)
		r := &http.Request{URL: &url.URL{RawQuery: raw}, Header: http.Header{}}
		for range 2 {
			got, msg := getParams(r)
			if (msg != "") != (wantErr != nil) {
				t.Fatalf("%.60s: message %q, url.ParseQuery's error %v", raw, msg, wantErr)
			}
			if msg != "" {
				if !strings.HasPrefix(msg, "the URL query is malformed: ") {
					t.Errorf("%.60s: message %q", raw, msg)
				}
				continue
			}
			if got.Query != want.Get("query") || got.OperationName != want.Get("operationName") {
				t.Errorf("%.60s: query %.40q, operation %q; want %.40q, %q", raw, got.Query, got.OperationName, want.Get("query"), want.Get("operationName"))
			}
		}
	}
	before := getTexts.unquoted.Load()
	for range 5 {
		r := &http.Request{URL: &url.URL{RawQuery: "query=" + url.QueryEscape(long+" ")}, Header: http.Header{}}
		if got, msg := getParams(r); msg != "" || got.Query != long+" " {
			t.Fatalf("query %.40q, message %q", got.Query, msg)
		}
	}
	if n := getTexts.unquoted.Load() - before; n != 1 {
		t.Errorf("a text sent five times was unescaped %d times, want once", n)
	}
}
