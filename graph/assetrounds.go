package graph

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// assetRounds is the one scheduler of a request's asset lookups, under
// either executor: it collects the ids resolvers ask for, looks each round
// up with one call of the batch function (Loaders.batch: the shared cache,
// single lookups or one listing, metrics), and wakes the goroutines
// waiting for them. An id is looked up once a request. What ends a round
// depends on what the executor can tell:
//
//   - gqlgen's executor gives no signal that a round is complete
//     (Loaders.rounds, timed): a round is dispatched LOADER_WAIT (2 ms)
//     after its first id, as graph-gophers/dataloader did;
//   - the direct executor knows (newCountedRounds): a round is complete
//     when every goroutine of the execution is either finished or waiting
//     for an asset, and is dispatched at once, without the wait.
//     LOADER_WAIT stays as the backstop, for a goroutine busy elsewhere
//     (an upstream call of a nested list) while others wait. The prefetch
//     (prefetch.go) starts a round early, for the ids of a page of
//     transactions the operation selects.
//
// A request has one scheduler of each kind: the direct executor's counts
// its own goroutines, and when it gives up, gqlgen's executor runs the
// operation again with the timed one, which no goroutine count binds.
type assetRounds struct {
	loaders *Loaders
	counted bool            // the goroutines are counted (the direct executor)
	ctx     context.Context // the batch function's: the request's, or the first asker's

	mu      sync.Mutex
	running int                   // counted goroutines that may still ask for an asset
	waits   map[string]*assetWait // every id asked in the request
	round   []string              // ids not yet dispatched
	timer   *time.Timer           // the backstop of the current round

	selected   refSet         // the asset references the operation selects (prefetch.go)
	prefetches sync.WaitGroup // rounds started by prefetch
}

type assetWait struct {
	done  chan struct{}
	asset *upstream.Asset
	err   error
}

var errBatchShort = errors.New("the asset batch returned fewer results than ids")

func withRounds(ctx context.Context, r *assetRounds) context.Context { return withValue(ctx, r) }

func roundsFor(ctx context.Context) *assetRounds { return valueOf[assetRounds](ctx) }

// newTimedRounds makes the rounds of gqlgen's executor.
func newTimedRounds(l *Loaders) *assetRounds {
	return &assetRounds{loaders: l, waits: map[string]*assetWait{}}
}

// newCountedRounds makes the rounds of one direct execution, counting the
// calling goroutine as running.
func newCountedRounds(ctx context.Context, l *Loaders) *assetRounds {
	return &assetRounds{loaders: l, counted: true, ctx: ctx, running: 1, waits: map[string]*assetWait{}}
}

// enter counts one more running goroutine (before it starts).
func (r *assetRounds) enter() {
	r.mu.Lock()
	r.running++
	r.mu.Unlock()
}

// leave counts a goroutine out; the last one out dispatches the round.
func (r *assetRounds) leave() {
	r.mu.Lock()
	r.running--
	ids := r.takeIfIdle()
	r.mu.Unlock()
	r.dispatch(ids)
}

// takeIfIdle takes the pending round when no goroutine can add to it
// (never for timed rounds, which cannot tell). r.mu is held.
func (r *assetRounds) takeIfIdle() []string {
	if !r.counted || r.running > 0 || len(r.round) == 0 {
		return nil
	}
	return r.takeRound()
}

func (r *assetRounds) takeRound() []string {
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
func (r *assetRounds) load(ctx context.Context, id string) (*upstream.Asset, error) {
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
		w = &assetWait{done: make(chan struct{})}
		r.waits[id] = w
		r.round = append(r.round, id)
		if r.ctx == nil {
			r.ctx = ctx
		}
		if len(r.round) == 1 && (r.loaders.wait > 0 || !r.counted) {
			r.timer = time.AfterFunc(r.loaders.wait, r.backstop)
		}
	}
	if !r.counted {
		r.mu.Unlock()
		return w.await(ctx)
	}
	r.running--
	ids := r.takeIfIdle()
	r.mu.Unlock()
	r.dispatch(ids)
	defer r.enter()
	return w.await(ctx)
}

// await waits for w's round, or for the end of ctx.
func (w *assetWait) await(ctx context.Context) (*upstream.Asset, error) {
	select {
	case <-w.done:
		return w.asset, w.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// prefetch starts a round of the ids not asked yet (nor cached in the
// process), on a goroutine of its own: the goroutines that then ask for
// them wait for it, as for any round. wait waits for it to finish.
func (r *assetRounds) prefetch(ids []string) {
	var fresh []string
	r.mu.Lock()
	for _, id := range ids {
		if _, ok := r.waits[id]; ok {
			continue
		}
		if r.loaders.inLocalCache(id) {
			continue
		}
		r.waits[id] = &assetWait{done: make(chan struct{})}
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
func (r *assetRounds) wait() { r.prefetches.Wait() }

// backstop dispatches a round that waited LOADER_WAIT.
func (r *assetRounds) backstop() {
	r.mu.Lock()
	ids := r.takeRound()
	r.mu.Unlock()
	r.dispatch(ids)
}

// dispatch looks a round up and wakes its waiters.
func (r *assetRounds) dispatch(ids []string) {
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
