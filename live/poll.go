package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/tradenet/gateway/internal/ctxwait"
	"github.com/tradenet/gateway/upstream"
)

// run is the feed's background work while it has subscribers: read the
// chain head, then poll (lead) or take part in the fleet (Coordinator).
// prev is the previous run's done channel: runs never overlap.
func (f *feed[T]) run(ctx context.Context, gen uint64, prev, done, ready chan struct{}) {
	defer close(done)
	if prev != nil {
		<-prev // already told to stop: it ends soon
	}
	head, err := f.readHead(ctx, gen)
	if err != nil {
		return
	}
	coord := f.cfg.Coordinator
	f.mu.Lock()
	if older(f.last, head) {
		f.last = head
	}
	if older(f.head, head) {
		f.head = head
	}
	f.confirmed = time.Now()
	close(ready)
	f.mu.Unlock()
	if coord == nil {
		f.lead(ctx, gen, nil)
		return
	}
	f.setState(gen, stateFollowing)
	deliver := func(msg []byte) {
		b, err := DecodeBatch(msg)
		if err == nil {
			err = f.acceptBatch(ctx, b)
		}
		if err != nil {
			f.refuse(err, len(msg))
			return
		}
		f.apply(ctx, b, true)
	}
	lead := func(ctx context.Context) {
		f.cfg.Logger.Info("live feed: this process polls the explorer")
		f.lead(ctx, gen, coord.Publish)
		f.setState(gen, stateFollowing)
	}
	if err := coord.Run(ctx, lead, deliver); err != nil && ctx.Err() == nil {
		// A coordinator that cannot start must not starve the
		// subscribers: poll for this process alone.
		f.cfg.Logger.Error("live feed: coordinator failed; polling alone", "err", err)
		f.lead(ctx, gen, nil)
	}
}

// newBackoff is the retry schedule of failing explorer calls.
func (f *feed[T]) newBackoff() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = f.cfg.Interval
	b.MaxInterval = max(20*f.cfg.Interval, 10*time.Second)
	b.Reset()
	return b
}

// readHead returns the newest transaction's position (0.0 for an empty
// chain), retrying until ctx ends.
func (f *feed[T]) readHead(ctx context.Context, gen uint64) (upstream.TxCursor, error) {
	bo := f.newBackoff()
	for {
		f.polls.Add(1)
		rows, err := f.list(ctx, upstream.TransactionsParams{First: 1})
		switch {
		case err == nil && len(rows) == 0:
			return upstream.TxCursor{}, nil
		case err == nil:
			return rows[0].Position(), nil
		case ctx.Err() != nil:
			return upstream.TxCursor{}, ctx.Err()
		}
		f.pollErrors.Add(1)
		f.setState(gen, stateBackoff)
		wait := bo.NextBackOff()
		f.cfg.Logger.Warn("live feed: reading the chain head failed", "err", err, "retry_in", wait)
		if ctxwait.Sleep(ctx, wait) != nil {
			return upstream.TxCursor{}, ctx.Err()
		}
	}
}

// lead polls the explorer every Interval until ctx ends, from the newest
// position delivered. Each poll's batch goes to publish (the fleet) or,
// without one or when it fails, to this process's subscriptions.
func (f *feed[T]) lead(ctx context.Context, gen uint64, publish func(context.Context, []byte) error) {
	f.setState(gen, statePolling)
	f.mu.Lock()
	pos := f.last
	f.mu.Unlock()
	bo := f.newBackoff()
	wait := f.cfg.Interval
	for ctxwait.Sleep(ctx, wait) == nil {
		var err error
		pos, err = f.pollRound(ctx, pos, publish)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			f.pollErrors.Add(1)
			f.setState(gen, stateBackoff)
			wait = bo.NextBackOff()
			f.cfg.Logger.Warn("live feed: polling the explorer failed", "err", err, "after", pos, "retry_in", wait)
		default:
			bo.Reset()
			f.setState(gen, statePolling)
			wait = f.cfg.Interval
		}
	}
}

// pollRound reads the transactions newer than pos, a page at a time while
// pages come back full, at most MaxBacklog; it returns the newest position
// read.
func (f *feed[T]) pollRound(ctx context.Context, pos upstream.TxCursor, publish func(context.Context, []byte) error) (upstream.TxCursor, error) {
	for fetched := 0; fetched < f.cfg.MaxBacklog; {
		f.polls.Add(1)
		after := pos
		rows, err := f.list(ctx, upstream.TransactionsParams{First: f.cfg.PageSize, After: &after})
		if err != nil {
			return pos, fmt.Errorf("list transactions after %s: %w", pos, err)
		}
		full := len(rows) >= f.cfg.PageSize
		rows = chainOrder(rows, pos)
		f.emit(ctx, Batch{Prev: pos, Transactions: rows}, publish, !full)
		if len(rows) == 0 {
			break
		}
		pos = rows[len(rows)-1].Position()
		if !full {
			break
		}
		fetched += len(rows)
	}
	return pos, nil
}

