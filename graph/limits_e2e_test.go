package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
)

// rawResponse is an HTTP response of the gateway with its GraphQL body.
type rawResponse struct {
	status int
	body   string
	gql    gqlResponse
}

// send makes one request and checks the invariant of every answer: a
// GraphQL JSON body whose every error has extensions.code.
func (g *testGateway) send(t *testing.T, method, rawQuery, contentType string, body []byte, header map[string]string) rawResponse {
	t.Helper()
	target := g.URL
	if rawQuery != "" {
		target += "?" + rawQuery
	}
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := rawResponse{status: resp.StatusCode, body: string(raw)}
	if method == http.MethodOptions {
		return out
	}
	if err := json.Unmarshal(raw, &out.gql); err != nil {
		t.Fatalf("status %d: body is not GraphQL JSON: %v\n%.300s", resp.StatusCode, err, raw)
	}
	for _, e := range out.gql.Errors {
		if e.code() == "" {
			t.Fatalf("status %d: an error without extensions.code: %+v", resp.StatusCode, e)
		}
	}
	return out
}

func (g *testGateway) post(t *testing.T, query string, vars map[string]any) rawResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return g.send(t, http.MethodPost, "", "application/json", body, nil)
}

// oneError checks that r has exactly one error, of code, whose message
// contains every part of want.
func (r rawResponse) oneError(t *testing.T, code string, want ...string) {
	t.Helper()
	if len(r.gql.Errors) != 1 {
		t.Fatalf("status %d, errors %+v, want one %s", r.status, r.gql.Errors, code)
	}
	e := r.gql.Errors[0]
	if e.code() != code {
		t.Fatalf("status %d, error %+v, want %s", r.status, e, code)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			t.Fatalf("message %q does not contain %q", e.Message, w)
		}
	}
	if string(r.gql.Data) != "" && string(r.gql.Data) != "null" {
		t.Fatalf("a refused request has data: %s", r.gql.Data)
	}
}

// noUpstreamCalls checks that the sample service received nothing since
// its counters were reset.
func noUpstreamCalls(t *testing.T, s *sampleservice.Server) {
	t.Helper()
	for _, e := range []sampleservice.Endpoint{sampleservice.EndpointAssets, sampleservice.EndpointFundingPayments, sampleservice.EndpointDelegations, sampleservice.EndpointTransactions} {
		if n := s.Service.Requests(e); n != 0 {
			t.Fatalf("the upstream received %d %s requests for a refused query", n, e)
		}
	}
}

func TestLimitDepth(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	// The schema's own deepest path is admitted by default.
	deepest := graph.DeepestPathQuery()
	if r := g.post(t, deepest, nil); len(r.gql.Errors) > 0 {
		t.Fatalf("the schema's deepest path (%d levels) is refused: %+v\n%s", graph.SchemaDepth(), r.gql.Errors, deepest)
	}
	max := graph.DefaultLimits().MaxDepth
	// A path through navigation (delegation → party → transactions → the
	// same deep path) is deeper than the default.
	deepest = strings.TrimPrefix(deepest, "{ ")
	party := deepest[:strings.Index(deepest, "{")]
	tooDeep := "{ delegations(first: 1) { edges { node { party " + strings.TrimPrefix(deepest, party) + " } } }"
	sample.Service.ResetCounters()
	g.post(t, tooDeep, nil).oneError(t, "QUERY_TOO_COMPLEX", "levels deep", fmt.Sprintf("limit of %d (maximum depth)", max))
	noUpstreamCalls(t, sample)

	// Fragments are followed, and the limit is configurable.
	small := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Limits: graph.Limits{MaxDepth: 4}}})
	small.post(t, `{ assets { edges { node { id } } } }`, nil).mustNoErrors(t)
	small.post(t, `{ assets { ...C } } fragment C on AssetConnection { edges { ...E } } fragment E on AssetEdge { node { details { name } } }`, nil).
		oneError(t, "QUERY_TOO_COMPLEX", "5 levels deep", "limit of 4 (maximum depth)")
}

func (r rawResponse) mustNoErrors(t *testing.T) {
	t.Helper()
	if len(r.gql.Errors) > 0 || r.status != 200 {
		t.Fatalf("status %d, errors %+v", r.status, r.gql.Errors)
	}
}

func TestLimitFragmentCycles(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{})
	r := g.post(t, `{ assets { ...A } } fragment A on AssetConnection { edges { node { id } } ...B } fragment B on AssetConnection { ...A }`, nil)
	r.oneError(t, "BAD_USER_INPUT", "Cannot spread fragment")
	r = g.post(t, `{ assets { ...A } } fragment A on AssetConnection { ...A }`, nil)
	r.oneError(t, "BAD_USER_INPUT", "Cannot spread fragment \"A\" within itself")
}

