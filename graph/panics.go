package graph

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/graph-gophers/dataloader/v7"
)

// panicLogger is the logger of recovered panics outside resolvers (in
// loaders), set by NewHandler.
type panicLoggerKey struct{}

func withPanicLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, panicLoggerKey{}, l)
}

// panicError logs a recovered panic with its stack and returns the
// INTERNAL error that replaces it: the client sees no internals, the
// process keeps serving.
func panicError(ctx context.Context, where string, p any) error {
	logger, _ := ctx.Value(panicLoggerKey{}).(*slog.Logger)
	if logger == nil {
		logger = slog.Default()
	}
	logger.ErrorContext(ctx, "panic in "+where, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return &Error{Code: CodeInternal, Message: "internal error", Err: fmt.Errorf("panic in %s: %v", where, p)}
}

// recoverBatch wraps a batch function so that a panic in it gives every
// key an INTERNAL error, logged with the stack (dataloader recovers batch
// panics too, but drops the stack).
func recoverBatch[K comparable, V any](fn dataloader.BatchFunc[K, V]) dataloader.BatchFunc[K, V] {
	return func(ctx context.Context, keys []K) (results []*dataloader.Result[V]) {
		defer func() {
			if p := recover(); p != nil {
				err := panicError(ctx, "loader batch", p)
				results = make([]*dataloader.Result[V], len(keys))
				for i := range results {
					results[i] = &dataloader.Result[V]{Error: err}
				}
			}
		}()
		return fn(ctx, keys)
	}
}
