package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/tradenet/gateway/graph"
)

// The list resolvers sign their rows' cursors only when the operation
// reads them (graph/cursoruse.go). These tests check, over the sample
// service, that this changes no response and that it spares the MACs.

// cursorSample is one request of the cursor tests.
type cursorSample struct {
	name, query, operation string
	vars                   map[string]any
}

// TestCursorSkipChangesNoResponse: every request of a broad set (the
// golden queries, the validator commands' golden queries, the fuzz
// corpus, the benchmarks' and the examples' operations, every field of
// each list, and queries written for the cursors' corners: page info
// alone, start or end cursor alone, aliases, fragments, nested lists,
// @skip, @include, @defer, empty pages, pages from a cursor, pages signed
// in two halves), each also with its cursors taken out (all of them, the
// edges' only, the page info's only), is answered byte for byte the same
// whether the resolvers skip the cursors nobody reads or sign every one.
// And the skip spares MACs: fewer are computed with it than without.
func TestCursorSkipChangesNoResponse(t *testing.T) {
	keys, macs, err := graph.CountingCursorKeysForTest(graph.CursorKeyForTest)
	if err != nil {
		t.Fatal(err)
	}
	gw := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{CursorKeys: keys, Limits: fullSelectionLimits}})
	samples := withCursorVariants(cursorSamples(t, gw))
	run := func(every bool) (bodies [][]byte, signed int64) {
		graph.SignEveryCursorForTest(t, every)
		bodies = make([][]byte, len(samples))
		before := macs()
		t.Run(fmt.Sprintf("every=%t", every), func(t *testing.T) {
			for i, s := range samples {
				t.Run(s.name, func(t *testing.T) {
					t.Parallel()
					bodies[i] = postOperation(t, gw.URL, s)
				})
			}
		})
		return bodies, macs() - before
	}
	skipped, fewer := run(false)
	signed, all := run(true)
	for i, s := range samples {
		if !bytes.Equal(skipped[i], signed[i]) {
			t.Errorf("%s: the response differs when every cursor is signed (-skipped +signed):\n%s\nquery: %s",
				s.name, cmp.Diff(string(skipped[i]), string(signed[i])), s.query)
		}
	}
	t.Logf("%d requests; %d MACs with the skip, %d signing every cursor", len(samples), fewer, all)
	if fewer == 0 || fewer >= all {
		t.Errorf("%d MACs with the skip, %d signing every cursor: want fewer, and some", fewer, all)
	}
}

// postOperation POSTs a sample and returns the response's status and
// body; a document with @defer is sent accepting multipart/mixed, and its
// parts are returned as incrementalParts orders them.
func postOperation(t *testing.T, url string, s cursorSample) []byte {
	t.Helper()
	params := map[string]any{"query": s.query, "variables": s.vars}
	if s.operation != "" {
		params["operationName"] = s.operation
	}
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if strings.Contains(s.query, "@defer") {
		req.Header.Set("Accept", "multipart/mixed;deferSpec=20220824, application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	out := []byte(strconv.Itoa(resp.StatusCode) + " ")
	if media, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil && media == "multipart/mixed" {
		return append(out, incrementalParts(t, resp.Body, params["boundary"])...)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, inErrorOrder(raw)...)
}

// incrementalParts reads a multipart response: its initial part, then
// the incremental results of the later parts, one a line, sorted (they
// arrive in the order the deferred fragments finish, which varies).
func incrementalParts(t *testing.T, body io.Reader, boundary string) []byte {
	t.Helper()
	parts := multipart.NewReader(body, boundary)
	var initial []byte
	var later [][]byte
	for {
		p, err := parts.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("next part: %v", err)
		}
		raw, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		if initial == nil {
			initial = inErrorOrder(raw)
			continue
		}
		var part struct{ Incremental []json.RawMessage }
		if err := json.Unmarshal(raw, &part); err != nil {
			t.Fatalf("part %s: %v", raw, err)
		}
		for _, r := range part.Incremental {
			later = append(later, inErrorOrder(r))
		}
	}
	slices.SortFunc(later, bytes.Compare)
	return bytes.Join(append([][]byte{initial}, later...), []byte("\n"))
}

// inErrorOrder returns a response body with its errors sorted: the
// fields of a response resolve concurrently, and their errors are listed
// in the order they came, which varies from one request to the next. The
// rest of the body is kept byte for byte; a body that is not one JSON
// object is returned as it is.
func inErrorOrder(body []byte) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return body
	}
	var errs []json.RawMessage
	if json.Unmarshal(top["errors"], &errs) != nil || len(errs) < 2 {
		return body
	}
	slices.SortFunc(errs, func(a, b json.RawMessage) int { return bytes.Compare(a, b) })
	out := []byte("{")
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, k)
		out = append(out, ':')
		if k == "errors" {
			for i, e := range errs {
				if i == 0 {
					out = append(out, '[')
				} else {
					out = append(out, ',')
				}
				out = append(out, e...)
			}
			out = append(out, ']')
		} else {
			out = append(out, top[k]...)
		}
	}
	return append(out, '}')
}

