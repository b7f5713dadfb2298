package upstream

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/tradenet/gateway/internal/ctxwait"
)

// FairBudget shares a Budget between clients in turn, so that no client
// can take the budget from others: a query making hundreds of data-node
// calls does not make another client's one call wait behind all of them.
//
// Callers take turns at the inner budget, one at a time: the caller whose
// turn it is waits in the inner budget (for a token, or its reserved slot)
// and then hands the turn on. So the inner budget (local, or the Redis
// one shared by every replica) never has more than one of this process's
// callers reserved ahead, and a reservation given back by a cancelled
// caller frees the very next slot. The turn goes round the clients with
// callers waiting (ClientFrom of their contexts) in round-robin order,
// first in first out within a client; a client that starts waiting joins
// the end of the current round. A light client therefore waits for at most
// one call of each other waiting client, however many those have queued.
//
// A caller whose context is marked WithPriority (the live feed's poller)
// is served before every client's waiting caller. Over a local inner
// budget (whose tokens are known), clients leave a reserve of tokens
// (priorityReserve, at most a quarter of the burst) that only priority
// callers take: a client's caller whose turn comes while the budget holds
// no more than the reserve waits for one more token first, and a priority
// caller goes straight to the inner budget, without a turn, finding a
// token there at once as long as priority callers take fewer than the
// rate refills. Over another inner budget (Redis: its tokens are the
// fleet's) a priority caller waits for a turn like the others, but is
// handed the turn before any client's caller: it waits only for the turn
// being taken and for the priority callers that came before it. Either
// way it still takes a token of the inner budget like any other, so
// priority changes the order of the calls, never their rate. Priority is
// for background work whose demand is small and bounded (a poll every
// interval): its callers are not shared fairly between themselves, and
// enough of them would starve the clients.
//
// A caller that had to queue may no longer need its request when its
// turn comes: with a cache shared by replicas, another replica may have
// fetched the same answer meanwhile. The upstream client asks the shared
// cache again then (withAnsweredMeanwhile), before the caller takes a
// token, and the turn passes on.
//
// When nothing waits, Wait takes the turn at once on the caller's
// goroutine: two mutex sections over the inner budget's own cost.
//
// Across replicas sharing a Redis budget, each replica keeps its own
// queue: replicas take slots first come first served, one caller each at
// a time, and each shares its turns fairly among its own clients.
type FairBudget struct {
	inner    Budget
	interval time.Duration // 1/rate: the time a turn takes while the budget is spent
	tokens   func(time.Time) float64
	// reserve is the tokens clients leave to priority callers; 0 when
	// the inner budget's tokens are not known (tokens nil).
	reserve float64

	mu          sync.Mutex
	busy        bool // a caller holds the turn; callers wait only while one does
	clients     map[string]*fairClient
	ring        []*fairClient // clients with callers waiting, in turn order
	next        int           // index in ring of the client whose caller is served next
	urgent      []*fairWaiter // priority callers waiting, oldest first: served before ring
	waiting     int           // callers waiting for the turn, urgent included
	bannedUntil time.Time
}

var (
	_ Budget         = (*FairBudget)(nil)
	_ BudgetReporter = (*FairBudget)(nil)
)

// fairClient is one client's queue of waiting callers, oldest first.
type fairClient struct {
	key     string
	waiters []*fairWaiter
}

// fairWaiter is one waiting caller. turn is closed (and given set, under
// FairBudget.mu) when the turn is handed to it.
type fairWaiter struct {
	client *fairClient // nil for a priority caller (FairBudget.urgent)
	turn   chan struct{}
	given  bool
}

