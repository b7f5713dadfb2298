package upstream

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/sony/gobreaker/v2"
)

// Every upstream call (one coalesced flight: get → flights.do → call) goes
// through the guard of its service, in this order:
//
//  1. the circuit breaker: while open, the call fails at once with an
//     *UnavailableError wrapping ErrCircuitOpen, without waiting for
//     anything; after BreakerConfig.OpenFor it lets BreakerConfig.Probes
//     calls through (half-open) and closes once they all succeed;
//  2. the service's rate budget (Config.Budget, ExplorerBudget):
//     Budget.Wait, which refuses with a *BudgetError while banned or when
//     its wait would outlast the caller's deadline;
//  3. the concurrency bound: at most MaxConcurrent requests to the service
//     at once; waiting for a slot respects the caller's context (a caller
//     waiting for a token holds no slot);
//  4. the request itself (Client.do), bounded by Config.Timeout.
//
// A call that failed with a connection error, a timeout or a 5xx other
// than an answer to what was asked (501, the data node's answers to bad
// input: Error.causedByRequest) is retried, at most RetryConfig.Retries times, after a jittered
// exponential backoff, and never when the wait would pass the caller's
// deadline. A 429 pauses the budget for everyone (Ratelimit-Reset, else
// Retry-After, else 1s) and is retried within the budget; without a budget
// it is answered at once. A 403 ban pauses the budget until
// Ratelimit-Retry-After has passed and is answered at once; meanwhile
// Budget.Wait refuses every call. Other 4xx and unreadable bodies are
// never retried.

// ErrCircuitOpen is wrapped in the *UnavailableError of a call refused by
// an open (or probing) circuit breaker: the service failed repeatedly and
// the gateway stops calling it for a while.
var ErrCircuitOpen = errors.New("circuit breaker open: the service failed repeatedly; calls resume after a successful probe")

// Defaults of the resilience settings.
const (
	DefaultRetries           = 2
	DefaultRetryInitial      = 100 * time.Millisecond
	DefaultRetryMax          = 2 * time.Second
	DefaultBreakerFailures   = 5
	DefaultBreakerOpenFor    = 5 * time.Second
	DefaultBreakerProbes     = 1
	DefaultMaxConcurrent     = 32
	retryRandomization       = 0.5
	retryMultiplier          = 2
	minTimeForAnotherAttempt = 20 * time.Millisecond
)

// RetryConfig bounds the retries of a failed call.
type RetryConfig struct {
	// Retries is how many times a failed call is retried: 0 means
	// DefaultRetries, a negative value never retries.
	Retries int
	// InitialInterval is the backoff before the first retry (randomised
	// by ±50%, doubling for each further retry); 0 means 100ms.
	InitialInterval time.Duration
	// MaxInterval caps the backoff; 0 means 2s.
	MaxInterval time.Duration
}

// BreakerConfig configures the circuit breaker of each service.
type BreakerConfig struct {
	// Failures is the number of consecutive failed requests (connection
	// errors, timeouts, 5xx) that opens the breaker; 0 means 5, a
	// negative value disables the breaker.
	Failures int
	// OpenFor is how long the breaker stays open before probing; 0 means
	// 5s.
	OpenFor time.Duration
	// Probes is the number of calls let through while half-open, all of
	// which must succeed to close the breaker; 0 means 1.
	Probes int
}

// Breaker states, as reported by BreakerState and OnBreakerChange.
const (
	BreakerClosed   = "closed"
	BreakerHalfOpen = "half-open"
	BreakerOpen     = "open"
)

// guard is the resilience state of one upstream service.
type guard struct {
	service Service
	breaker *gobreaker.CircuitBreaker[Freshness] // nil when disabled
	slots   chan struct{}
	budget  Budget // nil: no budget configured
}

func newGuard(service Service, cfg *Config, budget Budget) *guard {
	g := &guard{service: service, budget: budget}
	n := cfg.MaxConcurrent
	if n <= 0 {
		n = DefaultMaxConcurrent
	}
	g.slots = make(chan struct{}, n)
	b := cfg.Breaker
	if b.Failures >= 0 {
		failures := uint32(b.Failures)
		if failures == 0 {
			failures = DefaultBreakerFailures
		}
		if b.OpenFor <= 0 {
			b.OpenFor = DefaultBreakerOpenFor
		}
		if b.Probes <= 0 {
			b.Probes = DefaultBreakerProbes
		}
		onChange := cfg.OnBreakerChange
		g.breaker = gobreaker.NewCircuitBreaker[Freshness](gobreaker.Settings{
			Name:        string(service),
			MaxRequests: uint32(b.Probes),
			Timeout:     b.OpenFor,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
			IsExcluded: func(err error) bool {
				var nc notCounted
				return errors.As(err, &nc)
			},
			IsSuccessful: func(err error) bool { return err == nil || !isServiceFault(err) },
			OnStateChange: func(_ string, from, to gobreaker.State) {
				if onChange != nil {
					onChange(service, from.String(), to.String())
				}
			},
		})
	}
	return g
}

// state is the breaker's state: "closed", "half-open" or "open".
func (g *guard) state() string {
	if g.breaker == nil {
		return BreakerClosed
	}
	return g.breaker.State().String()
}

// notCounted marks a failed request that says nothing about the service's
// health (the caller gave up, or the data node rate limited us): the
// breaker neither counts it as a success nor as a failure.
type notCounted struct{ err error }

