package graph

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/vektah/gqlparser/v2/ast"
)

// The work done once per distinct document. gqlgen's executor parses and
// validates a query's text, then asks its query cache for it by the text
// on every later request; documentCache is that cache, and keeps with
// each document what is computed from it once: the limits' plan of each
// of its operations (limitPlan), and whatever else the execution needs of
// the document alone (parsedDocument.memo). A request whose text was seen
// before then costs one lookup of its text, and the work its variables
// decide.

// DefaultQueryCacheSize is how many distinct documents the executor keeps
// parsed, validated and planned when ExecutorConfig.QueryCacheSize is 0.
const DefaultQueryCacheSize = 1000

// documentCache keeps the documents the executor parsed and validated, by
// their text, the least recently used evicted beyond its size; and the
// same entries by parsed document, for what is computed from each. It is
// safe for concurrent use.
type documentCache struct {
	mu     sync.Mutex
	byText *simplelru.LRU[string, *parsedDocument]
	byDoc  map[*ast.QueryDocument]*parsedDocument
	// byAddress is by the address of the text kept: a request whose text
	// is that very string (a persisted document's, an automatic persisted
	// query's, a text the transport read before: package transport's
	// queryTexts) is found without reading its text.
	byAddress map[*byte]*parsedDocument

	// parsed counts the documents added (each one parsed and validated
	// once), planned the limit plans made, memoized what textMemo made
	// for a kept document: for tests.
	parsed, planned, memoized atomic.Int64
}

var _ graphql.Cache[*ast.QueryDocument] = (*documentCache)(nil)

// newDocumentCache keeps up to size documents (DefaultQueryCacheSize
// when size is not positive).
func newDocumentCache(size int) *documentCache {
	if size <= 0 {
		size = DefaultQueryCacheSize
	}
	c := &documentCache{byDoc: map[*ast.QueryDocument]*parsedDocument{}, byAddress: map[*byte]*parsedDocument{}}
	// The callback runs inside byText's calls, which c.mu guards.
	c.byText, _ = simplelru.NewLRU(size, func(_ string, d *parsedDocument) { c.forget(d) })
	return c
}

// Get returns the parsed document of a text seen before (graphql.Cache).
func (c *documentCache) Get(_ context.Context, text string) (*ast.QueryDocument, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.byAddress[unsafe.StringData(text)]; d != nil && len(d.text) == len(text) {
		// The same bytes: the same text, read no further.
		c.byText.Get(d.text) // (its use, for the eviction order)
		return d.doc, true
	}
	d, ok := c.byText.Get(text)
	if !ok {
		return nil, false
	}
	return d.doc, true
}

// Add keeps a text's document, parsed and validated (graphql.Cache).
func (c *documentCache) Add(_ context.Context, text string, doc *ast.QueryDocument) {
	c.parsed.Add(1)
	d := &parsedDocument{doc: doc, text: text}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.byText.Peek(text); ok {
		// Two requests parsed the text at once: the later one's is kept
		// (the other's request plans its own).
		c.forget(old)
	}
	c.byText.Add(text, d)
	c.byDoc[doc] = d
	if len(text) > 0 {
		c.byAddress[unsafe.StringData(text)] = d
	}
}

// textMemo returns what make computes of a text alone, under key: kept
// with the text's document when the document is kept, so that the checks
// made of a request's text before it is parsed (an automatic persisted
// query's hash, the trusted documents' policy) are made once per
// document; computed each time otherwise.
func (c *documentCache) textMemo(text, key string, make func() any) any {
	if c == nil {
		return make()
	}
	c.mu.Lock()
	d := c.byAddress[unsafe.StringData(text)]
	if d == nil || len(d.text) != len(text) {
		d, _ = c.byText.Peek(text)
	}
	c.mu.Unlock()
	if d == nil {
		return make()
	}
	return d.memo(nil, key, func() any {
		c.memoized.Add(1)
		return make()
	})
}

// forget drops an entry's indexes (c.mu held).
func (c *documentCache) forget(d *parsedDocument) {
	delete(c.byDoc, d.doc)
	if len(d.text) > 0 && c.byAddress[unsafe.StringData(d.text)] == d {
		delete(c.byAddress, unsafe.StringData(d.text))
	}
}