// NewFairBudget shares inner, a budget of rate requests a second (<= 0:
// DefaultBudgetRate), between clients in turn. rate only estimates how
// long a caller will wait for its turn, so that one that would wait past
// its deadline is refused at once.
func NewFairBudget(inner Budget, rate float64) *FairBudget {
	if rate <= 0 {
		rate = DefaultBudgetRate
	}
	b := &FairBudget{
		inner:    inner,
		interval: time.Duration(float64(time.Second) / rate),
		clients:  map[string]*fairClient{},
	}
	if local, ok := inner.(*LocalBudget); ok {
		b.tokens = local.limiter.TokensAt
		b.reserve = float64(min(priorityReserve, local.limiter.Burst()/4))
	}
	return b
}

// priorityReserve is the most tokens of a local budget the clients leave
// to priority callers: the poller's poll and, when it is behind, the
// next page or a gap fill's, without waiting for the rate.
const priorityReserve = 2

// Wait blocks until one request may be sent, after the callers of other
// clients that were waiting before, in turn (see FairBudget). It refuses
// at once (a *BudgetError) while banned, and when the estimated wait for
// the turn outlasts ctx's deadline; otherwise the inner budget decides.
// A caller whose ctx ends while waiting leaves the queue having reserved
// nothing.
func (b *FairBudget) Wait(ctx context.Context) error {
	now := time.Now()
	b.mu.Lock()
	if d := b.bannedUntil.Sub(now); d > 0 {
		b.mu.Unlock()
		return &BudgetError{RetryAfter: d, Banned: true}
	}
	priority := PriorityFrom(ctx)
	if priority && b.reserve > 0 {
		// The reserve is its: no turn to wait for.
		b.mu.Unlock()
		return b.inner.Wait(ctx)
	}
	if !b.busy {
		b.busy = true
		b.mu.Unlock()
		return b.take(ctx)
	}
	if priority {
		return b.waitUrgent(ctx, now)
	}
	key := ClientFrom(ctx)
	c := b.clients[key]
	if wait, ok := b.estimate(ctx, now, c); !ok {
		b.mu.Unlock()
		return &BudgetError{RetryAfter: wait}
	}
	if c == nil {
		// A client that starts waiting is served last in the current
		// round.
		c = &fairClient{key: key}
		b.clients[key] = c
		b.ring = slices.Insert(b.ring, b.next, c)
		b.next++
	}
	w := &fairWaiter{client: c, turn: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	b.waiting++
	b.mu.Unlock()
	return b.await(ctx, w)
}

// waitUrgent queues a priority caller (b.mu held, and released): it is
// served after the turn being taken and the priority callers before it,
// ahead of every client's.
func (b *FairBudget) waitUrgent(ctx context.Context, now time.Time) error {
	// The turn being taken, the priority callers ahead, its own.
	ahead := 2 + len(b.urgent)
	if b.tokens != nil {
		if t := int(b.tokens(now)); t > 0 {
			ahead = max(ahead-t, 0)
		}
	}
	if wait := time.Duration(ahead) * b.interval; ctxwait.Outlasts(ctx, now, wait+budgetMargin) {
		b.mu.Unlock()
		return &BudgetError{RetryAfter: wait}
	}
	w := &fairWaiter{turn: make(chan struct{})}
	b.urgent = append(b.urgent, w)
	b.waiting++
	b.mu.Unlock()
	return b.await(ctx, w)
}

// await waits for w's turn, then takes it; when ctx ends first, w leaves
// the queue having reserved nothing.
func (b *FairBudget) await(ctx context.Context, w *fairWaiter) error {
	select {
	case <-w.turn:
		if answered := answeredMeanwhileFrom(ctx); answered != nil && answered(ctx) {
			b.mu.Lock()
			b.handOnLocked()
			b.mu.Unlock()
			return errAnsweredMeanwhile
		}
		return b.take(ctx)
	case <-ctx.Done():
	}
	b.mu.Lock()
	if w.given {
		// The turn came as ctx ended: pass it on unused.
		b.handOnLocked()
		b.mu.Unlock()
		return ctx.Err()
	}
	b.leaveLocked(w)
	b.mu.Unlock()
	return ctx.Err()
}

// take waits in the inner budget holding the turn, then hands it on. A
// ban that began while it waited for its slot refuses the call after
// all: the data node would answer it 403, and calling while banned is
// what prolongs a ban.
func (b *FairBudget) take(ctx context.Context) (err error) {
	defer func() {
		b.mu.Lock()
		if err == nil && !b.bannedUntil.IsZero() {
			if d := time.Until(b.bannedUntil); d > 0 {
				err = &BudgetError{RetryAfter: d, Banned: true}
			}
		}
		b.handOnLocked()
		b.mu.Unlock()
	}()
	if b.reserve > 0 {
		if err := b.leaveReserve(ctx); err != nil {
			return err
		}
	}
	return b.inner.Wait(ctx)
}

// leaveReserve waits, for a client's caller holding the turn, until the
// inner budget holds more than the priority callers' reserve.
func (b *FairBudget) leaveReserve(ctx context.Context) error {
	now := time.Now()
	short := b.reserve + 1 - b.tokens(now)
	if short <= 0 {
		return nil
	}
	d := time.Duration(short * float64(b.interval))
	if ctxwait.Outlasts(ctx, now, d+budgetMargin) {
		return &BudgetError{RetryAfter: d}
	}
	return ctxwait.Sleep(ctx, d)
}

// handOnLocked gives the turn to the oldest priority caller, else to the
// next client's oldest caller, or frees it when nobody waits.
func (b *FairBudget) handOnLocked() {
	if len(b.urgent) > 0 {
		w := b.urgent[0]
		b.urgent[0] = nil
		b.urgent = b.urgent[1:]
		b.waiting--
		w.given = true
		close(w.turn)
		return
	}
	if len(b.ring) == 0 {
		b.busy = false
		return
	}
	if b.next >= len(b.ring) {
		b.next = 0
	}
	c := b.ring[b.next]
	w := c.waiters[0]
	c.waiters[0] = nil
	c.waiters = c.waiters[1:]
	if len(c.waiters) == 0 {
		b.dropLocked(b.next) // next now points at the following client
	} else {
		b.next++
	}
	b.waiting--
	w.given = true
	close(w.turn)
}

// leaveLocked takes a waiter whose context ended out of its queue.
func (b *FairBudget) leaveLocked(w *fairWaiter) {
	c := w.client
	if c == nil {
		if i := slices.Index(b.urgent, w); i >= 0 {
			b.urgent = slices.Delete(b.urgent, i, i+1)
			b.waiting--
		}
		return
	}
	i := slices.Index(c.waiters, w)
	if i < 0 {
		return
	}
	c.waiters = slices.Delete(c.waiters, i, i+1)
	b.waiting--
	if len(c.waiters) == 0 {
		b.dropLocked(slices.Index(b.ring, c))
	}
}

// dropLocked removes the client at ring index i, which has no waiters.
func (b *FairBudget) dropLocked(i int) {
	delete(b.clients, b.ring[i].key)
	b.ring = slices.Delete(b.ring, i, i+1)
	if i < b.next {
		b.next--
	}
}

// estimate is how long a new caller of client c (nil: not waiting yet)
// would wait for its turn, and whether that fits ctx's deadline with the
// margin a request needs afterwards. Each turn ahead takes one interval
// while the budget is spent; tokens the inner budget holds now (known for
// a local one) shorten that.
func (b *FairBudget) estimate(ctx context.Context, now time.Time, c *fairClient) (time.Duration, bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return 0, true
	}
	room := deadline.Sub(now) - budgetMargin
	// The turn being taken, the turns ahead, and the caller's own (each
	// turn waits for the slot after the previous one's). Counting every
	// caller waiting as ahead is an upper bound, enough in the common
	// case.
	reserve := int(b.reserve)
	if time.Duration(2+b.waiting+reserve)*b.interval <= room {
		return 0, true
	}
	ahead := 2 + b.turnsAhead(c)
	if b.tokens != nil {
		// Tokens beyond the reserve shorten the wait; without them the
		// reserve must refill before a client's call.
		if free := int(b.tokens(now) - b.reserve); free > 0 {
			ahead = max(ahead-free, 0)
		} else {
			ahead += reserve
		}
	}
	wait := time.Duration(ahead) * b.interval
	return wait, !ctxwait.Outlasts(ctx, now, wait+budgetMargin)
}

