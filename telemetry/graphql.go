package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/tradenet/gateway/upstream"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// GraphQL is the gqlgen extension that observes every GraphQL request:
// a span per operation (the parent of the upstream requests' spans),
// operation metrics (count, duration, errors by code, by operation name)
// and the access log's record. Add it before any other extension so that
// it sees each response whole.
type GraphQL struct {
	metrics *Metrics
	tracer  trace.Tracer
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = (*GraphQL)(nil)

// NewGraphQL returns the extension; nil metrics records none and a nil
// provider traces nothing.
func NewGraphQL(m *Metrics, tp trace.TracerProvider) *GraphQL {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return &GraphQL{metrics: m, tracer: tp.Tracer(tracerName)}
}

// tracerName names the gateway's own tracer.
const tracerName = "github.com/tradenet/gateway"

// ExtensionName names the extension for gqlgen.
func (*GraphQL) ExtensionName() string { return "Telemetry" }

// Validate accepts any schema.
func (*GraphQL) Validate(graphql.ExecutableSchema) error { return nil }

// operation is a dispatched operation's telemetry, carried in its
// context from InterceptOperation to InterceptResponse.
type operation struct {
	span trace.Span
	// sub is set for a subscription: its responses are events.
	sub *subscription

	// Parts of an incremental (@defer) response before the last: their
	// error codes wait to be observed with the last part's.
	mu       sync.Mutex
	codes    []string
	observed bool

	// calls counts the upstream requests the operation sent (not its
	// answers from a cache or a call another request had in flight).
	calls atomic.Int64

	spanEnded sync.Once
	waiting   bool // for the request's end to end the operation
}

type operationKey struct{}

// InterceptOperation starts the operation's span, named by its type and
// name ("query Assets"), from the moment the request was read. A query's
// or mutation's span ends once its response is complete (the last part of
// a @defer response); a subscription's once it is set up (subscribe).
func (g *GraphQL) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	name, kind := operationName(opCtx)
	spanName := kind
	if name != "" {
		spanName += " " + truncate(name)
	}
	ctx, span := g.tracer.Start(ctx, spanName,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(startOf(ctx, opCtx)),
		trace.WithAttributes(
			attribute.String("graphql.operation.type", kind),
			attribute.String("graphql.operation.name", truncate(name)),
		))
	op := &operation{span: span}
	ctx = context.WithValue(ctx, operationKey{}, op)
	if sc := span.SpanContext(); sc.IsSampled() {
		RequestFrom(ctx).setTraceID(sc.TraceID().String())
	}
	if kind == string(ast.Subscription) {
		return g.subscribe(ctx, op, opCtx, next)
	}
	ctx = upstream.WithCallCounter(ctx, &op.calls)
	handler := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := handler(ctx)
		if !hasNext(resp) {
			op.endSpan()
			return resp
		}
		// More parts follow (@defer). The transport asks for them until
		// the last, unless the client goes: the request's end is then
		// the operation's.
		if !op.waiting {
			op.waiting = true
			context.AfterFunc(ctx, func() {
				g.finish(ctx, op, opCtx, nil)
				op.endSpan()
			})
		}
		return resp
	}
}

// endSpan ends the operation's span, once.
func (op *operation) endSpan() { op.spanEnded.Do(func() { op.span.End() }) }

// hasNext reports whether more parts of an incremental response follow
// resp.
func hasNext(resp *graphql.Response) bool {
	return resp != nil && resp.HasNext != nil && *resp.HasNext
}

// InterceptResponse records every response, including those refused
// before an operation existed (parse and validation errors, unknown
// persisted queries), which get a span of their own. The parts of an
// incremental (@defer) response are one operation, recorded with the
// last; a subscription's events are counted as events (subscriptions.go).
func (g *GraphQL) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	op, dispatched := ctx.Value(operationKey{}).(*operation)
	if dispatched && op.sub != nil {
		return g.event(ctx, op.sub, next)
	}
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	opCtx := graphql.GetOperationContext(ctx)
	codes := errorCodesOf(resp)
	if !dispatched {
		// Refused before dispatch: a span for the request alone.
		name, _ := operationName(opCtx)
		g.metrics.ObserveOperation(NoOperation, time.Since(startOf(ctx, opCtx)), codes)
		RequestFrom(ctx).setOperation(name, codes)
		_, span := g.tracer.Start(ctx, "graphql request", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(startOf(ctx, opCtx)))
		setErrorStatus(span, codes)
		span.End()
		return resp
	}
	if hasNext(resp) {
		op.mu.Lock()
		op.codes = append(op.codes, codes...)
		op.mu.Unlock()
		return resp
	}
	g.finish(ctx, op, opCtx, codes)
	return resp
}

// finish records a dispatched query or mutation once: its last response's
// error codes with those of the parts before it.
func (g *GraphQL) finish(ctx context.Context, op *operation, opCtx *graphql.OperationContext, last []string) {
	op.mu.Lock()
	if op.observed {
		op.mu.Unlock()
		return
	}
	op.observed = true
	codes := append(op.codes, last...)
	op.mu.Unlock()
	name, _ := operationName(opCtx)
	// Only an operation that parsed, validated and passed the limits
	// takes a label of its own (OperationLabel).
	label := g.metrics.OperationLabel(name)
	g.metrics.ObserveOperation(label, time.Since(startOf(ctx, opCtx)), codes)
	g.metrics.observeOperationUpstream(label, op.calls.Load())
	RequestFrom(ctx).setOperation(name, codes)
	setErrorStatus(op.span, codes)
}

// errorCodesOf returns the extensions.code of resp's errors, in order
// ("" for an error without one).
func errorCodesOf(resp *graphql.Response) []string {
	codes := make([]string, 0, len(resp.Errors))
	for _, e := range resp.Errors {
		c, _ := e.Extensions["code"].(string)
		codes = append(codes, c)
	}
	return codes
}

// setErrorStatus marks span as failed when its response had errors.
func setErrorStatus(span trace.Span, codes []string) {
	if len(codes) > 0 {
		span.SetAttributes(attribute.StringSlice("graphql.error.codes", codes))
		span.SetStatus(otelcodes.Error, codes[0])
	}
}

// operationName returns the operation's name ("" when unnamed) and type
// ("query"; "" when the request never got to an operation).
func operationName(opCtx *graphql.OperationContext) (name, kind string) {
	if opCtx == nil || opCtx.Operation == nil {
		return "", ""
	}
	return opCtx.Operation.Name, string(opCtx.Operation.Operation)
}

// startOf is when the request was read, as gqlgen's transports note it.
func startOf(ctx context.Context, opCtx *graphql.OperationContext) time.Time {
	if opCtx != nil && !opCtx.Stats.OperationStart.IsZero() {
		return opCtx.Stats.OperationStart
	}
	if t := graphql.GetStartTime(ctx); !t.IsZero() {
		return t
	}
	return time.Now()
}
