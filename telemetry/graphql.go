package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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

type operationSpanKey struct{}

// InterceptOperation starts the operation's span, named by its type and
// name ("query Assets"), from the moment the request was read, and ends
// it once the response is complete.
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
	ctx = context.WithValue(ctx, operationSpanKey{}, span)
	if sc := span.SpanContext(); sc.IsSampled() {
		RequestFrom(ctx).setTraceID(sc.TraceID().String())
	}
	handler := next(ctx)
	var end sync.Once
	return func(ctx context.Context) *graphql.Response {
		resp := handler(ctx)
		end.Do(func() { span.End() })
		return resp
	}
}

// InterceptResponse records every response, including those refused
// before an operation existed (parse and validation errors, unknown
// persisted queries), which get a span of their own.
func (g *GraphQL) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	opCtx := graphql.GetOperationContext(ctx)
	name, _ := operationName(opCtx)
	span, dispatched := ctx.Value(operationSpanKey{}).(trace.Span)
	label := NoOperation
	if dispatched {
		// Only an operation that parsed, validated and passed the
		// limits takes a label of its own (OperationLabel).
		label = g.metrics.OperationLabel(name)
	}
	errCodes := make([]string, 0, len(resp.Errors))
	for _, e := range resp.Errors {
		c, _ := e.Extensions["code"].(string)
		errCodes = append(errCodes, c)
	}
	start := startOf(ctx, opCtx)
	g.metrics.ObserveOperation(label, time.Since(start), errCodes)
	RequestFrom(ctx).setOperation(name, errCodes)

	if !dispatched {
		// Refused before dispatch: a span for the request alone.
		_, span = g.tracer.Start(ctx, "graphql request", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
		defer span.End()
	}
	if len(errCodes) > 0 {
		span.SetAttributes(attribute.StringSlice("graphql.error.codes", errCodes))
		span.SetStatus(codes.Error, errCodes[0])
	}
	return resp
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
