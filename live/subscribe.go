package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// HeadTimeout bounds how long Subscribe waits for the feed to learn the
// chain head (the explorer's newest transaction) before a subscription
// can start, when ctx has no earlier deadline. The head is read when the
// first subscription of an idle feed arrives, and retried with backoff
// while the explorer fails; a subscription that cannot start within
// HeadTimeout fails with an *upstream.UnavailableError wrapping ErrNoHead
// (the client sees UPSTREAM_UNAVAILABLE and may subscribe again), instead
// of waiting as long as the explorer is down. Ten seconds covers a few
// retries of a transient failure (the first ones come after Interval,
// 1.5×Interval, …). Config.HeadTimeout overrides it.
const HeadTimeout = 10 * time.Second

// ErrNoHead is wrapped in the *upstream.UnavailableError Subscribe returns
// when the feed could not read the chain head within HeadTimeout.
var ErrNoHead = errors.New("live: the chain head could not be read from the explorer")

// subscriber is one subscription's state, guarded by its feed's mu. It
// costs no goroutine: the fan-out sends to ch, and its context's end
// calls close (context.AfterFunc).
type subscriber[T any] struct {
	f *feed[T]
	// client is the client key of Subscribe's ctx ("" when none): its
	// subscription is counted in f.fair until it ends.
	client string
	// calls is the subscriber's upstream requests per event, counted in
	// f.fair with its client's.
	calls  int
	filter filter
	// pos is the position the subscription has reached: it receives only
	// transactions newer than it.
	pos upstream.TxCursor
	// idx is the subscription's index in f.subs.
	idx int
	ch  chan T
	// catching is set while Subscribe fetches the catch-up; the fan-out
	// then keeps the live transactions in pending.
	catching bool
	pending  []T
	ended    bool
	why      error
	stop     func() bool
}

func (f *feed[T]) subscribe(ctx context.Context, opts SubscribeOptions) (*Subscription[T], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	client := upstream.ClientFrom(ctx)
	f.mu.Lock()
	switch {
	case f.closed:
		f.mu.Unlock()
		return nil, ErrClosed
	case f.reserved >= f.cfg.MaxSubscriptions:
		f.refused++
		f.mu.Unlock()
		return nil, ErrTooManySubscriptions
	}
	if err := f.fair.admitLocked(client, opts.Calls, &f.cfg); err != nil {
		f.mu.Unlock()
		return nil, err
	}
	f.reserved++
	ready := f.startLocked()
	f.mu.Unlock()
	// release gives back what a subscription not yet registered holds.
	release := func() {
		f.releaseLocked()
		f.fair.leaveLocked(client, opts.Calls)
	}

	err := f.awaitHead(ctx, ready)
	f.mu.Lock()
	if err == nil && f.closed {
		err = ErrClosed
	}
	if err != nil {
		release()
		f.mu.Unlock()
		return nil, err
	}
	s := &subscriber[T]{f: f, client: client, calls: opts.Calls, filter: newFilter(opts.Filter), pos: f.last}
	if opts.After == nil || !older(*opts.After, f.last) {
		if opts.After != nil {
			s.pos = *opts.After
		}
		s.ch = make(chan T, f.cfg.Buffer)
		f.registerLocked(ctx, s)
		f.mu.Unlock()
		return &Subscription[T]{sub: s}, nil
	}
	after := *opts.After
	// A catch-up: from the history when it can, else from the explorer,
	// holding one of the client's catch-up slots (fair.go).
	holding := false
	for {
		plan := f.planLocked(&s.filter, after)
		if plan.kind != planExplorer && holding {
			f.releaseCatchUpLocked(client)
		}
		switch plan.kind {
		case planRefuse:
			f.backlogRefused++
			f.fair.historyRefused++
			release()
			f.mu.Unlock()
			return nil, &BacklogError{After: after, Max: f.cfg.MaxBacklog}
		case planMemory:
			s.pos = f.last
			s.ch = make(chan T, len(plan.rows)+f.cfg.Buffer)
			for _, v := range plan.rows {
				s.ch <- v
			}
			f.delivered += uint64(len(plan.rows))
			f.fair.fromHistory++
			f.registerLocked(ctx, s)
			f.mu.Unlock()
			return &Subscription[T]{sub: s}, nil
		}
		if !holding {
			f.mu.Unlock()
			err := f.acquireCatchUp(ctx, client)
			f.mu.Lock()
			if err == nil && f.closed {
				f.releaseCatchUpLocked(client)
				err = ErrClosed
			}
			if err != nil {
				release()
				f.mu.Unlock()
				return nil, err
			}
			// The feed moved on while it waited: plan again.
			holding = true
			continue
		}
		s.pos = f.last
		s.catching = true
		key := f.fair.budgetKeyLocked(client)
		f.registerLocked(ctx, s)
		f.mu.Unlock()
		return f.catchUp(ctx, s, key, after, plan)
	}
}

