package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// The limits are planned once per document (limits.go, limitPlan;
// documents_cache.go): these tests check that the plan measures every
// request as walking the document with its variables does, that the
// per-document work is done once per distinct document whatever the
// variables, and that the documents kept are bounded.

// TestLimitPlanMatchesMeasure: over the golden queries, the fuzz corpus,
// the benchmarks' queries and queries written for the corners (variables
// in page sizes under unions and fragments, in nested connections, in
// funding cursors, in oversized arguments, defaults), each with its own
// variables and variations of them (each variable dropped, numbers from 0
// to past the largest page, long strings, long lists), the plan's
// measurement is measure's: every figure, and the error.
func TestLimitPlanMatchesMeasure(t *testing.T) {
	type sample struct {
		name, query string
		vars        map[string]any
	}
	var samples []sample
	ds := dataset(t)
	fragments := loadFragments(t)
	for _, suite := range goldenSuites {
		for _, tc := range suite() {
			samples = append(samples, sample{"golden " + tc.name, withFragments(t, tc.query, fragments), resolveVars(t, ds, tc.variables)})
		}
	}
	corpus, err := filepath.Glob("testdata/fuzz/FuzzGraphQLQuery/*")
	if err != nil || len(corpus) == 0 {
		t.Fatalf("no fuzz corpus: %v", err)
	}
	for _, file := range corpus {
		query, vars := readQueryCorpus(t, file)
		samples = append(samples, sample{"corpus " + filepath.Base(file), query, vars})
	}
	benchQueries, _ := filepath.Glob("../bench/queries/*.graphql")
	for _, file := range benchQueries {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, sample{"bench " + filepath.Base(file), string(text), map[string]any{"first": 50, "cmdTypes": []string{"Batch Proposal"}}})
	}
	for list, q := range graph.FullPageQueries() {
		samples = append(samples, sample{"full page " + list, q, nil})
	}
	party := strings.Repeat("a1", 32)
	for i, q := range []string{
		`query($n: Int, $m: Int) { transactions(first: $n) { edges { node { hash submitter { delegations(first: $m) { edges { node { amount } } } } } } } }`,
		`query($n: Int) { transactions(first: 3) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change { __typename } } } } ... on AnnounceNode { node { delegations(first: $n) { edges { cursor } } } } } } } } }`,
		`query($n: Int, $m: Int) { transactions(first: 2) { edges { node { command { ...A ...B } } } } } fragment A on AnnounceNode { node { delegations(first: $n) { edges { cursor } } } } fragment B on AnnounceNode { node { d2: delegations(last: $m) { edges { cursor } } } }`,
		`query($n: Int) { a: assets(first: $n) { ...Rows } b: assets(first: 2) { ...Rows } } fragment Rows on AssetConnection { edges { node { id details { name } } } }`,
		`query($n: Int) { transactions(first: $n) { edges { node { ...T } } } t2: transactions(first: 1) { edges { node { ...T } } } } fragment T on Transaction { submitter { delegations(first: $n) { edges { cursor } } } }`,
		`query($p: ID!, $a: String, $b: String, $n: Int) { fundingPayments(partyId: $p, first: $n, after: $a, before: $b) { edges { node { amount } } } }`,
		`query($ids: [String!], $n: Int) { transactions(first: $n, cmdTypes: $ids) { edges { cursor } } }`,
		`query($ids: [String!] = ["a", "b"], $n: Int = 3) { transactions(first: $n, cmdTypes: $ids) { edges { cursor } } assets(first: $n) { edges { cursor } } }`,
		`query($x: String!) { transactions(first: 1, cmdTypes: [$x, "y"]) { edges { cursor } } }`,
		`query($x: String!) { transactions(first: 1, cmdTypes: [$x]) { edges { cursor } } t: transactions(first: 1, cmdTypes: ["` + strings.Repeat("z", 1100) + `"]) { edges { cursor } } }`,
		`query($x: String!) { transactions(first: 1, cmdTypes: [$x, "` + strings.Repeat("z", 1100) + `"]) { edges { cursor } } }`,
		`query($x: String!, $ids: [String!] = ["` + strings.Repeat("z", 1100) + `"]) { t: transactions(first: 1, cmdTypes: $ids) { edges { cursor } } transactions(first: 1, cmdTypes: [$x]) { edges { cursor } } }`,
		`query($n: Int) { asset(id: "x") { id details { name } } node(id: "y") { id } assets(last: $n) { edges { node { id } } } }`,
		`subscription($n: Int) { transactions { hash submitter { delegations(first: $n) { edges { cursor } } } command { ... on AnnounceNode { node { id } } } } }`,
		`query($v: Boolean!, $n: Int) { transactions(first: $n) @include(if: $v) { edges { node { hash } } } }`,
		`query($p: ID!, $n: Int) { party(id: $p) { id delegations(first: $n) { edges { node { amount validatorNode { id } } } } fundingPayments(last: $n) { edges { cursor } } } }`,
	} {
		vars := map[string]any{"n": 7, "m": 3, "p": party, "a": "c1", "b": "c2", "ids": []string{"Batch Proposal"}, "x": "Batch Proposal", "v": true}
		samples = append(samples, sample{fmt.Sprintf("corner %d", i), q, vars})
	}

	compared, differing := 0, 0
	for _, s := range samples {
		verdicts := map[string]bool{}
		for _, vars := range variations(s.vars) {
			planned, measured, ok := graph.CompareLimitPlan(s.query, vars)
			if !ok {
				continue
			}
			compared++
			verdicts[measured] = true
			if planned != measured {
				t.Errorf("%s with %v:\nplanned  %s\nmeasured %s\n%.300s", s.name, vars, planned, measured, s.query)
			}
		}
		if len(verdicts) > 1 {
			differing++
		}
	}
	t.Logf("%d samples, %d measurements compared; %d samples measured differently by their variables", len(samples), compared, differing)
	// Not vacuous: most samples measure, and the variables change many.
	if compared < 2*len(samples) || differing < 20 {
		t.Errorf("only %d measurements compared, %d samples varied by their variables", compared, differing)
	}
}

