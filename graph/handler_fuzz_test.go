package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// knownCodes are the error codes of the contract (docs/contracts.md, Errors).
var knownCodes = map[string]bool{
	"BAD_USER_INPUT": true, "NOT_FOUND": true, "UPSTREAM_ERROR": true, "UPSTREAM_UNAVAILABLE": true,
	"RATE_LIMITED": true, "QUERY_TOO_COMPLEX": true, "INTERNAL": true,
}

// fuzzResponse is a GraphQL response as the fuzz targets check it.
type fuzzResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// fuzzHandler is the whole GraphQL handler, introspection on, over the
// shared sample service, with limits.
func fuzzHandler(f *testing.F, limits graph.Limits) http.Handler {
	sample, err := sharedSample()
	if err != nil {
		f.Fatal(err)
	}
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL})
	if err != nil {
		f.Fatal(err)
	}
	return transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream:       client,
		Introspection:  true,
		RequestTimeout: 10 * time.Second,
		Limits:         limits,
	}), transport.Config{})
}

// FuzzHandler sends the whole GraphQL handler, over the sample service,
// arbitrary methods, content types, URL queries and bodies. Whatever it
// gets, it answers in bounded time with a GraphQL JSON body whose every
// error carries a known code, never INTERNAL, and never panics. The seed
// corpus (f.Add and testdata/fuzz/FuzzHandler) runs with go test;
// go test -fuzz=FuzzHandler ./graph explores further.
func FuzzHandler(f *testing.F) {
	h := fuzzHandler(f, graph.Limits{MaxBodyBytes: 64 << 10})

	post := func(query string, vars any) []byte {
		b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		return b
	}
	get := func(query, vars string) string {
		v := url.Values{"query": {query}}
		if vars != "" {
			v.Set("variables", vars)
		}
		return v.Encode()
	}
	for _, seed := range []struct {
		method, contentType, rawQuery string
		body                          []byte
	}{
		{"POST", "application/json", "", post(`{ assets(first: 2) { edges { cursor node { id status } } pageInfo { hasNextPage endCursor } } }`, nil)},
		{"POST", "application/json", "", post(`query($n: Int, $a: String) { delegations(first: $n, after: $a) { edges { node { amount party { id } } } } }`, map[string]any{"n": 3, "a": "garbage"})},
		{"POST", "application/json", "", post(`query($p: ID!) { fundingPayments(partyId: $p, last: 2) { edges { node { amount } } } }`, map[string]any{"p": strings.Repeat("a1", 32)})},
		{"POST", "application/json; charset=utf-8", "", post(`{ transactions(first: 2, cmdTypes: ["Batch Proposal"]) { edges { node { hash command { __typename } } } } }`, nil)},
		{"POST", "application/json", "", post(`{ asset(id: "x") { id } node(id: "y") { id } party(id: "z") { id } }`, nil)},
		{"POST", "application/json", "", post(`{ __schema { types { name } } }`, nil)},
		{"POST", "application/json", "", post(`{ a: assets(first: -1) { edges { cursor } } b: assets(first: 1, last: 1) { edges { cursor } } }`, nil)},
		{"POST", "application/json", "", post(`query { assets { ...A } } fragment A on AssetConnection { ...A }`, nil)},
		{"POST", "application/json", "", post(`mutation { x }`, nil)},
		{"POST", "application/json", "", post("{ as\xffsets }", nil)},
		{"POST", "application/json", "", []byte(`[{"query":"{ __typename }"}]`)},
		{"POST", "application/json", "", []byte(`{"query":"{ __typename }","variables":{"x":[[[[[[[[[[[[]]]]]]]]]]]]}}`)},
		{"POST", "application/json", "", []byte(`{"query":`)},
		{"POST", "application/json", "", []byte(`{"query":"{ __typename }","operationName":"nope"}`)},
		{"POST", "application/json", "", []byte(`{"query":"query A { __typename } query B { __typename }"}`)},
		{"POST", "text/plain", "", []byte(`{"query":"{ __typename }"}`)},
		{"POST", "", "", nil},
		{"GET", "", get(`{ assets(first: 1) { edges { cursor } } }`, ""), nil},
		{"GET", "", get(`query($n: Int) { assets(first: $n) { edges { cursor } } }`, `{"n": 2}`), nil},
		{"GET", "", get(`query($n: Int) { assets(first: $n) { edges { cursor } } }`, `{"n": "two"}`), nil},
		{"GET", "", get(`{ __typename }`, `[1]`), nil},
		{"GET", "", "query=%zz", nil},
		{"GET", "", get(`mutation { x }`, ""), nil},
		{"OPTIONS", "", "", nil},
		{"PUT", "application/json", "", []byte(`{"query":"{ __typename }"}`)},
		{"HEAD", "", "", nil},
	} {
		f.Add(seed.method, seed.contentType, seed.rawQuery, seed.body)
	}
	f.Fuzz(func(t *testing.T, method, contentType, rawQuery string, body []byte) {
		req, err := http.NewRequest(method, "http://gateway.test/graphql?"+rawQuery, bytes.NewReader(body))
		if err != nil {
			return // not an HTTP request a server could receive
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(rec, req.WithContext(ctx))
		}()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			t.Fatalf("no answer in 40s to %s %q %q %q", method, contentType, rawQuery, body)
		}
		if method == http.MethodOptions {
			if rec.Code != http.StatusOK {
				t.Fatalf("OPTIONS: %d", rec.Code)
			}
			return
		}
		if method == http.MethodPut && rec.Code == http.StatusCreated {
			return // graphql-sse's reservation: its token, text/plain
		}
		if rec.Code >= 500 {
			t.Fatalf("status %d for %s %q %q %q: %s", rec.Code, method, contentType, rawQuery, body, rec.Body)
		}
		var out fuzzResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("status %d: not a GraphQL JSON body (%v) for %s %q %q %q: %.300s", rec.Code, err, method, contentType, rawQuery, body, rec.Body)
		}
		if len(out.Errors) == 0 && (len(out.Data) == 0 || string(out.Data) == "null") {
			t.Fatalf("status %d: neither data nor errors: %.300s", rec.Code, rec.Body)
		}
		for _, e := range out.Errors {
			code, _ := e.Extensions["code"].(string)
			if !knownCodes[code] || code == "INTERNAL" {
				t.Fatalf("error %q with code %q for %s %q %q %q", e.Message, code, method, contentType, rawQuery, body)
			}
		}
	})
}

