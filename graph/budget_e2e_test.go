package graph_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// rateLimited checks that every error of r is RATE_LIMITED with a retry
// time.
func rateLimited(t *testing.T, r gqlResponse) {
	t.Helper()
	if len(r.Errors) == 0 {
		t.Fatalf("no error: %s", r.Data)
	}
	for _, e := range r.Errors {
		if e.code() != "RATE_LIMITED" {
			t.Fatalf("error %+v, want RATE_LIMITED", e)
		}
		if secs, _ := e.Extensions["retryAfter"].(float64); secs < 1 {
			t.Fatalf("error %+v has no extensions.retryAfter", e)
		}
	}
}

func TestCachedAndCoalescedResultsServeWhileTheBudgetIsSpent(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	// Three data-node requests, then none for a quarter of an hour.
	g := newGateway(t, sample, gatewayOptions{
		Client:   upstream.Config{Budget: upstream.NewLocalBudget(0.001, 3)},
		Executor: graph.ExecutorConfig{RequestTimeout: 10 * time.Second},
	})
	ids := sample.Service.Dataset().Assets
	a, b := ids[0].ID, ids[1].ID

	// 1: an asset lookup fills the shared asset cache.
	var one struct{ Asset struct{ ID, Status string } }
	g.query(t, `query($id: ID!) { asset(id: $id) { id status } }`, map[string]any{"id": a}).mustData(t, &one)

	// 2: a slow list; identical queries arriving meanwhile join its call.
	sample.Service.SetFault(sampleservice.EndpointDelegations, sampleservice.Fault{Latency: 3 * time.Second})
	sample.Service.ResetCounters()
	const delegations = `{ delegations(first: 3) { edges { node { amount } } } }`
	var wg sync.WaitGroup
	bodies := make([]gqlResponse, 6)
	wg.Add(1)
	go func() { defer wg.Done(); bodies[0] = g.query(t, delegations, nil) }()
	deadline := time.Now().Add(10 * time.Second)
	for sample.Service.Requests(sampleservice.EndpointDelegations) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// 3: the last token goes to another query.
	var other struct {
		Assets struct{ Edges []json.RawMessage }
	}
	g.query(t, `{ assets(first: 4) { edges { node { id } } } }`, nil).mustData(t, &other)
	// The budget is spent: a new call is refused at once...
	rateLimited(t, g.query(t, `{ assets(first: 5) { edges { node { id } } } }`, nil))
	// ...but joining the call in flight costs nothing.
	for i := 1; i < len(bodies); i++ {
		wg.Add(1)
		go func() { defer wg.Done(); bodies[i] = g.query(t, delegations, nil) }()
	}
	wg.Wait()
	for i, r := range bodies {
		var d struct {
			Delegations struct{ Edges []json.RawMessage }
		}
		r.mustData(t, &d)
		if len(d.Delegations.Edges) != 3 {
			t.Fatalf("query %d: %s", i, r.Data)
		}
	}
	if n := sample.Service.Requests(sampleservice.EndpointDelegations); n != 1 {
		t.Fatalf("%d delegation requests for 6 identical queries, want 1", n)
	}
	// The cached asset still serves; an uncached one is refused; the
	// explorer, which has no rate limit, serves.
	g.query(t, `query($id: ID!) { asset(id: $id) { id status } }`, map[string]any{"id": a}).mustData(t, &one)
	if one.Asset.ID != a {
		t.Fatalf("cached asset: %+v", one)
	}
	rateLimited(t, g.query(t, `query($id: ID!) { asset(id: $id) { id } }`, map[string]any{"id": b}))
	var txs struct {
		Transactions struct{ Edges []json.RawMessage }
	}
	g.query(t, `{ transactions(first: 3) { edges { node { hash } } } }`, nil).mustData(t, &txs)
	if n := sample.Service.Requests(sampleservice.EndpointAssets); n != 1 {
		t.Fatalf("%d asset requests while the budget was spent, want the one that spent it", n)
	}
}

