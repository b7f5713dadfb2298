package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// The soak test of the fair share (README, Upstream faults and the rate
// budget): for a minute one client sends the heaviest query the gateway
// admits, a few hundred data-node calls each, one after the other, while
// another client sends a light query every 500ms. The light client's
// answers stay prompt, the data node (rate limited like the real one)
// never limits nor bans the gateway, and nothing is left behind. It is
// the one test that measures wall-clock latency, because the issue asks
// for that figure; its bound (p95 under 1s) is several times what the
// fair share gives (two turns of the budget, 133ms, plus the query's own
// time), to hold on a busy 2-core machine. Under -short it is skipped:
// TestLightClientIsServedWhileAHeavyOneDrainsTheBudget checks the fair
// share over the same real HTTP in about a second.
func TestSoakFairShare(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of load; TestLightClientIsServedWhileAHeavyOneDrainsTheBudget checks the fair share: the full suite runs it")
	}
	const (
		soak        = 60 * time.Second
		lightEvery  = 500 * time.Millisecond
		lightP95Max = time.Second
	)
	goroutinesAtStart := goleak.IgnoreCurrent()

	sample, err := sampleservice.Start(sampleservice.Config{
		Dataset:   sampleservice.DatasetOptions{Seed: 1, Scale: 1},
		Defects:   sampleservice.DefaultDefects(),
		RateLimit: sampleservice.RateLimitConfig{Enabled: true}, // 20/s, burst 100, bans like the real one
		// No response cache: the heap measured below is the gateway's.
		CacheEntries: -1,
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sample.Close()
	// The default budget (15/s, burst 60); the test process is the
	// trusted proxy of both clients.
	g := startOpsGateway(t, "-upstream", sample.URL, "-explorer", sample.URL+"/rest", "-trusted-proxies", "127.0.0.1/32")
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	post := func(ctx context.Context, addr, q string) (gqlResult, error) {
		return postAsWith(ctx, client, g.URL, addr, q)
	}

	// Warm up (parsed-query caches, connections), then take the heap.
	heavy := heavyQuery(heaviestRows)
	for _, q := range []string{heavyQuery(2), lightQuery} {
		if r, err := post(context.Background(), "198.51.100.1", q); err != nil || len(r.Errors) > 0 {
			t.Fatalf("warm-up: %v %+v", err, r.Errors)
		}
	}
	// The heavy query is the heaviest of its shape the gateway admits:
	// one row more is over the bound on data-node requests.
	if r, err := post(context.Background(), "198.51.100.1", heavyQuery(heaviestRows+1)); err != nil || !slices.Equal(r.codes(), []string{"QUERY_TOO_COMPLEX"}) {
		t.Fatalf("a heavier query: %v %+v, want QUERY_TOO_COMPLEX", err, r.Errors)
	}
	heapAtStart := liveHeap()
	allocatedAtStart := totalAlloc()
	sample.Service.ResetCounters()
	callsBefore := dataNodeCalls(sample.Service)

	ctx, stop := context.WithTimeout(context.Background(), soak)
	defer stop()
	var wg sync.WaitGroup
	var heavyDone, heavyFailed int
	wg.Go(func() {
		for ctx.Err() == nil {
			r, err := post(ctx, "198.51.100.1", heavy)
			switch {
			case ctx.Err() != nil:
			case err != nil || len(r.Errors) > 0:
				heavyFailed++
			default:
				heavyDone++
			}
		}
	})
	var latencies []time.Duration
	var lightFailed []string
	wg.Go(func() {
		tick := time.NewTicker(lightEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			start := time.Now()
			// Not bounded by ctx: the last light query is answered too.
			r, err := post(context.Background(), "198.51.100.2", lightQuery)
			latencies = append(latencies, time.Since(start))
			if err != nil || len(r.Errors) > 0 || r.Data["assets"] == nil {
				lightFailed = append(lightFailed, fmtResult(r, err))
			}
		}
	})
	wg.Wait()
	calls := dataNodeCalls(sample.Service) - callsBefore

	slices.Sort(latencies)
	p95 := latencies[len(latencies)*95/100]
	t.Logf("light: %d queries, p50 %v, p95 %v, max %v; heavy: %d answered (%d failed), %d data-node calls in %v (%.1f/s); data node: %d 429s, %d bans",
		len(latencies), latencies[len(latencies)/2], p95, latencies[len(latencies)-1],
		heavyDone, heavyFailed, calls, soak, float64(calls)/soak.Seconds(), sample.Service.RateLimited(), sample.Service.Bans())
	if len(lightFailed) > 0 {
		t.Errorf("%d light queries failed, first: %s", len(lightFailed), lightFailed[0])
	}
	if len(latencies) < int(soak/lightEvery)/2 {
		t.Errorf("only %d light queries in %v", len(latencies), soak)
	}
	if p95 > lightP95Max {
		t.Errorf("light client's p95 latency %v, want under %v", p95, lightP95Max)
	}
	if n, b := sample.Service.RateLimited(), sample.Service.Bans(); n != 0 || b != 0 {
		t.Errorf("the data node answered %d 429s and issued %d bans", n, b)
	}
	// Inside the budget: its burst, then 15 a second (and the light
	// query sent as the soak ended).
	if max := int64(upstream.DefaultBudgetBurst + upstream.DefaultBudgetRate*(soak/time.Second) + 1); calls > max {
		t.Errorf("%d data-node calls in %v, more than the budget's %d", calls, soak, max)
	}
	if heavyDone == 0 {
		t.Errorf("no heavy query was answered in %v (%d failed)", soak, heavyFailed)
	}

	// Live heap, the gateway still running: back near where it started.
	// The tolerance, 8 MiB, covers what grows legitimately and is bounded:
	// buffers of idle keep-alive connections (up to UPSTREAM_CONCURRENCY
	// to the data node), the gateway's size-bounded caches (assets,
	// parsed queries), the race detector's bookkeeping under -race. The
	// soak allocates 60-400 MiB (logged): keeping a small share of what
	// it handled fails.
	client.CloseIdleConnections()
	heap, allocated := liveHeap(), totalAlloc()-allocatedAtStart
	t.Logf("live heap %.1f MiB after the soak, %.1f MiB before; %.0f MiB allocated meanwhile", mib(heap), mib(heapAtStart), mib(allocated))
	if heap > heapAtStart+8<<20 {
		t.Errorf("live heap %.1f MiB after the soak, %.1f MiB before", mib(heap), mib(heapAtStart))
	}

	// Everything stopped, the goroutines return to where they were before
	// the test (polled: connections close and their goroutines end a
	// moment after), with no exception.
	if err := g.stop(); err != nil {
		t.Error(err)
	}
	_ = sample.Close()
	client.CloseIdleConnections()
	deadline := time.Now().Add(15 * time.Second)
	for {
		// Find itself polls for about half a second.
		err := goleak.Find(goroutinesAtStart)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left 15s after the soak: %v", err)
		}
	}
}

// liveHeap is the heap's live bytes after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // the second frees what the first's finalizers released
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

func dataNodeCalls(s *sampleservice.Service) int64 {
	return s.Requests(sampleservice.EndpointAssets) + s.Requests(sampleservice.EndpointDelegations) + s.Requests(sampleservice.EndpointFundingPayments)
}

func fmtResult(r gqlResult, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("status %d, errors %+v", r.Status, r.Errors)
}
