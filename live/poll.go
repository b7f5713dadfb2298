package live

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/tradenet/gateway/internal/ctxwait"
	"github.com/tradenet/gateway/upstream"
)

// Bounds on the positions the feed accepts (README, Live transactions,
// "Positions"). The network makes about a block a second; these bounds
// are far beyond what any chain does, and far below the positions that
// would freeze the feed (one row at block 9e18 moves it past every real
// transaction).
const (
	// maxBlockRate is the fastest a chain is taken to grow, in blocks a
	// second: a hundred times the network's rate.
	maxBlockRate = 100
	// maxBlockJump is how many blocks past the newest position the feed
	// trusts a transaction may be with no time elapsed since the feed
	// reached that position: about three hours of the network's blocks
	// (an explorer catching up after an outage, a quiet chain's empty
	// blocks, a clock step). The allowance grows by maxBlockRate a second
	// from there, so a chain quiet for days is never refused.
	maxBlockJump = 10_000
	// maxTxIndex is the largest index a transaction may have in its block.
	maxTxIndex = 1 << 20
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
	now := time.Now()
	f.mu.Lock()
	if older(f.last, head) {
		f.last, f.lastAt = head, now
	}
	if head != (upstream.TxCursor{}) && (f.hwmAt.IsZero() || older(f.hwm, head)) {
		// An empty chain anchors nothing: the explorer may be starting.
		f.hwm, f.hwmAt = head, now
	}
	f.head = head
	f.behindSince = time.Time{}
	f.confirmed = now
	close(ready)
	f.mu.Unlock()
	if coord == nil {
		f.lead(ctx, gen, nil)
		return
	}
	f.setState(gen, stateFollowing)
	deliver := func(msg []byte) {
		b, err := DecodeBatch(msg)
		if err != nil {
			f.badMessages.Add(1)
			f.cfg.Logger.Warn("live feed: ignoring a bad message from the coordinator", "err", err, "bytes", len(msg))
			return
		}
		f.receive(ctx, b)
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

// readHead returns the explorer's head (0.0 for an empty chain; the
// feed's own position when the explorer's newest page holds no plausible
// one), retrying until ctx ends.
func (f *feed[T]) readHead(ctx context.Context, gen uint64) (upstream.TxCursor, error) {
	bo := f.newBackoff()
	for {
		_, head, known, err := f.headPage(ctx)
		switch {
		case err == nil && known:
			return head, nil
		case err == nil:
			f.mu.Lock()
			last := f.last
			f.mu.Unlock()
			return last, nil
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
	f.leading = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.leading = false
		f.mu.Unlock()
	}()
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

// pollRound is one poll. It reads the explorer's newest page, which says
// where the explorer's head is; when that page reaches back to pos, its
// newer rows are the poll's batch, else the pages after pos are read up
// to the head, at most MaxBacklog transactions. Rows past the head, or
// past what any chain could have reached (admission), are refused. When
// the head is behind pos for reanchorAfter, the feed moves back to it.
// pollRound returns the newest position delivered; the feed is confirmed
// at the head only when it reached the head.
func (f *feed[T]) pollRound(ctx context.Context, pos upstream.TxCursor, publish func(context.Context, []byte) error) (upstream.TxCursor, error) {
	rows, head, known, err := f.headPage(ctx)
	if err != nil {
		return pos, fmt.Errorf("read the explorer's newest transactions: %w", err)
	}
	if !known {
		f.warnLimited("no-head", "live feed: the explorer's newest transactions are all at refused positions; the feed stays where it is", "at", pos)
		return pos, nil
	}
	f.mu.Lock()
	f.head = head
	f.verifyLocked(head)
	behind := older(head, pos)
	if !behind {
		f.behindSince = time.Time{}
	}
	f.mu.Unlock()
	switch {
	case behind:
		return f.behind(head, pos, rows), nil
	case f.rewritten(rows, pos):
		// The explorer no longer holds, at the feed's position, the
		// transaction the feed delivered there: the chain under the feed
		// was rewritten (a reset or reindex, or a position refused too
		// late). Move back now; a replica merely behind serves the same
		// transactions and never gets here.
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.reanchorLocked(head, head, rows, time.Now()), nil
	case head == pos:
		f.emit(ctx, Batch{Prev: pos}, publish) // a heartbeat: at the head
		f.confirm()
		return pos, nil
	case !older(pos, rows[0].Position()):
		// The newest page reaches back to pos: it holds every newer row.
		i, _ := slices.BinarySearchFunc(rows, pos, cmpRowPos)
		if i < len(rows) && rows[i].Position() == pos {
			i++
		}
		f.emit(ctx, Batch{Prev: pos, Transactions: rows[i:]}, publish)
		f.confirm()
		return head, nil
	}
	for fetched := 0; fetched < f.cfg.MaxBacklog && older(pos, head); {
		f.polls.Add(1)
		after := pos
		page, err := f.list(ctx, upstream.TransactionsParams{First: f.cfg.PageSize, After: &after})
		if err != nil {
			return pos, fmt.Errorf("list transactions after %s: %w", pos, err)
		}
		rows := f.admitAfter(page, pos, head)
		if len(rows) == 0 {
			f.warnLimited("nothing-after", "live feed: the explorer answers nothing after the feed's position though its head is further; the feed stalls", "after", pos, "head", head)
			return pos, nil
		}
		f.emit(ctx, Batch{Prev: pos, Transactions: rows}, publish)
		pos = rows[len(rows)-1].Position()
		fetched += len(rows)
	}
	if pos == head {
		f.confirm()
	}
	return pos, nil
}

// headPage reads the explorer's newest page: its rows at plausible
// positions in chain order, and the explorer's head, the newest of them
// (0.0 for an empty chain). known is false when every row was refused.
func (f *feed[T]) headPage(ctx context.Context) (rows []upstream.Transaction, head upstream.TxCursor, known bool, err error) {
	f.polls.Add(1)
	page, err := f.list(ctx, upstream.TransactionsParams{First: f.cfg.PageSize})
	if err != nil {
		return nil, head, false, err
	}
	rows, invalid := order(page)
	if len(rows) == 0 && invalid == 0 {
		return nil, head, true, nil
	}
	f.mu.Lock()
	ceiling, anchored := f.ceilingLocked(time.Now())
	f.mu.Unlock()
	if !anchored && len(rows) > 0 {
		// Nothing trusted yet (a new process, or an empty chain so far):
		// the page's median row anchors it, so that a few rows far from
		// the rest cannot.
		ceiling = ceilingFrom(rows[(len(rows)-1)/2].Position().Block, 0)
	}
	cut := len(rows)
	for cut > 0 && rows[cut-1].Position().Block > ceiling {
		cut--
	}
	if refused := invalid + len(rows) - cut; refused > 0 {
		newest := upstream.TxCursor{}
		if len(rows) > 0 {
			newest = rows[len(rows)-1].Position()
		}
		f.refuse(refused, "the explorer's newest page", "newest", newest, "ceiling_block", ceiling)
	}
	rows = rows[:cut]
	if len(rows) == 0 {
		return nil, head, false, nil
	}
	return rows, rows[len(rows)-1].Position(), true, nil
}

// admitAfter is a page read after pos as the poller takes it: in chain
// order, newer than pos, none past the explorer's head read. The rows
// past the head that a chain could have reached since are left for the
// next poll (the chain grew between the two requests); those past the
// ceiling are refused.
func (f *feed[T]) admitAfter(page []upstream.Transaction, pos, head upstream.TxCursor) []upstream.Transaction {
	rows, invalid := order(page)
	i, _ := slices.BinarySearchFunc(rows, pos, cmpRowPos)
	if i < len(rows) && rows[i].Position() == pos {
		i++
	}
	rows = rows[i:]
	cut := len(rows)
	for cut > 0 && older(head, rows[cut-1].Position()) {
		cut--
	}
	refused := invalid
	if cut < len(rows) {
		f.mu.Lock()
		ceiling, anchored := f.ceilingLocked(time.Now())
		f.mu.Unlock()
		if !anchored {
			ceiling = ceilingFrom(head.Block, 0) // head came from the page's median
		}
		for _, r := range rows[cut:] {
			if r.Position().Block > ceiling {
				refused++
			}
		}
	}
	if refused > 0 {
		f.refuse(refused, "a page after the feed's position", "after", pos, "head", head)
	}
	return rows[:cut]
}

// admitBatch checks a batch of the fleet (another process's poll, or
// this one's echo) against the positions this process trusts: a batch
// whose Prev is implausible is refused whole, a transaction at an
// implausible position is left out.
func (f *feed[T]) admitBatch(b Batch) (Batch, bool) {
	f.mu.Lock()
	ceiling, anchored := f.ceilingLocked(time.Now())
	f.mu.Unlock()
	if !anchored {
		return b, true
	}
	plausible := func(p upstream.TxCursor) bool { return p.Block <= ceiling && p.Index <= maxTxIndex }
	if !plausible(b.Prev) {
		f.refuse(1+len(b.Transactions), "a batch of the fleet", "prev", b.Prev, "ceiling_block", ceiling)
		return b, false
	}
	kept := b.Transactions
	for i := range b.Transactions {
		if !plausible(b.Transactions[i].Position()) {
			kept = slices.DeleteFunc(slices.Clone(b.Transactions), func(tx upstream.Transaction) bool { return !plausible(tx.Position()) })
			f.refuse(len(b.Transactions)-len(kept), "a batch of the fleet", "prev", b.Prev, "at", b.Transactions[i].Position(), "ceiling_block", ceiling)
			break
		}
	}
	b.Transactions = kept
	return b, true
}

// refuse counts n refused positions and says so in the log (at most once
// a minute).
func (f *feed[T]) refuse(n int, where string, args ...any) {
	total := f.refusedPositions.Add(uint64(n))
	f.warnLimited("refused", "live feed: refusing transactions at positions no chain reaches", append([]any{"in", where, "count", n, "total", total}, args...)...)
}

// ceilingLocked is the highest block a transaction may plausibly be at
// now: maxBlockJump past the newest position the feed trusts, plus
// maxBlockRate for every second since it reached it. The trusted
// positions are the newest ever admitted (hwm: so that an explorer that
// went back and returns is followed) and the feed's own. anchored is
// false while the feed trusts none (then the caller anchors it). f.mu is
// held.
func (f *feed[T]) ceilingLocked(now time.Time) (ceiling uint64, anchored bool) {
	if f.hwmAt.IsZero() {
		return 0, false
	}
	ceiling = ceilingFrom(f.hwm.Block, now.Sub(f.hwmAt))
	if !f.lastAt.IsZero() {
		ceiling = max(ceiling, ceilingFrom(f.last.Block, now.Sub(f.lastAt)))
	}
	return ceiling, true
}

func ceilingFrom(block uint64, elapsed time.Duration) uint64 {
	allowance := uint64(maxBlockJump)
	if elapsed > 0 {
		allowance += uint64(elapsed.Seconds() * maxBlockRate)
	}
	if block > math.MaxUint64-allowance {
		return math.MaxUint64
	}
	return block + allowance
}

// behind handles an explorer head behind the feed's position: the feed
// waits reanchorAfter (an explorer replica a little behind another
// catches up), then moves back (page: the explorer's newest page). It
// returns the position to poll from.
func (f *feed[T]) behind(head, pos upstream.TxCursor, page []upstream.Transaction) upstream.TxCursor {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.behindSince.IsZero() {
		f.behindSince = now
	}
	if now.Sub(f.behindSince) < f.reanchorAfter() {
		return pos
	}
	return f.reanchorLocked(head, head, page, now)
}

// rewritten reports whether page (the explorer's newest, in chain order)
// covers pos, the last position the feed delivered, without the
// transaction delivered there (none, or another hash).
func (f *feed[T]) rewritten(page []upstream.Transaction, pos upstream.TxCursor) bool {
	if len(page) == 0 || older(pos, page[0].Position()) {
		return false // the page does not reach back to pos
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.recent)
	if n == 0 || f.recent[n-1].pos != pos {
		return false // pos was not delivered (a head read, an anchor): nothing to compare
	}
	j, ok := slices.BinarySearchFunc(page, pos, cmpRowPos)
	return !ok || !strings.EqualFold(page[j].Hash, f.recent[n-1].hash)
}

// verifyLocked records that the chain reaches head: the newest position
// delivered at or before it is verified. Called before the batch that
// head comes with is delivered (a batch does not verify itself). f.mu is
// held.
func (f *feed[T]) verifyLocked(head upstream.TxCursor) {
	if i := f.recentUpTo(head); i > 0 && older(f.verified, f.recent[i-1].pos) {
		f.verified = f.recent[i-1].pos
	}
}

// recentUpTo is the number of recent entries at or before pos.
func (f *feed[T]) recentUpTo(pos upstream.TxCursor) int {
	i, found := slices.BinarySearchFunc(f.recent, pos, func(e seenTx, p upstream.TxCursor) int { return cmpPos(e.pos, p) })
	if found {
		i++
	}
	return i
}

// reanchorLocked moves the feed back to head, which has stayed behind its
// position. The anchor is the newest position delivered at or before
// floor (head, or the lowest Prev of the fleet's batches meanwhile) whose
// transaction the explorer still has there (page, its newest page, when
// it covers that position), so that what the feed skipped while ahead
// and what the explorer now holds in place of what was delivered are
// delivered; floor when the feed delivered nothing at or before it.
// Subscriptions that started past every verified position (maybe at a
// position no transaction has) move back to the anchor; the others keep
// their start. The transactions delivered above the anchor are kept in
// replay: the same transaction at the same position is not delivered
// again. f.mu is held.
func (f *feed[T]) reanchorLocked(head, floor upstream.TxCursor, page []upstream.Transaction, now time.Time) upstream.TxCursor {
	i := f.recentUpTo(floor)
	for ; i > 0 && len(page) > 0; i-- {
		e := f.recent[i-1]
		if older(e.pos, page[0].Position()) {
			break // below the page: taken as it is
		}
		if j, ok := slices.BinarySearchFunc(page, e.pos, cmpRowPos); ok && strings.EqualFold(page[j].Hash, e.hash) {
			break
		}
	}
	anchor := floor
	if i > 0 {
		anchor = f.recent[i-1].pos
	}
	from := f.last
	f.replay = append(slices.Clone(f.recent[i:]), f.replay...)
	if len(f.replay) > f.cfg.MaxBacklog {
		f.replay = f.replay[:f.cfg.MaxBacklog]
	}
	f.recent = f.recent[:i]
	for _, s := range f.subs {
		if !s.catching && older(f.verified, s.pos) && older(anchor, s.pos) {
			s.pos = anchor
		}
	}
	if older(anchor, f.verified) {
		f.verified = anchor
	}
	f.last, f.lastAt = anchor, now
	f.head = head
	f.behindSince = time.Time{}
	f.reanchors++
	f.cfg.Logger.Warn("live feed: the chain head stayed behind the feed's position; moving back to it", "head", head, "delivered", from, "anchor", anchor, "after", f.reanchorAfter())
	return anchor
}

// confirm records that the feed is at the chain head.
func (f *feed[T]) confirm() {
	f.mu.Lock()
	f.confirmed = time.Now()
	f.mu.Unlock()
}

// order puts an explorer page in chain order (by block, then index,
// whatever order it came in), each position once, leaving out rows at an
// index no block has (invalid counts them).
func order(rows []upstream.Transaction) (out []upstream.Transaction, invalid int) {
	out = rows[:0]
	for i := range rows {
		if rows[i].Index < 0 || rows[i].Index > maxTxIndex {
			invalid++
			continue
		}
		out = append(out, rows[i])
	}
	slices.SortStableFunc(out, func(a, b upstream.Transaction) int { return cmpPos(a.Position(), b.Position()) })
	out = slices.CompactFunc(out, func(a, b upstream.Transaction) bool { return a.Position() == b.Position() })
	return out, invalid
}

// chainOrder turns an explorer page into chain order (order), keeping
// only rows newer than pos, each newer than the one before: the
// fan-out's exactly-once rests on it, whatever the explorer answers.
func chainOrder(rows []upstream.Transaction, pos upstream.TxCursor) []upstream.Transaction {
	rows, _ = order(rows)
	i, _ := slices.BinarySearchFunc(rows, pos, cmpRowPos)
	if i < len(rows) && rows[i].Position() == pos {
		i++
	}
	return rows[i:]
}

func cmpPos(a, b upstream.TxCursor) int {
	switch {
	case older(a, b):
		return -1
	case older(b, a):
		return 1
	}
	return 0
}

func cmpRowPos(tx upstream.Transaction, p upstream.TxCursor) int { return cmpPos(tx.Position(), p) }

// emit hands a poll's batch to the fleet, or to this process when there
// is no fleet or it cannot be reached.
func (f *feed[T]) emit(ctx context.Context, b Batch, publish func(context.Context, []byte) error) {
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
	f.apply(ctx, b)
}

// receive takes a batch of the fleet (Coordinator): admitted, applied,
// and, unless this process polls, taken as the fleet's head: the feed is
// at the head when it delivered up to it, and moves back to it when it
// stays behind the feed's position for reanchorAfter (the polling
// process moved back, or this one accepted a position the others did
// not).
func (f *feed[T]) receive(ctx context.Context, b Batch) {
	b, ok := f.admitBatch(b)
	if !ok {
		return
	}
	newest := b.Prev
	if n := len(b.Transactions); n > 0 {
		newest = b.Transactions[n-1].Position()
	}
	f.mu.Lock()
	if !f.leading {
		f.verifyLocked(b.Prev)
	}
	f.mu.Unlock()
	f.apply(ctx, b)
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.leading {
		return // the poller keeps head and confirmed
	}
	if older(f.head, newest) {
		f.head = newest
	}
	if older(newest, f.last) {
		if f.behindSince.IsZero() || older(b.Prev, f.behindFloor) {
			f.behindFloor = b.Prev
		}
		if f.behindSince.IsZero() {
			f.behindSince = now
		}
		if now.Sub(f.behindSince) >= f.reanchorAfter() {
			f.reanchorLocked(newest, f.behindFloor, nil, now)
		}
		return
	}
	f.behindSince = time.Time{}
	f.confirmed = now
}

// apply delivers a batch: transactions at or before the last delivered
// position are skipped (a leader's echo, two leaders during a handover);
// a batch starting past it is preceded by the missed transactions, read
// from the explorer, or, when they cannot be, every subscription ends
// with ErrGap and the feed jumps to the batch.
func (f *feed[T]) apply(ctx context.Context, b Batch) {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	if older(last, b.Prev) {
		if missed, err := f.fillGap(ctx, last, b.Prev); err == nil {
			f.fanout(missed)
		} else {
			f.cfg.Logger.Warn("live feed: transactions missed; ending every subscription", "from", last, "to", b.Prev, "err", err)
			f.jump(b.Prev)
		}
	}
	f.fanout(b.Transactions)
}

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
			return nil, fmt.Errorf("the explorer has nothing after %s", pos)
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
		now := time.Now()
		f.last, f.lastAt = pos, now
		if older(f.hwm, pos) {
			f.hwm, f.hwmAt = pos, now
		}
	}
}

// fanout delivers transactions (in chain order) newer than the last
// delivered position to every subscription they match and have not yet
// reached: each is prepared once, on its first match, and sent without
// blocking. What a subscription's channel has no room for waits in its
// overflow, which pump moves into the channel as the reader takes; a
// subscription whose overflow is over maxOverflow is dropped at once
// (ErrTooSlow), one whose overflow stays unread for slowAfter by pump.
// A transaction the feed delivered before it re-anchored (the same hash
// at the same position) is not delivered again.
func (f *feed[T]) fanout(rows []upstream.Transaction) {
	if len(rows) == 0 {
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range rows {
		tx := &rows[i]
		pos := tx.Position()
		if !older(f.last, pos) {
			continue
		}
		f.last, f.lastAt = pos, now
		if f.hwmAt.IsZero() || older(f.hwm, pos) {
			f.hwm, f.hwmAt = pos, now
		}
		f.rememberLocked(pos, tx.Hash)
		if f.replayedLocked(pos, tx.Hash) {
			continue
		}
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
			if f.sendLocked(s, v, now) {
				j++
			} else {
				f.endLocked(s, ErrTooSlow)
			}
		}
	}
}

// sendLocked hands v to s: into its channel, or behind what already waits
// in its overflow. It reports false when the overflow is full (s must be
// dropped). f.mu is held.
func (f *feed[T]) sendLocked(s *subscriber[T], v T, now time.Time) bool {
	if len(f.overflow) > 0 {
		if q := f.overflow[s]; q != nil {
			if len(q.items) >= f.maxOverflow() {
				delete(f.overflow, s)
				return false
			}
			q.items = append(q.items, v)
			return true
		}
	}
	select {
	case s.ch <- v:
		f.delivered++
	default:
		f.overflow[s] = &overflowQueue[T]{items: []T{v}, since: now}
		if !f.pumping {
			f.pumping = true
			f.pumpDone.Add(1)
			go f.pump()
		}
	}
	return true
}

// pumpStep is how often pump moves overflows into their channels.
const pumpStep = 5 * time.Millisecond

// pump runs while any subscription has an overflow: every pumpStep it
// moves what fits into each channel, and drops the subscriptions whose
// overflow has waited slowAfter (ErrTooSlow). A reader that takes what
// it is sent as fast as it comes is never dropped, whatever a block's
// size; one that does not read is.
func (f *feed[T]) pump() {
	defer f.pumpDone.Done()
	t := time.NewTimer(pumpStep)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-f.closedCh:
		}
		f.mu.Lock()
		now := time.Now()
		for s, q := range f.overflow {
			if s.ended {
				delete(f.overflow, s)
				continue
			}
			n := 0
		move:
			for n < len(q.items) {
				select {
				case s.ch <- q.items[n]:
					n++
				default:
					break move
				}
			}
			if n > 0 {
				f.delivered += uint64(n)
				clear(q.items[:n])
				q.items = q.items[n:]
			}
			switch {
			case len(q.items) == 0:
				delete(f.overflow, s)
			case now.Sub(q.since) >= f.slowAfter():
				delete(f.overflow, s)
				f.endLocked(s, ErrTooSlow)
			}
		}
		if len(f.overflow) == 0 {
			f.pumping = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		t.Reset(pumpStep)
	}
}

// rememberLocked records a delivered transaction (recent), keeping the
// newest MaxBacklog. f.mu is held.
func (f *feed[T]) rememberLocked(pos upstream.TxCursor, hash string) {
	if len(f.recent) >= 2*f.cfg.MaxBacklog {
		n := copy(f.recent, f.recent[len(f.recent)-f.cfg.MaxBacklog:])
		clear(f.recent[n:])
		f.recent = f.recent[:n]
	}
	f.recent = append(f.recent, seenTx{pos: pos, hash: hash})
}

// replayedLocked reports whether the transaction at pos was delivered
// before the feed re-anchored: the same hash at the same position. f.mu
// is held.
func (f *feed[T]) replayedLocked(pos upstream.TxCursor, hash string) bool {
	for len(f.replay) > 0 && older(f.replay[0].pos, pos) {
		f.replay = f.replay[1:]
	}
	if len(f.replay) == 0 || f.replay[0].pos != pos {
		return false
	}
	same := strings.EqualFold(f.replay[0].hash, hash)
	f.replay = f.replay[1:]
	return same
}