func TestLimitCost(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	// A full page of 1000 of every list, every ordinary field selected,
	// is admitted (and answered).
	for list, q := range graph.FullPageQueries() {
		r := g.post(t, q, nil)
		for _, e := range r.gql.Errors {
			if e.code() == "QUERY_TOO_COMPLEX" {
				t.Fatalf("a full page of %s is refused: %s", list, e.Message)
			}
		}
		if list != "fundingPayments" && !strings.Contains(string(r.gql.Data), `"edges":[{`) {
			t.Fatalf("%s: no rows: %.300s %+v", list, r.gql.Data, r.gql.Errors)
		}
	}
	// A connection under each row of a full page is not: the cost names
	// the limit; variables count.
	nested := `query($n: Int) { delegations(first: $n) { edges { node { party { transactions(first: 100) { edges { node { hash } } } } } } } }`
	sample.Service.ResetCounters()
	g.post(t, nested, map[string]any{"n": 1000}).oneError(t, "QUERY_TOO_COMPLEX", "over the limit of 250000 (maximum cost")
	noUpstreamCalls(t, sample)
	g.post(t, nested, map[string]any{"n": 5}).mustNoErrors(t)

	small := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Limits: graph.Limits{MaxCost: 500}}})
	small.post(t, `{ assets(first: 100) { edges { node { id } } } }`, nil).mustNoErrors(t) // 101 + 100×2
	small.post(t, `{ assets(first: 250) { edges { node { id } } } }`, nil).oneError(t, "QUERY_TOO_COMPLEX", "costs 601", "limit of 500")
}

func TestLimitTokens(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Limits: graph.Limits{MaxTokens: 50}}})
	g.post(t, `{ assets(first: 1) { edges { node { id status } } } }`, nil).mustNoErrors(t)
	long := `{ assets(first: 1) { edges { node { id ` + strings.Repeat("status ", 50) + `} } } }`
	r := g.post(t, long, nil)
	r.oneError(t, "QUERY_TOO_COMPLEX", "more than 50 tokens", "(maximum tokens)")
	if r.status != http.StatusOK { // a request error, to a client without Accept (TestAcceptMatrix)
		t.Fatalf("status %d", r.status)
	}
	// The default admits the largest ordinary query (a full transaction
	// page) and refuses a query of megabytes of tokens.
	def := newGateway(t, nil, gatewayOptions{})
	def.post(t, graph.FullPageQueries()["transactions"], nil)
	huge := `{ assets(first: 1) { edges { node { ` + strings.Repeat("id ", 20000) + `} } } }`
	def.post(t, huge, nil).oneError(t, "QUERY_TOO_COMPLEX", "more than 10000 tokens")
}

func TestLimitAliases(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	aliased := func(n int, field string) string {
		var b strings.Builder
		b.WriteString("{ ")
		for i := range n {
			fmt.Fprintf(&b, "a%d: %s ", i, field)
		}
		b.WriteString("}")
		return b.String()
	}
	g.post(t, aliased(30, `assets(first: 1) { edges { node { id } } }`), nil).mustNoErrors(t)
	sample.Service.ResetCounters()
	g.post(t, aliased(31, `assets(first: 1) { edges { node { id } } }`), nil).oneError(t, "QUERY_TOO_COMPLEX", "31 aliased fields", "limit of 30 (maximum aliases)")
	// An alias bomb of scalars (which cost nothing) is refused too, and
	// so are aliases hidden in fragments.
	bomb := `{ assets(first: 1) { edges { node { ` + strings.TrimSuffix(strings.TrimPrefix(aliased(2000, "id"), "{ "), "}") + ` } } } }`
	g.post(t, bomb, nil).oneError(t, "QUERY_TOO_COMPLEX", "2000 aliased fields")
	g.post(t, `{ assets(first: 1) { edges { node { ...F } } } } fragment F on Asset { `+strings.TrimSuffix(strings.TrimPrefix(aliased(40, "id"), "{ "), "}")+` }`, nil).
		oneError(t, "QUERY_TOO_COMPLEX", "40 aliased fields")
	noUpstreamCalls(t, sample)
	// A fragment bomb (each fragment spreads the next twice) is refused
	// without being expanded.
	var b strings.Builder
	b.WriteString(`query { party(id: "` + strings.Repeat("a1", 32) + `") { ...P0 } }` + "\n")
	for i := range 12 {
		next := "id"
		if i < 11 {
			next = fmt.Sprintf("...P%d", i+1)
		}
		fmt.Fprintf(&b, "fragment P%d on Party { a: delegations(first: 1) { edges { node { party { %s } } } } b: delegations(first: 2) { edges { node { party { %s } } } } }\n", i, next, next)
	}
	r := g.post(t, b.String(), nil)
	if len(r.gql.Errors) != 1 || r.gql.Errors[0].code() != "QUERY_TOO_COMPLEX" {
		t.Fatalf("fragment bomb: %+v", r.gql.Errors)
	}
	noUpstreamCalls(t, sample)
}

