// Package ctxwait holds the waits the rate budgets make (upstream's
// in-process one, redisstate's shared one): bounded by a context.
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
