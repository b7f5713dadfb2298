package upstream

import "context"

type clientKey struct{}

// WithClient returns ctx marked as acting for the client key (an address,
// or a network prefix: the gateway's HTTP middleware decides). FairBudget
// shares the rate budget between keys in turn.
//
// Upstream calls are coalesced (coalesce.go): a call shared by several
// requests runs with its first caller's context, and so waits in its first
// caller's queue. That is acceptable: the others ride along for free, and
// the call is made once whoever made it.
func WithClient(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, clientKey{}, key)
}

// ClientFrom returns the client key WithClient put in ctx, or "" when
// none was set (background work: pollers, readiness checks), which is a
// client key of its own.
func ClientFrom(ctx context.Context) string {
	key, _ := ctx.Value(clientKey{}).(string)
	return key
}
