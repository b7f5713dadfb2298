package graph_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// The fault tests make one upstream endpoint misbehave (sample service
// faults) and query two root fields, one on the faulty endpoint and one on
// a healthy one: the faulty field gets its error code, the other its data.

// noLeaks checks, after the test and its cleanups, that no goroutine the
// test started is left. It must be called first, so that its cleanup runs
// last; keep-alive connections are closed first (their goroutines would
// otherwise linger by design).
func noLeaks(t *testing.T, transports ...*http.Transport) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		opts := []goleak.Option{ignore}
		// A connection whose response was just read goes back to its
		// transport's idle pool on the transport's own goroutine, a
		// moment after the reader saw the end: close idle connections
		// until none comes back (or goleak's own wait runs out).
		for range 50 {
			for _, tr := range transports {
				tr.CloseIdleConnections()
			}
			http.DefaultClient.CloseIdleConnections()
			if goleak.Find(opts...) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		goleak.VerifyNone(t, opts...)
	})
}

// faultGateway is a gateway over a sample service of the test's own, with
// short backoffs; adjust tunes the client.
func faultGateway(t *testing.T, adjust func(*gatewayOptions)) (*testGateway, *http.Transport) {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	noLeaks(t, tr)
	sample := startSample(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()})
	opts := gatewayOptions{Client: upstream.Config{
		HTTPClient: &http.Client{Transport: tr},
		Retry:      upstream.RetryConfig{InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond},
	}}
	if adjust != nil {
		adjust(&opts)
	}
	return newGateway(t, sample, opts), tr
}

const twoLists = `{ assets(first: 2) { edges { node { id } } } transactions(first: 2) { edges { node { hash } } } }`

// expectFault checks that every error is at field with code, and that
// the other root field has its two rows.
func expectFault(t *testing.T, resp gqlResponse, field, code, other string) gqlError {
	t.Helper()
	if len(resp.Errors) == 0 {
		t.Fatalf("no error; data %s", resp.Data)
	}
	for _, e := range resp.Errors {
		if e.code() != code || len(e.Path) == 0 || e.Path[0] != field {
			t.Fatalf("error %+v, want %s at %s", e, code, field)
		}
	}
	var data map[string]*struct{ Edges []json.RawMessage }
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		t.Fatalf("data %s: %v", resp.Data, err)
	}
	if data[other] == nil || len(data[other].Edges) != 2 {
		t.Fatalf("the healthy field %s did not resolve: %s", other, resp.Data)
	}
	if data[field] != nil {
		t.Fatalf("the failed field %s has data: %s", field, resp.Data)
	}
	return resp.Errors[0]
}

func TestFaultLatencyBeyondTheUpstreamDeadline(t *testing.T) {
	g, _ := faultGateway(t, func(o *gatewayOptions) {
		o.Client.Timeout = time.Second
		o.Client.Retry.Retries = -1
	})
	g.Sample.Service.SetFault(sampleservice.EndpointAssets, sampleservice.Fault{Latency: 5 * time.Second})
	e := expectFault(t, g.query(t, twoLists, nil), "assets", "UPSTREAM_UNAVAILABLE", "transactions")
	if !strings.Contains(e.Message, "no answer before the deadline") {
		t.Fatalf("message %q", e.Message)
	}
	g.Sample.Service.SetFault(sampleservice.EndpointAssets, sampleservice.Fault{})
	g.Sample.Service.SetFault(sampleservice.EndpointTransactions, sampleservice.Fault{Latency: 5 * time.Second})
	expectFault(t, g.query(t, twoLists, nil), "transactions", "UPSTREAM_UNAVAILABLE", "assets")
}

func TestFaultLatencyBeyondTheRequestDeadline(t *testing.T) {
	g, _ := faultGateway(t, func(o *gatewayOptions) {
		o.Executor.RequestTimeout = time.Second // the upstream timeout stays 10s
	})
	// No retry after the request's deadline.
	assetsFaultOnce(t, g, sampleservice.Fault{Latency: 10 * time.Second}, "UPSTREAM_UNAVAILABLE", "deadline")
}

// assetsFaultOnce answers the asset list with fault and checks that the
// query's assets field fails with code, a message containing message, and
// the transactions beside it stay; and that the data node was asked once
// (no retry).
func assetsFaultOnce(t *testing.T, g *testGateway, fault sampleservice.Fault, code, message string) {
	t.Helper()
	g.Sample.Service.SetFault(sampleservice.EndpointAssets, fault)
	g.Sample.Service.ResetCounters()
	e := expectFault(t, g.query(t, twoLists, nil), "assets", code, "transactions")
	if !strings.Contains(e.Message, message) {
		t.Fatalf("message %q, want it to say %q", e.Message, message)
	}
	if n := g.Sample.Service.Requests(sampleservice.EndpointAssets); n != 1 {
		t.Fatalf("%d asset requests, want 1 (no retry)", n)
	}
}

func TestFaultServerErrorsWithRecovery(t *testing.T) {
	g, _ := faultGateway(t, nil)
	g.Sample.Service.SetFault(sampleservice.EndpointAssets, sampleservice.Fault{FailNext: 2})
	g.Sample.Service.ResetCounters()
	resp := g.query(t, twoLists, nil)
	var data map[string]struct{ Edges []json.RawMessage }
	resp.mustData(t, &data)
	if len(data["assets"].Edges) != 2 || len(data["transactions"].Edges) != 2 {
		t.Fatalf("data %s", resp.Data)
	}
	if n := g.Sample.Service.Requests(sampleservice.EndpointAssets); n != 3 {
		t.Fatalf("%d asset requests, want 3 (two 500s, then the answer)", n)
	}
}

