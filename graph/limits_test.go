package graph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// step is one field of a path through the schema; on names the member
// type entered when the field's type is abstract.
type step struct{ field, on string }

// deepestPath finds the path SchemaDepth measures, by the same rule, so
// that a test can query it.
func deepestPath(s *ast.Schema) []step {
	onPath := map[string]bool{s.Query.Name: true}
	var walk func(t *ast.Definition, connections int) []step
	walk = func(t *ast.Definition, connections int) []step {
		var best []step
		for _, f := range t.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			ft := s.Types[f.Type.Name()]
			if !isComposite(ft) {
				if len(best) < 1 {
					best = []step{{field: f.Name}}
				}
				continue
			}
			c := connections
			if isConnectionField(f) {
				if c++; c > 1 {
					continue
				}
			}
			members := []*ast.Definition{ft}
			if ft.Kind != ast.Object {
				members = s.PossibleTypes[ft.Name]
			}
			for _, m := range members {
				if onPath[m.Name] {
					continue
				}
				onPath[m.Name] = true
				if sub := walk(m, c); 1+len(sub) > len(best) {
					on := ""
					if ft.Kind != ast.Object {
						on = m.Name
					}
					best = append([]step{{f.Name, on}}, sub...)
				}
				delete(onPath, m.Name)
			}
		}
		return best
	}
	return walk(s.Query, 0)
}

func isComposite(t *ast.Definition) bool {
	return t != nil && (t.Kind == ast.Object || t.Kind == ast.Interface || t.Kind == ast.Union)
}

// pathQuery writes a query selecting path; args gives root arguments.
func pathQuery(path []step, args string) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i, s := range path {
		b.WriteString(s.field)
		if i == 0 && args != "" {
			b.WriteString("(" + args + ")")
		}
		if i < len(path)-1 {
			b.WriteString(" { ")
			if s.on != "" {
				b.WriteString("... on " + s.on + " { ")
			}
		}
	}
	for i := len(path) - 2; i >= 0; i-- {
		b.WriteString(" }")
		if path[i].on != "" {
			b.WriteString(" }")
		}
	}
	b.WriteString(" }")
	return b.String()
}

// fullSelection selects every field of t, recursively, except
// connections and types already on the path: a list's "ordinary fields".
// Where a field's type differs between the members of a union (`marketId`
// is ID! on OrderCancellation, ID on StopOrderCancellation), GraphQL
// requires a client selecting both to alias one: the members whose type
// for it does not merge with the most common one (sameShape) alias it by
// member name.
func fullSelection(s *ast.Schema, t *ast.Definition, onPath map[string]bool) string {
	var b strings.Builder
	b.WriteString("{ __typename")
	members := []*ast.Definition{t}
	if t.Kind != ast.Object {
		members = s.PossibleTypes[t.Name]
	}
	// usual[name] is the type most members give the field name (the first
	// seen among equals).
	usual, count := map[string]*ast.Type{}, map[string]int{}
	for _, m := range members {
		for _, f := range m.Fields {
			key := f.Name + " " + f.Type.String()
			count[key]++
			if u, ok := usual[f.Name]; !ok || count[key] > count[f.Name+" "+u.String()] {
				usual[f.Name] = f.Type
			}
		}
	}
	for _, m := range members {
		if t.Kind != ast.Object {
			b.WriteString(" ... on " + m.Name + " {")
		}
		for _, f := range m.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			ft := s.Types[f.Type.Name()]
			name := f.Name
			if !sameShape(s, f.Type, usual[f.Name], 0) {
				name = m.Name + "_" + f.Name + ": " + f.Name
			}
			if !isComposite(ft) {
				b.WriteString(" " + name)
				continue
			}
			if isConnectionField(f) || onPath[ft.Name] {
				continue
			}
			onPath[ft.Name] = true
			b.WriteString(" " + name + " " + fullSelection(s, ft, onPath))
			delete(onPath, ft.Name)
		}
		if t.Kind != ast.Object {
			b.WriteString(" }")
		}
	}
	b.WriteString(" }")
	return b.String()
}

