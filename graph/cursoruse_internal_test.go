package graph

import (
	"context"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// Each list's connection type is a type of the schema with edges whose
// type has a cursor, and a pageInfo: a name that matched no type would
// leave the list's cursors unsigned when they are read. And every such
// type of the schema is a list's: a new connection is not left out.
func TestConnectionTypesOfLists(t *testing.T) {
	s := NewExecutableSchema(Config{}).Schema()
	isConnection := func(def *ast.Definition) bool {
		edges, info := def.Fields.ForName("edges"), def.Fields.ForName("pageInfo")
		if edges == nil || info == nil || info.Type.Name() != "PageInfo" {
			return false
		}
		edge := s.Types[edges.Type.Name()]
		return edge != nil && edge.Fields.ForName("cursor") != nil
	}
	var want []string
	for name, def := range s.Types {
		if def.Kind == ast.Object && isConnection(def) {
			want = append(want, name)
		}
	}
	slices.Sort(want)
	var got []string
	for list, name := range connectionTypes {
		def := s.Types[name]
		if def == nil || !isConnection(def) {
			t.Errorf("list %s: %s is not a connection type of the schema", list, name)
		}
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the lists' connection types are %v, the schema's %v", got, want)
	}
}

// readCursors finds the connection types whose cursors an operation
// reads: by the edges' cursor and pageInfo's start and end cursors,
// through fragments, at any depth, under any alias or directive.
func TestReadCursors(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	const party = `"a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"`
	for _, tt := range []struct {
		name, query string
		want        []string
	}{
		{"hashes", `{ transactions(first: 50) { edges { node { hash } } } }`, []string{}},
		{"edge cursors", `{ transactions(first: 50) { edges { cursor } } }`, []string{"TransactionConnection"}},
		{"page info without cursors", `{ assets { pageInfo { hasNextPage hasPreviousPage } edges { node { id } } } }`, []string{}},
		{"start cursor only", `{ assets { pageInfo { startCursor } } }`, []string{"AssetConnection"}},
		{"end cursor only", `{ delegations { pageInfo { endCursor } } }`, []string{"DelegationConnection"}},
		{"aliases", `{ a: assets { e: edges { c: cursor } } t: transactions { p: pageInfo { hasNextPage } } }`, []string{"AssetConnection"}},
		{"two connection types", `query($p: ID!) { fundingPayments(partyId: $p) { edges { cursor } } delegations { pageInfo { endCursor } } transactions { edges { node { hash } } } }`,
			[]string{"DelegationConnection", "FundingPaymentConnection"}},
		{"nested connections", `{ transactions { edges { node { submitter { delegations { edges { cursor } } transactions { edges { node { hash } } } } } } } }`,
			[]string{"DelegationConnection"}},
		{"nested in a node's delegations", `{ validatorNode(id: ` + party + `) { delegations { pageInfo { startCursor } } } }`, []string{"DelegationConnection"}},
		{"nested under a command", `{ transactions { edges { node { command { ... on AnnounceNode { node { delegations { edges { cursor } } } } } } } } }`,
			[]string{"DelegationConnection"}},
		{"named fragments", `query { transactions { ...Conn } party(id: ` + party + `) { fundingPayments { ...Info } } }
			fragment Conn on TransactionConnection { edges { ...Edge } }
			fragment Edge on TransactionEdge { node { hash } ...Cursor }
			fragment Cursor on TransactionEdge { cursor }
			fragment Info on FundingPaymentConnection { pageInfo { ...Ends } }
			fragment Ends on PageInfo { hasNextPage endCursor }`,
			[]string{"FundingPaymentConnection", "TransactionConnection"}},
		{"one page info fragment in two connections", `query { assets { pageInfo { ...Ends } } transactions { pageInfo { ...Ends } } }
			fragment Ends on PageInfo { endCursor }`,
			[]string{"AssetConnection", "TransactionConnection"}},
		{"a fragment spread twice", `query { assets { edges { ...E ...E } } } fragment E on AssetEdge { node { id } }`, []string{}},
		{"inline fragments", `{ transactions { edges { ... on TransactionEdge { ... { cursor } } } } }`, []string{"TransactionConnection"}},
		{"edges without cursor", `{ delegations { edges { node { amount party { id } } } pageInfo { hasNextPage } } }`, []string{}},
		{"under @skip", `query($s: Boolean!) { transactions { edges { cursor @skip(if: $s) } } }`, []string{"TransactionConnection"}},
		{"under @include", `query($s: Boolean!) { assets { pageInfo @include(if: $s) { startCursor } } }`, []string{"AssetConnection"}},
		{"under @defer", `{ transactions { edges { node { hash } ... @defer { cursor } } } }`, []string{"TransactionConnection"}},
		{"a deferred spread", `{ assets { pageInfo { ...Ends @defer } } } fragment Ends on PageInfo { endCursor }`, []string{"AssetConnection"}},
		{"typename only", `{ transactions { __typename edges { __typename } pageInfo { __typename } } }`, []string{}},
		{"subscription", `subscription { transactions { cursor node { submitter { delegations { edges { node { amount } } } } } } }`, []string{}},
		{"subscription with a nested cursor", `subscription { transactions { node { submitter { transactions { pageInfo { endCursor } } } } } }`,
			[]string{"TransactionConnection"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(schema, tt.query)
			if errs != nil {
				t.Fatal(errs)
			}
			use := readCursors(doc, doc.Operations[0])
			if use.every || !slices.Equal(use.types, tt.want) {
				t.Fatalf("reads %v (every: %t), want %v", use.types, use.every, tt.want)
			}
			for list, conn := range connectionTypes {
				if got, want := use.reads(conn), slices.Contains(tt.want, conn); got != want {
					t.Errorf("list %s: reads %t, want %t", list, got, want)
				}
			}
		})
	}
}

// A document that was not validated (fields the walk cannot place, a
// spread of a fragment it does not hold) reads every cursor.
func TestReadCursorsOfUnvalidatedDocuments(t *testing.T) {
	parsed, err := parser.ParseQuery(&ast.Source{Input: `{ transactions { edges { node { hash } } } }`})
	if err != nil {
		t.Fatal(err)
	}
	if use := readCursors(parsed, parsed.Operations[0]); !use.every {
		t.Errorf("a document only parsed: reads %v, want every cursor", use.types)
	}
	doc, errs := gqlparser.LoadQuery(NewExecutableSchema(Config{}).Schema(), `{ assets { edges { ...E } } } fragment E on AssetEdge { node { id } }`)
	if errs != nil {
		t.Fatal(errs)
	}
	doc.Fragments = nil
	if use := readCursors(doc, doc.Operations[0]); !use.every {
		t.Errorf("a spread of a fragment the document does not hold: reads %v, want every cursor", use.types)
	}
}

// Without an operation to read it from, or with an operation context
// that holds no document, every cursor is read.
func TestReadsCursorsWithoutOperation(t *testing.T) {
	for list := range connectionTypes {
		if !readsCursors(context.Background(), list) {
			t.Errorf("list %s: no operation, cursors not read", list)
		}
		ctx := graphql.WithOperationContext(context.Background(), &graphql.OperationContext{})
		if !readsCursors(ctx, list) {
			t.Errorf("list %s: an operation context without a document, cursors not read", list)
		}
	}
	if !readsCursors(context.Background(), "unknown") {
		t.Error("a list of no connection type: cursors not read")
	}
}

// With an operation, readsCursors answers from its document, made once
// per operation when the document is not kept.
func TestReadsCursorsOfAnOperation(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	doc, errs := gqlparser.LoadQuery(schema, `{ transactions { edges { node { hash } } } assets { edges { cursor } } }`)
	if errs != nil {
		t.Fatal(errs)
	}
	ctx := graphql.WithOperationContext(context.Background(), &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]})
	if readsCursors(ctx, listTransactions) {
		t.Error("transactions: cursors read")
	}
	if !readsCursors(ctx, listAssets) {
		t.Error("assets: cursors not read")
	}
	signEveryCursor.Store(true)
	defer signEveryCursor.Store(false)
	if !readsCursors(ctx, listTransactions) {
		t.Error("transactions, every cursor signed: cursors not read")
	}
}

// BenchmarkCursorUse: what the skip adds to a list's request (the
// operation's answer, kept with its document: one lookup) and what it
// spares on a page of 50 transactions whose cursors are not read (50
// cursors signed, as listTransactions did for every page).
func BenchmarkCursorUse(b *testing.B) {
	doc, errs := gqlparser.LoadQuery(NewExecutableSchema(Config{}).Schema(), `{ transactions(first: 50) { edges { node { hash } } } }`)
	if errs != nil {
		b.Fatal(errs)
	}
	opCtx := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
	opCtx.Stats.SetExtension(parsedDocumentKey, &parsedDocument{doc: doc})
	ctx := graphql.WithOperationContext(context.Background(), opCtx)
	b.Run("lookup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if readsCursors(ctx, listTransactions) {
				b.Fatal("cursors read")
			}
		}
	})
	b.Run("50 transaction cursors", func(b *testing.B) {
		b.ReportAllocs()
		cursors := make([]string, 50)
		for b.Loop() {
			for i := range cursors {
				cursors[i] = txCursor{B: 34505994 - uint64(i/3), I: uint32(i % 3)}.encode(testCursorKeys)
			}
		}
	})
}
