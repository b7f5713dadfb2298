package graph

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Which cursors an operation reads. A list resolver signs a cursor for
// every row of its page (and pageInfo's start and end cursors are two of
// them): on a page of 50 that is 50 MACs, work for nothing when the
// operation selects no cursor. So the list resolvers ask readsCursors
// first, and when the operation reads no cursor of their connection type,
// the edges keep an empty cursor and pageInfo's start and end cursors are
// null, as on an empty page. Neither is written to the response, since the
// operation does not select them; nothing else reads them: the HTTP
// caching's ETag is the written response's, and its Cache-Control follows
// the upstream answers and the key's kind, not the cursors made; the
// request's memo and the live events' sharing keep upstream answers, not
// connections; and the live feed's own edges are made by the live feed,
// which always signs them.
//
// What is read is found in the operation's document, by type and field
// name, not by path (as commanduse.go does for commands): a connection
// type's cursors are read when the operation selects, anywhere,
//
//   - `cursor` in the selection of that type's `edges` field, or
//   - `startCursor` or `endCursor` in the selection of its `pageInfo`
//     field,
//
// through inline fragments and fragment spreads. Selections under @skip,
// @include or @defer count as selected: a cursor signed for nothing costs
// time, a cursor left out when it is read would be a wrong answer. A field
// the walk cannot place (a document that was not validated) makes every
// cursor read. The result is computed once per parsed operation and kept
// with the document (perOperation).

// cursorUse is which connection types' cursors an operation reads.
type cursorUse struct {
	// every: every connection's cursors are read (the walk could not
	// tell).
	every bool
	// types are the connection types whose cursors are read, sorted.
	types []string
}

// reads reports whether u reads the cursors of the connection type conn.
func (u *cursorUse) reads(conn string) bool {
	return u.every || slices.Contains(u.types, conn)
}

// everyCursor is the use that reads every cursor.
var everyCursor = &cursorUse{every: true}

// connectionTypes are the schema's connection types, by the list whose
// cursors they carry. TestConnectionTypesOfLists checks them against the
// schema: a name that matched no type would leave the list's cursors
// unsigned.
var connectionTypes = map[cursorList]string{
	listAssets:          "AssetConnection",
	listFundingPayments: "FundingPaymentConnection",
	listDelegations:     "DelegationConnection",
	listTransactions:    "TransactionConnection",
}

// signEveryCursor makes readsCursors report every cursor read, whatever
// the operation selects: set by tests (export_test.go) to compare the
// responses with and without the skip.
var signEveryCursor atomic.Bool

// readsCursors reports whether the request's operation reads the cursors
// of list's connection type: true when there is no operation to read it
// from.
func readsCursors(ctx context.Context, list cursorList) bool {
	if signEveryCursor.Load() || !graphql.HasOperationContext(ctx) {
		return true
	}
	conn, ok := connectionTypes[list]
	if !ok {
		return true
	}
	opCtx := graphql.GetOperationContext(ctx)
	if opCtx.Doc == nil || opCtx.Operation == nil {
		return true
	}
	return perOperation(opCtx, "cursor use", func() *cursorUse {
		return readCursors(opCtx.Doc, opCtx.Operation)
	}).reads(conn)
}

// readCursors walks op for the connection types whose cursors it reads.
func readCursors(doc *ast.QueryDocument, op *ast.OperationDefinition) *cursorUse {
	w := cursorWalk{doc: doc, walked: map[cursorSpread]bool{}, types: map[string]bool{}}
	w.selections(op.SelectionSet, cursorPlace{})
	if w.every {
		return everyCursor
	}
	u := &cursorUse{types: make([]string, 0, len(w.types))}
	for t := range w.types {
		u.types = append(u.types, t)
	}
	slices.Sort(u.types)
	return u
}

// cursorPlace is where a selection set sits for the walk: in the `edges`
// or the `pageInfo` field of the connection type conn, or (conn empty)
// anywhere else.
type cursorPlace struct {
	conn  string
	edges bool // in edges (else in pageInfo, when conn is set)
}

// cursorSpread is a fragment spread at a place: a fragment is walked once
// per place, which bounds the walk however often it is spread, and guards
// it against cycles.
type cursorSpread struct {
	name  string
	place cursorPlace
}

// cursorWalk walks one operation's selections.
type cursorWalk struct {
	doc    *ast.QueryDocument
	walked map[cursorSpread]bool
	types  map[string]bool // connection types whose cursors are read
	every  bool            // a field the walk cannot place
}

// selections looks for cursors in set, which sits at at, and below it.
func (w *cursorWalk) selections(set ast.SelectionSet, at cursorPlace) {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			w.field(s, at)
		case *ast.InlineFragment:
			w.selections(s.SelectionSet, at)
		case *ast.FragmentSpread:
			key := cursorSpread{s.Name, at}
			if w.walked[key] {
				continue
			}
			w.walked[key] = true
			if f := w.doc.Fragments.ForName(s.Name); f != nil {
				w.selections(f.SelectionSet, at)
			} else {
				w.every = true // a spread of no fragment: not validated
			}
		}
	}
}

// field looks for cursors in f, selected at at, and below it.
func (w *cursorWalk) field(f *ast.Field, at cursorPlace) {
	if f.ObjectDefinition == nil {
		// Not validated: the walk cannot tell what f is.
		w.every = true
		return
	}
	switch {
	case at.conn != "" && at.edges && f.Name == "cursor":
		w.types[at.conn] = true
	case at.conn != "" && !at.edges && (f.Name == "startCursor" || f.Name == "endCursor"):
		w.types[at.conn] = true
	case f.Name == "edges":
		w.selections(f.SelectionSet, cursorPlace{conn: f.ObjectDefinition.Name, edges: true})
	case f.Name == "pageInfo":
		w.selections(f.SelectionSet, cursorPlace{conn: f.ObjectDefinition.Name})
	default:
		w.selections(f.SelectionSet, cursorPlace{})
	}
}
