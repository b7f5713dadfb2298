package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/upstream"
)

// executions counts the queries each executor answered.
type executions struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *executions) observe(executor string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == nil {
		e.n = map[string]int{}
	}
	e.n[executor]++
}

func (e *executions) take() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.n
	e.n = nil
	return n
}

// sameAnswer fails unless the two response bodies are the same answer:
// data and extensions byte for byte, errors the same set (gqlgen's order
// follows its goroutines).
func sameAnswer(t *testing.T, direct, gqlgen []byte) {
	t.Helper()
	type doc struct {
		Data       json.RawMessage   `json:"data"`
		Errors     []json.RawMessage `json:"errors"`
		Extensions json.RawMessage   `json:"extensions"`
	}
	var d, g doc
	if err := json.Unmarshal(direct, &d); err != nil {
		t.Fatalf("direct executor's body: %v\n%.500s", err, direct)
	}
	if err := json.Unmarshal(gqlgen, &g); err != nil {
		t.Fatalf("gqlgen's body: %v\n%.500s", err, gqlgen)
	}
	if !bytes.Equal(d.Data, g.Data) {
		t.Fatalf("data differ:\ndirect %.2000s\ngqlgen %.2000s", d.Data, g.Data)
	}
	if !bytes.Equal(d.Extensions, g.Extensions) {
		t.Fatalf("extensions differ:\ndirect %s\ngqlgen %s", d.Extensions, g.Extensions)
	}
	de, ge := errorSet(d.Errors), errorSet(g.Errors)
	if !slices.Equal(de, ge) {
		t.Fatalf("errors differ:\ndirect %q\ngqlgen %q", de, ge)
	}
	if len(d.Errors) == 0 && !bytes.Equal(direct, gqlgen) {
		t.Fatalf("bodies differ:\ndirect %.1000s\ngqlgen %.1000s", direct, gqlgen)
	}
}

func errorSet(errs []json.RawMessage) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = string(e)
	}
	slices.Sort(out)
	return out
}

