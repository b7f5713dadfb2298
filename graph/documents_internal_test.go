package graph

import (
	"context"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

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

// TestDocumentCacheByAddress: a text is found by its address when it is
// the string kept, by its bytes when it is another string of them; a
// shorter string at the same address is another text; an evicted or
// replaced entry is found by neither its document nor its address.
func TestDocumentCacheByAddress(t *testing.T) {
	ctx := context.Background()
	c := newDocumentCache(2)
	text := strings.Repeat("{ __typename }", 3)
	doc := &ast.QueryDocument{}
	c.Add(ctx, text, doc)
	if got, ok := c.Get(ctx, text); !ok || got != doc {
		t.Fatal("the text kept is not found by its address")
	}
	if got, ok := c.Get(ctx, strings.Clone(text)); !ok || got != doc {
		t.Fatal("another string of the text is not found")
	}
	if _, ok := c.Get(ctx, text[:14]); ok {
		t.Fatal("a prefix of the text, at its address, is found")
	}
	if c.of(doc) == nil {
		t.Fatal("the entry is not found by its document")
	}
	// Parsed again (two requests at once): the later document is kept.
	again := &ast.QueryDocument{}
	c.Add(ctx, strings.Clone(text), again)
	if got, _ := c.Get(ctx, text); got != again || c.of(doc) != nil || len(c.byDoc) != 1 || len(c.byAddress) != 1 {
		t.Fatalf("replaced: %p (want %p), old entry %v, %d by document, %d by address", got, again, c.of(doc), len(c.byDoc), len(c.byAddress))
	}
	c.Add(ctx, "a", &ast.QueryDocument{})
	c.Add(ctx, "b", &ast.QueryDocument{})
	if _, ok := c.Get(ctx, text); ok || c.of(again) != nil || len(c.byDoc) != 2 || len(c.byAddress) != 2 {
		t.Fatalf("evicted: found %t, %d by document, %d by address", ok, len(c.byDoc), len(c.byAddress))
	}
}

// TestDocumentHoldsDefer: @defer on an inline fragment or a spread, in the
// operation or in a fragment, whatever its arguments, is found; a document
// without one is known to defer nothing.
func TestDocumentHoldsDefer(t *testing.T) {
	for q, want := range map[string]bool{
		`{ assets { edges { node { id } } } }`:                                                   false,
		`query($d: Boolean!) { assets { edges { node { id ... @defer(if: $d) { status } } } } }`: true,
		`{ assets { edges { node { ...F @defer } } } } fragment F on Asset { status }`:           true,
		`{ assets { edges { node { ...F } } } } fragment F on Asset { ... @defer { status } }`:   true,
		`{ assets { edges { node { ...F @include(if: true) } } } } fragment F on Asset { id }`:   false,
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: q})
		if err != nil {
			t.Fatal(err)
		}
		if got := documentHoldsDefer(doc); got != want {
			t.Errorf("%s: holds @defer %t, want %t", q, got, want)
		}
	}
}

// TestPerOperationOncePerDocument: what is computed of an operation
// (perOperation) is made once while its document is kept, under each key,
// and for each request when the document is not kept; the direct
// executor's plans are one per document, unless a selection carries a
// directive (plansFor).
func TestPerOperationOncePerDocument(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	cache := newDocumentCache(4)
	opCtxOf := func(text string, kept bool) *graphql.OperationContext {
		doc, errs := gqlparser.LoadQuery(schema, text)
		if errs != nil {
			t.Fatal(errs)
		}
		opCtx := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
		if kept {
			cache.Add(context.Background(), text, doc)
			opCtx.Stats.SetExtension(parsedDocumentKey, cache.of(doc))
		}
		return opCtx
	}
	plain := opCtxOf(`{ assets(first: 1) { edges { cursor } } }`, true)
	made := 0
	count := func() int { made++; return made }
	for range 3 {
		if got := perOperation(plain, "a", count); got != 1 {
			t.Fatalf("kept: made %d times, want once", got)
		}
	}
	if got := perOperation(plain, "b", count); got != 2 {
		t.Fatalf("another key: %d, want a value of its own", got)
	}
	loose := opCtxOf(`{ assets(first: 2) { edges { cursor } } }`, false)
	perOperation(loose, "a", count)
	if perOperation(loose, "a", count) != 4 {
		t.Fatalf("not kept: made %d times in all, want each time", made)
	}
	if p, q := plansFor(plain), plansFor(plain); p != q || p.doc != plain.Doc {
		t.Error("a document's plans are not one")
	}
	directives := opCtxOf(`query($s: Boolean!) { assets(first: 1) @skip(if: $s) { edges { cursor } } }`, true)
	if p, q := plansFor(directives), plansFor(directives); p == q {
		t.Error("plans of selections with directives are shared between requests")
	}
}
