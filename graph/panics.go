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

// panicLog is where an executor logs recovered panics: its logger, and the
// places panics were raised at, whose stack it logged (once each).
type panicLog struct {
	logger *slog.Logger
	sites  sync.Map
}

func newPanicLog(l *slog.Logger) *panicLog { return &panicLog{logger: l} }

// withPanicLog puts the executor's panic log in the context of each request
// (resolvers, loaders, transports).
func withPanicLog(ctx context.Context, l *panicLog) context.Context {
	return withValue(ctx, l)
}

var defaultPanicLog = newPanicLog(nil)

func panicLogFor(ctx context.Context) *panicLog {
	if l := valueOf[panicLog](ctx); l != nil {
		return l
	}
	return defaultPanicLog
}

// DetachPanicLog is a background context (no deadline, no cancellation,
// no other value) carrying ctx's panic log: for work a request starts that
// outlives it (a timer), whose panics go to the same log.
func DetachPanicLog(ctx context.Context) context.Context {
	return withPanicLog(context.Background(), panicLogFor(ctx))
}

// panicError logs a recovered panic (LogPanic) and returns the INTERNAL
// error that replaces it: the client sees no internals, the process keeps
// serving.
func panicError(ctx context.Context, where string, p any) error {
	LogPanic(ctx, where, p)
	return &Error{Code: CodeInternal, Message: "internal error", Err: fmt.Errorf("panic in %s: %v", where, p)}
}

// LogPanic logs a recovered panic once per request, as one line naming
// where it was raised; the stack goes with the first panic raised at that
// place, so that a request that panics on every call does not fill the
// log with stacks. Call it from the deferred function that recovered.
func LogPanic(ctx context.Context, where string, p any) {
	log := panicLogFor(ctx)
	site := panicSite()
	attrs := []any{"panic", fmt.Sprint(p), "at", site}
	if _, seen := log.sites.LoadOrStore(site, true); !seen {
		attrs = append(attrs, "stack", string(debug.Stack()))
	}
	logger := log.logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.ErrorContext(ctx, "panic in "+where, attrs...)
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