// FuzzGraphQLQuery sends well-formed POST requests with an arbitrary query
// and arbitrary variables, to reach the parser, validation, the limits
// and the resolvers (FuzzHandler mostly meets the transport's checks).
// The same invariants hold: a GraphQL body, known codes, never INTERNAL.
func FuzzGraphQLQuery(f *testing.F) {
	h := fuzzHandler(f, graph.Limits{})
	party := strings.Repeat("a1", 32)
	for _, seed := range []struct{ query, vars string }{
		{`{ assets(first: 2) { edges { cursor node { id status details { name decimals } } } pageInfo { hasNextPage endCursor } } }`, ``},
		{`query($n: Int, $a: String) { delegations(first: $n, after: $a) { edges { node { amount party { id } } } } }`, `{"n": 3, "a": "x"}`},
		{`query($p: ID!) { fundingPayments(partyId: $p, last: 2) { edges { node { amount } } } }`, `{"p": "` + party + `"}`},
		{`query($t: [String!]) { transactions(first: 2, cmdTypes: $t) { edges { node { hash command { __typename ... on UnknownCommand { name } } } } } }`, `{"t": ["Batch Proposal"]}`},
		{`{ asset(id: "x") { id } node(id: "y") { id ... on Asset { status } } party(id: "z") { id } }`, ``},
		{`{ __schema { types { name fields { name } } } __type(name: "Asset") { name } }`, ``},
		{`query { assets { ...A } } fragment A on AssetConnection { edges { node { id } } }`, ``},
		{`query Q($x: Int = 5) { assets(first: $x) @include(if: true) { edges { cursor } } }`, `{"x": null}`},
		{`{ a: assets(first: 1) { edges { cursor } } b: assets(last: 1, before: "bad") { edges { cursor } } }`, ``},
		{`{ validatorNode(id: "` + party + `") { delegations(first: 1) { edges { node { epochSeq } } } } }`, ``},
		{`{ transactions(first: 1) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change { __typename } } } } } } } } }`, ``},
		{`subscription { x }`, ``},
		{`{ assets(first: 99999999999) { edges { cursor } } }`, ``},
		{`{ assets(first: 1.5) { edges { cursor } } }`, ``},
		{`{ assets(first: "1") { edges { cursor } } }`, ``},
		{"{ as\u0000sets }", ``},
		{`query($v: [[[[ID]]]]) { __typename }`, `{"v": [[[["x"]]]]}`},
	} {
		f.Add(seed.query, seed.vars)
	}
	f.Fuzz(func(t *testing.T, query, vars string) {
		params := map[string]any{"query": query}
		var v map[string]any
		if json.Unmarshal([]byte(vars), &v) == nil {
			params["variables"] = v
		}
		body, err := json.Marshal(params)
		if err != nil {
			return
		}
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(rec, req)
		}()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			t.Fatalf("no answer in 40s to %q %q", query, vars)
		}
		var out fuzzResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code >= 500 {
			t.Fatalf("status %d, body %.300s (%v) for %q %q", rec.Code, rec.Body, err, query, vars)
		}
		for _, e := range out.Errors {
			code, _ := e.Extensions["code"].(string)
			if !knownCodes[code] || code == "INTERNAL" {
				t.Fatalf("error %q with code %q for %q %q", e.Message, code, query, vars)
			}
		}
	})
}
