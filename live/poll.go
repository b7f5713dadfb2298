package live

import (
	"context"
	"errors"
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
// "Positions"). A position is judged by its distance to the transaction
// before it on the chain, not by its absolute value: the feed admits a
// transaction when it is at most maxBlockJump blocks past the one before
// it (the feed's own position: plus maxBlockRate blocks a second since
// the feed reached it). A chain, however fast it grows, is a sequence of
// such steps; one row at block 9e18 (which would move the feed past every
// real transaction) is not.
const (
	// maxBlockJump is the most blocks between two consecutive
	// transactions with no time elapsed: about three hours of the
	// network's blocks (about one a second) without a transaction.
	maxBlockJump = 10_000
	// maxBlockRate is how fast the allowance past the feed's own position
	// grows, in blocks a second (a hundred times the network's rate), so
	// that a chain quiet for longer is never refused, only waited for.
	maxBlockRate = 100
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
			f.refuse(err, len(msg))
			return
		}
		f.receive(ctx, b, len(msg))
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
		f.mu.Lock()
		pos := f.last
		f.mu.Unlock()
		_, head, known, err := f.headPage(ctx, pos)
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
	rows, head, known, err := f.headPage(ctx, pos)
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
	}
	if i, ok := slices.BinarySearchFunc(rows, pos, cmpRowPos); ok {
		// The newest page holds pos: it holds every newer row too.
		newer := f.connect(rows[i+1:], pos, head, "the explorer's newest page")
		if len(newer) > 0 {
			f.emit(ctx, Batch{Prev: pos, Transactions: newer}, publish)
			pos = newer[len(newer)-1].Position()
		}
		if pos == head {
			f.confirm()
		}
		return pos, nil
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

// headPage reads the explorer's newest page: its rows in chain order, and
// the explorer's head. The head is the newest row of the page's connected
// run, followed up from the page's median row (so that a few rows far
// from the rest cannot make it): each row at most maxBlockJump blocks
// past the one before, or past pos (the feed's position) plus
// maxBlockRate a second since the feed reached it. Rows above the run are
// refused. The head of an empty chain is 0.0; known is false when the
// page held no valid row.
func (f *feed[T]) headPage(ctx context.Context, pos upstream.TxCursor) (rows []upstream.Transaction, head upstream.TxCursor, known bool, err error) {
	f.polls.Add(1)
	page, err := f.list(ctx, upstream.TransactionsParams{First: f.cfg.PageSize})
	if err != nil {
		return nil, head, false, err
	}
	rows, invalid := order(page)
	if len(rows) == 0 {
		if invalid > 0 {
			f.refusePositions(invalid, "the explorer's newest page")
		}
		return nil, head, invalid == 0, nil
	}
	sinceFeed := f.allowanceFromFeed()
	cut := len(rows)
	for k := (len(rows)-1)/2 + 1; k < len(rows); k++ {
		prev, allow := rows[k-1].Position(), uint64(maxBlockJump)
		if !older(pos, prev) {
			prev, allow = pos, sinceFeed // the feed has passed prev: from its position
		}
		if !within(prev.Block, rows[k].Position().Block, allow) {
			cut = k
			break
		}
	}
	if refused := invalid + len(rows) - cut; refused > 0 {
		f.refusePositions(refused, "the explorer's newest page", "head", rows[cut-1].Position(), "refused_from", rows[min(cut, len(rows)-1)].Position())
	}
	rows = rows[:cut]
	f.observeHead(rows[cut-1].Position(), true)
	return rows, rows[cut-1].Position(), true, nil
}

// connect is rows (in chain order, newer than pos) as far as the chain
// from pos reaches: each at most maxBlockJump blocks past the one before
// (the first: past pos, plus maxBlockRate a second since the feed reached
// it), and none past head, the explorer's head read. A row past the head
// that the chain from pos reaches is left for the next poll (the chain
// grew since the head read); a row it does not reach, and every row
// after it, is refused.
func (f *feed[T]) connect(rows []upstream.Transaction, pos, head upstream.TxCursor, where string) []upstream.Transaction {
	prev, allow := pos.Block, f.allowanceFromFeed()
	kept := len(rows)
	for k := range rows {
		p := rows[k].Position()
		if kept == len(rows) && older(head, p) {
			kept = k // the rest is only checked
		}
		if !within(prev, p.Block, allow) {
			f.refusePositions(len(rows)-k, where, "after", rows[max(k, 1)-1].Position(), "refused_from", p, "head", head)
			return rows[:min(k, kept)]
		}
		prev, allow = p.Block, maxBlockJump
	}
	return rows[:kept]
}

// within reports whether block next is at most allow blocks past prev.
func within(prev, next, allow uint64) bool { return next <= prev || next-prev <= allow }

// allowanceFromFeed is how far past the feed's position its next
// transaction may be: maxBlockJump, plus maxBlockRate a second since the
// feed reached that position.
func (f *feed[T]) allowanceFromFeed() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastAt.IsZero() {
		return maxBlockJump
	}
	return ceilingFrom(0, time.Since(f.lastAt))
}

