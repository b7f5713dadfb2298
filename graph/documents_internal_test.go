package graph

import "testing"

// normalizedDocument: texts that differ only in ignored tokens (spaces,
// line breaks, commas, comments, a byte order mark) or in how a string
// is written have one form; any other difference gives another.
func TestNormalizedDocument(t *testing.T) {
	base := `query Q($n: Int = 2) { assets(first: $n, after: "a b") { edges { cursor } } }`
	for _, same := range []string{
		"\ufeff# a comment\nquery Q ( $n : Int = 2 ) {\n  assets(first: $n after: \"a b\") {\n    edges { cursor }\n  }\n}\n",
		"query Q($n:Int=2){assets(first:$n,,after:\"\"\"a b\"\"\"){edges{cursor}}}",
		"query Q($n: Int = 2) { assets(first: $n, after: \"a\\u0020b\") { edges { cursor } } }",
	} {
		a, okA := normalizedDocument(base, -1)
		b, okB := normalizedDocument(same, -1)
		if !okA || !okB || a != b {
			t.Errorf("%q: %q (%v), want %q", same, b, okB, a)
		}
	}
	for _, other := range []string{
		`query Q($n: Int = 3) { assets(first: $n, after: "a b") { edges { cursor } } }`,
		`query Q($n: Int = 2) { assets(first: $n, after: "a  b") { edges { cursor } } }`,
		`query Q($n: Int = 2) { assets(first: $n, after: "a" b) { edges { cursor } } }`,
		`query Q($n: Int = 2) { assets(first: $n, after: "a b") { edges { cursor node { id } } } }`,
		`query Q($n: Int = 2) { assets(first: $n, after: "a b") { edges { cursor } } } `[:70],
	} {
		a, _ := normalizedDocument(base, -1)
		if b, ok := normalizedDocument(other, -1); ok && a == b {
			t.Errorf("%q normalises as %q", other, base)
		}
	}
	if _, ok := normalizedDocument(`{ a(s: "unterminated) }`, -1); ok {
		t.Error("a text that does not lex normalised")
	}
	if _, ok := normalizedDocument(base, 20); ok {
		t.Error("normalised past its limit")
	}
}
