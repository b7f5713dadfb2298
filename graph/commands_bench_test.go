package graph_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tradenet/gateway/graph"
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
	sample, err := sharedSample()
	if err != nil {
		b.Fatal(err)
	}
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL})
	if err != nil {
		b.Fatal(err)
	}
	h := transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream: client, CursorKeys: graph.CursorKeysForTest(), Limits: fullSelectionLimits,
	}), transport.Config{})
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
		body, err := json.Marshal(map[string]string{"query": q.query})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"errors"`) {
					b.Fatalf("status %d: %.500s", w.Code, w.Body)
				}
			}
			b.ReportMetric((processCPU()-cpu)*1e9/float64(b.N), "cpu-ns/op")
		})
	}
}
