package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// Poller states (Stats.State).
const (
	stateIdle      = "idle"
	stateStarting  = "starting"
	statePolling   = "polling"
	stateFollowing = "following"
	stateBackoff   = "backoff"
	// stateStalled is reported (Stats) instead of polling or following
	// while the feed has not been at the chain head for stallAfter: polls
	// succeed, but nothing brings the feed to the explorer's head.
	stateStalled = "stalled"
)

// withDefaults fills Config's zero fields.
func (c Config) withDefaults() Config {
	if c.ClientKey == "" {
		c.ClientKey = "live-feed"
	}
	if c.Interval <= 0 {
		c.Interval = 500 * time.Millisecond
	}
	if c.PageSize <= 0 {
		c.PageSize = 100
	}
	if c.MaxBacklog <= 0 {
		c.MaxBacklog = 1000
	}
	if c.Buffer <= 0 {
		c.Buffer = 256
	}
	if c.MaxSubscriptions <= 0 {
		c.MaxSubscriptions = 10_000
	}
	if c.Linger <= 0 {
		c.Linger = 2 * c.Interval
	}
	if c.HeadTimeout <= 0 {
		c.HeadTimeout = HeadTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Explorer == nil {
		// A feed without an explorer can only fail; say so in its log
		// rather than panic in a background goroutine.
		c.Explorer = noExplorer{}
	}
	return c
}

type noExplorer struct{}

var errNoExplorer = errors.New("live: no explorer configured")

func (noExplorer) ListTransactions(context.Context, upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	return nil, errNoExplorer
}

// feed is the hub: the subscriptions, the position delivered to them, and
// the run goroutine (poller, or coordinator member) while anyone listens.
type feed[T any] struct {
	cfg     Config
	prepare func(*upstream.Transaction) T

	// applyMu serialises apply (gap check, gap fill, fan-out), which the
	// coordinator's deliver and a leader's local fallback may both call.
	applyMu sync.Mutex

	polls, pollErrors, badMessages, refusedPositions atomic.Uint64

	mu       sync.Mutex
	closed   bool
	closedCh chan struct{}
	// subs are the registered subscriptions (live and catching up); each
	// knows its index, for removal in O(1).
	subs []*subscriber[T]
	// reserved counts subscriptions from the start of Subscribe to their
	// end: the slots of MaxSubscriptions and what keeps the run going.
	reserved int

	// The run goroutine: runCancel ends it, runDone is closed when it has
	// returned, ready when it knows the chain head. running is false once
	// it has been told to stop (a new run then waits for runDone).
	running   bool
	runGen    uint64
	runCancel context.CancelFunc
	runDone   chan struct{}
	ready     chan struct{}
	linger    *time.Timer
	lingerGen uint64

	// last is the newest position fanned out (every subscription is at
	// it or beyond); head the explorer's head (the poller's last head
	// read) or, following, the newest position the fleet's batches
	// reached; confirmed when the feed last knew it was at that head.
	last, head upstream.TxCursor
	confirmed  time.Time
	state      string
	// explorerHead is the newest position this process has read from the
	// explorer itself (a chain head it knows to be real), against which
	// the coordinator's batches are checked; badLogged is when a refused
	// message was last logged.
	explorerHead upstream.TxCursor
	badLogged    time.Time

	// The positions the feed trusts (poll.go, admission): lastAt is when
	// last was reached (the allowance past it grows from then at
	// maxBlockRate); hwm the newest position ever delivered, and hwmAt
	// when (with last, the ceiling of a fleet batch taken without a head
	// read: ceilingLocked).
	lastAt, hwmAt time.Time
	hwm           upstream.TxCursor
	// behindSince is when the observed head (the explorer's, or the
	// fleet's batches) fell behind last, zero while it is not; behindFloor
	// the lowest Prev of the fleet's batches since then.
	behindSince time.Time
	behindFloor upstream.TxCursor
	// verified is the newest delivered position that a later head read
	// (or fleet batch) showed the chain still holds: a subscription that
	// started past it may have started at a position no transaction has,
	// and is moved back when the feed re-anchors.
	verified upstream.TxCursor
	// headRead is the explorer's head as the last head read of a fleet
	// batch's check found it (admitBatch), at headReadAt.
	headRead   upstream.TxCursor
	headReadAt time.Time
	// leading is set while this process's poller runs (lead): it, not
	// the fleet's messages, then keeps head and confirmed.
	leading bool
	// recent are the newest transactions fanned out, oldest first (at
	// most MaxBacklog), and replay those that were above the position a
	// re-anchor moved back to: the same transaction at the same position
	// is not delivered twice.
	recent, replay []seenTx

	// overflow holds, per subscription, what its channel had no room for
	// (fan-out); pump moves it into the channel as the reader takes.
	overflow map[*subscriber[T]]*overflowQueue[T]
	pumping  bool
	pumpDone sync.WaitGroup

	delivered, droppedSlow, droppedGap, refused, backlogRefused, reanchors uint64

	// fair is the clients' share: the history, each client's
	// subscriptions and catch-ups (fair.go).
	fair fairState[T]
	// logged throttles repeated warnings, by kind.
	logged map[string]time.Time
}

// seenTx is a delivered transaction's position and hash.
type seenTx struct {
	pos  upstream.TxCursor
	hash string
}

// overflowQueue is what one subscription's channel had no room for, in
// chain order, and since when it has not been empty.
type overflowQueue[T any] struct {
	items []T
	since time.Time
}

func newFeed[T any](cfg Config, prepare func(*upstream.Transaction) T) *feed[T] {
	f := &feed[T]{
		cfg:      cfg.withDefaults(),
		prepare:  prepare,
		closedCh: make(chan struct{}),
		state:    stateIdle,
		overflow: map[*subscriber[T]]*overflowQueue[T]{},
		logged:   map[string]time.Time{},
	}
	if f.cfg.AlwaysPoll {
		f.mu.Lock()
		f.startLocked()
		f.mu.Unlock()
	}
	return f
}

// ctxFor is ctx marked for the fair budget: the poller's requests go
// before any client's (fair.go); and they never read the upstream cache:
// they are how new blocks are seen.
func (f *feed[T]) ctxFor(ctx context.Context) context.Context {
	return upstream.WithoutCache(upstream.WithPriority(upstream.WithClient(ctx, f.cfg.ClientKey)))
}

// observeHead tells Config.OnHead where the explorer's head is.
func (f *feed[T]) observeHead(head upstream.TxCursor, exact bool) {
	if f.cfg.OnHead != nil && head != (upstream.TxCursor{}) {
		f.cfg.OnHead(head, exact)
	}
}

// list waits for the budget, then asks the explorer: the poller's
// requests (catch-ups use listFor).
func (f *feed[T]) list(ctx context.Context, p upstream.TransactionsParams) ([]upstream.Transaction, error) {
	ctx = f.ctxFor(ctx)
	if f.cfg.Budget != nil {
		if err := f.cfg.Budget.Wait(ctx); err != nil {
			return nil, err
		}
	}
	page, err := f.cfg.Explorer.ListTransactions(ctx, p)
	if err != nil {
		return nil, err
	}
	rows, err := decodeCommands(page.Transactions)
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	f.mu.Lock()
	for i := range rows {
		if tx := &rows[i]; tx.Index >= 0 && older(f.explorerHead, tx.Position()) {
			f.explorerHead = tx.Position()
		}
	}
	f.mu.Unlock()
	return rows, nil
}

// unverifiedBlocks is how far past the explorer head this process has
// read itself a coordinator's batch may reach without the feed asking the
// explorer (one head read, after which that head is the reference): a
// follower checks the fleet's poller about once every unverifiedBlocks
// blocks, rather than at every batch (which would cost what polling for
// itself costs), and a batch that the explorer's head does not reach is
// refused, so that no batch can move the feed far past the real chain.
const unverifiedBlocks = 100

// acceptBatch says whether a batch from the coordinator may be applied:
// nil, or why not.
func (f *feed[T]) acceptBatch(ctx context.Context, b Batch) error {
	if n, most := len(b.Transactions), max(f.cfg.PageSize, f.cfg.MaxBacklog); n > most {
		return fmt.Errorf("a batch of %d transactions after %s: a poll finds at most %d", n, b.Prev, most)
	}
	newest := b.Prev
	if n := len(b.Transactions); n > 0 {
		newest = b.Transactions[n-1].Position()
	}
	f.mu.Lock()
	known := f.explorerHead
	f.mu.Unlock()
	if !older(known, newest) || newest.Block-known.Block <= unverifiedBlocks {
		return nil
	}
	rows, err := f.list(ctx, upstream.TransactionsParams{First: 1})
	if err != nil {
		return fmt.Errorf("a batch reaching %s, %d blocks past the explorer's head last read here (%s), could not be checked: %w",
			newest, newest.Block-known.Block, known, err)
	}
	var head upstream.TxCursor
	if len(rows) > 0 {
		head = rows[0].Position()
	}
	if older(head, newest) {
		return fmt.Errorf("a batch reaching %s, past the explorer's head %s", newest, head)
	}
	return nil
}

// badMessageLogEvery is how often at most a refused message is logged.
const badMessageLogEvery = time.Minute

// refuse counts a message from the coordinator that the feed does not
// apply, and logs it unless one was logged less than a minute ago.
func (f *feed[T]) refuse(err error, size int) {
	n := f.badMessages.Add(1)
	f.mu.Lock()
	now := time.Now()
	quiet := !f.badLogged.IsZero() && now.Sub(f.badLogged) < badMessageLogEvery
	if !quiet {
		f.badLogged = now
	}
	f.mu.Unlock()
	if !quiet {
		f.cfg.Logger.Warn("live feed: refusing a message from the coordinator (logged at most once a minute)", "err", err, "bytes", size, "refused_total", n)
	}
}

// startLocked makes sure a run goroutine is going and returns the channel
// closed when it knows the head. f.mu is held.
func (f *feed[T]) startLocked() <-chan struct{} {
	if f.linger != nil {
		f.linger.Stop()
		f.linger = nil
		f.lingerGen++
	}
	if f.running {
		return f.ready
	}
	ctx, cancel := context.WithCancel(context.Background())
	prev := f.runDone
	f.running, f.runCancel = true, cancel
	f.runGen++
	f.runDone, f.ready = make(chan struct{}), make(chan struct{})
	f.state = stateStarting
	go f.run(ctx, f.runGen, prev, f.runDone, f.ready)
	return f.ready
}

// releaseLocked gives back a reserved slot; the last one starts the
// linger. f.mu is held.
func (f *feed[T]) releaseLocked() {
	f.reserved--
	if f.reserved > 0 || !f.running || f.closed || f.cfg.AlwaysPoll {
		return
	}
	f.lingerGen++
	gen := f.lingerGen
	f.linger = time.AfterFunc(f.cfg.Linger, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if gen == f.lingerGen && f.reserved == 0 && f.running {
			f.stopRunLocked()
		}
	})
}