func TestBanStopsCallsAndAnswersRateLimited(t *testing.T) {
	t.Parallel() // waits out the pause after a 429; a sample of its own
	// A data node that allows 2 requests, then bans at the first 429.
	sample := startSample(t, sampleservice.Config{RateLimit: sampleservice.RateLimitConfig{
		Enabled: true, Rate: 0.01, Burst: 2, BanAfter: 1, BanDuration: time.Hour,
	}})
	// A gateway whose own budget is (wrongly) far above the data node's.
	g := newGateway(t, sample, gatewayOptions{
		Client:   upstream.Config{Budget: upstream.NewLocalBudget(1000, 1000)},
		Executor: graph.ExecutorConfig{RequestTimeout: 10 * time.Second},
	})
	for i := range 2 {
		var d struct {
			Assets struct{ Edges []json.RawMessage }
		}
		g.query(t, fmt.Sprintf(`{ assets(first: %d) { edges { cursor } } }`, i+1), nil).mustData(t, &d)
	}
	// The third call gets a 429 (and a ban); its retry after the pause
	// meets the ban: RATE_LIMITED.
	rateLimited(t, g.query(t, `{ assets(first: 3) { edges { cursor } } }`, nil))
	if sample.Service.Bans() != 1 {
		t.Fatalf("%d bans", sample.Service.Bans())
	}
	sample.Service.ResetCounters()
	// While banned, the gateway answers at once and never calls.
	for i := range 5 {
		rateLimited(t, g.query(t, fmt.Sprintf(`{ delegations(first: %d) { edges { cursor } } assets(first: %d) { edges { cursor } } }`, i+1, i+1), nil))
	}
	if n := sample.Service.Requests(sampleservice.EndpointDelegations) + sample.Service.Requests(sampleservice.EndpointAssets); n != 0 {
		t.Fatalf("%d data-node requests while banned", n)
	}
}