// registerLocked adds s to the subscriptions, and ends it when ctx ends.
// f.mu is held.
func (f *feed[T]) registerLocked(ctx context.Context, s *subscriber[T]) {
	s.idx = len(f.subs)
	f.subs = append(f.subs, s)
	// The AfterFunc may run at once (ctx ended): s.close takes f.mu.
	f.mu.Unlock()
	stop := context.AfterFunc(ctx, s.close)
	f.mu.Lock()
	if s.ended {
		stop()
	} else {
		s.stop = stop
	}
}

// awaitHead waits until ready (the feed knows the chain head), at most
// Config.HeadTimeout.
func (f *feed[T]) awaitHead(ctx context.Context, ready <-chan struct{}) error {
	select {
	case <-ready:
		return nil
	default:
	}
	timer := time.NewTimer(f.cfg.HeadTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-f.closedCh:
		return ErrClosed
	case <-timer.C:
		return &upstream.UnavailableError{Service: upstream.ServiceExplorer, Endpoint: upstream.EndpointTransactions, Err: ErrNoHead}
	}
}

// catchUp fetches the subscription's transactions after `after` up to
// plan.to from the explorer (charged to key in the budget; the client's
// catch-up slot is held), then puts them and the history's part
// (plan.rows) in its channel ahead of the live ones that arrived
// meanwhile, and makes it live.
func (f *feed[T]) catchUp(ctx context.Context, s *subscriber[T], key string, after upstream.TxCursor, plan catchUpPlan[T]) (*Subscription[T], error) {
	rows, err := f.backlog(ctx, key, &s.filter, after, plan.to, plan.limit)
	var prepared []T
	if err == nil {
		prepared = make([]T, len(rows), len(rows)+len(plan.rows))
		for i := range rows {
			prepared[i] = f.prepare(&rows[i])
		}
		prepared = append(prepared, plan.rows...)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releaseCatchUpLocked(s.client)
	if s.ended {
		switch {
		case s.why != nil:
			return nil, s.why
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, ErrClosed
	}
	if err != nil {
		if _, ok := errors.AsType[*BacklogError](err); ok {
			f.backlogRefused++
		}
		f.endLocked(s, nil)
		return nil, err
	}
	s.ch = make(chan T, len(prepared)+f.cfg.Buffer)
	for _, v := range prepared {
		s.ch <- v
	}
	for _, v := range s.pending {
		s.ch <- v
	}
	f.delivered += uint64(len(prepared) + len(s.pending))
	s.pending, s.catching = nil, false
	return &Subscription[T]{sub: s}, nil
}

// backlog reads from the explorer, as key in the budget, the
// transactions matching filter after after, up to and including to,
// oldest first: at most limit of them (one more: *BacklogError, which
// names MaxBacklog, the subscription's limit).
func (f *feed[T]) backlog(ctx context.Context, key string, filter *filter, after, to upstream.TxCursor, limit int) ([]upstream.Transaction, error) {
	var out []upstream.Transaction
	p := filter.Params()
	p.First = f.cfg.PageSize
	for pos := after; ; {
		from := pos
		p.After = &from
		rows, err := f.listFor(ctx, key, p)
		if err != nil {
			return nil, fmt.Errorf("catch up after %s: %w", after, err)
		}
		rows = chainOrder(rows, pos)
		if len(rows) == 0 {
			return out, nil
		}
		for i := range rows {
			r := &rows[i]
			if older(to, r.Position()) {
				return out, nil
			}
			if !filter.Match(r) {
				continue
			}
			if len(out) >= limit {
				return nil, &BacklogError{After: after, Max: f.cfg.MaxBacklog}
			}
			out = append(out, *r)
		}
		pos = rows[len(rows)-1].Position()
	}
}

// endLocked ends s (why nil: a clean end), removing it from the feed and
// closing its channel. f.mu is held.
func (f *feed[T]) endLocked(s *subscriber[T], why error) {
	if s.ended {
		return
	}
	s.ended, s.why = true, why
	last := len(f.subs) - 1
	f.subs[s.idx] = f.subs[last]
	f.subs[s.idx].idx = s.idx
	f.subs[last] = nil
	f.subs = f.subs[:last]
	if s.ch != nil {
		close(s.ch)
	}
	s.pending = nil
	switch why {
	case ErrTooSlow:
		f.droppedSlow++
	case ErrGap:
		f.droppedGap++
	}
	if s.stop != nil {
		s.stop()
	}
	f.releaseLocked()
	f.fair.leaveLocked(s.client, s.calls)
}

func (s *subscriber[T]) channel() <-chan T { return s.ch }

func (s *subscriber[T]) err() error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	return s.why
}

func (s *subscriber[T]) close() {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.endLocked(s, nil)
}