// of returns the entry of a parsed document, or nil when it is not kept
// (evicted, or replaced by another parse of its text).
func (c *documentCache) of(doc *ast.QueryDocument) *parsedDocument {
	if c == nil || doc == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byDoc[doc]
}

// Len is the number of documents kept.
func (c *documentCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byText.Len()
}

// parsedDocument is a document kept by documentCache and what is computed
// from it once.
type parsedDocument struct {
	doc  *ast.QueryDocument
	text string // the text it was parsed from: the cache's key

	mu    sync.Mutex
	memos map[memoKey]any

	defersOnce sync.Once
	defers     bool
}

// parsedDocumentKey is where the limits extension leaves a request's
// parsedDocument in its operation context's statistics (documentOf).
const parsedDocumentKey = "gateway.parsedDocument"

// documentOf returns the entry of the request's document: the home of
// what is computed from the document alone, for the rest of the request
// (nil when the document is not kept).
func documentOf(opCtx *graphql.OperationContext) *parsedDocument {
	if opCtx == nil {
		return nil
	}
	d, _ := opCtx.Stats.GetExtension(parsedDocumentKey).(*parsedDocument)
	if d == nil || d.doc != opCtx.Doc {
		return nil
	}
	return d
}

// holdsDefer reports whether a fragment of the document (inline or
// spread) carries @defer, whatever its arguments: when none does, no
// request of it defers anything (DefersFragments), whatever its
// variables.
func (d *parsedDocument) holdsDefer() bool {
	d.defersOnce.Do(func() { d.defers = documentHoldsDefer(d.doc) })
	return d.defers
}

// documentHoldsDefer walks every selection of doc for a fragment that
// carries @defer.
func documentHoldsDefer(doc *ast.QueryDocument) bool {
	return anySelection(doc, func(s ast.Selection) bool {
		switch s := s.(type) {
		case *ast.InlineFragment:
			return s.Directives.ForName("defer") != nil
		case *ast.FragmentSpread:
			return s.Directives.ForName("defer") != nil
		}
		return false
	})
}

// anySelection reports whether is holds for a selection of doc, in any
// operation or fragment, at any depth.
func anySelection(doc *ast.QueryDocument, is func(ast.Selection) bool) bool {
	var walk func(ast.SelectionSet) bool
	walk = func(set ast.SelectionSet) bool {
		for _, s := range set {
			if is(s) {
				return true
			}
			switch s := s.(type) {
			case *ast.Field:
				if walk(s.SelectionSet) {
					return true
				}
			case *ast.InlineFragment:
				if walk(s.SelectionSet) {
					return true
				}
			}
		}
		return false
	}
	for _, op := range doc.Operations {
		if walk(op.SelectionSet) {
			return true
		}
	}
	for _, f := range doc.Fragments {
		if walk(f.SelectionSet) {
			return true
		}
	}
	return false
}

// memoKey is what parsedDocument.memo keeps a value under: an operation
// (nil for the whole text) and a name.
type memoKey struct {
	op  *ast.OperationDefinition
	key string
}

// limitPlan returns the limits' plan of one of the document's operations,
// made by plan the first time (under the entry's lock: the requests that
// arrive meanwhile wait for it rather than walk the document too).
func (d *parsedDocument) limitPlan(op *ast.OperationDefinition, plan func() *limitPlan) *limitPlan {
	return d.memo(op, "limits", func() any { return plan() }).(*limitPlan)
}

// memo returns what make computes of one of the document's operations
// under key, made the first time: a home, for the execution, of anything
// that depends on the document alone and is needed on every request.
func (d *parsedDocument) memo(op *ast.OperationDefinition, key string, make func() any) any {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := memoKey{op, key}
	if v, ok := d.memos[k]; ok {
		return v
	}
	if d.memos == nil {
		d.memos = map[memoKey]any{}
	}
	v := make()
	d.memos[k] = v
	return v
}

// perOperation returns what make computes of the request's operation under
// key: once per distinct document, kept with it (memo) and gone when it is
// evicted; made for this request alone when the operation context is not
// one the document cache made (an executor's tests that build their own).
func perOperation[T any](opCtx *graphql.OperationContext, key string, make func() T) T {
	d := documentOf(opCtx)
	if d == nil {
		return make()
	}
	return d.memo(opCtx.Operation, key, func() any { return make() }).(T)
}
