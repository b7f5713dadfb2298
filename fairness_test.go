package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradenet/gateway/sampleservice"
)

// heavyQuery is a page of n transactions with 8 nested connections of
// each row's submitter: a few hundred data-node calls (one per distinct
// party and connection), admitted by the default limits (cost and depth)
// up to heaviestRows rows.
func heavyQuery(n int) string {
	var b strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&b, " d%d: delegations(first: %d) { edges { node { amount } } }", i, i)
		fmt.Fprintf(&b, " f%d: fundingPayments(first: %d) { edges { node { amount } } }", i, i)
	}
	return fmt.Sprintf(`{ transactions(first: %d) { edges { node { hash submitter { id%s } } } } }`, n, b.String())
}

// heaviestRows is the largest page heavyQuery can ask for under the
// default bound on data-node requests (MAX_UPSTREAM_CALLS, 450 with the
// default budget and deadline): 8 connections under each of 56 rows,
// 448 requests at most.
const heaviestRows = 56

const lightQuery = `{ assets(first: 1) { edges { node { id } } } }`

// dataNodeCounter counts a test upstream's data-node calls by kind: the
// heavy query's (delegations, funding payments) and the light one's
// (assets).
type dataNodeCounter struct {
	heavy, light atomic.Int64
	// heavyAtLight is the heavy count when the light query's call
	// arrived.
	heavyAtLight atomic.Int64
}

func (c *dataNodeCounter) observe(r *http.Request) bool {
	switch r.URL.Path {
	case "/api/v2/delegations", "/api/v2/funding-payments":
		c.heavy.Add(1)
	case "/api/v2/assets":
		c.heavyAtLight.Store(c.heavy.Load())
		c.light.Add(1)
	}
	return false // observe only, never hold
}

// postAs POSTs a query as the client at addr (forwarded by a trusted
// proxy: the test process itself, on 127.0.0.1).
func postAs(ctx context.Context, base, addr, q string) (gqlResult, error) {
	return postAsWith(ctx, http.DefaultClient, base, addr, q)
}

func postAsWith(ctx context.Context, client *http.Client, base, addr, q string) (gqlResult, error) {
	body, _ := json.Marshal(query(q, nil))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return gqlResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := client.Do(req)
	if err != nil {
		return gqlResult{}, err
	}
	defer resp.Body.Close()
	var r gqlResult
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return gqlResult{}, fmt.Errorf("status %d: %w", resp.StatusCode, err)
	}
	r.Status = resp.StatusCode
	return r, nil
}

// A client's light query is served between another client's heavy
// query's calls, not after all of them: over real HTTP, with the two
// clients told apart by a trusted proxy's X-Forwarded-For.
func TestLightClientIsServedWhileAHeavyOneDrainsTheBudget(t *testing.T) {
	var count dataNodeCounter
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, count.observe)
	// 20 calls a second after a burst of 10: the heavy query's ~250
	// calls take over 10s.
	// The bound on one query's data-node requests is raised: this test is
	// of the share between clients, not of the bound (which would refuse
	// 800 calls at 20/s within 30s).
	g := startOpsGateway(t, u.args("-upstream-rate", "20", "-upstream-burst", "10", "-max-upstream-calls", "1000", "-trusted-proxies", "127.0.0.1/32")...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heavyDone := make(chan error, 1)
	go func() {
		_, err := postAs(ctx, g.URL, "198.51.100.1", heavyQuery(100))
		heavyDone <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for count.heavy.Load() < 30 { // past the burst: the budget is contended
		if time.Now().After(deadline) {
			t.Fatalf("the heavy query made %d data-node calls in 20s", count.heavy.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	sent := count.heavy.Load()
	r, err := postAs(ctx, g.URL, "198.51.100.2", lightQuery)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Errors) > 0 || r.Data["assets"] == nil {
		t.Fatalf("light query: %+v", r)
	}
	// Between the light query's sending and its data-node call, the heavy
	// one got the turn being taken and one more (a couple more allowed
	// for scheduling); first come first served, it would have got all
	// its ~200 remaining calls first.
	ahead := count.heavyAtLight.Load() - sent
	if ahead > 4 {
		t.Fatalf("%d heavy calls went ahead of the light query's one", ahead)
	}
	select {
	case err := <-heavyDone:
		t.Fatalf("the heavy query had ended (%v) before the light one was answered: the budget was not contended", err)
	default:
	}
	t.Logf("light query served after %d heavy calls; the heavy query had made %d", ahead, count.heavy.Load())
	cancel()
	<-heavyDone
}