func TestLimitArguments(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	parties := make([]string, 101)
	for i := range parties {
		parties[i] = strings.Repeat("a1", 32)
	}
	sample.Service.ResetCounters()
	g.post(t, `query($p: [ID!]) { transactions(first: 1, parties: $p) { edges { cursor } } }`, map[string]any{"p": parties}).
		oneError(t, "BAD_USER_INPUT", "transactions.parties: a list of 101 values, over the limit of 100")
	g.post(t, `query($c: [String!]) { transactions(first: 1, cmdTypes: $c) { edges { cursor } } }`, map[string]any{"c": []string{strings.Repeat("x", 5000)}}).
		oneError(t, "BAD_USER_INPUT", "transactions.cmdTypes: a string of 5000 bytes, over the limit of 1024")
	// Huge variables: a string near the body limit.
	g.post(t, `query($id: ID!) { asset(id: $id) { id } }`, map[string]any{"id": strings.Repeat("é", 400_000)}).
		oneError(t, "BAD_USER_INPUT", "a string of 800000 bytes")
	noUpstreamCalls(t, sample)
	g.post(t, `query($p: [ID!]) { transactions(first: 1, parties: $p) { edges { cursor } } }`, map[string]any{"p": parties[:100]}).mustNoErrors(t)
}

func TestLimitBodySizeAndBatches(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Limits: graph.Limits{MaxBodyBytes: 2048}}})
	big := []byte(`{"query":"{ assets { edges { cursor } } }", "pad": "` + strings.Repeat("x", 4096) + `"}`)
	r := g.send(t, http.MethodPost, "", "application/json", big, nil)
	r.oneError(t, "BAD_USER_INPUT", "request body over 2048 bytes (the body size limit)")
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d", r.status)
	}
	// Without a Content-Length (chunked), the same.
	req, _ := http.NewRequest(http.MethodPost, g.URL, io.MultiReader(bytes.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked oversized body: status %d", resp.StatusCode)
	}

	// Batches (a JSON array of operations) are not accepted.
	batch := []byte(` [{"query":"{ assets(first: 1) { edges { cursor } } }"},{"query":"{ delegations(first: 1) { edges { cursor } } }"}]`)
	r = g.send(t, http.MethodPost, "", "application/json", batch, nil)
	r.oneError(t, "BAD_USER_INPUT", "batched operations are not supported")
	if r.status != http.StatusBadRequest {
		t.Fatalf("status %d", r.status)
	}
}

func TestIntrospectionSwitch(t *testing.T) {
	const q = `{ __schema { queryType { name } } __type(name: "Asset") { name } }`
	on := newGateway(t, nil, gatewayOptions{})
	var data struct {
		Schema struct{ QueryType struct{ Name string } } `json:"__schema"`
	}
	on.post(t, q, nil).mustNoErrors(t)
	on.query(t, q, nil).mustData(t, &data)
	if data.Schema.QueryType.Name != "Query" {
		t.Fatalf("introspection on: %+v", data)
	}
	off := newGateway(t, nil, gatewayOptions{NoIntrospection: true})
	r := off.post(t, q, nil)
	if len(r.gql.Errors) == 0 {
		t.Fatalf("introspection off answered: %s", r.gql.Data)
	}
	for _, e := range r.gql.Errors {
		if e.code() != "BAD_USER_INPUT" || !strings.Contains(e.Message, "introspection is disabled") {
			t.Fatalf("error %+v", e)
		}
	}
	// __typename is not introspection.
	off.post(t, `{ __typename }`, nil).mustNoErrors(t)
}