// TestDirectExecutorMatchesGqlgen runs every golden query, and queries
// written to reach the executor's corners, through two gateways over the
// same sample service: one with the direct executor, one with gqlgen's
// alone. The answers must be the same, and the direct executor must have
// answered every query but introspection, which gqlgen's executor answers
// alone, chosen before it starts.
func TestDirectExecutorMatchesGqlgen(t *testing.T) {
	var direct, gqlgen executions
	d := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Hooks: graph.Hooks{Execution: direct.observe}}})
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{GqlgenExecutor: true, Hooks: graph.Hooks{Execution: gqlgen.observe}}})
	ds := d.Sample.Service.Dataset()
	fragments := loadFragments(t)

	type tcase struct {
		name   string
		query  string
		vars   map[string]any
		gqlgen bool // gqlgen's executor answers it, chosen up front
	}
	var cases []tcase
	for _, set := range [][]goldenCase{listCases(), commandCases(), changeCases(), edgeCases()} {
		for _, c := range set {
			cases = append(cases, tcase{name: "golden/" + c.name, query: withFragments(t, c.query, fragments), vars: resolveVars(t, ds, c.variables)})
		}
	}
	party := ds.Parties[0]
	cases = append(cases,
		tcase{name: "aliases and __typename", query: `{ a: assets(first: 3) { __typename e: edges { c: cursor n: node { __typename i: id id } } } b: assets(last: 2) { pageInfo { hasNextPage startCursor } } __typename }`},
		tcase{name: "a field selected twice, merged", query: `{ assets(first: 2) { edges { node { id details { name } } } edges { node { details { symbol decimals } } } } }`},
		tcase{name: "skip and include", query: `query($s: Boolean!, $i: Boolean!) { assets(first: 2) { edges { node { id @skip(if: $s) status @include(if: $i) details @include(if: $s) { name } } } } }`, vars: map[string]any{"s": true, "i": false}},
		tcase{name: "skip and include, the same query with other variables", query: `query($s: Boolean!, $i: Boolean!) { assets(first: 2) { edges { node { id @skip(if: $s) status @include(if: $i) details @include(if: $s) { name } } } } }`, vars: map[string]any{"s": false, "i": true}},
		tcase{name: "fragments on the unions", query: `{ transactions(first: 30) { edges { node { hash command { __typename ... on BatchMarketInstructions { cancellations { marketId } } ...Unknown } } } } } fragment Unknown on UnknownCommand { name raw }`},
		tcase{name: "node interface", query: `query($id: ID!) { node(id: $id) { __typename id ... on Asset { details { name } } } }`, vars: map[string]any{"id": ds.Assets[0].ID}},
		tcase{name: "missing node", query: `{ node(id: "0000000000000000000000000000000000000000000000000000000000000000") { id } }`},
		tcase{name: "party with nested lists under a list", query: `query($p: ID!) { fundingPayments(partyId: $p, first: 3) { edges { node { party { id delegations(first: 2) { edges { node { amount node { id } } } } } } } } }`, vars: map[string]any{"p": party}},
		tcase{name: "bad argument", query: `{ assets(first: -1) { edges { cursor } } transactions(first: 1) { edges { node { hash } } } }`},
		tcase{name: "long lists, errors in many rows", query: proposalAssetsQuery, vars: map[string]any{"types": []string{"Batch Proposal"}}},
		tcase{name: "long lists, every command", query: withFragments(t, `{ transactions(first: 120) { edges { cursor node { `+txAll+` } } pageInfo { hasNextPage endCursor } } }`, fragments)},
		tcase{name: "a long list of short rows", query: `{ delegations(first: 700) { edges { cursor node { party { id } nodeId node { id } epochSeq amount } } } }`},
		tcase{name: "introspection", query: `{ __schema { queryType { name } } assets(first: 1) { edges { cursor } } }`, gqlgen: true},
		tcase{name: "__type", query: `{ __type(name: "Asset") { name fields { name } } }`, gqlgen: true},
	)
	// Twice: the second time, the parsed operations come from gqlgen's
	// query cache, and their plans from the direct executor's.
	cases = append(cases, cases...)
	for i, c := range cases {
		if i >= len(cases)/2 {
			c.name = "again/" + c.name
		}
		t.Run(c.name, func(t *testing.T) {
			ds, db := rawPost(t, d.URL, c.query, c.vars)
			gs, gb := rawPost(t, g.URL, c.query, c.vars)
			if ds != gs {
				t.Fatalf("status %d, gqlgen's %d", ds, gs)
			}
			if ds != http.StatusOK {
				t.Fatalf("status %d: %.300s", ds, db)
			}
			sameAnswer(t, db, gb)
			got := direct.take()
			want := map[string]int{"direct": 1}
			if c.gqlgen {
				want = map[string]int{"gqlgen": 1}
			}
			if !mapsEqual(got, want) {
				t.Fatalf("executions %v, want %v", got, want)
			}
			gqlgen.take()
		})
	}
}

