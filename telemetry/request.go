package telemetry

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tradenet/gateway/upstream"
)

// Request is what one HTTP request's access log line learns from the
// layers below it: the GraphQL operation, its error codes, and how many
// upstream requests it caused. Safe for concurrent use.
type Request struct {
	upstreamCalls atomic.Int64
	events        atomic.Int64

	mu        sync.Mutex
	operation string
	graphql   bool
	codes     []string
	traceID   string
}

type requestKey struct{}

// WithRequest starts a request's record and returns the context that
// carries it, down to the upstream client (which counts its requests).
func WithRequest(ctx context.Context) (context.Context, *Request) {
	r := &Request{}
	ctx = context.WithValue(ctx, requestKey{}, r)
	return upstream.WithCallCounter(ctx, &r.upstreamCalls), r
}

// RequestFrom returns ctx's record, or nil.
func RequestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// maxLoggedName bounds an operation name in the log (names come from
// clients).
const maxLoggedName = 200

// truncate bounds a client-chosen name for logs and spans.
func truncate(name string) string {
	if len(name) > maxLoggedName {
		return name[:maxLoggedName] + "…"
	}
	return name
}

// setOperation records the GraphQL operation's name ("" if unnamed) and
// its error codes.
func (r *Request) setOperation(name string, codes []string) {
	if r == nil {
		return
	}
	name = truncate(name)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.graphql = true
	r.operation = name
	// A WebSocket connection may run operations for hours: the record
	// keeps the first maxLoggedCodes codes.
	r.codes = append(r.codes, codes[:min(len(codes), max(0, maxLoggedCodes-len(r.codes)))]...)
}

// maxLoggedCodes bounds the error codes a request's record keeps.
const maxLoggedCodes = 64

// addEvent counts a subscription event and notes its error codes, each
// code once.
func (r *Request) addEvent(codes []string) {
	if r == nil {
		return
	}
	r.events.Add(1)
	if len(codes) > 0 {
		r.addErrorCodes(codes)
	}
}

// addErrorCodes notes codes not noted yet, within maxLoggedCodes.
func (r *Request) addErrorCodes(codes []string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range codes {
		if len(r.codes) < maxLoggedCodes && !slices.Contains(r.codes, c) {
			r.codes = append(r.codes, c)
		}
	}
}

// SubscriptionEvents is the number of subscription events the request
// answered (its WebSocket connection's or SSE stream's).
func (r *Request) SubscriptionEvents() int64 { return r.events.Load() }

// GraphQL reports whether the request reached the GraphQL executor, and
// the operation's name ("" when unnamed or never parsed).
func (r *Request) GraphQL() (operation string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.operation, r.graphql
}

// TraceID is the trace the operation's span belongs to, "" when the
// request was not traced.
func (r *Request) TraceID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.traceID
}

// setTraceID records the operation's trace.
func (r *Request) setTraceID(id string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.traceID = id
}

// ErrorCodes are the extensions.code of the response's errors, in order
// (at most maxLoggedCodes); a subscription's events add each of theirs
// once.
func (r *Request) ErrorCodes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.codes...)
}

// UpstreamCalls is the number of upstream HTTP requests the request
// caused (retries included; a request coalesced with another's counts for
// the one that sent it).
func (r *Request) UpstreamCalls() int64 { return r.upstreamCalls.Load() }
