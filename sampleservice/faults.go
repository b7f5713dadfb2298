package sampleservice

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Fault makes one endpoint misbehave, to test how the gateway copes with an
// unreliable upstream. The zero Fault is a healthy endpoint. Rates are
// shares of requests in [0, 1], drawn independently per request from a
// seeded generator; when several fire, the first in field order wins.
type Fault struct {
	// Latency delays every response (the wait ends early if the client
	// gives up).
	Latency time.Duration
	// ErrorRate is the share of requests answered 500 with an Internal
	// status body.
	ErrorRate float64
	// MalformedRate is the share answered 200 with a body that is not JSON.
	MalformedRate float64
	// TruncatedRate is the share answered 200 with the first half of the
	// real body (Content-Length says half, so the body is complete but its
	// JSON is cut off).
	TruncatedRate float64
	// DropRate is the share whose connection is closed without a response.
	DropRate float64
	// FailNext makes the next N requests answer 500, after which the
	// endpoint recovers: an outage with recovery.
	FailNext int
}

// faultPlan is what a Fault decided for one request.
type faultPlan struct {
	latency                          time.Duration
	drop, fail, malformed, truncated bool
}

// faultInjector holds the faults of every endpoint.
type faultInjector struct {
	mu     sync.Mutex
	rng    *rand.Rand
	faults map[Endpoint]*Fault
}

func newFaultInjector(seed int64) *faultInjector {
	return &faultInjector{rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed)), faults: map[Endpoint]*Fault{}}
}

func (f *faultInjector) set(e Endpoint, ft Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ft == (Fault{}) {
		delete(f.faults, e)
		return
	}
	f.faults[e] = &ft
}

// plan draws this request's fate.
func (f *faultInjector) plan(e Endpoint) faultPlan {
	f.mu.Lock()
	defer f.mu.Unlock()
	ft := f.faults[e]
	if ft == nil {
		return faultPlan{}
	}
	p := faultPlan{latency: ft.Latency}
	if ft.FailNext > 0 {
		ft.FailNext--
		p.fail = true
		return p
	}
	roll := func(rate float64) bool { return rate > 0 && f.rng.Float64() < rate }
	p.fail = roll(ft.ErrorRate)
	p.malformed = roll(ft.MalformedRate)
	p.truncated = roll(ft.TruncatedRate)
	p.drop = roll(ft.DropRate)
	return p
}

// wait sleeps for the plan's latency; false if the client went away first.
func (p faultPlan) wait(r *http.Request) bool {
	if p.latency <= 0 {
		return true
	}
	t := time.NewTimer(p.latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// dropConnection closes the client's connection without writing anything.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	// Not hijackable (HTTP/2): aborting the handler resets the stream.
	panic(http.ErrAbortHandler)
}

// malformedBody is what a misbehaving proxy might answer with a 200.
const malformedBody = "<html><body><h1>200 OK</h1><p>upstream connect error or disconnect/reset before headers</p></body></html>\n"
