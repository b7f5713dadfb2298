package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tradenet/gateway/sampleservice"
)

// coalescingResult is what n concurrent identical queries cost the REST
// service.
type coalescingResult struct {
	Name    string
	Gateway bool
	Clients int
	// Latency is the delay added to every upstream response, so that the
	// queries' upstream calls are surely in flight together.
	Latency time.Duration
	// Upstream is the number of requests the REST service received.
	Upstream int64
	// Distinct is the number of distinct upstream calls one query makes.
	Distinct int
	// MostInFlight is the most identical upstream requests the gateway
	// had in flight at once (gateway only).
	MostInFlight int
	Elapsed      time.Duration
}

// coalescing starts n identical queries at once, through the uncached
// gateway and directly, with each of the given upstream latencies added,
// and counts the upstream requests they cause.
func coalescing(ctx context.Context, e *env, q query, n int, latencies []time.Duration) ([]coalescingResult, error) {
	if _, err := verify(ctx, e, e.uncached, q); err != nil {
		return nil, err
	}
	g := e.uncached
	// The distinct calls of one query, alone.
	g.inflight.reset()
	if _, _, err := e.graphql.query(ctx, g, q.doc, q.vars); err != nil {
		return nil, err
	}
	_, distinct := g.inflight.peak()

	var out []coalescingResult
	defer clearFaults(e)
	for _, latency := range latencies {
		setLatency(e, latency)
		for _, s := range []side{sideGateway, sideDirect} {
			fn := e.directCall(q)
			if s == sideGateway {
				fn = func(ctx context.Context) error { _, _, err := e.graphql.query(ctx, g, q.doc, q.vars); return err }
			}
			g.inflight.reset()
			before := e.upstreamRequests()
			elapsed, err := burst(ctx, n, fn)
			if err != nil {
				return nil, fmt.Errorf("%d concurrent %s queries (%s): %w", n, q.name, s, err)
			}
			r := coalescingResult{
				Name:     fmt.Sprintf("%s ×%d, %s, upstream +%s", q.name, n, s, latency),
				Gateway:  s == sideGateway,
				Clients:  n,
				Latency:  latency,
				Upstream: e.upstreamRequests() - before,
				Distinct: distinct,
				Elapsed:  elapsed,
			}
			if r.Gateway {
				r.MostInFlight, _ = g.inflight.peak()
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// burst runs fn from n goroutines released together, and returns how long
// they took and the first error.
func burst(ctx context.Context, n int, fn func(context.Context) error) (time.Duration, error) {
	var (
		ready, wg sync.WaitGroup
		release   = make(chan struct{})
		mu        sync.Mutex
		firstErr  error
	)
	ready.Add(n)
	for range n {
		wg.Go(func() {
			ready.Done()
			<-release
			if err := fn(ctx); err != nil {
				mu.Lock()
				firstErr = cmpOr(firstErr, err)
				mu.Unlock()
			}
		})
	}
	ready.Wait()
	start := time.Now()
	close(release)
	wg.Wait()
	return time.Since(start), firstErr
}

// setLatency delays every response of the sample service by d.
func setLatency(e *env, d time.Duration) {
	for _, ep := range allEndpoints {
		e.sample.Service.SetFault(ep, sampleservice.Fault{Latency: d})
	}
}

// clearFaults removes every fault of the sample service.
func clearFaults(e *env) {
	for _, ep := range allEndpoints {
		e.sample.Service.SetFault(ep, sampleservice.Fault{})
	}
}