// stopRunLocked tells the run goroutine to stop; it does not wait.
func (f *feed[T]) stopRunLocked() {
	f.running = false
	f.runCancel()
	f.linger = nil
	f.state = stateIdle
	f.confirmed = time.Time{}
}

func (f *feed[T]) close() {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.closedCh)
		for len(f.subs) > 0 {
			f.endLocked(f.subs[len(f.subs)-1], nil)
		}
		if f.linger != nil {
			f.linger.Stop()
		}
		if f.running {
			f.stopRunLocked()
		}
	}
	done := f.runDone
	f.mu.Unlock()
	if done != nil {
		<-done
	}
	f.pumpDone.Wait()
}

func (f *feed[T]) stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := Stats{
		Subscriptions:    len(f.subs),
		Delivered:        f.delivered,
		DroppedSlow:      f.droppedSlow,
		DroppedGap:       f.droppedGap,
		Refused:          f.refused,
		BacklogRefused:   f.backlogRefused,
		Polls:            f.polls.Load(),
		PollErrors:       f.pollErrors.Load(),
		BadMessages:      f.badMessages.Load(),
		State:            f.state,
		Head:             f.head,
		DeliveredAt:      f.last,
		RefusedPositions: f.refusedPositions.Load(),
		Reanchors:        f.reanchors,
		StallAfter:       f.stallAfter(),
	}
	f.fair.statsLocked(&s)
	if f.running && !f.confirmed.IsZero() {
		s.Lag = time.Since(f.confirmed)
	}
	if s.Lag >= s.StallAfter && (s.State == statePolling || s.State == stateFollowing) {
		s.State = stateStalled
	}
	return s
}

