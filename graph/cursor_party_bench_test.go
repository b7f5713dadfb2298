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
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// BenchmarkPartyPage: the whole handler, as BenchmarkTransactionPageShapes
// runs it, for the benchmark harness's party page (bench/queries/
// party.graphql: a party's funding payments and delegations, 50 of each,
// every field and every cursor) of the sample dataset's party with the
// most of both. Each of its requests makes 100 cursors and two memoised
// upstream calls. cpu-ns/op is as in BenchmarkTransactionPageShapes.
func BenchmarkPartyPage(b *testing.B) {
	sample, err := sharedSample()
	if err != nil {
		b.Fatal(err)
	}
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL})
	if err != nil {
		b.Fatal(err)
	}
	h := transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream: client, CursorKeys: graph.CursorKeysForTest(),
	}), transport.Config{})
	query, err := os.ReadFile("../bench/queries/party.graphql")
	if err != nil {
		b.Fatal(err)
	}
	data := sample.Service.Dataset()
	rows := map[string]int{}
	for _, f := range data.FundingPayments {
		rows[f.PartyID]++
	}
	delegations := map[string]int{}
	for _, d := range data.Delegations {
		delegations[d.Party]++
	}
	party := ""
	for p, n := range rows {
		if min(n, delegations[p]) > min(rows[party], delegations[party]) || party == "" {
			party = p
		}
	}
	body, err := json.Marshal(map[string]any{"query": string(query), "variables": map[string]any{"id": party, "first": 50}})
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
		if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"errors"`) || strings.Count(w.Body.String(), `"cursor"`) != 100 {
			b.Fatalf("status %d: %.500s", w.Code, w.Body)
		}
	}
	b.ReportMetric((processCPU()-cpu)*1e9/float64(b.N), "cpu-ns/op")
}
