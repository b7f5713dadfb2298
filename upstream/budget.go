package upstream

import (
	"context"
	"time"
)

// Budget is the client-side rate budget towards the data node, shared by
// every request of the gateway (and, with a shared implementation, by every
// replica): the data node bans an address that keeps calling while rate
// limited (docs/wire.md, Rate limit and ban), so the gateway must stay
// inside its limit and stop calling on a 429 or a ban. The explorer has no
// rate limit and no budget.
//
// Config.Budget nil means no budget.
type Budget interface {
	// Wait blocks until one request may be sent. It returns an error when
	// ctx ends first, or at once (a *BudgetError) when the budget is
	// paused past ctx's deadline, e.g. banned: callers answer
	// RATE_LIMITED then, without calling the upstream.
	Wait(ctx context.Context) error
	// Pause stops every request for d: after a 429 (banned false), or a
	// ban answered 403 with Ratelimit-Retry-After (banned true).
	Pause(ctx context.Context, d time.Duration, banned bool)
}

// BudgetError is returned when the rate budget refuses a request: the
// data node limited or banned this address, and the gateway waits until
// RetryAfter rather than risk (a longer) ban.
type BudgetError struct {
	RetryAfter time.Duration
	Banned     bool
	// Service is the service whose budget refused (the client's calls
	// set it); empty reads as the data node.
	Service Service
}

func (e *BudgetError) Error() string {
	if e.Banned {
		return "the data node banned this gateway's address; no requests for " + e.RetryAfter.Round(time.Second).String()
	}
	name := "data node"
	if e.Service == ServiceExplorer {
		name = "block explorer"
	}
	return "the " + name + "'s rate budget is spent; retry in " + e.RetryAfter.Round(time.Millisecond).String()
}