func TestFaultServerErrorsWithoutRecovery(t *testing.T) {
	g, _ := faultGateway(t, nil)
	g.Sample.Service.SetFault(sampleservice.EndpointTransactions, sampleservice.Fault{ErrorRate: 1})
	g.Sample.Service.ResetCounters()
	e := expectFault(t, g.query(t, twoLists, nil), "transactions", "UPSTREAM_ERROR", "assets")
	up, _ := e.Extensions["upstream"].(map[string]any)
	if up["status"] != 500.0 || up["service"] != "explorer" {
		t.Fatalf("extensions.upstream = %v", up)
	}
	if n := g.Sample.Service.Requests(sampleservice.EndpointTransactions); n != 1+upstream.DefaultRetries {
		t.Fatalf("%d transaction requests, want %d (bounded retries)", n, 1+upstream.DefaultRetries)
	}
}

func TestFaultMalformedAndTruncatedBodies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault sampleservice.Fault
	}{
		{"malformed", sampleservice.Fault{MalformedRate: 1}},
		{"truncated", sampleservice.Fault{TruncatedRate: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := faultGateway(t, nil)
			// An unreadable body is not retried.
			assetsFaultOnce(t, g, tc.fault, "UPSTREAM_ERROR", "could not read")
		})
	}
}

func TestFaultOversizedBody(t *testing.T) {
	g, _ := faultGateway(t, func(o *gatewayOptions) { o.Client.MaxBodyBytes = 8 << 10 })
	// A page of 500 assets is far over 8 KiB; two delegations are not.
	resp := g.query(t, `{ assets(first: 500) { edges { node { id } } } delegations(first: 2) { edges { node { amount } } } }`, nil)
	e := expectFault(t, resp, "assets", "UPSTREAM_ERROR", "delegations")
	if !strings.Contains(e.Message, "could not read") {
		t.Fatalf("message %q", e.Message)
	}
}

func TestFaultDroppedConnections(t *testing.T) {
	g, _ := faultGateway(t, nil)
	g.Sample.Service.SetFault(sampleservice.EndpointAssets, sampleservice.Fault{DropRate: 1})
	g.Sample.Service.ResetCounters()
	e := expectFault(t, g.query(t, twoLists, nil), "assets", "UPSTREAM_UNAVAILABLE", "transactions")
	if !strings.Contains(e.Message, "connection failed") {
		t.Fatalf("message %q", e.Message)
	}
	// Go's transport itself retries a GET once when a reused keep-alive
	// connection drops before answering, so each of the gateway's
	// attempts is one or two requests.
	if n := g.Sample.Service.Requests(sampleservice.EndpointAssets); n < 1+upstream.DefaultRetries || n > 2*(1+upstream.DefaultRetries) {
		t.Fatalf("%d asset requests, want %d attempts (retried)", n, 1+upstream.DefaultRetries)
	}
}

func TestFaultBreakerOpensAndCloses(t *testing.T) {
	g, _ := faultGateway(t, func(o *gatewayOptions) {
		o.Client.Breaker = upstream.BreakerConfig{Failures: 3, OpenFor: 3 * time.Second}
	})
	svc := g.Sample.Service
	svc.SetFault(sampleservice.EndpointAssets, sampleservice.Fault{ErrorRate: 1})
	svc.ResetCounters()
	// One query: three failed requests (the call and its two retries).
	expectFault(t, g.query(t, twoLists, nil), "assets", "UPSTREAM_ERROR", "transactions")
	if s := g.Client.BreakerState(upstream.ServiceDataNode); s != upstream.BreakerOpen {
		t.Fatalf("breaker %s after 3 failures", s)
	}
	// Open: the data node's fields fail fast, the explorer's resolve.
	before := svc.Requests(sampleservice.EndpointAssets) + svc.Requests(sampleservice.EndpointDelegations)
	const dataNodeTwice = `{ assets(first: 2) { edges { node { id } } } delegations(first: 2) { edges { node { amount } } } transactions(first: 2) { edges { node { hash } } } }`
	resp := g.query(t, dataNodeTwice, nil)
	if len(resp.Errors) != 2 {
		t.Fatalf("errors %+v, want one per data-node field", resp.Errors)
	}
	for _, e := range resp.Errors {
		if e.code() != "UPSTREAM_UNAVAILABLE" || !strings.Contains(e.Message, "circuit breaker open") {
			t.Fatalf("error %+v, want UPSTREAM_UNAVAILABLE (breaker open)", e)
		}
	}
	if !strings.Contains(string(resp.Data), `"transactions":{"edges":[{`) {
		t.Fatalf("transactions did not resolve: %s", resp.Data)
	}
	if after := svc.Requests(sampleservice.EndpointAssets) + svc.Requests(sampleservice.EndpointDelegations); after != before {
		t.Fatalf("%d data-node requests while the breaker was open", after-before)
	}
	// The service recovers; after OpenFor a probe goes through and closes
	// the breaker.
	svc.SetFault(sampleservice.EndpointAssets, sampleservice.Fault{})
	deadline := time.Now().Add(10 * time.Second)
	for g.Client.BreakerState(upstream.ServiceDataNode) != upstream.BreakerHalfOpen {
		if time.Now().After(deadline) {
			t.Fatal("the breaker never became half-open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var data map[string]struct{ Edges []json.RawMessage }
	g.query(t, twoLists, nil).mustData(t, &data)
	if s := g.Client.BreakerState(upstream.ServiceDataNode); s != upstream.BreakerClosed {
		t.Fatalf("breaker %s after a successful probe", s)
	}
	g.query(t, dataNodeTwice, nil).mustData(t, &data)
	if len(data["delegations"].Edges) != 2 {
		t.Fatalf("data %v", data)
	}
}
