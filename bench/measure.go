package main

import (
	"context"
	"fmt"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// side is one path of the comparison.
type side int

const (
	sideDirect side = iota
	sideGateway
)

func (s side) String() string {
	if s == sideDirect {
		return "direct"
	}
	return "gateway"
}

// stats is what one side of one measured cell cost.
type stats struct {
	Requests int
	Elapsed  time.Duration
	P50, P99 time.Duration
	// Throughput is completed requests per second.
	Throughput float64
	// UpstreamPerRequest is requests received by the REST service per
	// request made (for the gateway: per GraphQL request).
	UpstreamPerRequest float64
	// ClientBytes are bytes on the wire between the client and what it
	// calls (the REST service directly, or the gateway), per request;
	// UpstreamBytes, between the gateway and the REST service.
	ClientBytes, UpstreamBytes float64
	// CPUPerRequest is the process's CPU time per request: client, gateway
	// and sample service together (they share the process).
	CPUPerRequest time.Duration
	// AllocsPerRequest are heap allocations per request, process-wide.
	AllocsPerRequest float64
	// GoroutinesPerRequest are goroutines started per request,
	// process-wide.
	GoroutinesPerRequest float64
}

// phase is the raw record of requests made in one go.
type phase struct {
	latencies  []time.Duration
	elapsed    time.Duration
	upstream   int64
	wire       wireSnapshot
	cpu        time.Duration
	allocs     uint64
	goroutines uint64
}

func (p *phase) add(o phase) {
	p.latencies = append(p.latencies, o.latencies...)
	p.elapsed += o.elapsed
	p.upstream += o.upstream
	p.wire.direct += o.wire.direct
	p.wire.client += o.wire.client
	p.wire.upstream += o.wire.upstream
	p.cpu += o.cpu
	p.allocs += o.allocs
	p.goroutines += o.goroutines
}

func (p *phase) stats(s side) stats {
	n := len(p.latencies)
	st := stats{Requests: n, Elapsed: p.elapsed}
	if n == 0 {
		return st
	}
	lat := slices.Clone(p.latencies)
	slices.Sort(lat)
	st.P50 = percentile(lat, 50)
	st.P99 = percentile(lat, 99)
	st.Throughput = float64(n) / p.elapsed.Seconds()
	st.UpstreamPerRequest = float64(p.upstream) / float64(n)
	if s == sideDirect {
		st.ClientBytes = float64(p.wire.direct) / float64(n)
	} else {
		st.ClientBytes = float64(p.wire.client) / float64(n)
		st.UpstreamBytes = float64(p.wire.upstream) / float64(n)
	}
	st.CPUPerRequest = p.cpu / time.Duration(n)
	st.AllocsPerRequest = float64(p.allocs) / float64(n)
	st.GoroutinesPerRequest = float64(p.goroutines) / float64(n)
	return st
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// load says how hard and how long to drive one side.
type load struct {
	concurrency int
	duration    time.Duration
	// maxRequests bounds the requests of one phase (0: no bound).
	maxRequests int
	// upstreamLatency delays every response of the sample service, on
	// both paths: the data node at a distance.
	upstreamLatency time.Duration
	// bytesOnly: the client reads each response's bytes and does not
	// decode them (the cost section's second throughput figure).
	bytesOnly bool
}

// String names the load in the report.
func (l load) String() string {
	s := fmt.Sprintf("concurrency %d", l.concurrency)
	if l.upstreamLatency > 0 {
		s += ", upstream +" + l.upstreamLatency.String()
	}
	if l.bytesOnly {
		s += ", bytes only"
	}
	return s
}

// runPhase makes requests with fn from l.concurrency workers until
// l.duration has passed or l.maxRequests are done. The first error stops
// the phase and is returned.
func runPhase(ctx context.Context, e *env, fn func(context.Context) error, l load) (phase, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		started  atomic.Int64
		wg       sync.WaitGroup
	)
	perWorker := make([][]time.Duration, l.concurrency)
	wireBefore, upBefore := e.wire.snapshot(), e.upstreamRequests()
	cpuBefore, allocsBefore, goroutinesBefore := cpuTime(), heapAllocs(), goroutinesCreated()
	start := time.Now()
	deadline := start.Add(l.duration)
	for w := range l.concurrency {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 256)
			for ctx.Err() == nil && time.Now().Before(deadline) {
				if l.maxRequests > 0 && started.Add(1) > int64(l.maxRequests) {
					break
				}
				t0 := time.Now()
				if err := fn(ctx); err != nil {
					mu.Lock()
					if firstErr == nil && ctx.Err() == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					break
				}
				lat = append(lat, time.Since(t0))
			}
			perWorker[w] = lat
		})
	}
	wg.Wait()
	p := phase{
		elapsed:    time.Since(start),
		upstream:   e.upstreamRequests() - upBefore,
		wire:       e.wire.snapshot().sub(wireBefore),
		cpu:        cpuTime() - cpuBefore,
		allocs:     heapAllocs() - allocsBefore,
		goroutines: goroutinesCreated() - goroutinesBefore,
	}
	for _, lat := range perWorker {
		p.latencies = append(p.latencies, lat...)
	}
	if firstErr != nil {
		return p, firstErr
	}
	if err := ctx.Err(); err != nil && len(p.latencies) == 0 {
		return p, err
	}
	return p, nil
}

