package graph

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/graph-gophers/dataloader/v7"
)

// panicLogger is the logger of recovered panics outside resolvers (in
// loaders, transports), set by NewHandler.
type panicLoggerKey struct{}

func withPanicLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, panicLoggerKey{}, l)
}

func panicLoggerFor(ctx context.Context) *slog.Logger {
	if logger, _ := ctx.Value(panicLoggerKey{}).(*slog.Logger); logger != nil {
		return logger
	}
	return slog.Default()
}

// panicError logs a recovered panic (logPanic) and returns the INTERNAL
// error that replaces it: the client sees no internals, the process keeps
// serving.
func panicError(ctx context.Context, where string, p any) error {
	logPanic(ctx, where, p)
	return &Error{Code: CodeInternal, Message: "internal error", Err: fmt.Errorf("panic in %s: %v", where, p)}
}

// panicSites are the places a panic was raised at, logged with their
// stack once each.
var panicSites sync.Map

// logPanic logs a recovered panic once per request, as one line naming
// where it was raised; the stack goes with the first panic raised at that
// place, so that a request that panics on every call does not fill the
// log with stacks. Call it from the deferred function that recovered.
func logPanic(ctx context.Context, where string, p any) {
	site := panicSite()
	attrs := []any{"panic", fmt.Sprint(p), "at", site}
	if _, seen := panicSites.LoadOrStore(site, true); !seen {
		attrs = append(attrs, "stack", string(debug.Stack()))
	}
	panicLoggerFor(ctx).ErrorContext(ctx, "panic in "+where, attrs...)
}

// panicSite is the function and line that raised the panic being
// recovered: the first frame after the runtime's panic machinery.
func panicSite() string {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	panicking := false
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "runtime.") {
			if f.Function == "runtime.gopanic" || strings.HasPrefix(f.Function, "runtime.panic") || strings.HasPrefix(f.Function, "runtime.sigpanic") {
				panicking = true
			}
		} else if panicking {
			return fmt.Sprintf("%s:%d", f.Function, f.Line)
		}
		if !more {
			return "unknown"
		}
	}
}

// recoverBatch wraps a batch function so that a panic in it gives every
// key an INTERNAL error, logged (dataloader recovers batch panics too, but
// drops where it was raised).
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
