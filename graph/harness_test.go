package graph_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// The tests in this package run whole GraphQL queries against the gateway
// over HTTP, with the sample data service over loopback HTTP as upstream.

// sharedSample is the default sample service, started once for the tests
// that only read from it (tests that switch faults or defects start their
// own).
var sharedSample = sync.OnceValues(func() (*sampleservice.Server, error) {
	return sampleservice.Start(sampleservice.Config{
		Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: 1},
		Defects: sampleservice.DefaultDefects(),
	}, "")
})

// testGateway is a gateway under test and its upstream.
type testGateway struct {
	URL    string
	Sample *sampleservice.Server
	Client *upstream.Client
}

// gatewayOptions adjusts a test gateway.
type gatewayOptions struct {
	// Executor and Transport configure the gateway's two halves
	// (graph.NewExecutor, and the HTTP handler over it).
	Executor  graph.ExecutorConfig
	Transport transport.Config
	Client    upstream.Config
	// NoIntrospection turns introspection off (on by default in tests).
	NoIntrospection bool
	// Wrap, if set, wraps the resolvers' upstream.
	Wrap func(graph.Upstream) graph.Upstream
}

// newGateway serves a gateway over sample (nil: the shared sample).
func newGateway(t *testing.T, sample *sampleservice.Server, opts gatewayOptions) *testGateway {
	t.Helper()
	if sample == nil {
		var err error
		if sample, err = sharedSample(); err != nil {
			t.Fatalf("start sample service: %v", err)
		}
	}
	g := newGatewayWith(t, sample.URL, opts)
	g.Sample = sample
	return g
}

// newGatewayURL serves a gateway over any upstream URL.
func newGatewayURL(t *testing.T, upstreamURL string) *testGateway {
	t.Helper()
	return newGatewayWith(t, upstreamURL, gatewayOptions{})
}

func newGatewayWith(t *testing.T, upstreamURL string, opts gatewayOptions) *testGateway {
	t.Helper()
	opts.Client.DataNodeURL = upstreamURL
	if opts.Client.ExplorerURL == "" {
		opts.Client.ExplorerURL = upstreamURL
	}
	if opts.Client.HTTPClient == nil {
		// The upstream client's own default (upstream.newTransport), whose
		// connections are closed when the test ends: a connection it dials
		// for a request that another, freed meanwhile, serves comes up
		// after the request, and (under load) during the next test, whose
		// leak check (noLeaks) then waited for it, 8 s at times. Closed,
		// the transport closes such a late one as it comes up.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 64
		opts.Client.HTTPClient = &http.Client{Transport: tr}
		t.Cleanup(tr.CloseIdleConnections)
	}
	client, err := upstream.New(opts.Client)
	if err != nil {
		t.Fatal(err)
	}
	opts.Executor.Upstream = client
	if opts.Wrap != nil {
		opts.Executor.Upstream = opts.Wrap(client)
	}
	if opts.Executor.CursorKeys == nil {
		opts.Executor.CursorKeys = graph.CursorKeysForTest()
	}
	opts.Executor.Introspection = !opts.NoIntrospection
	srv := httptest.NewServer(transport.NewHandler(graph.NewExecutor(opts.Executor), opts.Transport))
	t.Cleanup(srv.Close)
	return &testGateway{URL: srv.URL, Client: client}
}

// startSample starts a sample service of the test's own.
func startSample(t *testing.T, cfg sampleservice.Config) *sampleservice.Server {
	t.Helper()
	if cfg.Dataset.Seed == 0 && cfg.Data == nil {
		cfg.Dataset = sampleservice.DatasetOptions{Seed: 1, Scale: 1}
	}
	s, err := sampleservice.Start(cfg, "")
	if err != nil {
		t.Fatalf("start sample service: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// gqlResponse is a GraphQL response as a client sees it.
type gqlResponse struct {
	Data       json.RawMessage `json:"data"`
	Errors     []gqlError      `json:"errors"`
	Extensions map[string]any  `json:"extensions"`
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// code is the error's extensions.code.
func (e gqlError) code() string {
	c, _ := e.Extensions["code"].(string)
	return c
}

// query POSTs a query and decodes the response; it fails the test on
// anything but a 200 or 422 with a GraphQL body.
func (g *testGateway) query(t *testing.T, query string, vars map[string]any) gqlResponse {
	t.Helper()
	status, raw := rawPost(t, g.URL, query, vars)
	var out gqlResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("status %d, body not GraphQL JSON: %v\n%s", status, err, raw)
	}
	return out
}

// rawPost POSTs a query and returns the status and the body as sent.
func rawPost(t *testing.T, url, query string, vars map[string]any) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// mustData fails the test when the response has errors, and decodes data.
func (r gqlResponse) mustData(t *testing.T, into any) {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %+v", r.Errors)
	}
	if err := json.Unmarshal(r.Data, into); err != nil {
		t.Fatalf("decode data: %v\n%s", err, r.Data)
	}
}
