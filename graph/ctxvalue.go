package graph

import "context"

// ctxKey is the context key of the *T a request carries (its asset
// rounds, deferred fields, live operation, WebSocket connection, request
// state, panic log, splice): one of each type.
type ctxKey[T any] struct{}

// withValue returns ctx carrying v, which valueOf[T] returns.
func withValue[T any](ctx context.Context, v *T) context.Context {
	return context.WithValue(ctx, ctxKey[T]{}, v)
}

// valueOf is the *T ctx carries, or nil.
func valueOf[T any](ctx context.Context) *T {
	v, _ := ctx.Value(ctxKey[T]{}).(*T)
	return v
}