// admitAfter is a page read after pos as the poller takes it: in chain
// order, newer than pos, as far as the chain from pos reaches, none past
// the explorer's head read (connect).
func (f *feed[T]) admitAfter(page []upstream.Transaction, pos, head upstream.TxCursor) []upstream.Transaction {
	rows, invalid := order(page)
	if invalid > 0 {
		f.refusePositions(invalid, "a page after the feed's position", "after", pos)
	}
	i, found := slices.BinarySearchFunc(rows, pos, cmpRowPos)
	if found {
		i++
	}
	return f.connect(rows[i:], pos, head, "a page after the feed's position")
}

// admitBatch checks a batch of the fleet (another process's poll, or
// this one's echo) against the positions this process trusts: at most
// maxBlockJump blocks, plus maxBlockRate a second, past the newest
// position it reached (ceilingLocked); past that, at most at the
// explorer's head as this process reads it (readExplorerHead). A batch whose
// Prev is past that limit is refused whole; a transaction past it is
// left out.
func (f *feed[T]) admitBatch(ctx context.Context, b Batch) (Batch, bool) {
	f.mu.Lock()
	limit, anchored := f.ceilingLocked(time.Now())
	f.mu.Unlock()
	newest := b.Prev
	if n := len(b.Transactions); n > 0 {
		newest = b.Transactions[n-1].Position()
	}
	if !anchored || newest.Block > limit {
		switch head, ok := f.readExplorerHead(ctx); {
		case ok:
			limit = max(limit, head.Block)
		case !anchored:
			return b, true // nothing to judge by
		}
	}
	plausible := func(p upstream.TxCursor) bool { return p.Block <= limit && p.Index <= maxTxIndex }
	if !plausible(b.Prev) {
		f.refusePositions(1+len(b.Transactions), "a batch of the fleet", "prev", b.Prev, "limit_block", limit)
		return b, false
	}
	for i := range b.Transactions {
		if !plausible(b.Transactions[i].Position()) {
			f.refusePositions(len(b.Transactions)-i, "a batch of the fleet", "prev", b.Prev, "refused_from", b.Transactions[i].Position(), "limit_block", limit)
			b.Transactions = b.Transactions[:i]
			break
		}
	}
	return b, true
}

// readExplorerHead is the explorer's head as this process reads it (headPage),
// read at most once a poll interval.
func (f *feed[T]) readExplorerHead(ctx context.Context) (upstream.TxCursor, bool) {
	now := time.Now()
	f.mu.Lock()
	if !f.headReadAt.IsZero() && now.Sub(f.headReadAt) < f.cfg.Interval {
		head := f.headRead
		f.mu.Unlock()
		return head, true
	}
	pos := f.last
	f.mu.Unlock()
	_, head, known, err := f.headPage(ctx, pos)
	if err != nil || !known {
		return head, false
	}
	f.mu.Lock()
	f.headRead, f.headReadAt = head, now
	f.mu.Unlock()
	return head, true
}

// refusePositions counts n refused positions and says so in the log (at most once
// a minute).
func (f *feed[T]) refusePositions(n int, where string, args ...any) {
	total := f.refusedPositions.Add(uint64(n))
	f.warnLimited("refused", "live feed: refusing transactions at positions no chain reaches", append([]any{"in", where, "count", n, "total", total}, args...)...)
}

