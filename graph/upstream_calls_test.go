package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// The bound on data-node requests (walker.field), query by query.
func TestUpstreamCallCount(t *testing.T) {
	round := assetRoundCalls(DefaultLoaderConfig) // 4: FewAssets single lookups
	const party = `"a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"`
	rows := `edges { node { amount } }`
	// An asset reference under a transaction: a new market's future.
	settlement := `command { ... on BatchProposalSubmission { terms { changes { change { ... on NewMarket { changes { instrument { future { settlementAsset { id status } } } } } } } } } }`
	cases := []struct {
		name  string
		query string
		vars  map[string]any
		want  int
	}{
		{"a data-node list is one request", `{ assets(first: 10) { edges { node { id } } } }`, nil, 1},
		{"a page size does not multiply its own request", `{ delegations(first: 1000) { ` + rows + ` } }`, nil, 1},
		{"root lookups are one each", `{ asset(id: "a") { id } n: node(id: "b") { id } }`, nil, 2},
		{"a party is a key, not a lookup", `{ party(id: ` + party + `) { id } validatorNode(id: ` + party + `) { id } }`, nil, 0},
		{"funding payments, a first page", `{ fundingPayments(partyId: ` + party + `, first: 10) { ` + rows + ` } }`, nil, 1},
		{"funding payments after a cursor take up to three windows", `{ fundingPayments(partyId: ` + party + `, first: 10, after: "c") { ` + rows + ` } }`, nil, 3},
		{"before a cursor too", `{ fundingPayments(partyId: ` + party + `, last: 10, before: "c") { ` + rows + ` } }`, nil, 3},
		{"a cursor variable counts when set", `query($c: String) { fundingPayments(partyId: ` + party + `, after: $c) { ` + rows + ` } }`, map[string]any{"c": "x"}, 3},
		{"and not when null", `query($c: String) { fundingPayments(partyId: ` + party + `, after: $c) { ` + rows + ` } }`, map[string]any{"c": nil}, 1},
		{"the explorer makes no data-node request", `{ transactions(first: 1000) { edges { node { hash submitter { id } } } } }`, nil, 0},
		{"a connection under each row of an explorer page", `{ transactions(first: 50) { edges { node { submitter { delegations(first: 5) { ` + rows + ` } } } } } }`, nil, 50},
		{"the finding: aliased connections under each row's submitter",
			`{ transactions(first: 50) { edges { node { submitter { a: delegations { ` + rows + ` } b: fundingPayments { ` + rows + ` } c: fundingPayments(after: "x") { ` + rows + ` } } } } } }`, nil, 50 * (1 + 1 + 3)},
		{"the default nested page multiplies", `{ transactions { edges { node { submitter { delegations { ` + rows + ` } } } } } }`, nil, 50},
		{"nested twice: each level's page multiplies the next",
			`{ delegations(first: 10) { edges { node { party { delegations(first: 20) { edges { node { node { delegations(first: 3) { ` + rows + ` } } } } } } } } } }`, nil, 1 + 10*(1+20*1)},
		{"a validator node's delegations under each row", `{ delegations(first: 7) { edges { node { node { delegations { ` + rows + ` } } } } } }`, nil, 1 + 7},
		{"fragments count at each spread",
			`query { a: party(id: ` + party + `) { ...F } b: party(id: ` + party + `) { ...F } } fragment F on Party { delegations(first: 2) { ` + rows + ` } fundingPayments { ` + rows + ` } }`, nil, 4},
		{"a fragment spread under a list multiplies",
			`query { transactions(first: 10) { edges { node { submitter { ...F } } } } } fragment F on Party { delegations { ` + rows + ` } }`, nil, 10},
		{"an asset reference is one loader round of its page", `{ transactions(first: 1000) { edges { node { ` + settlement + ` } } } }`, nil, round},
		{"each reference field is a round", `{ transactions(first: 10) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change { ... on NewSpotMarket { changes { instrument { spot { baseAsset { id status } quoteAsset { id status } } } } } } } } } } } } } }`, nil, 2 * round},
		{"aliased references are rounds each", `{ transactions(first: 10) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change { ... on NewSpotMarket { changes { instrument { spot { a: baseAsset { id status } b: baseAsset { status } } } } } } } } } } } } } }`, nil, 2 * round},
		{"a union's members: the dearest one's references",
			`{ transactions(first: 10) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change { ... on NewSpotMarket { changes { instrument { spot { baseAsset { id status } quoteAsset { id status } } } } } ... on UpdateAsset { asset { id status } } } } } } } } } } }`, nil, 2 * round},
		{"rows of several members: the dearest member's requests and references both",
			`{ transactions(first: 10) { edges { node { command { ... on AnnounceNode { node { delegations(first: 2) { ` + rows + ` } } } ... on BatchProposalSubmission { terms { changes { change { ... on UpdateAsset { asset { id status } } } } } } } } } } }`, nil, 10 + round},
		{"references under a nested list are rounds of each of its runs",
			`{ transactions(first: 10) { edges { node { submitter { transactions(first: 5) { edges { node { ` + settlement + ` } } } } } } } }`, nil, 10 * round},
		{"references under a data-node list add to its request",
			`{ delegations(first: 3) { edges { node { party { transactions { edges { node { ` + settlement + ` } } } } } } } }`, nil, 1 + 3*round},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if m := measureQuery(t, tc.query, tc.vars); m.calls != tc.want {
				t.Fatalf("calls %d, want %d", m.calls, tc.want)
			}
		})
	}
}

