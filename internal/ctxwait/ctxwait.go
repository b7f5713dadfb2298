// Package ctxwait holds waits bounded by a context: those the rate budgets
// make (upstream's in-process one, redisstate's shared one), and the
// periodic work of background loops (Every).
package ctxwait

import (
	"context"
	"time"
)

// Outlasts reports whether waiting d from now would pass ctx's deadline.
func Outlasts(ctx context.Context, now time.Time, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ok && now.Add(d).After(deadline)
}

// Sleep waits for d or until ctx ends, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Every calls f every d (the first time d from now) until ctx ends.
func Every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