// sameShape reports whether two fields of one response name and these
// types merge in one selection (GraphQL's SameResponseShape, over every
// field of composite types): the same list and non-null wrappers, the
// same leaf type, and objects whose fields of one name do too.
func sameShape(s *ast.Schema, a, b *ast.Type, depth int) bool {
	if a.NonNull != b.NonNull || (a.Elem == nil) != (b.Elem == nil) {
		return false
	}
	if a.Elem != nil {
		return sameShape(s, a.Elem, b.Elem, depth)
	}
	ta, tb := s.Types[a.NamedType], s.Types[b.NamedType]
	if !isComposite(ta) || !isComposite(tb) {
		return a.NamedType == b.NamedType
	}
	if a.NamedType == b.NamedType || depth > 8 {
		return true
	}
	for _, fa := range ta.Fields {
		if fb := tb.Fields.ForName(fa.Name); fb != nil && !sameShape(s, fa.Type, fb.Type, depth+1) {
			return false
		}
	}
	return true
}

// FullPageQueries are, for each root list, a page of 1000 rows with every
// ordinary field selected (exported to the e2e tests through
// export_test.go).
func fullPageQueries() map[string]string {
	s := NewExecutableSchema(Config{}).Schema()
	out := map[string]string{}
	for _, root := range []struct{ field, args, node string }{
		{"assets", "first: 1000", "Asset"},
		{"fundingPayments", `partyId: "` + strings.Repeat("a1", 32) + `", first: 1000`, "FundingPayment"},
		{"delegations", "first: 1000", "Delegation"},
		{"transactions", "first: 1000", "Transaction"},
	} {
		sel := fullSelection(s, s.Types[root.node], map[string]bool{root.node: true, "Query": true})
		out[root.field] = "{ " + root.field + "(" + root.args + ") { edges { cursor node " + sel + " } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }"
	}
	return out
}

func measureQuery(t *testing.T, q string, vars map[string]any) measurement {
	t.Helper()
	s := NewExecutableSchema(Config{}).Schema()
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: q}, DefaultMaxTokens)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if errs := validator.Validate(s, doc); len(errs) > 0 {
		t.Fatalf("validate: %v", errs)
	}
	return measure(s, doc.Operations[0], vars, DefaultPaging, assetRoundCalls(DefaultLoaderConfig))
}

func TestSchemaDepthIsItsDeepestPath(t *testing.T) {
	s := NewExecutableSchema(Config{}).Schema()
	path := deepestPath(s)
	if len(path) != SchemaDepth() {
		t.Fatalf("deepest path %v has %d fields, SchemaDepth says %d", path, len(path), SchemaDepth())
	}
	// The yardstick: a proposal's data-source filters, about 18
	// levels down.
	if d := SchemaDepth(); d < 17 || d > 20 {
		t.Fatalf("SchemaDepth = %d, want about 18", d)
	}
	q := pathQuery(path, `id: "`+strings.Repeat("a1", 32)+`"`)
	m := measureQuery(t, q, nil)
	if m.depth != len(path) {
		t.Fatalf("the deepest path's query measures %d deep, want %d:\n%s", m.depth, len(path), q)
	}
	if d := DefaultLimits().MaxDepth; m.depth > d || d > m.depth+depthMargin {
		t.Fatalf("default depth %d does not admit the deepest path (%d) and little more", d, m.depth)
	}
}

func TestFullPagesFitTheDefaultLimits(t *testing.T) {
	for list, q := range fullPageQueries() {
		m := measureQuery(t, q, nil)
		t.Logf("%s: depth %d, cost %d, %d aliases, %d bytes", list, m.depth, m.cost, m.aliases, len(q))
		if m.cost > DefaultMaxCost || m.depth > DefaultLimits().MaxDepth || m.aliases > DefaultLimits().MaxAliases {
			t.Errorf("%s: a full page of 1000 costs %d (limit %d), %d deep (limit %d)", list, m.cost, DefaultMaxCost, m.depth, DefaultLimits().MaxDepth)
		}
		if m.cost < 1000 {
			t.Errorf("%s: cost %d does not grow with the page", list, m.cost)
		}
	}
}