// cursorSamples are the requests of TestCursorSkipChangesNoResponse, each
// with its variables.
func cursorSamples(t *testing.T, gw *testGateway) []cursorSample {
	t.Helper()
	ds := gw.Sample.Service.Dataset()
	var out []cursorSample
	fragments := loadFragments(t)
	for _, suite := range goldenSuites {
		for _, tc := range suite() {
			out = append(out, cursorSample{name: "golden " + tc.name, query: withFragments(t, tc.query, fragments), vars: resolveVars(t, ds, tc.variables)})
		}
	}
	for _, tc := range validatorCases(ds) {
		out = append(out, cursorSample{name: "golden " + tc.name, query: withFragments(t, tc.query, fragments), vars: resolveVars(t, ds, tc.variables)})
	}
	corpus, err := filepath.Glob("testdata/fuzz/FuzzGraphQLQuery/*")
	if err != nil || len(corpus) == 0 {
		t.Fatalf("no fuzz corpus: %v", err)
	}
	for _, file := range corpus {
		query, vars := readQueryCorpus(t, file)
		out = append(out, cursorSample{name: "corpus " + filepath.Base(file), query: query, vars: vars})
	}
	for list, q := range graph.FullPageQueries() {
		out = append(out, cursorSample{name: "full page " + list, query: strings.ReplaceAll(q, "first: 1000", "first: 60")})
	}

	// A transaction in the middle of the dataset: its hash, block and
	// cursor.
	mid := ds.Transactions.Meta(ds.Transactions.Len() / 2)
	var lookup struct {
		Transactions struct {
			Edges []struct{ Node struct{ Hash string } }
		}
	}
	gw.query(t, `query($c: String) { transactions(last: 1, before: $c) { edges { node { hash } } } }`,
		map[string]any{"c": txCursorOf(t, ds, "command.orderSubmission")}).mustData(t, &lookup)
	if len(lookup.Transactions.Edges) != 1 {
		t.Fatal("no transaction to look up")
	}
	party := partyWithFundingAndDelegations(ds)
	required := map[string]any{
		"first": 50, "count": 20, "party": party, "node": ds.Nodes[0],
		"hash":  lookup.Transactions.Edges[0].Node.Hash,
		"block": strconv.FormatUint(mid.Block, 10),
		"after": graph.TxCursorAt(mid.Block, mid.Index), "before": graph.TxCursorAt(mid.Block, mid.Index),
	}
	for _, glob := range []string{"../bench/queries/*.graphql", "../examples/*.graphql"} {
		files, err := filepath.Glob(glob)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no query files (%v)", glob, err)
		}
		for _, file := range files {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			doc, perr := parser.ParseQuery(&ast.Source{Input: string(text)})
			if perr != nil {
				t.Fatalf("%s: %v", file, perr)
			}
			for _, op := range doc.Operations {
				vars := map[string]any{}
				for _, v := range op.VariableDefinitions {
					val, ok := required[v.Variable]
					if v.Variable == "id" {
						val, ok = party, true
						if strings.Contains(file, "validator") {
							val = ds.Nodes[0]
						}
					}
					if ok && (v.Type.NonNull && v.DefaultValue == nil || v.Variable == "first") {
						vars[v.Variable] = val
					}
				}
				out = append(out, cursorSample{name: "bench " + filepath.Base(file) + " " + op.Name, query: string(text), operation: op.Name, vars: vars})
			}
		}
	}

	c := graph.TxCursorAt(mid.Block, mid.Index)
	for i, q := range []struct {
		query string
		vars  map[string]any
	}{
		{`{ transactions(first: 20) { edges { node { hash } } pageInfo { hasNextPage hasPreviousPage } } }`, nil},
		{`{ transactions(first: 20) { pageInfo { startCursor } } }`, nil},
		{`{ transactions(first: 20) { pageInfo { endCursor } edges { node { hash } } } }`, nil},
		{`query($c: String) { transactions(last: 5, before: $c) { edges { cursor node { hash } } } newer: transactions(first: 5, after: $c) { edges { node { hash } } } }`, map[string]any{"c": c}},
		{`query($p: ID!) { party(id: $p) { fundingPayments(first: 7) { edges { node { amount } } pageInfo { hasNextPage endCursor } }
			delegations(first: 7) { edges { node { amount } } pageInfo { hasNextPage } } transactions(first: 3) { edges { cursor node { hash } } } } }`, map[string]any{"p": party}},
		{`query($p: ID!) { fundingPayments(partyId: $p, last: 4, newestFirst: false) { edges { node { timestamp } } pageInfo { hasPreviousPage startCursor } } }`, map[string]any{"p": party}},
		{`{ assets(first: 5) { edges { node { id } } } b: assets(last: 2) { edges { cursor } } }`, nil},
		{`{ delegations(first: 300) { edges { node { amount } } pageInfo { hasNextPage hasPreviousPage } } }`, nil},
		{`{ delegations(first: 300) { edges { cursor } pageInfo { endCursor } } }`, nil},
		{`{ transactions(first: 0) { pageInfo { hasNextPage startCursor endCursor } } assets(first: 0) { edges { cursor } pageInfo { hasNextPage endCursor } } }`, nil},
		{`{ transactions(first: 5) { edges { node { hash submitter { delegations(first: 2) { edges { node { amount } } pageInfo { endCursor } }
			transactions(first: 2) { edges { node { hash } } } } } } } }`, nil},
		{`query($s: Boolean!) { transactions(first: 5) { edges { cursor @skip(if: $s) node { hash } } } }`, map[string]any{"s": true}},
		{`query($s: Boolean!) { transactions(first: 5) { edges { cursor @skip(if: $s) node { hash } } } }`, map[string]any{"s": false}},
		{`query($i: Boolean!) { assets(first: 3) { pageInfo @include(if: $i) { endCursor } edges { node { id } } } }`, map[string]any{"i": true}},
		{`query($i: Boolean!) { assets(first: 3) { pageInfo @include(if: $i) { endCursor } edges { node { id } } } }`, map[string]any{"i": false}},
		{`{ transactions(first: 3) { edges { node { hash } ... @defer { cursor } } } }`, nil},
		{`{ transactions(first: 3, types: [WITHDRAW]) { edges { node { hash submitter { id ... @defer(label: "party") { delegations(first: 2) { edges { cursor } } d: delegations(first: 3) { pageInfo { hasNextPage } } } } } } } }`, nil},
		{`query($p: ID!) { party(id: $p) { id ... @defer { fundingPayments(first: 3) { pageInfo { endCursor } } transactions(first: 2) { edges { node { hash } } } } } }`, map[string]any{"p": party}},
		{`query { transactions(first: 4) { ...C } } fragment C on TransactionConnection { edges { ...E } pageInfo { ...P } }
			fragment E on TransactionEdge { node { hash } } fragment P on PageInfo { hasNextPage endCursor }`, nil},
		{`query($n: ID!) { validatorNode(id: $n) { delegations(first: 4) { edges { node { amount } } } d: delegations(last: 2) { pageInfo { startCursor } } } }`, map[string]any{"n": ds.Nodes[0]}},
		{`query($c: String!) { transactions(first: 3, after: $c) { edges { node { hash } } pageInfo { hasNextPage hasPreviousPage } } }`, map[string]any{"c": "not a cursor"}},
	} {
		out = append(out, cursorSample{name: fmt.Sprintf("cursors %d", i), query: q.query, vars: q.vars})
	}
	return out
}