// turnsAhead counts the turns given before a new caller of client c
// (nil: not waiting yet) in round-robin order: the priority callers
// waiting, its own client's waiters, and for each other waiting client as
// many as it has left by then.
func (b *FairBudget) turnsAhead(c *fairClient) int {
	if c == nil {
		return len(b.urgent) + len(b.ring) // one round: one each
	}
	k := len(c.waiters) // the new caller is served in round k+1
	ahead, passed := len(b.urgent)+k, false
	for j := range b.ring {
		o := b.ring[(b.next+j)%len(b.ring)]
		switch {
		case o == c:
			passed = true
		case passed:
			ahead += min(len(o.waiters), k)
		default:
			ahead += min(len(o.waiters), k+1)
		}
	}
	return ahead
}

// Pause pauses the inner budget; a ban also refuses this process's
// callers at once, without their waiting for a turn.
func (b *FairBudget) Pause(ctx context.Context, d time.Duration, banned bool) {
	b.inner.Pause(ctx, d, banned)
	if !banned {
		return
	}
	if d <= 0 {
		d = defaultRateLimitPause
	}
	until := time.Now().Add(d)
	b.mu.Lock()
	if until.After(b.bannedUntil) {
		b.bannedUntil = until
	}
	b.mu.Unlock()
}