// walker.field never multiplies requests by the length of a plain list,
// which is only sound while no connection (and no root lookup) can be
// reached through one: each row of a connection is one of its page.
func TestNoConnectionUnderAPlainList(t *testing.T) {
	s := NewExecutableSchema(Config{}).Schema()
	seen := map[string]bool{}
	var walk func(t *ast.Definition, path string, underList bool)
	walk = func(def *ast.Definition, path string, underList bool) {
		members := []*ast.Definition{def}
		if def.Kind != ast.Object {
			members = s.PossibleTypes[def.Name]
		}
		for _, m := range members {
			key := m.Name + "/" + boolString(underList)
			if seen[key] {
				continue
			}
			seen[key] = true
			for _, f := range m.Fields {
				ft := s.Types[f.Type.Name()]
				if strings.HasPrefix(f.Name, "__") || !isComposite(ft) {
					continue
				}
				if isConnectionField(f) {
					if underList {
						t.Errorf("%s.%s: a connection under a plain list (%s); walker.field would undercount its requests", m.Name, f.Name, path)
					}
					// Its edges are its page, which it multiplies itself.
					walk(ft, path+"."+f.Name, false)
					continue
				}
				walk(ft, path+"."+f.Name, underList || (f.Type.Elem != nil && !strings.HasSuffix(m.Name, "Connection")))
			}
		}
	}
	walk(s.Query, "Query", false)
}

func boolString(b bool) string {
	if b {
		return "list"
	}
	return "one"
}

// legitimateQueries are the documents clients are known to send: the
// benchmark queries and the examples' query set, with their required
// variables set to the largest page (1000) or an id.
func legitimateQueries(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, glob := range []string{"../bench/queries/*.graphql", "../examples/*.graphql"} {
		files, err := filepath.Glob(glob)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no query files (%v)", glob, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = string(b)
		}
	}
	return out
}

// Every benchmark and example operation fits the default bound on
// data-node requests, with pages as large as its variables allow.
func TestLegitimateQueriesFitTheUpstreamCallLimit(t *testing.T) {
	s := NewExecutableSchema(Config{}).Schema()
	for file, text := range legitimateQueries(t) {
		doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Name: file, Input: text}, DefaultMaxTokens)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if errs := validator.Validate(s, doc); len(errs) > 0 {
			t.Fatalf("%s: %v", file, errs)
		}
		for _, op := range doc.Operations {
			raw := map[string]any{}
			for _, v := range op.VariableDefinitions {
				if v.DefaultValue != nil || !v.Type.NonNull {
					continue
				}
				switch v.Type.Name() {
				case "Int":
					raw[v.Variable] = 1000
				case "Uint64":
					raw[v.Variable] = "34514203"
				default:
					raw[v.Variable] = strings.Repeat("a1", 32)
				}
			}
			vars, gerr := validator.VariableValues(s, op, raw)
			if gerr != nil {
				t.Fatalf("%s %s: %v", file, op.Name, gerr)
			}
			m := measure(s, op, vars, DefaultPaging, assetRoundCalls(DefaultLoaderConfig))
			t.Logf("%s %s: at most %d data-node requests, cost %d", filepath.Base(file), op.Name, m.calls, m.cost)
			if m.err != nil || m.calls > DefaultMaxUpstreamCalls || m.cost > DefaultMaxCost {
				t.Errorf("%s %s: %d data-node requests (limit %d), cost %d, err %v", file, op.Name, m.calls, DefaultMaxUpstreamCalls, m.cost, m.err)
			}
		}
	}
	for list, q := range fullPageQueries() {
		m := measureQuery(t, q, nil)
		t.Logf("a full page of %s: at most %d data-node requests", list, m.calls)
		if m.calls > DefaultMaxUpstreamCalls {
			t.Errorf("a full page of %s: %d data-node requests, over the limit of %d", list, m.calls, DefaultMaxUpstreamCalls)
		}
	}
}