func TestCostModel(t *testing.T) {
	const conn = 1 + connectionCost
	cases := []struct {
		name  string
		query string
		vars  map[string]any
		want  int
	}{
		{"page of 10: edges and nodes per row", `{ assets(first: 10) { edges { node { id } } } }`, nil, conn + 10*2},
		{"scalars cost nothing", `{ assets(first: 10) { edges { cursor node { id status details { name symbol } } } } }`, nil, conn + 10*3},
		{"last counts like first", `{ assets(last: 7) { edges { node { id } } } }`, nil, conn + 7*2},
		{"the default page size", `{ assets { edges { node { id } } } }`, nil, conn + 50*2},
		{"a variable page size", `query($n: Int) { assets(first: $n) { edges { node { id } } } }`, map[string]any{"n": int64(20)}, conn + 20*2},
		{"a page size over the maximum counts as the maximum (the resolver refuses it)", `{ assets(first: 100000) { edges { node { id } } } }`, nil, conn + 1000*2},
		{"page info is multiplied too", `{ assets(first: 10) { pageInfo { hasNextPage } } }`, nil, conn + 10*1},
		{"a nested connection gets the nested cap", `{ delegations(first: 10) { edges { node { party { delegations(first: 1000) { edges { node { amount } } } } } } } }`, nil,
			conn + 10*(1+1+1+(conn+100*2))},
		{"a nested connection without first gets the default", `{ party(id: "p") { delegations { edges { node { amount } } } } }`, nil, 1 + conn + 50*2},
		{"a union costs its dearest member", `{ transactions(first: 1) { edges { node { command { ... on AnnounceNode { name } ... on BatchProposalSubmission { rationale { title } terms { closingTimestamp } } } } } } }`, nil,
			conn + 1*(1+1+1+2)},
		{"fragments count once per use", `query { a: assets(first: 2) { ...E } b: assets(first: 3) { ...E } } fragment E on AssetConnection { edges { node { id } } }`, nil,
			2*conn + 2*2 + 3*2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if m := measureQuery(t, tc.query, tc.vars); m.cost != tc.want {
				t.Fatalf("cost %d, want %d", m.cost, tc.want)
			}
		})
	}
}

func TestDepthFollowsFragments(t *testing.T) {
	m := measureQuery(t, `query { assets { ...C } } fragment C on AssetConnection { edges { ...E } } fragment E on AssetEdge { node { details { erc20 { contractAddress } } } }`, nil)
	if m.depth != 6 {
		t.Fatalf("depth %d, want 6 (assets edges node details erc20 contractAddress)", m.depth)
	}
}

// fragmentBomb is a valid document whose fragments each spread the next
// twice, through a cycle of the schema (party → delegations → party): it
// expands to 2^levels selections.
func fragmentBomb(levels int) string {
	var b strings.Builder
	b.WriteString(`query { party(id: "p") { ...P0 } }` + "\n")
	for i := range levels {
		next := "id"
		if i < levels-1 {
			next = fmt.Sprintf("...P%d", i+1)
		}
		fmt.Fprintf(&b, "fragment P%d on Party { a: delegations(first: 1) { edges { node { party { %s } } } } b: delegations(first: 2) { edges { node { party { %s } } } } }\n", i, next, next)
	}
	return b.String()
}

// Measuring must stay linear in the document (each fragment measured
// once), however large its expansion.
func TestFragmentBombIsMeasuredWithoutExpanding(t *testing.T) {
	m := measureQuery(t, fragmentBomb(40), nil)
	if m.depth != 2+40*4 || m.cost < costCap || m.aliases != 80 {
		t.Fatalf("measurement %+v, want depth %d, the cost cap and 80 aliases", m, 2+40*4)
	}
}