func (e notCounted) Error() string { return e.err.Error() }
func (e notCounted) Unwrap() error { return e.err }

// isServiceFault reports whether err means the service is failing: no
// complete answer (refused, reset, timed out) or a 5xx that does not
// answer what was asked (Error.causedByRequest: 501 Not Implemented, the
// data node's answers to bad input). These are retried and count against
// the breaker. Any other answer
// counts as a success of the breaker, as a 4xx always has: the service is
// up and answered what it was asked (a half-open breaker may close on it;
// a real outage fails the next calls and opens it again).
func isServiceFault(err error) bool {
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return !errors.Is(err, ErrCircuitOpen)
	}
	var e *Error
	return errors.As(err, &e) && e.StatusCode >= 500 && !e.causedByRequest()
}

// call performs one upstream GET with retries, the breaker, the
// concurrency bound and the budget. ctx carries the first caller's
// deadline (see get). raw, if not nil, receives the body read.
func (c *Client) call(ctx context.Context, r route, target string, out listBody, raw *rawBody) (Freshness, error) {
	g := c.guards[r.service]
	if c.retries <= 0 {
		return g.attempt(ctx, c, r, target, out, raw)
	}
	op := func() (Freshness, error) {
		fresh, err := g.attempt(ctx, c, r, target, out, raw)
		if err != nil && !g.retryable(ctx, err) {
			return fresh, backoff.Permanent(err)
		}
		return fresh, err
	}
	exp := &backoff.ExponentialBackOff{
		InitialInterval:     c.retryInitial,
		RandomizationFactor: retryRandomization,
		Multiplier:          retryMultiplier,
		MaxInterval:         c.retryMax,
	}
	return backoff.Retry(ctx, op,
		backoff.WithBackOff(deadlineBackOff{BackOff: exp, ctx: ctx}),
		backoff.WithMaxTries(uint(c.retries)+1),
		backoff.WithMaxElapsedTime(0), // the caller's deadline bounds it
	)
}

// attempt is one try: breaker, budget, slot, request.
func (g *guard) attempt(ctx context.Context, c *Client, r route, target string, out listBody, raw *rawBody) (Freshness, error) {
	if g.breaker != nil && g.breaker.State() == gobreaker.StateOpen {
		return Freshness{}, &UnavailableError{Service: r.service, Endpoint: r.endpoint, Err: ErrCircuitOpen}
	}
	if g.budget != nil {
		if err := g.budget.Wait(ctx); err != nil {
			if errors.Is(err, errAnsweredMeanwhile) {
				return Freshness{}, err
			}
			var be *BudgetError
			if errors.As(err, &be) {
				named := *be
				named.Service = r.service
				return Freshness{}, &named
			}
			return Freshness{}, &UnavailableError{Service: r.service, Endpoint: r.endpoint, Err: err}
		}
	}
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return Freshness{}, &UnavailableError{Service: r.service, Endpoint: r.endpoint, Err: ctx.Err()}
	}
	defer func() { <-g.slots }()
	if g.breaker == nil {
		fresh, err := c.do(ctx, r, target, out, raw)
		return fresh, g.afterResponse(ctx, err)
	}
	fresh, err := g.breaker.Execute(func() (Freshness, error) {
		fresh, err := c.do(ctx, r, target, out, raw)
		if err = g.afterResponse(ctx, err); err != nil && (ctx.Err() != nil || isRateLimit(err)) {
			return fresh, notCounted{err}
		}
		return fresh, err
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return Freshness{}, &UnavailableError{Service: r.service, Endpoint: r.endpoint, Err: ErrCircuitOpen}
	}
	var nc notCounted
	if errors.As(err, &nc) {
		err = nc.err
	}
	return fresh, err
}

// afterResponse applies a rate-limit answer to the budget: a 429 pauses it
// briefly, a ban until Ratelimit-Retry-After has passed.
func (g *guard) afterResponse(ctx context.Context, err error) error {
	if err == nil || g.budget == nil {
		return err
	}
	var e *Error
	if !errors.As(err, &e) || !e.rateLimited() {
		return err
	}
	if e.StatusCode == http.StatusForbidden {
		wait, _ := IsRateLimited(e)
		g.budget.Pause(ctx, wait, true)
		return err
	}
	pause := e.RateLimitReset
	if pause <= 0 {
		pause = e.RetryAfter
	}
	if pause <= 0 {
		pause = defaultRateLimitPause
	}
	g.budget.Pause(ctx, pause, false)
	return err
}

// retryable reports whether a failed attempt is worth another: a service
// fault, or a 429 when a budget paces the retry; never once the caller
// has given up, never an open breaker or a refusal of the budget.
func (g *guard) retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var e *Error
	if errors.As(err, &e) && e.StatusCode == http.StatusTooManyRequests {
		return g.budget != nil
	}
	return isServiceFault(err)
}

func isRateLimit(err error) bool {
	_, limited := IsRateLimited(err)
	return limited
}

// deadlineBackOff stops retrying when the next wait, plus a little time
// for the attempt itself, would pass ctx's deadline.
type deadlineBackOff struct {
	backoff.BackOff
	ctx context.Context
}

func (d deadlineBackOff) NextBackOff() time.Duration {
	next := d.BackOff.NextBackOff()
	if next == backoff.Stop {
		return next
	}
	if deadline, ok := d.ctx.Deadline(); ok && time.Until(deadline) < next+minTimeForAnotherAttempt {
		return backoff.Stop
	}
	return next
}