// withCursorVariants returns samples followed by their variants with the
// cursors taken out: every cursor, the edges' only, the page info's only,
// where the document parses and holds some.
func withCursorVariants(samples []cursorSample) []cursorSample {
	out := samples
	for _, s := range samples {
		for _, cut := range []struct {
			name   string
			fields []string
		}{
			{"no cursors", []string{"cursor", "startCursor", "endCursor"}},
			{"page info cursors", []string{"cursor"}},
			{"edge cursors", []string{"startCursor", "endCursor"}},
		} {
			if q, ok := withoutFields(s.query, cut.fields); ok {
				v := s
				v.name, v.query = s.name+" ("+cut.name+")", q
				out = append(out, v)
			}
		}
	}
	return out
}

// withoutFields returns query without its selections of the fields named
// (a selection set left empty selects __typename), and whether it took
// any out.
func withoutFields(query string, fields []string) (string, bool) {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return "", false
	}
	cut := false
	var walk func(ast.SelectionSet) ast.SelectionSet
	walk = func(set ast.SelectionSet) ast.SelectionSet {
		kept := set[:0]
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				if len(s.SelectionSet) == 0 && slices.Contains(fields, s.Name) {
					cut = true
					continue
				}
				s.SelectionSet = walk(s.SelectionSet)
			case *ast.InlineFragment:
				s.SelectionSet = walk(s.SelectionSet)
			}
			kept = append(kept, s)
		}
		if len(set) > 0 && len(kept) == 0 {
			kept = append(kept, &ast.Field{Name: "__typename", Alias: "__typename"})
		}
		return kept
	}
	for _, op := range doc.Operations {
		op.SelectionSet = walk(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		f.SelectionSet = walk(f.SelectionSet)
	}
	if !cut {
		return "", false
	}
	var b strings.Builder
	formatter.NewFormatter(&b).FormatQueryDocument(doc)
	return b.String(), true
}

