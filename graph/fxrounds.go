package graph

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// Asset lookup rounds under the direct executor. gqlgen's executor gives the
// loader no signal that a round is complete, so the dataloader waits
// LOADER_WAIT (2 ms) after the first key for others to arrive. The direct
// executor knows: a round is complete when every goroutine of the
// execution is either finished or waiting for an asset. It then dispatches
// the round at once, through the same batch function (the same cache,
// single lookups or one listing, metrics), without the wait. LOADER_WAIT
// stays as the backstop, for a goroutine busy elsewhere (an upstream call
// of a nested list) while others wait.

// fxRounds schedules one request's asset rounds.
type fxRounds struct {
	loaders *Loaders
	ctx     context.Context // the request's, for the batch function

	mu      sync.Mutex
	running int                // goroutines that may still ask for an asset
	waits   map[string]*fxWait // every id asked in the request
	round   []string           // ids not yet dispatched
	timer   *time.Timer        // the backstop of the current round

	selected   refSet         // the asset references the operation selects (prefetch.go)
	prefetches sync.WaitGroup // rounds started by prefetch
}

type fxWait struct {
	done  chan struct{}
	asset *upstream.Asset
	err   error
}

var errBatchShort = errors.New("the asset batch returned fewer results than ids")

type fxRoundsKey struct{}

func withRounds(ctx context.Context, r *fxRounds) context.Context {
	return context.WithValue(ctx, fxRoundsKey{}, r)
}

func roundsFor(ctx context.Context) *fxRounds {
	r, _ := ctx.Value(fxRoundsKey{}).(*fxRounds)
	return r
}

// newRounds starts counting the calling goroutine as running.
func newRounds(ctx context.Context, l *Loaders) *fxRounds {
	return &fxRounds{loaders: l, ctx: ctx, running: 1, waits: map[string]*fxWait{}}
}

// enter counts one more running goroutine (before it starts).
func (r *fxRounds) enter() {
	r.mu.Lock()
	r.running++
	r.mu.Unlock()
}

// leave counts a goroutine out; the last one out dispatches the round.
func (r *fxRounds) leave() {
	r.mu.Lock()
	r.running--
	ids := r.takeIfIdle()
	r.mu.Unlock()
	r.dispatch(ids)
}

// takeIfIdle takes the pending round when no goroutine can add to it.
// r.mu is held.
func (r *fxRounds) takeIfIdle() []string {
	if r.running > 0 || len(r.round) == 0 {
		return nil
	}
	return r.takeRound()
}

func (r *fxRounds) takeRound() []string {
	ids := r.round
	r.round = nil
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	return ids
}

// load resolves one asset id; the calling goroutine waits (and so counts
// as idle) until its round has been looked up.
func (r *fxRounds) load(ctx context.Context, id string) (*upstream.Asset, error) {
	r.mu.Lock()
	w, ok := r.waits[id]
	if ok {
		select {
		case <-w.done:
			r.mu.Unlock()
			return w.asset, w.err
		default:
		}
	} else {
		w = &fxWait{done: make(chan struct{})}
		r.waits[id] = w
		r.round = append(r.round, id)
		if len(r.round) == 1 && r.loaders.wait > 0 {
			r.timer = time.AfterFunc(r.loaders.wait, r.backstop)
		}
	}
	r.running--
	ids := r.takeIfIdle()
	r.mu.Unlock()
	r.dispatch(ids)
	select {
	case <-w.done:
	case <-ctx.Done():
		r.enter()
		return nil, ctx.Err()
	}
	r.enter()
	return w.asset, w.err
}

// prefetch starts a round of the ids not asked yet (nor cached in the
// process), on a goroutine of its own: the goroutines that then ask for
// them wait for it, as for any round. wait waits for it to finish.
func (r *fxRounds) prefetch(ids []string) {
	var fresh []string
	r.mu.Lock()
	for _, id := range ids {
		if _, ok := r.waits[id]; ok {
			continue
		}
		if r.loaders.inLocalCache(id) {
			continue
		}
		r.waits[id] = &fxWait{done: make(chan struct{})}
		fresh = append(fresh, id)
	}
	r.mu.Unlock()
	if len(fresh) == 0 {
		return
	}
	if h := r.loaders.batcher.hooks.LoaderPrefetch; h != nil {
		h("assets", len(fresh))
	}
	r.prefetches.Add(1)
	go func() {
		defer r.prefetches.Done()
		r.dispatch(fresh) // the batch function turns panics into results
	}()
}

// wait waits for the prefetched rounds, so that none outlives the
// execution (one nothing asked for, after an error, say).
func (r *fxRounds) wait() { r.prefetches.Wait() }

// backstop dispatches a round that waited LOADER_WAIT.
func (r *fxRounds) backstop() {
	r.mu.Lock()
	ids := r.takeRound()
	r.mu.Unlock()
	r.dispatch(ids)
}

// dispatch looks a round up and wakes its waiters.
func (r *fxRounds) dispatch(ids []string) {
	if len(ids) == 0 {
		return
	}
	results := r.loaders.batch(r.ctx, ids)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, id := range ids {
		w := r.waits[id]
		if i < len(results) && results[i] != nil {
			w.asset, w.err = results[i].Data, results[i].Error
		} else {
			w.err = &Error{Code: CodeInternal, Message: "internal error", Err: errBatchShort}
		}
		close(w.done)
	}
}