func TestHostileRequests(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	sample.Service.ResetCounters()
	deepVars := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	cases := []struct {
		name         string
		method, qs   string
		contentType  string
		body         string
		header       map[string]string
		status       int
		code, detail string
	}{
		{"GET mutation", http.MethodGet, "query=" + url.QueryEscape(`mutation { x }`), "", "", nil, 200, "BAD_USER_INPUT", "mutation"},
		{"POST mutation", http.MethodPost, "", "application/json", `{"query":"mutation { x }"}`, nil, 200, "BAD_USER_INPUT", "mutation"},
		{"text/plain (a CORS simple request)", http.MethodPost, "", "text/plain", `{"query":"{ __typename }"}`, nil, 415, "BAD_USER_INPUT", "Content-Type"},
		{"form", http.MethodPost, "", "application/x-www-form-urlencoded", "query=%7B__typename%7D", nil, 415, "BAD_USER_INPUT", "application/json"},
		{"multipart", http.MethodPost, "", "multipart/form-data; boundary=x", "--x--", nil, 415, "BAD_USER_INPUT", "application/json"},
		{"application/graphql", http.MethodPost, "", "application/graphql", "{ __typename }", nil, 415, "BAD_USER_INPUT", "application/json"},
		{"no content type", http.MethodPost, "", "", `{"query":"{ __typename }"}`, nil, 415, "BAD_USER_INPUT", "Content-Type"},
		{"malformed content type", http.MethodPost, "", "application/json; ===", `{"query":"{ __typename }"}`, nil, 415, "BAD_USER_INPUT", "Content-Type"},
		{"PATCH", http.MethodPatch, "", "application/json", `{"query":"{ __typename }"}`, nil, 405, "BAD_USER_INPUT", "method PATCH is not allowed"},
		{"DELETE without a reservation's token", http.MethodDelete, "", "", "", nil, 400, "BAD_USER_INPUT", "X-GraphQL-Event-Stream-Token"},
		{"WebSocket upgrade from another origin", http.MethodGet, "", "", "", map[string]string{"Origin": "https://evil.example", "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "graphql-transport-ws"}, 403, "BAD_USER_INPUT", "origin"},
		{"upgrade to another protocol", http.MethodGet, "", "", "", map[string]string{"Connection": "Upgrade", "Upgrade": "h2c"}, 400, "BAD_USER_INPUT", "WebSocket"},
		{"POST WebSocket upgrade", http.MethodPost, "", "application/json", `{"query":"{ __typename }"}`, map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}, 400, "BAD_USER_INPUT", "WebSocket"},
		{"subscription over POST", http.MethodPost, "", "application/json", `{"query":"subscription { transactions { cursor } }"}`, nil, 200, "BAD_USER_INPUT", "subscriptions need a stream"},
		{"@defer without multipart/mixed", http.MethodPost, "", "application/json", `{"query":"{ transactions(first: 1) { edges { node { ... @defer { hash } } } } }"}`, nil, 200, "BAD_USER_INPUT", "multipart/mixed"},
		{"@defer in a fragment, with GET", http.MethodGet, "query=" + url.QueryEscape(`{ ...F } fragment F on Query { transactions(first: 1) { edges { node { ...G @defer } } } } fragment G on Transaction { hash }`), "", "", nil, 200, "BAD_USER_INPUT", "multipart/mixed"},
		{"subscription over GET", http.MethodGet, "query=" + url.QueryEscape(`subscription { transactions { cursor } }`), "", "", nil, 200, "BAD_USER_INPUT", "subscriptions need a stream"},
		{"malformed JSON", http.MethodPost, "", "application/json", `{"query": "{ __typename }"`, nil, 400, "BAD_USER_INPUT", "not a GraphQL request in JSON"},
		{"a JSON string body", http.MethodPost, "", "application/json", `"{ __typename }"`, nil, 400, "BAD_USER_INPUT", "not a GraphQL request in JSON"},
		{"empty body", http.MethodPost, "", "application/json", ``, nil, 400, "BAD_USER_INPUT", "not a GraphQL request in JSON"},
		{"no query", http.MethodPost, "", "application/json", `{"variables":{}}`, nil, 400, "BAD_USER_INPUT", "no operation"},
		{"variables not an object", http.MethodPost, "", "application/json", `{"query":"{ __typename }","variables":[1,2]}`, nil, 400, "BAD_USER_INPUT", "not a GraphQL request in JSON"},
		{"deeply nested variables", http.MethodPost, "", "application/json", `{"query":"{ __typename }","variables":{"x":` + deepVars + `}}`, nil, 400, "BAD_USER_INPUT", "not a GraphQL request in JSON"},
		{"GET malformed variables", http.MethodGet, "query=" + url.QueryEscape("{ __typename }") + "&variables=%7Bnope", "", "", nil, 400, "BAD_USER_INPUT", "variables parameter must be a JSON object"},
		{"GET malformed URL query", http.MethodGet, "query=%zz", "", "", nil, 400, "BAD_USER_INPUT", "URL query is malformed"},
		{"invalid UTF-8 in the query", http.MethodPost, "", "application/json", "{\"query\":\"{ as\xffsets { edges { cursor } } }\"}", nil, 200, "BAD_USER_INPUT", ""},
		{"invalid UTF-8 in a variable", http.MethodPost, "", "application/json", "{\"query\":\"query($p: ID!) { fundingPayments(partyId: $p) { edges { cursor } } }\",\"variables\":{\"p\":\"\xff\xfe\"}}", nil, 200, "BAD_USER_INPUT", "is not a party id"},
		{"a variable of the wrong type", http.MethodPost, "", "application/json", `{"query":"query($n: Int) { assets(first: $n) { edges { cursor } } }","variables":{"n":"ten"}}`, nil, 200, "BAD_USER_INPUT", ""},
		{"a huge integer variable", http.MethodPost, "", "application/json", `{"query":"query($n: Int) { assets(first: $n) { edges { cursor } } }","variables":{"n":1e400}}`, nil, 0, "BAD_USER_INPUT", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.send(t, tc.method, tc.qs, tc.contentType, []byte(tc.body), tc.header)
			if tc.status != 0 && r.status != tc.status {
				t.Errorf("status %d, want %d: %.300s", r.status, tc.status, r.body)
			}
			if len(r.gql.Errors) == 0 || r.gql.Errors[0].code() != tc.code || !strings.Contains(r.gql.Errors[0].Message, tc.detail) {
				t.Fatalf("errors %+v, want %s containing %q", r.gql.Errors, tc.code, tc.detail)
			}
			if len(r.body) > 2000 {
				t.Fatalf("the response echoes the request: %.300s", r.body)
			}
		})
	}
	noUpstreamCalls(t, sample)
	// And the gateway still serves.
	g.post(t, `{ assets(first: 1) { edges { cursor } } }`, nil).mustNoErrors(t)
}

