package upstream

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// flights coalesces identical GETs in flight at the same moment: the first
// caller starts the request and later callers wait for its result, across
// all gateway requests. A caller that gives up (its context ends) stops
// waiting; the request itself is cancelled only when no caller is left,
// so one impatient caller cannot fail the others. The request runs with
// the first caller's context values (its client key included: it waits
// for the rate budget in that client's turn, see FairBudget).
type flights struct {
	mu    sync.Mutex
	calls map[string]*flight
}

type flight struct {
	done    chan struct{}
	res     flightResult
	err     error
	waiters int
	cancel  context.CancelFunc
}

type flightResult struct {
	body  listBody
	fresh Freshness
	at    time.Time // when the answer arrived (a cached one: when it first did)
	kind  CacheKind
	// cached: served from the cache's shared tier; fleet: after waiting
	// for another replica to fetch it (fleet.go); local: from this
	// process's cache, stored by a flight that ended just before this one
	// started (cached is set too).
	cached, fleet, local bool
	// derived is what the flight's callers derive from its answer,
	// shared by them (Derived); set when the flight ends with an answer.
	derived *Derived
}

// do runs fn for key, or joins the run in flight.
func (f *flights) do(ctx context.Context, key string, fn func(context.Context) (flightResult, error)) (flightResult, error, bool) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]*flight{}
	}
	c, shared := f.calls[key]
	if !shared {
		callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &flight{done: make(chan struct{}), cancel: cancel}
		f.calls[key] = c
		go func() {
			defer func() {
				// A panic here would take the whole process down: it
				// becomes the callers' error instead.
				if p := recover(); p != nil {
					c.err = fmt.Errorf("upstream call panicked: %v\n%s", p, debug.Stack())
				}
				cancel()
				f.forget(key, c)
				close(c.done)
			}()
			c.res, c.err = fn(callCtx)
			if c.err == nil {
				c.res.derived = new(Derived)
			}
		}()
	}
	c.waiters++
	f.mu.Unlock()

	select {
	case <-c.done:
		return c.res, c.err, shared
	case <-ctx.Done():
		f.mu.Lock()
		c.waiters--
		if c.waiters == 0 {
			c.cancel()
			if f.calls[key] == c {
				delete(f.calls, key)
			}
		}
		f.mu.Unlock()
		return flightResult{}, ctx.Err(), shared
	}
}

func (f *flights) forget(key string, c *flight) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls[key] == c {
		delete(f.calls, key)
	}
}