// chainOrder turns an explorer page (newest first) into chain order,
// keeping only rows newer than pos, each newer than the one before: the
// fan-out's exactly-once rests on it, whatever the explorer answers.
//
// rows is not changed: the upstream client hands the same page to every
// caller of a coalesced request (catch-ups of subscriptions resuming from
// one cursor), so it is copied before it is turned.
func chainOrder(rows []upstream.Transaction, pos upstream.TxCursor) []upstream.Transaction {
	rows = slices.Clone(rows)
	slices.Reverse(rows)
	out := rows[:0]
	for _, r := range rows {
		if p := r.Position(); r.Index >= 0 && older(pos, p) {
			out = append(out, r)
			pos = p
		}
	}
	return out
}

// emit hands a poll's batch to the fleet, or to this process when there
// is no fleet or it cannot be reached.
func (f *feed[T]) emit(ctx context.Context, b Batch, publish func(context.Context, []byte) error, atHead bool) {
	if publish != nil {
		msg, err := EncodeBatch(b)
		if err == nil {
			err = publish(ctx, msg)
		}
		if err == nil {
			return
		}
		f.cfg.Logger.Warn("live feed: publishing a batch failed; delivering it here", "err", err, "after", b.Prev)
	}
	f.apply(ctx, b, atHead)
}

// apply delivers a batch: transactions at or before the last delivered
// position are skipped (a leader's echo, two leaders during a handover);
// a batch starting past it is preceded by the missed transactions, read
// from the explorer, or, when they cannot be, every subscription ends
// with ErrGap and the feed jumps to the batch.
func (f *feed[T]) apply(ctx context.Context, b Batch, atHead bool) {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	newest := b.Prev
	if n := len(b.Transactions); n > 0 {
		newest = b.Transactions[n-1].Position()
	}
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	if older(last, b.Prev) {
		missed, err := f.fillGap(ctx, last, b.Prev)
		switch {
		case err == nil:
			f.fanout(missed)
		case errors.Is(err, errBeyondHead):
			// The batch starts past the chain the explorer shows: what the
			// explorer has is delivered, the batch is refused (a later
			// batch fills the gap again if the explorer was only behind).
			f.fanout(missed)
			f.refuse(err, 0)
			return
		default:
			f.cfg.Logger.Warn("live feed: transactions missed; ending every subscription", "from", last, "to", b.Prev, "err", err)
			f.jump(b.Prev)
		}
	}
	f.seen(newest, atHead)
	f.fanout(b.Transactions)
}

// errBeyondHead is fillGap's error when the explorer's newest transaction
// is older than the position the gap is filled to.
var errBeyondHead = errors.New("the explorer's head is older than the batch")

// fillGap reads the transactions after from up to and including to.
func (f *feed[T]) fillGap(ctx context.Context, from, to upstream.TxCursor) ([]upstream.Transaction, error) {
	var out []upstream.Transaction
	pos := from
	for {
		after := pos
		rows, err := f.list(ctx, upstream.TransactionsParams{First: f.cfg.PageSize, After: &after})
		if err != nil {
			return nil, err
		}
		rows = chainOrder(rows, pos)
		if len(rows) == 0 {
			return out, fmt.Errorf("filling the gap to %s: %w: it has nothing after %s", to, errBeyondHead, pos)
		}
		for _, r := range rows {
			p := r.Position()
			if older(to, p) {
				return out, nil
			}
			if len(out) == f.cfg.MaxBacklog {
				return nil, fmt.Errorf("more than %d transactions missed", f.cfg.MaxBacklog)
			}
			out = append(out, r)
			if p == to {
				return out, nil
			}
		}
		pos = rows[len(rows)-1].Position()
	}
}

// jump ends every subscription with ErrGap and moves the feed to pos.
func (f *feed[T]) jump(pos upstream.TxCursor) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.subs) > 0 {
		f.endLocked(f.subs[len(f.subs)-1], ErrGap)
	}
	if older(f.last, pos) {
		f.last = pos
	}
}

// fanout delivers transactions (in chain order) newer than the last
// delivered position to every subscription they match and have not yet
// reached: each is prepared once, on its first match, and sent without
// blocking; a subscription whose channel is full is dropped (ErrTooSlow).
func (f *feed[T]) fanout(rows []upstream.Transaction) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range rows {
		tx := &rows[i]
		pos := tx.Position()
		if !older(f.last, pos) {
			continue
		}
		f.remember(f.last, tx)
		f.last = pos
		var v T
		prepared := false
		for j := 0; j < len(f.subs); {
			s := f.subs[j]
			if !older(s.pos, pos) || !s.filter.match(tx) {
				j++
				continue
			}
			if !prepared {
				v, prepared = f.prepare(tx), true
			}
			if s.catching {
				if len(s.pending) < f.cfg.Buffer {
					s.pending = append(s.pending, v)
					j++
				} else {
					f.endLocked(s, ErrTooSlow) // moves the last one to j
				}
				continue
			}
			select {
			case s.ch <- v:
				f.delivered++
				j++
			default:
				f.endLocked(s, ErrTooSlow)
			}
		}
	}
}