// TestCursorsSignedOnlyWhenRead: a page whose operation reads no cursor of
// its list signs none; one that reads its edges' cursors, or its page
// info's start or end cursor, signs one a row (and its page info's cursors
// are its first and last edges'), for each list.
func TestCursorsSignedOnlyWhenRead(t *testing.T) {
	keys, macs, err := graph.CountingCursorKeysForTest(graph.CursorKeyForTest)
	if err != nil {
		t.Fatal(err)
	}
	gw := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{CursorKeys: keys}})
	ds := gw.Sample.Service.Dataset()
	party := partyWithFundingAndDelegations(ds).(string)
	lists := []struct{ name, field string }{
		{"transactions", `transactions(first: 12)`},
		{"assets", `assets(first: 4)`},
		{"delegations", `delegations(first: 9)`},
		{"fundingPayments", `fundingPayments(partyId: "` + party + `", first: 6)`},
		{"party", `party(id: "` + party + `") { delegations(first: 5)`},
	}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			open, close := l.field, ""
			if strings.HasPrefix(l.name, "party") {
				close = " }"
			}
			for _, tt := range []struct {
				name, selection string
				signed          bool
			}{
				{"rows only", `edges { node { __typename } }`, false},
				{"page info without cursors", `edges { node { __typename } } pageInfo { hasNextPage hasPreviousPage }`, false},
				{"edge cursors", `edges { cursor node { __typename } }`, true},
				{"start cursor", `edges { node { __typename } } pageInfo { startCursor }`, true},
				{"end cursor", `pageInfo { endCursor } edges { node { __typename } }`, true},
				{"every cursor", `edges { cursor } pageInfo { hasNextPage startCursor endCursor }`, true},
			} {
				t.Run(tt.name, func(t *testing.T) {
					before := macs()
					r := gw.query(t, `{ `+open+` { `+tt.selection+` }`+close+` }`, nil)
					signed := macs() - before
					var data map[string]json.RawMessage
					r.mustData(t, &data)
					conn := data[strings.SplitN(l.field, "(", 2)[0]]
					if l.name == "party" {
						var p struct{ Delegations json.RawMessage }
						if err := json.Unmarshal(conn, &p); err != nil {
							t.Fatal(err)
						}
						conn = p.Delegations
					}
					var page struct {
						Edges []struct {
							Cursor *string
						}
						PageInfo struct {
							StartCursor, EndCursor *string
						}
					}
					if err := json.Unmarshal(conn, &page); err != nil {
						t.Fatalf("%v: %s", err, conn)
					}
					rows := len(page.Edges)
					if rows < 2 {
						t.Fatalf("%d rows: the list needs two at least", rows)
					}
					want := int64(0)
					if tt.signed {
						want = int64(rows)
					}
					if signed != want {
						t.Errorf("%d cursors signed for %d rows, want %d", signed, rows, want)
					}
					for i, e := range page.Edges {
						if strings.Contains(tt.selection, "cursor node") || tt.name == "every cursor" {
							if e.Cursor == nil || *e.Cursor == "" {
								t.Errorf("edge %d: cursor %v", i, e.Cursor)
							}
						} else if e.Cursor != nil {
							t.Errorf("edge %d: cursor %q not selected", i, *e.Cursor)
						}
					}
					if tt.name == "every cursor" && (page.PageInfo.StartCursor == nil || *page.PageInfo.StartCursor != *page.Edges[0].Cursor ||
						page.PageInfo.EndCursor == nil || *page.PageInfo.EndCursor != *page.Edges[rows-1].Cursor) {
						t.Errorf("page info %v %v, edges' first and last %q %q", page.PageInfo.StartCursor, page.PageInfo.EndCursor, *page.Edges[0].Cursor, *page.Edges[rows-1].Cursor)
					}
					if (tt.name == "start cursor" && page.PageInfo.StartCursor == nil) || (tt.name == "end cursor" && page.PageInfo.EndCursor == nil) {
						t.Errorf("page info %+v: the cursor selected is null", page.PageInfo)
					}
				})
			}
		})
	}
}