// TestDirectExecutorMatchesGqlgenOverTheDataset: the direct executor and
// gqlgen's give the same answers for the whole default dataset (every
// command and change kind, mixed) paged forwards and backwards (forwards
// only under -short) with every field of the schema selected (fullSelection: types added to the schema
// are covered without editing this test), and the direct executor answers
// every page itself.
func TestDirectExecutorMatchesGqlgenOverTheDataset(t *testing.T) {
	t.Parallel() // CPU: reads the shared sample, counts none of its requests
	var direct, gqlgen executions
	d := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Limits: fullSelectionLimits, Hooks: graph.Hooks{Execution: direct.observe}}})
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Limits: fullSelectionLimits, GqlgenExecutor: true, Hooks: graph.Hooks{Execution: gqlgen.observe}}})
	total := d.Sample.Service.Dataset().Transactions.Len()
	query := `query(` + pagingVars + `) { transactions(first: $first, after: $after, last: $last, before: $before) {
		edges { cursor node ` + fullSelection(t, "Transaction").String() + ` }
		pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
	const size = 1000
	// Under -short, forwards only: every row of the dataset still goes
	// through both executors.
	directions := []bool{false, true}
	if testing.Short() {
		directions = directions[:1]
	}
	for _, backward := range directions {
		t.Run(fmt.Sprintf("backward=%v", backward), func(t *testing.T) {
			var cursor *string
			rows := 0
			for page := 0; ; page++ {
				vars := map[string]any{"first": size, "after": cursor}
				if backward {
					vars = map[string]any{"last": size, "before": cursor}
				}
				ds, db := rawPost(t, d.URL, query, vars)
				gs, gb := rawPost(t, g.URL, query, vars)
				if ds != http.StatusOK || gs != http.StatusOK {
					t.Fatalf("page %d: status %d, gqlgen's %d: %.300s", page, ds, gs, db)
				}
				sameAnswer(t, db, gb)
				// Every page is the direct executor's, those whose values
				// fail to marshal (the dataset's non-finite floats) too.
				if got := direct.take(); !mapsEqual(got, map[string]int{"direct": 1}) {
					t.Fatalf("page %d: executions %v, want the direct executor's", page, got)
				}
				gqlgen.take()
				var resp struct {
					Data struct{ Transactions connectionPage }
				}
				if err := json.Unmarshal(db, &resp); err != nil {
					t.Fatal(err)
				}
				c := resp.Data.Transactions
				rows += len(c.Edges)
				more, next := c.PageInfo.HasNextPage, c.PageInfo.EndCursor
				if backward {
					more, next = c.PageInfo.HasPreviousPage, c.PageInfo.StartCursor
				}
				if !more {
					break
				}
				cursor = next
			}
			if rows != total {
				t.Fatalf("paged through %d rows, the dataset has %d", rows, total)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestDirectPOSTWritesWhatJSONMarshalWould: the spliced response is byte
// for byte gqlgen's (json.Marshal's HTML escaping included), for data full
// of the characters it escapes.
func TestDirectPOSTWritesWhatJSONMarshalWould(t *testing.T) {
	for _, data := range []string{
		`{"a":"<script>&amp;</script>","b":["\u2028","\u2029","x\u2028y"],"c":null}`,
		`{"s":"plain","n":1,"e":"é中\\\"quoted\\\""}`,
		`{"raw":{"k":"a>b","l":[1,2,{"m":"&"}]}}`,
		`null`,
	} {
		want, err := json.Marshal(struct {
			Data json.RawMessage `json:"data"`
		}{json.RawMessage(data)})
		if err != nil {
			t.Fatal(err)
		}
		got := graph.SpliceForTest([]byte(data))
		if !bytes.Equal(got, want) {
			t.Fatalf("data %s:\n got %s\nwant %s", data, got, want)
		}
	}
}

func FuzzDirectPOSTSplice(f *testing.F) {
	f.Add(`{"a":"<>&\u2028\u2029"}`)
	f.Add(`["\u00e2\u0080\u00a8", "\u2027", "\u202a"]`)
	f.Add("\u2028x<\u2029&>\xe2\x80")
	f.Add("\xe2\x80\xa8\xe2")
	f.Fuzz(func(t *testing.T, s string) {
		// Any string, as a JSON string value with its HTML characters
		// as they are (as the direct executor writes them), and the same
		// string as a key, so that the splice meets them anywhere.
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(false)
		if err := e.Encode(map[string]any{s: []string{s, "<" + s + "&", s + "\u2028"}}); err != nil {
			return
		}
		raw := bytes.TrimSpace(enc.Bytes())
		want, err := json.Marshal(struct {
			Data json.RawMessage `json:"data"`
		}{json.RawMessage(raw)})
		if err != nil {
			return
		}
		if got := graph.SpliceForTest(raw); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

// rootFieldCounter intercepts root fields, which only gqlgen's executor
// runs through extensions.
type rootFieldCounter struct{ n atomic.Int64 }

func (c *rootFieldCounter) ExtensionName() string                   { return "RootFieldCounter" }
func (c *rootFieldCounter) Validate(graphql.ExecutableSchema) error { return nil }
func (c *rootFieldCounter) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	c.n.Add(1)
	return next(ctx)
}

// TestFieldInterceptorsGetGqlgensExecutor: an extension that intercepts
// fields sees every field, because such a handler runs gqlgen's executor
// alone.
func TestFieldInterceptorsGetGqlgensExecutor(t *testing.T) {
	var ex executions
	counter := &rootFieldCounter{}
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{
		Extensions: []graphql.HandlerExtension{counter},
		Hooks:      graph.Hooks{Execution: ex.observe},
	}})
	resp := g.query(t, `{ assets(first: 1) { edges { cursor } } delegations(first: 1) { edges { cursor } } }`, nil)
	if len(resp.Errors) > 0 {
		t.Fatalf("errors %+v", resp.Errors)
	}
	if got := ex.take(); !mapsEqual(got, map[string]int{"gqlgen": 1}) {
		t.Fatalf("executions %v, want gqlgen's only", got)
	}
	if n := counter.n.Load(); n != 2 {
		t.Fatalf("the extension saw %d root fields, want 2", n)
	}
}

// spoiledCommands is an Upstream whose transaction pages carry, in their
// first rows, commands no well-formed page holds: a member the Command
// union has no case for (both executors panic on it, outside any
// resolver), and an unknown command without its JSON (a nil in a non-null
// field). Each page is a copy: the client's own stays as it was.
type spoiledCommands struct{ graph.Upstream }

// strangeCommand is a member of the Command union that neither executor
// knows.
type strangeCommand struct{}

// IsCommand makes it a member of the union.
func (strangeCommand) IsCommand() {}

func (u spoiledCommands) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	page, err := u.Upstream.ListTransactions(ctx, p)
	if err != nil || len(page.Transactions) < 3 {
		return page, err
	}
	spoiled := &upstream.TransactionPage{Transactions: slices.Clone(page.Transactions)}
	for i, kind := range []upstream.CommandKind{strangeCommand{}, &upstream.UnknownCommand{Name: "spoiled"}} {
		// The command decoded whole, in place of the client's lazy one.
		spoiled.Transactions[i].LazyCommand = upstream.TxCommand{}
		spoiled.Transactions[i].Command = upstream.Command{Kind: kind}
	}
	return spoiled, nil
}

// directError is an error of a response body, as the tests below read it.
type directError struct {
	Message    string
	Path       []any
	Extensions struct{ Code string }
}

// TestDirectExecutorHandlesErrorsAndNullsItself: errors and nulls in
// non-null positions, and panics outside resolvers, are the direct
// executor's to answer (no operation starts on it and ends on gqlgen's),
// and its answers are gqlgen's: the nearest nullable ancestor is null, each
// error recorded once at its path, the fields after a panic written.
func TestDirectExecutorHandlesErrorsAndNullsItself(t *testing.T) {
	var direct, gqlgen executions
	wrap := func(u graph.Upstream) graph.Upstream { return spoiledCommands{u} }
	d := newGateway(t, nil, gatewayOptions{Wrap: wrap, Executor: graph.ExecutorConfig{Hooks: graph.Hooks{Execution: direct.observe}}})
	g := newGateway(t, nil, gatewayOptions{Wrap: wrap, Executor: graph.ExecutorConfig{GqlgenExecutor: true, Hooks: graph.Hooks{Execution: gqlgen.observe}}})

	type wantError struct{ path, message, code string }
	for _, c := range []struct {
		name   string
		query  string
		data   string // the data, exactly; "" for the page below
		errors []wantError
	}{{
		name:   "an error in a non-null root field nulls the data",
		query:  `{ assets(first: 2) { edges { cursor } } party(id: "not a key") { id } }`,
		data:   `null`,
		errors: []wantError{{path: "party", code: "BAD_USER_INPUT"}},
	}, {
		name: "a nil in a non-null field nulls its nullable parent, a panic is an error at its field",
		query: `{ transactions(first: 3) { edges { node {
			command { __typename ... on UnknownCommand { name raw } }
			index
		} } } }`,
		errors: []wantError{
			{path: "transactions.edges.0.node.command", message: "internal error", code: "INTERNAL"},
			// The presenter hides the message of gqlgen's null error.
			{path: "transactions.edges.1.node.command.raw", message: "internal error", code: "INTERNAL"},
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			ds, db := rawPost(t, d.URL, c.query, nil)
			gs, gb := rawPost(t, g.URL, c.query, nil)
			if ds != http.StatusOK || gs != http.StatusOK {
				t.Fatalf("status %d, gqlgen's %d: %.300s", ds, gs, db)
			}
			sameAnswer(t, db, gb)
			if got := direct.take(); !mapsEqual(got, map[string]int{"direct": 1}) {
				t.Fatalf("executions %v, want the direct executor's alone", got)
			}
			gqlgen.take()
			var resp struct {
				Data   json.RawMessage
				Errors []directError
			}
			if err := json.Unmarshal(db, &resp); err != nil {
				t.Fatal(err)
			}
			if c.data != "" && string(resp.Data) != c.data {
				t.Fatalf("data %s, want %s", resp.Data, c.data)
			}
			if len(resp.Errors) != len(c.errors) {
				t.Fatalf("errors %+v, want %d", resp.Errors, len(c.errors))
			}
			slices.SortFunc(resp.Errors, func(a, b directError) int {
				return strings.Compare(fmt.Sprint(a.Path), fmt.Sprint(b.Path))
			})
			for i, w := range c.errors {
				e := resp.Errors[i]
				path := make([]string, len(e.Path))
				for j, p := range e.Path {
					path[j] = fmt.Sprint(p)
				}
				if got := strings.Join(path, "."); got != w.path {
					t.Errorf("error %d at %s, want %s", i, got, w.path)
				}
				if w.message != "" && e.Message != w.message {
					t.Errorf("error %d: %q, want %q", i, e.Message, w.message)
				}
				if w.code != "" && e.Extensions.Code != w.code {
					t.Errorf("error %d: code %q, want %q", i, e.Extensions.Code, w.code)
				}
			}
			if c.data != "" {
				return
			}
			var page struct {
				Transactions struct {
					Edges []struct {
						Node struct {
							Command json.RawMessage
							Index   *int
						}
					}
				}
			}
			if err := json.Unmarshal(resp.Data, &page); err != nil {
				t.Fatal(err)
			}
			edges := page.Transactions.Edges
			if len(edges) != 3 {
				t.Fatalf("%d rows, want 3: %s", len(edges), resp.Data)
			}
			for i, e := range edges {
				if e.Node.Index == nil {
					t.Errorf("row %d: no index after its command: %s", i, resp.Data)
				}
				if null := string(e.Node.Command) == "null"; null != (i < 2) {
					t.Errorf("row %d: command %s", i, e.Node.Command)
				}
			}
		})
	}
}

// TestDirectExecutorDefersAsGqlgen: a query with @defer, answered by the
// direct executor, has gqlgen's payloads: the same initial data, and the
// same deferred payloads (path, label, data, errors), in an order of their
// own (each is written as soon as it can be).
func TestDirectExecutorDefersAsGqlgen(t *testing.T) {
	var direct executions
	d := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Hooks: graph.Hooks{Execution: direct.observe}}})
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{GqlgenExecutor: true}})
	const accept = "multipart/mixed;deferSpec=20220824, application/json"
	for _, c := range []struct {
		name  string
		query string
		vars  map[string]any
	}{
		{name: "nested", query: nestedDeferQuery, vars: map[string]any{"n": 4}},
		{name: "asset references and a connection", query: `{ transactions(first: 3, types: [WITHDRAW]) { edges { cursor node { hash
			submitter { id ... @defer(label: "party") { delegations(first: 1) { edges { cursor } } } }
			command { __typename ... on WithdrawSubmission { amount
				... @defer(label: "asset") { asset { id details { symbol } } } } } } } } }`},
		{name: "an error in a deferred payload", query: `{ transactions(first: 2) { edges { node { hash
			submitter { id ... @defer(label: "bad") { delegations(first: -1) { edges { cursor } } } } } } } }`},
		{name: "two labels on one object", query: `{ transactions(first: 2) { edges { node {
			submitter { id ... @defer(label: "a") { delegations(first: 1) { edges { cursor } } }
				... @defer(label: "b") { transactions(first: 1) { edges { node { hash } } } } } } } } }`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dInitial, dLater := readIncremental(t, readMultipart(t, streamRequest(t, context.Background(), d.URL, http.MethodPost, accept, c.query, c.vars)))
			gInitial, gLater := readIncremental(t, readMultipart(t, streamRequest(t, context.Background(), g.URL, http.MethodPost, accept, c.query, c.vars)))
			if got := direct.take(); !mapsEqual(got, map[string]int{"direct": 1}) {
				t.Fatalf("executions %v, want the direct executor's", got)
			}
			if !bytes.Equal(dInitial.Data, gInitial.Data) || len(dInitial.Errors) != len(gInitial.Errors) {
				t.Fatalf("initial payloads differ:\ndirect %s %+v\ngqlgen %s %+v", dInitial.Data, dInitial.Errors, gInitial.Data, gInitial.Errors)
			}
			dp, gp := deferredPayloads(t, dLater), deferredPayloads(t, gLater)
			if len(dp) == 0 {
				t.Fatal("no deferred payload")
			}
			if !slices.Equal(dp, gp) {
				t.Fatalf("deferred payloads differ:\ndirect %s\ngqlgen %s", strings.Join(dp, "\n       "), strings.Join(gp, "\n       "))
			}
		})
	}
}

// deferredPayloads are the incremental entries of the payloads given, each
// as JSON (path, label, data, errors), sorted.
func deferredPayloads(t *testing.T, later []deferPart) []string {
	t.Helper()
	var out []string
	for _, p := range later {
		for _, inc := range p.Incremental {
			raw, err := json.Marshal(inc)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(raw))
		}
	}
	slices.Sort(out)
	return out
}
