package upstream

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/tradenet/gateway/internal/ctxwait"
)

// Defaults of the rate budget towards the data node: inside its limit of 20
// requests a second with a burst of 100 (docs/wire.md, Rate limit and ban),
// so that a gateway alone never meets the limit and a little is left for
// others calling from the same address.
const (
	DefaultBudgetRate  = 15
	DefaultBudgetBurst = 60
)

// DefaultExplorerRate and DefaultExplorerBurst are the explorer budget's
// defaults (Config.ExplorerBudget). The explorer sets no limit: these are
// about twice what a replica serving a thousand page views a second asks
// of it with the upstream cache (130 requests a second in the browse
// benchmark), and far below what clients could send without a budget.
const (
	DefaultExplorerRate  = 300
	DefaultExplorerBurst = 600
)

// budgetMargin is the time a request needs after its wait for a token: a
// token that would come later than that before the caller's deadline is
// refused at once (RATE_LIMITED) rather than waited for in vain.
const budgetMargin = 250 * time.Millisecond

// defaultRateLimitPause is how long a 429 pauses the budget when the data
// node does not say (its Ratelimit-Reset is normally 1).
const defaultRateLimitPause = time.Second

// BudgetState is a snapshot of a budget, for metrics.
type BudgetState struct {
	// Tokens is how many requests may be sent at once now (it may be
	// negative while callers wait for tokens reserved ahead).
	Tokens float64
	// PausedFor is how much longer every request is held back after a
	// 429 or a ban; 0 when not paused.
	PausedFor time.Duration
	// Banned is true while the pause is a ban: requests are refused at
	// once rather than held back.
	Banned bool
	// Waiting is how many callers wait for their turn at the budget, and
	// WaitingClients how many clients they act for (FairBudget).
	Waiting, WaitingClients int
}

// BudgetReporter is implemented by budgets that can report their state;
// *LocalBudget does.
type BudgetReporter interface {
	State(ctx context.Context) (BudgetState, error)
}

// LocalBudget is a Budget kept in this process: a token bucket of rate
// requests a second holding at most burst, plus a pause that a 429 or a
// ban sets for everyone. It is safe for concurrent use.
type LocalBudget struct {
	limiter *rate.Limiter

	mu          sync.Mutex
	pausedUntil time.Time
	bannedUntil time.Time
}

var (
	_ Budget         = (*LocalBudget)(nil)
	_ BudgetReporter = (*LocalBudget)(nil)
)

// NewLocalBudget returns a budget of r requests a second with bursts of
// at most burst. r <= 0 takes DefaultBudgetRate and burst <= 0
// DefaultBudgetBurst.
func NewLocalBudget(r float64, burst int) *LocalBudget {
	if r <= 0 {
		r = DefaultBudgetRate
	}
	if burst <= 0 {
		burst = DefaultBudgetBurst
	}
	return &LocalBudget{limiter: rate.NewLimiter(rate.Limit(r), burst)}
}

// Wait blocks until one request may be sent. While banned it refuses at
// once; while paused, or when the next token comes later than ctx's
// deadline, it refuses at once if the wait would outlast the deadline and
// waits otherwise.
func (b *LocalBudget) Wait(ctx context.Context) error {
	for {
		now := time.Now()
		b.mu.Lock()
		paused, banned := b.pausedUntil.Sub(now), b.bannedUntil.Sub(now)
		b.mu.Unlock()
		if banned > 0 {
			return &BudgetError{RetryAfter: banned, Banned: true}
		}
		if paused <= 0 {
			break
		}
		if ctxwait.Outlasts(ctx, now, paused+budgetMargin) {
			return &BudgetError{RetryAfter: paused}
		}
		if err := ctxwait.Sleep(ctx, paused); err != nil {
			return err
		}
	}
	res := b.limiter.Reserve()
	if !res.OK() {
		return &BudgetError{RetryAfter: time.Second}
	}
	delay := res.Delay()
	if delay <= 0 {
		return nil
	}
	if ctxwait.Outlasts(ctx, time.Now(), delay+budgetMargin) {
		res.Cancel()
		return &BudgetError{RetryAfter: delay}
	}
	if err := ctxwait.Sleep(ctx, delay); err != nil {
		// The slot goes back to the bucket, whole when no later slot
		// was reserved meanwhile (under a FairBudget, none is).
		res.Cancel()
		return err
	}
	return nil
}

// Pause holds every request back for d. A 429 (banned false) also spends
// the tokens left: the data node's bucket is empty, so this one was
// counting wrong (another client on the same address, say). A ban refuses
// requests until it ends.
func (b *LocalBudget) Pause(_ context.Context, d time.Duration, banned bool) {
	if d <= 0 {
		d = defaultRateLimitPause
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	until := now.Add(d)
	if until.After(b.pausedUntil) {
		b.pausedUntil = until
	}
	if banned && until.After(b.bannedUntil) {
		b.bannedUntil = until
	}
	if n := int(b.limiter.TokensAt(now)); n > 0 {
		b.limiter.AllowN(now, n)
	}
}

// State reports the budget's tokens and pause. It never fails.
func (b *LocalBudget) State(context.Context) (BudgetState, error) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := BudgetState{Tokens: b.limiter.TokensAt(now)}
	if d := b.pausedUntil.Sub(now); d > 0 {
		s.PausedFor = d
	}
	s.Banned = b.bannedUntil.After(now)
	return s, nil
}