// TestPOSTBodiesDecodeAsGqlgen: the gateway decodes the bodies clients
// send itself (transport/body.go) and leaves the others to gqlgen's
// transport: either way the same operation gets the same answer, and a
// body gqlgen refuses gets gqlgen's error.
func TestPOSTBodiesDecodeAsGqlgen(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{})
	const q = `query Two($n: Int!) { assets(first: $n) { edges { cursor node { id } } } }`
	quoted, _ := json.Marshal(q)
	escaped := strings.ReplaceAll(string(quoted), " ", `\u0020`)
	bodies := map[string]string{
		"as clients send it":    `{"query":` + string(quoted) + `,"variables":{"n":2},"operationName":"Two"}`,
		"with \\u escapes":      `{"query":` + escaped + `,"variables":{"n":2},"operationName":"Two"}`,
		"keys in another case":  `{"Query":` + string(quoted) + `,"VARIABLES":{"n":2},"operationName":"Two"}`,
		"a key twice":           `{"query":"{ x }","query":` + string(quoted) + `,"variables":{"n":2},"operationName":"Two"}`,
		"data after the object": `{"query":` + string(quoted) + `,"variables":{"n":2},"operationName":"Two"} trailing`,
		"a headers member":      `{"query":` + string(quoted) + `,"variables":{"n":2},"operationName":"Two","headers":{"X":["y"]}}`,
		"an unknown member":     `{"query":` + string(quoted) + `,"variables":{"n":2},"operationName":"Two","id":"abc"}`,
		"whitespace everywhere": " {\n\t\"query\" : " + string(quoted) + " ,\r\n \"variables\" : { \"n\" : 2 } , \"operationName\" : \"Two\" }\n",
	}
	want := g.send(t, http.MethodPost, "", "application/json", []byte(bodies["as clients send it"]), nil)
	want.mustNoErrors(t)
	if strings.Count(want.body, `"cursor"`) != 2 {
		t.Fatalf("answer %s", want.body)
	}
	for name, body := range bodies {
		got := g.send(t, http.MethodPost, "", "application/json", []byte(body), nil)
		if got.status != want.status || got.body != want.body {
			t.Errorf("%s: status %d, %s; want %d, %s", name, got.status, got.body, want.status, want.body)
		}
	}
	r := g.send(t, http.MethodPost, "", "application/json", []byte(`{"query":5}`), nil)
	r.oneError(t, "BAD_USER_INPUT", "not a GraphQL request in JSON", "cannot unmarshal number")
	if r.status != http.StatusBadRequest {
		t.Fatalf("status %d", r.status)
	}
}