// State reports the inner budget's state (an error when it cannot
// report), with the callers and clients waiting for a turn (priority
// callers count as callers, not as a client).
func (b *FairBudget) State(ctx context.Context) (BudgetState, error) {
	var s BudgetState
	if r, ok := b.inner.(BudgetReporter); ok {
		var err error
		if s, err = r.State(ctx); err != nil {
			return s, err
		}
	}
	b.mu.Lock()
	s.Waiting, s.WaitingClients = b.waiting, len(b.ring)
	b.mu.Unlock()
	return s, nil
}

type priorityKey struct{}

// WithPriority returns ctx marked as background work that FairBudget
// serves before every client's waiting callers (still within the rate):
// the live feed's poller, whose polls every subscriber waits for. See
// FairBudget for why priority is only for work of small, bounded demand.
func WithPriority(ctx context.Context) context.Context {
	return context.WithValue(ctx, priorityKey{}, true)
}

// errAnsweredMeanwhile is FairBudget.Wait's answer to a caller whose
// request was answered another way while it waited for its turn.
var errAnsweredMeanwhile = errors.New("answered through the shared cache while waiting for the budget")

type answeredMeanwhileKey struct{}

// withAnsweredMeanwhile returns ctx carrying answered, which FairBudget
// calls when the turn of a caller that had to queue comes, before it
// takes a token: when answered reports true (another replica put the
// answer in the shared cache meanwhile), the turn passes on unused and
// Wait returns errAnsweredMeanwhile. The fleet's token is kept for a
// request that needs it.
func withAnsweredMeanwhile(ctx context.Context, answered func(context.Context) bool) context.Context {
	return context.WithValue(ctx, answeredMeanwhileKey{}, answered)
}

func answeredMeanwhileFrom(ctx context.Context) func(context.Context) bool {
	f, _ := ctx.Value(answeredMeanwhileKey{}).(func(context.Context) bool)
	return f
}

// PriorityFrom reports whether WithPriority marked ctx.
func PriorityFrom(ctx context.Context) bool {
	p, _ := ctx.Value(priorityKey{}).(bool)
	return p
}