// stallAfter is the lag past which the feed counts as stalled (State
// "stalled", and /readyz fails while it has subscribers): ten poll
// intervals, at least 30 s, so that a slow explorer answer or a lease
// handover never trips it.
func (f *feed[T]) stallAfter() time.Duration { return max(10*f.cfg.Interval, 30*time.Second) }

// reanchorAfter is how long the observed head must stay behind the
// feed's position before the feed moves back to it: five poll
// intervals, at least 5 s (an explorer replica a little behind another,
// or a lease handover, does not last that long); well under stallAfter.
func (f *feed[T]) reanchorAfter() time.Duration { return max(5*f.cfg.Interval, 5*time.Second) }

// slowAfter is how long a subscription's overflow may wait before it is
// dropped (ErrTooSlow): a poll interval, at least a second; a reader that
// takes as fast as a block comes empties it within a few pumpSteps.
func (f *feed[T]) slowAfter() time.Duration { return max(f.cfg.Interval, time.Second) }

// maxOverflow bounds one subscription's overflow whatever the time: two
// polls' worth of transactions (a poll reads at most MaxBacklog and a
// page more).
func (f *feed[T]) maxOverflow() int { return 2 * (f.cfg.MaxBacklog + f.cfg.PageSize) }

// warnLimited logs a warning of kind at most once a minute.
func (f *feed[T]) warnLimited(kind, msg string, args ...any) {
	now := time.Now()
	f.mu.Lock()
	last, ok := f.logged[kind]
	if ok && now.Sub(last) < time.Minute {
		f.mu.Unlock()
		return
	}
	f.logged[kind] = now
	f.mu.Unlock()
	f.cfg.Logger.Warn(msg, args...)
}

// setState sets the state of run gen, if it is still the current run.
func (f *feed[T]) setState(gen uint64, s string) {
	f.mu.Lock()
	if f.running && f.runGen == gen {
		f.state = s
	}
	f.mu.Unlock()
}