// cell is one comparison: a query on both paths under the same load.
type cell struct {
	Section string
	Name    string
	Load    string
	Scale   int
	// Rows is the number of rows a response holds.
	Rows    int
	Direct  stats
	Gateway stats
	// Cached is true when the gateway kept its shared asset cache on.
	Cached bool
	// Coding is the content coding of the gateway's responses: "" (none),
	// "gzip" or "zstd".
	Coding string
}

// measureCell verifies q on both paths, warms both up, then measures them
// in alternating rounds (direct, gateway, direct, …) so that noise from
// the rest of the machine falls on both alike.
func measureCell(ctx context.Context, e *env, g *gatewayServer, q query, l load, rounds int, warmup bool) (cell, error) {
	if l.upstreamLatency > 0 {
		setLatency(e, l.upstreamLatency)
		defer clearFaults(e)
	}
	rows, err := verify(ctx, e, g, q)
	if err != nil {
		return cell{}, err
	}
	fns := [2]func(context.Context) error{
		e.directCall(q),
		func(ctx context.Context) error { _, _, err := e.graphql.query(ctx, g, q.doc, q.vars); return err },
	}
	if warmup {
		// Connections open, caches (the gateway's parsed-query cache, the
		// sample service's responses) filled.
		warm := load{concurrency: l.concurrency, duration: 150 * time.Millisecond, maxRequests: max(20, 2*l.concurrency)}
		for _, fn := range fns {
			if _, err := runPhase(ctx, e, fn, warm); err != nil {
				return cell{}, fmt.Errorf("%s: warm-up: %w", q.name, err)
			}
		}
	}
	var recs [2]phase
	per := load{concurrency: l.concurrency, duration: l.duration / time.Duration(rounds), maxRequests: l.maxRequests / rounds}
	for range rounds {
		for s, fn := range fns {
			p, err := runPhase(ctx, e, fn, per)
			if err != nil {
				return cell{}, fmt.Errorf("%s (%s, concurrency %d): %w", q.name, side(s), l.concurrency, err)
			}
			recs[s].add(p)
		}
	}
	return cell{
		Name:    q.name,
		Rows:    rows,
		Load:    l.String(),
		Scale:   e.scale,
		Direct:  recs[sideDirect].stats(sideDirect),
		Gateway: recs[sideGateway].stats(sideGateway),
		Cached:  g == e.cached,
		Coding:  g.coding(),
	}, nil
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapAllocs is the number of heap allocations so far, tiny ones included
// (as runtime.MemStats.Mallocs and testing's allocs/op count them),
// without stopping the world.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/tiny/allocs:objects"}}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
}

// goroutinesCreated is the number of goroutines started so far.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
