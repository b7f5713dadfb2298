package upstream

import (
	"context"
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

type callCounterKey struct{}

// callCounters are a context's counters: its own and those of the
// contexts it was derived from.
type callCounters struct {
	n      *atomic.Int64
	parent *callCounters
}

// WithCallCounter returns a context whose upstream requests are counted in
// n, and in the counters ctx already has (an HTTP request's, then one of
// its operations'): each HTTP request sent (retries included) adds one. A
// request coalesced with an identical one in flight, or answered from the
// cache, counts for the caller that sent it.
func WithCallCounter(ctx context.Context, n *atomic.Int64) context.Context {
	parent, _ := ctx.Value(callCounterKey{}).(*callCounters)
	return context.WithValue(ctx, callCounterKey{}, &callCounters{n: n, parent: parent})
}

func countCall(ctx context.Context) {
	c, _ := ctx.Value(callCounterKey{}).(*callCounters)
	for ; c != nil; c = c.parent {
		c.n.Add(1)
	}
}

// tracerName names this package's tracer.
const tracerName = "github.com/tradenet/gateway/upstream"

// traceContext is the W3C trace context propagator: the upstream receives
// traceparent (and tracestate) headers naming the request's span.
var traceContext = propagation.TraceContext{}

// startSpan starts the client span of one HTTP request to the upstream, a
// child of ctx's span, and puts its trace context in header. Without a
// tracer provider, or a span in ctx to be part of (a readiness probe's
// request, say), it does nothing: upstream requests are traced as parts
// of the operations that cause them.
func (c *Client) startSpan(ctx context.Context, r route, target string, header http.Header) (context.Context, trace.Span) {
	if c.tracer == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil
	}
	ctx, span := c.tracer.Start(ctx, "GET "+string(r.service)+" "+string(r.endpoint),
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("http.request.method", http.MethodGet),
			attribute.String("url.full", target),
			attribute.String("upstream.service", string(r.service)),
			attribute.String("upstream.endpoint", string(r.endpoint)),
		))
	traceContext.Inject(ctx, propagation.HeaderCarrier(header))
	return ctx, span
}

// endSpan ends a span started by startSpan with the request's outcome.
func endSpan(span trace.Span, info RequestInfo) {
	if span == nil {
		return
	}
	if info.StatusCode != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", info.StatusCode))
	}
	if info.Err != nil {
		span.RecordError(info.Err)
		span.SetStatus(codes.Error, info.Err.Error())
	}
	span.End()
}

func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(tracerName)
}