// ceilingLocked is the highest block a fleet's batch may reach without
// a head read: maxBlockJump past the newest position the feed trusts,
// plus maxBlockRate for every second since it reached it. The trusted
// positions are the newest ever delivered (hwm: so that an explorer that
// went back and returns is followed) and the feed's own. anchored is
// false while the feed trusts none. f.mu is held.
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
//
// rows is not changed: the upstream client hands the same page to every
// caller of a coalesced request, so the ordered rows are a copy.
func order(rows []upstream.Transaction) (out []upstream.Transaction, invalid int) {
	out = make([]upstream.Transaction, 0, len(rows))
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
//
// Two checks, both cheap: the positions this process trusts (admitBatch:
// a refused position is counted in RefusedPositions, and the batch is
// cut before it) and the explorer's head as the coordinator's messages
// are checked against it (acceptBatch). A batch either refuses any part
// of is a bad message (refuse, of size bytes).
func (f *feed[T]) receive(ctx context.Context, b Batch, size int) {
	admitted, ok := f.admitBatch(ctx, b)
	if !ok {
		f.refuse(fmt.Errorf("a batch after %s: its start is at a position no chain reaches", b.Prev), size)
		return
	}
	if cut := len(admitted.Transactions); cut < len(b.Transactions) {
		f.refuse(fmt.Errorf("a batch after %s: %d of its transactions, from %s, are at positions no chain reaches",
			b.Prev, len(b.Transactions)-cut, b.Transactions[cut].Position()), size)
	}
	b = admitted
	if err := f.acceptBatch(ctx, b); err != nil {
		f.refuse(err, size)
		return
	}
	newest := b.Prev
	if n := len(b.Transactions); n > 0 {
		newest = b.Transactions[n-1].Position()
	}
	// Before the batch is delivered: what reached an older head is no
	// longer served by then. A heartbeat is the poller at the head.
	f.observeHead(newest, len(b.Transactions) == 0)
	f.mu.Lock()
	if !f.leading {
		f.verifyLocked(b.Prev)
	}
	f.mu.Unlock()
	if !f.apply(ctx, b) {
		return // refused: it moves neither head nor confirmed
	}
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
// with ErrGap and the feed jumps to the batch. It reports false when
// the batch is refused (the explorer's head is before its start).
func (f *feed[T]) apply(ctx context.Context, b Batch) bool {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	prev, run := b.Prev, b.Transactions
	if older(last, b.Prev) {
		missed, err := f.fillGap(ctx, last, b.Prev)
		switch {
		case err == nil:
			// What was read after last, then the batch: one run.
			prev, run = last, append(missed, b.Transactions...)
		case errors.Is(err, errBeyondHead):
			// The batch starts past the chain the explorer shows: what the
			// explorer has is delivered, the batch is refused (a later
			// batch fills the gap again if the explorer was only behind).
			f.observeTransactions(last, missed)
			f.fanout(missed)
			f.refuse(err, 0)
			return false
		default:
			// The batch alone is still a run: what precedes it is not
			// known (the upstream cache drops what it cannot vouch for).
			f.cfg.Logger.Warn("live feed: transactions missed; ending every subscription", "from", last, "to", b.Prev, "err", err)
			f.jump(b.Prev)
		}
	}
	f.observeTransactions(prev, run)
	f.fanout(run)
	return true
}

// observeTransactions tells Config.OnTransactions the run txs after
// prev, unless it is not in chain order past prev (then nothing: what
// it would vouch for is uncertain).
func (f *feed[T]) observeTransactions(prev upstream.TxCursor, txs []upstream.Transaction) {
	if f.cfg.OnTransactions == nil || len(txs) == 0 {
		return
	}
	at := prev
	for k := range txs {
		pos := txs[k].Position()
		if !older(at, pos) {
			return
		}
		at = pos
	}
	f.cfg.OnTransactions(prev, txs)
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
		// The fairness history first (it records tx after the position
		// before it), then the positions this feed trusts.
		f.remember(f.last, tx)
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
			if !older(s.pos, pos) || !s.filter.Match(tx) {
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