// variations are vars as a request sends them (decoded from JSON, numbers
// as json.Number), and variations of them: each variable dropped, and
// set to other values of its kind.
func variations(vars map[string]any) []map[string]any {
	base := jsonRoundTrip(vars)
	out := []map[string]any{base}
	for _, k := range slices.Sorted(maps.Keys(base)) {
		v := base[k]
		with := func(x any) {
			m := maps.Clone(base)
			m[k] = x
			out = append(out, m)
		}
		m := maps.Clone(base)
		delete(m, k)
		out = append(out, m)
		switch v := v.(type) {
		case json.Number:
			for _, n := range []string{"0", "1", "2", "17", "1000", "5000", "-1"} {
				with(json.Number(n))
			}
		case string:
			with(strings.Repeat("b", 2000))
			with("")
		case []any:
			long := make([]any, 150)
			for i := range long {
				long[i] = "Batch Proposal"
			}
			with(long)
			with([]any{strings.Repeat("c", 1500)})
		case bool:
			with(!v)
		}
	}
	return out
}

func jsonRoundTrip(vars map[string]any) map[string]any {
	raw, err := json.Marshal(vars)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		panic(err)
	}
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// readQueryCorpus reads a FuzzGraphQLQuery corpus file: the query, and
// its variables when they decode.
func readQueryCorpus(t *testing.T, file string) (string, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, line := range strings.Split(string(raw), "\n") {
		if s, ok := strings.CutPrefix(line, "string("); ok {
			v, err := strconv.Unquote(strings.TrimSuffix(s, ")"))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			values = append(values, v)
		}
	}
	if len(values) != 2 {
		t.Fatalf("%s: %d values, want a query and variables", file, len(values))
	}
	var vars map[string]any
	_ = json.Unmarshal([]byte(values[1]), &vars)
	return values[0], vars
}