// A subscription's events read the cursors of the lists nested in them
// as a query does: a submitter's transactions, with their edges' cursors
// and their end cursor selected, carry the cursors a query of the same
// list gets; with neither selected, none.
func TestSubscriptionNestedCursors(t *testing.T) {
	g := newLiveGateway(t, liveOptions{})
	head := g.headCursor(t)
	s := subscribeSSE(t, g.URL, `subscription($after: String) { transactions(after: $after) { cursor node { hash submitter { id
		transactions(first: 2) { edges { cursor node { hash } } pageInfo { endCursor } }
		plain: transactions(first: 2) { edges { node { hash } } } } } } }`, map[string]any{"after": head})
	g.waitSubscribed(t, 1)
	appended := g.appendTxs(t, 1)
	name, data := s.mustEvent()
	type list struct {
		Edges []struct {
			Cursor *string
			Node   struct{ Hash string }
		}
		PageInfo *struct{ EndCursor *string }
	}
	var event struct {
		Data struct {
			Transactions struct {
				Cursor string
				Node   struct {
					Hash      string
					Submitter struct {
						ID           string
						Transactions list
						Plain        list
					}
				}
			}
		}
		Errors []gqlError
	}
	if err := json.Unmarshal(data, &event); name != "next" || err != nil || len(event.Errors) > 0 {
		t.Fatalf("event %s %s (%v)", name, data, err)
	}
	got := event.Data.Transactions
	if got.Cursor == "" || got.Node.Hash != appended[0].Hash {
		t.Fatalf("event %s, want the transaction appended, %s", data, appended[0].Hash)
	}
	var want struct{ Party struct{ Transactions list } }
	g.query(t, `query($p: ID!) { party(id: $p) { transactions(first: 2) { edges { cursor node { hash } } pageInfo { endCursor } } } }`,
		map[string]any{"p": got.Node.Submitter.ID}).mustData(t, &want)
	nested, plain := got.Node.Submitter.Transactions, got.Node.Submitter.Plain
	if len(nested.Edges) == 0 || nested.PageInfo == nil || nested.PageInfo.EndCursor == nil {
		t.Fatalf("submitter's transactions %s", data)
	}
	if len(want.Party.Transactions.Edges) != len(nested.Edges) || *want.Party.Transactions.PageInfo.EndCursor != *nested.PageInfo.EndCursor {
		t.Errorf("the event's nested list %s, a query's %+v", data, want.Party.Transactions)
	}
	for i, e := range nested.Edges {
		if w := want.Party.Transactions.Edges[i]; e.Cursor == nil || *e.Cursor == "" || *e.Cursor != *w.Cursor || e.Node.Hash != w.Node.Hash {
			t.Errorf("edge %d: %v %s, a query's %v %s", i, e.Cursor, e.Node.Hash, w.Cursor, w.Node.Hash)
		}
	}
	for i, e := range plain.Edges {
		if e.Cursor != nil {
			t.Errorf("plain edge %d: cursor %q not selected", i, *e.Cursor)
		}
	}
	if len(plain.Edges) != len(nested.Edges) {
		t.Errorf("%d plain rows, %d with cursors", len(plain.Edges), len(nested.Edges))
	}
}
