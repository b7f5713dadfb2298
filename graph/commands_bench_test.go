package graph_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// BenchmarkTransactionPageShapes: the whole handler (transport, executor,
// resolvers, the upstream client without its cache, so that every request
// fetches and decodes its page of 50 transactions from the sample service
// over loopback) for pages of one shape each: hashes only, the commands'
// types, one command kind's fields, and every field. What a request costs
// follows what it selects: the page's commands are decoded as far as it
// reads them (upstream/command_lazy.go, graph/commanduse.go). cpu-ns/op is
// the process's CPU time per request, user and system, as the operating
// system counts it (processCPU), the in-process sample service's
// included; it is 0 where the system does not say.
func BenchmarkTransactionPageShapes(b *testing.B) {
	h, _ := wholeHandler(b, fullSelectionLimits)
	s := executableSchema()
	every, err := buildObject(s, s.Types["Transaction"], nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []struct{ name, query string }{
		{"hashes", `{ transactions(first: 50) { edges { node { hash } } } }`},
		{"types", `{ transactions(first: 50) { edges { node { hash command { __typename } } } } }`},
		{"one-kind", `{ transactions(first: 50) { edges { node { hash command { __typename ... on BatchMarketInstructions { submissions { marketId price size side } cancellations { orderId } } } } } } }`},
		{"every-field", `{ transactions(first: 50) { edges { cursor node ` + every.String() + ` } } }`},
	} {
		b.Run(q.name, func(b *testing.B) {
			benchRequests(b, h, map[string]any{"query": q.query}, func(string) bool { return true })
		})
	}
}

// BenchmarkPartyPage: the whole handler, as BenchmarkTransactionPageShapes
// runs it, for the benchmark harness's party page (bench/queries/
// party.graphql: a party's funding payments and delegations, 50 of each,
// every field and every cursor) of the sample dataset's party with the
// most of both. Each of its requests makes 100 cursors and two memoised
// upstream calls. cpu-ns/op is as in BenchmarkTransactionPageShapes.
func BenchmarkPartyPage(b *testing.B) {
	h, sample := wholeHandler(b, graph.Limits{})
	query, err := os.ReadFile("../bench/queries/party.graphql")
	if err != nil {
		b.Fatal(err)
	}
	data := sample.Service.Dataset()
	funding, delegations := map[string]int{}, map[string]int{}
	for _, f := range data.FundingPayments {
		funding[f.PartyID]++
	}
	for _, d := range data.Delegations {
		delegations[d.Party]++
	}
	party := ""
	for p, n := range funding {
		if party == "" || min(n, delegations[p]) > min(funding[party], delegations[party]) {
			party = p
		}
	}
	benchRequests(b, h, map[string]any{"query": string(query), "variables": map[string]any{"id": party, "first": 50}},
		func(body string) bool { return strings.Count(body, `"cursor"`) == 100 })
}

// wholeHandler is the gateway's handler over the shared sample service,
// the upstream client without its cache, with limits (the zero Limits:
// the defaults).
func wholeHandler(b *testing.B, limits graph.Limits) (http.Handler, *sampleservice.Server) {
	b.Helper()
	sample, err := sharedSample()
	if err != nil {
		b.Fatal(err)
	}
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL})
	if err != nil {
		b.Fatal(err)
	}
	return transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream: client, CursorKeys: graph.CursorKeysForTest(), Limits: limits,
	}), transport.Config{}), sample
}

// benchRequests POSTs the request params to h for the benchmark's loop,
// each answered 200 with no error and ok by its body, and reports the
// process's CPU time per request (cpu-ns/op).
func benchRequests(b *testing.B, h http.Handler, params map[string]any, ok func(body string) bool) {
	b.Helper()
	body, err := json.Marshal(params)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"errors"`) || !ok(w.Body.String()) {
			b.Fatalf("status %d: %.500s", w.Code, w.Body)
		}
	}
	b.ReportMetric((processCPU()-cpu)*1e9/float64(b.N), "cpu-ns/op")
}