// documentGateway is a gateway over the shared sample service whose
// executor the test reads.
func documentGateway(t *testing.T, cfg graph.ExecutorConfig) (*graph.Executor, string) {
	t.Helper()
	sample, err := sharedSample()
	if err != nil {
		t.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Upstream, cfg.CursorKeys = client, graph.CursorKeysForTest()
	exec := graph.NewExecutor(cfg)
	srv := httptest.NewServer(transport.NewHandler(exec, transport.Config{}))
	t.Cleanup(srv.Close)
	return exec, srv.URL
}

// TestDocumentWorkOncePerDocument: a document is parsed, validated and
// planned once, whatever its variables, which still decide each request's
// cost verdict; another operation of it is planned once more, another
// text is another document; a persisted document, sent by id, is parsed
// once too.
func TestDocumentWorkOncePerDocument(t *testing.T) {
	const q = `query Page($n: Int) { assets(first: $n) { edges { node { id details { name } } } } }
query One { assets(first: 1) { edges { cursor } } }`
	manifest, _ := json.Marshal(map[string]string{"page": q})
	docs, err := graph.ParsePersistedDocuments(manifest, graph.PagingConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// A page of n assets costs 101 + 3n: 33 rows fit, 34 do not.
	exec, url := documentGateway(t, graph.ExecutorConfig{Limits: graph.Limits{MaxCost: 200}, Documents: docs})
	post := func(body map[string]any) gqlResponse { t.Helper(); return postBody(t, url, body) }
	work := func(wantParsed, wantPlanned int64) {
		t.Helper()
		if parsed, planned, _ := graph.DocumentWork(exec); parsed != wantParsed || planned != wantPlanned {
			t.Fatalf("%d documents parsed, %d plans made; want %d and %d", parsed, planned, wantParsed, wantPlanned)
		}
	}
	for _, n := range []int{1, 100, 3, 34, 33, 1000, 2} {
		r := post(map[string]any{"query": q, "operationName": "Page", "variables": map[string]any{"n": n}})
		if n <= 33 {
			var data struct {
				Assets struct{ Edges []any }
			}
			r.mustData(t, &data)
			if len(data.Assets.Edges) != n {
				t.Fatalf("first: %d answered %d assets", n, len(data.Assets.Edges))
			}
			continue
		}
		want := fmt.Sprintf("the query costs %d, over the limit of 200", 101+3*min(n, graph.DefaultPaging.MaxSize))
		if len(r.Errors) != 1 || r.Errors[0].code() != "QUERY_TOO_COMPLEX" || !strings.HasPrefix(r.Errors[0].Message, want) || r.Data != nil && string(r.Data) != "null" {
			t.Fatalf("first: %d: %+v %s; want %q", n, r.Errors, r.Data, want)
		}
	}
	work(1, 1)
	// The other operation of the document: parsed already, planned once.
	for range 3 {
		var data struct{ Assets struct{ Edges []any } }
		post(map[string]any{"query": q, "operationName": "One"}).mustData(t, &data)
		if len(data.Assets.Edges) != 1 {
			t.Fatalf("One answered %d assets", len(data.Assets.Edges))
		}
	}
	work(1, 2)
	// The same document sent by id: its text is the same document.
	for _, n := range []int{2, 100} {
		r := post(map[string]any{"documentId": "page", "operationName": "Page", "variables": map[string]any{"n": n}})
		if got := len(r.Errors) > 0; got != (n > 33) {
			t.Fatalf("by id, first: %d: errors %+v", n, r.Errors)
		}
	}
	work(1, 2)
	// Another text, even of the same operations, is another document.
	post(map[string]any{"query": q + "\n", "operationName": "One"}).mustData(t, &struct{}{})
	work(2, 3)
}

// TestDocumentCacheIsBounded: the executor keeps QueryCacheSize documents,
// the least recently used evicted, their plans with them; an evicted
// document is parsed and planned again when it comes back, and answered
// the same.
func TestDocumentCacheIsBounded(t *testing.T) {
	exec, url := documentGateway(t, graph.ExecutorConfig{QueryCacheSize: 3})
	query := func(i int) string {
		return fmt.Sprintf(`query Q%d($n: Int) { assets(first: $n) { edges { node { id } } } }`, i)
	}
	answer := func(i int) []byte {
		t.Helper()
		status, raw := rawPost(t, url, query(i), map[string]any{"n": 2})
		if status != http.StatusOK || bytes.Contains(raw, []byte(`"errors"`)) {
			t.Fatalf("Q%d: %d %s", i, status, raw)
		}
		return raw
	}
	first := answer(0)
	for i := 1; i < 10; i++ {
		answer(i)
		if _, _, kept := graph.DocumentWork(exec); kept > 3 {
			t.Fatalf("%d documents kept, over the 3 of QueryCacheSize", kept)
		}
	}
	parsed, planned, kept := graph.DocumentWork(exec)
	if parsed != 10 || planned != 10 || kept != 3 {
		t.Fatalf("%d parsed, %d planned, %d kept; want 10, 10, 3", parsed, planned, kept)
	}
	// Q9 is kept: nothing more to do. Q0 was evicted: parsed and planned
	// again, and answered as before.
	answer(9)
	if p, pl, _ := graph.DocumentWork(exec); p != 10 || pl != 10 {
		t.Fatalf("a kept document was parsed or planned again: %d, %d", p, pl)
	}
	if again := answer(0); !bytes.Equal(again, first) {
		t.Fatalf("Q0 answered differently once evicted:\n%s\n%s", again, first)
	}
	if p, pl, _ := graph.DocumentWork(exec); p != 11 || pl != 11 {
		t.Fatalf("the evicted document: %d parsed, %d planned; want 11, 11", p, pl)
	}
}

// TestTextChecksOncePerDocument: the checks made of a text before it is
// parsed are made once per document kept, and still refuse what they
// refused: a query sent with its APQ hash is hashed once (a wrong hash
// with it is refused all the same); with trusted documents only, a
// manifest document's text sent with other whitespace is matched once,
// and an untrusted text refused every time.
func TestTextChecksOncePerDocument(t *testing.T) {
	const q = "query TrustedPage($n: Int) {\n  assets(first: $n) { edges { node { id } } }\n}\n"
	manifest, _ := json.Marshal(map[string]string{"page": q})
	docs, err := graph.ParsePersistedDocuments(manifest, graph.PagingConfig{})
	if err != nil {
		t.Fatal(err)
	}
	post := func(url string, body map[string]any) gqlResponse { t.Helper(); return postBody(t, url, body) }
	apq := func(hash string) map[string]any {
		return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
	}

	exec, url := documentGateway(t, graph.ExecutorConfig{})
	for range 4 {
		var data struct{ Assets struct{ Edges []any } }
		post(url, map[string]any{"query": q, "variables": map[string]any{"n": 2}, "extensions": apq(sha256Hex(q))}).mustData(t, &data)
		if len(data.Assets.Edges) != 2 {
			t.Fatalf("%d assets", len(data.Assets.Edges))
		}
	}
	// The first request's text was hashed before its document was kept;
	// the next ones' hash is the document's, computed once.
	if n := graph.DocumentTextChecks(exec); n != 1 {
		t.Fatalf("%d checks kept, want the one hash", n)
	}
	for range 2 {
		r := post(url, map[string]any{"query": q, "variables": map[string]any{"n": 2}, "extensions": apq(strings.Repeat("ab", 32))})
		if len(r.Errors) != 1 || r.Errors[0].code() != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, "is not the SHA-256 of the query") {
			t.Fatalf("a wrong hash: %+v", r.Errors)
		}
	}

	exec, url = documentGateway(t, graph.ExecutorConfig{Documents: docs, TrustedDocumentsOnly: true})
	spaced := strings.ReplaceAll(q, "\n", "\n\n  ")
	for range 4 {
		var data struct{ Assets struct{ Edges []any } }
		post(url, map[string]any{"query": spaced, "variables": map[string]any{"n": 1}}).mustData(t, &data)
		if len(data.Assets.Edges) != 1 {
			t.Fatalf("%d assets", len(data.Assets.Edges))
		}
	}
	if n := graph.DocumentTextChecks(exec); n != 1 {
		t.Fatalf("%d checks kept, want the one verdict", n)
	}
	for range 2 {
		r := post(url, map[string]any{"query": "{ assets(first: 1) { edges { cursor } } }"})
		if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "only trusted documents are accepted") {
			t.Fatalf("an untrusted text: %+v", r.Errors)
		}
	}
}