// The data node bans an address that keeps calling while rate limited:
// under a load far above its limit, the gateway's budget keeps it from
// ever doing so, and every request ends with data or a clear error.
// The load lasts 20 s, 2 s under -short: the burst is spent in the first
// second either way, and the data node bans after 10 429s in a row.
func TestLoadStaysInsideTheRateBudget(t *testing.T) {
	t.Parallel() // a sample of its own; its checks hold at any speed
	sample := startSample(t, sampleservice.Config{
		Defects:   sampleservice.DefaultDefects(),
		RateLimit: sampleservice.RateLimitConfig{Enabled: true}, // 20/s, burst 100, ban after 10 429s in a row
	})
	g := newGateway(t, sample, gatewayOptions{
		Client:   upstream.Config{Budget: upstream.NewLocalBudget(upstream.DefaultBudgetRate, upstream.DefaultBudgetBurst)},
		Executor: graph.ExecutorConfig{RequestTimeout: 5 * time.Second},
	})
	ds := sample.Service.Dataset()
	partyIDs := ds.Parties
	cmdTypes := []string{"Batch Market Instructions", "Batch Proposal", "Register New Node", "Apply Referral Code", "Submit Order"}

	const clients = 200
	duration := 20 * time.Second
	if testing.Short() {
		duration = 2 * time.Second
	}
	var (
		total, ok, limited, unavailable, partial atomic.Int64
		mu                                       sync.Mutex
		failures                                 []string
	)
	fail := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 10 {
			failures = append(failures, s)
		}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	stop := time.Now().Add(duration)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			cursor := map[string]string{}
			for i := 0; time.Now().Before(stop); i++ {
				// Distinct queries: random page sizes, orders, filters and
				// cursors, so that neither caching nor coalescing hides
				// the load.
				n := 1 + rng.IntN(999)
				var q string
				var vars map[string]any
				switch list := rng.IntN(5); list {
				case 0:
					q = `query($n: Int, $o: Boolean, $after: String) { assets(first: $n, newestFirst: $o, after: $after) { edges { node { id status details { symbol } } } pageInfo { endCursor } } }`
					vars = map[string]any{"n": n, "o": rng.IntN(2) == 0, "after": nilIfEmpty(cursor["assets"])}
				case 1:
					q = `query($n: Int, $after: String, $e: ID) { delegations(first: $n, after: $after, epochId: $e) { edges { node { amount epochSeq party { id } } } pageInfo { endCursor } } }`
					vars = map[string]any{"n": n, "after": nilIfEmpty(cursor["delegations"]), "e": nilIfEmpty(fmt.Sprint(rng.IntN(40)))}
				case 2:
					q = `query($p: ID!, $n: Int) { fundingPayments(partyId: $p, first: $n) { edges { node { amount marketId } } pageInfo { endCursor } } }`
					vars = map[string]any{"p": partyIDs[rng.IntN(len(partyIDs))], "n": 1 + rng.IntN(200)}
				case 3:
					q = `query($n: Int, $t: [String!], $after: String) { transactions(first: $n, cmdTypes: $t, after: $after) { edges { node { hash type submitter { id } } } pageInfo { endCursor } } }`
					vars = map[string]any{"n": 1 + rng.IntN(100), "t": []string{cmdTypes[rng.IntN(len(cmdTypes))]}, "after": nilIfEmpty(cursor["transactions"])}
				default:
					q = `query($n: Int, $m: Int) { assets(last: $n) { edges { cursor } } delegations(last: $m) { edges { cursor } } }`
					vars = map[string]any{"n": n, "m": 1 + rng.IntN(999)}
				}
				body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
				total.Add(1)
				resp, err := client.Post(g.URL, "application/json", strings.NewReader(string(body)))
				if err != nil {
					fail("request failed (hang or transport error): " + err.Error())
					return
				}
				var out gqlResponse
				err = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if err != nil {
					fail(fmt.Sprintf("status %d: undecodable body: %v", resp.StatusCode, err))
					continue
				}
				codes := map[string]bool{}
				for _, e := range out.Errors {
					codes[e.code()] = true
				}
				switch {
				case len(codes) == 0:
					ok.Add(1)
				case len(codes) == 1 && codes["RATE_LIMITED"]:
					limited.Add(1)
				case len(codes) == 1 && codes["UPSTREAM_UNAVAILABLE"]:
					unavailable.Add(1)
				case len(codes) == 2 && codes["RATE_LIMITED"] && codes["UPSTREAM_UNAVAILABLE"]:
					partial.Add(1)
				default:
					fail(fmt.Sprintf("unexpected errors %+v for %s %v", out.Errors, q, vars))
				}
				// Follow a cursor now and then.
				var data map[string]*struct{ PageInfo struct{ EndCursor string } }
				if json.Unmarshal(out.Data, &data) == nil {
					for k, v := range data {
						if v != nil && v.PageInfo.EndCursor != "" && rng.IntN(2) == 0 {
							cursor[k] = v.PageInfo.EndCursor
						} else {
							delete(cursor, k)
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d requests from %d clients in %v: %d data, %d RATE_LIMITED, %d UPSTREAM_UNAVAILABLE, %d both; the data node answered %d 429s and issued %d bans",
		total.Load(), clients, duration, ok.Load(), limited.Load(), unavailable.Load(), partial.Load(), sample.Service.RateLimited(), sample.Service.Bans())
	for _, f := range failures {
		t.Error(f)
	}
	if bans := sample.Service.Bans(); bans != 0 {
		t.Fatalf("the data node banned the gateway %d times", bans)
	}
	if ok.Load() == 0 || limited.Load() == 0 {
		t.Fatalf("the load did not exercise both data and the budget (%d data, %d RATE_LIMITED)", ok.Load(), limited.Load())
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
