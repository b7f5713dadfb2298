package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/sampleservice"
)

// holdFunding holds every funding-payments request at the upstream: the
// readiness check (an asset list) is never held.
func holdFunding(r *http.Request) bool { return r.URL.Path == "/api/v2/funding-payments" }

const fundingQuery = `query Funding($party: ID!) { fundingPayments(partyId: $party, first: 5) { edges { node { amount } } } }`

// fundingVars names a party of the sample dataset.
func fundingVars(u *testUpstream) map[string]any {
	return map[string]any{"party": u.Sample.Dataset().FundingPayments[0].PartyID}
}

// newConnClient opens a new connection for every request, as a client
// arriving after the shutdown started would.
var newConnClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

// Graceful shutdown, in order: readiness fails while requests are still
// served (the shutdown delay), then new connections are refused while the
// request in flight goes on, and it completes; serve returns cleanly.
func TestGracefulShutdownFailsReadinessThenDrains(t *testing.T) {
	t.Parallel() // waits out its 2 s shutdown delay
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, holdFunding)
	g := startOpsGateway(t, u.args("-shutdown-delay", "2s", "-shutdown-timeout", "30s")...)
	if resp, body := get(t, g.URL+"/readyz", nil); resp.StatusCode != 200 {
		t.Fatalf("readyz before shutdown = %d %q", resp.StatusCode, body)
	}

	inFlight := make(chan gqlResult, 1)
	go func() { inFlight <- postGraphQLNoFatal(g.URL, query(fundingQuery, fundingVars(u))) }()
	waitFor(t, u.arrived, "the in-flight request to reach the upstream")

	stopped := make(chan error, 1)
	go func() { stopped <- g.stop() }()

	// Readiness fails first, while the gateway still accepts connections.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := newConnClient.Get(g.URL + "/readyz")
		if err != nil {
			t.Fatalf("the listener closed before readiness failed: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("readiness never failed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Still serving during the delay: liveness answers.
	if resp, err := newConnClient.Get(g.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz during the shutdown delay: %v", err)
	} else {
		resp.Body.Close()
	}
	// Then new connections are refused, while the request is in flight.
	for {
		resp, err := newConnClient.Get(g.URL + "/healthz")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("new connections were still accepted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case r := <-inFlight:
		t.Fatalf("the in-flight request ended before its upstream answered: %+v", r)
	case err := <-stopped:
		t.Fatalf("serve returned with a request in flight: %v", err)
	default:
	}

	u.releaseAll()
	r := waitFor(t, inFlight, "the in-flight request")
	if r.Status != 200 || len(r.Errors) > 0 || r.Data["fundingPayments"] == nil {
		t.Fatalf("the in-flight request got %d %+v", r.Status, r)
	}
	if err := waitFor(t, stopped, "serve to return"); err != nil {
		t.Fatalf("serve: %v", err)
	}
	if resp, err := newConnClient.Get(g.URL + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("the gateway still accepts connections after serve returned")
	}
	logs := g.logs.String()
	if !strings.Contains(logs, "readiness fails") || !strings.Contains(logs, "draining") || !strings.Contains(logs, "stopped") {
		t.Errorf("the log does not tell the shutdown's steps:\n%s", logs)
	}
}

// Shutdown is bounded: a request that never ends is cut off after the
// shutdown timeout, and serve says so.
func TestGracefulShutdownIsBounded(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, holdFunding)
	g := startOpsGateway(t, u.args("-shutdown-timeout", "500ms", "-upstream-timeout", "1m", "-request-timeout", "1m")...)
	inFlight := make(chan gqlResult, 1)
	go func() { inFlight <- postGraphQLNoFatal(g.URL, query(fundingQuery, fundingVars(u))) }()
	waitFor(t, u.arrived, "the request to reach the upstream")
	stopped := make(chan error, 1)
	go func() { stopped <- g.stop() }()
	err := waitFor(t, stopped, "serve to give up on the stuck request")
	if err == nil || !strings.Contains(err.Error(), "shutdown") {
		t.Fatalf("serve = %v, want a shutdown error", err)
	}
	r := waitFor(t, inFlight, "the cut-off request")
	if r.Status == 200 && len(r.Errors) == 0 {
		t.Fatalf("the stuck request succeeded: %+v", r)
	}
}

// postGraphQLNoFatal is postGraphQL for goroutines: a transport error
// comes back as Status 0.
func postGraphQLNoFatal(base string, body any) gqlResult {
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+"/graphql", "application/json", bytes.NewReader(b))
	if err != nil {
		return gqlResult{Errors: []gqlErr{{Message: err.Error()}}}
	}
	defer resp.Body.Close()
	var r gqlResult
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		r.Errors = append(r.Errors, gqlErr{Message: err.Error()})
	}
	r.Status = resp.StatusCode
	return r
}

// waitFor receives from ch, failing the test after a generous deadline.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(60 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