// FuzzLimitPlan: for any query and variables, the plan made once measures
// as walking the document with the variables does. The seeds are
// FuzzGraphQLQuery's corpus and the corner queries' shapes.
func FuzzLimitPlan(f *testing.F) {
	corpus, _ := filepath.Glob("testdata/fuzz/FuzzGraphQLQuery/*")
	for _, file := range corpus {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var values []string
		for _, line := range strings.Split(string(raw), "\n") {
			if s, ok := strings.CutPrefix(line, "string("); ok {
				if v, err := strconv.Unquote(strings.TrimSuffix(s, ")")); err == nil {
					values = append(values, v)
				}
			}
		}
		if len(values) == 2 {
			f.Add(values[0], values[1])
		}
	}
	f.Add(`query($n: Int, $m: Int) { transactions(first: 2) { edges { node { command { ...A ...B } } } } } fragment A on AnnounceNode { node { delegations(first: $n) { edges { cursor } } } } fragment B on AnnounceNode { node { d2: delegations(last: $m) { edges { cursor } } } }`, `{"n": 30, "m": 2}`)
	f.Add(`query($x: String!, $n: Int) { transactions(first: $n, cmdTypes: [$x, "y"]) { edges { cursor } } }`, `{"x": "Batch Proposal", "n": 4}`)
	f.Fuzz(func(t *testing.T, query, vars string) {
		var v map[string]any
		d := json.NewDecoder(strings.NewReader(vars))
		d.UseNumber()
		if d.Decode(&v) != nil {
			v = nil
		}
		planned, measured, ok := graph.CompareLimitPlan(query, v)
		if ok && planned != measured {
			t.Fatalf("planned  %s\nmeasured %s", planned, measured)
		}
	})
}

// postBody POSTs body as JSON to url and decodes the response.
func postBody(t *testing.T, url string, body map[string]any) gqlResponse {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out gqlResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
