package telemetry

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// A subscription lives for minutes or hours and answers with a stream of
// events, so it is observed differently from a query:
//
//   - it counts once in gateway_graphql_operations_total, when it is set
//     up, and its set-up errors (a refused cursor, a limit) in
//     gateway_graphql_errors_total; its set-up time goes to
//     gateway_graphql_subscription_setup_duration_seconds, never to the
//     queries' gateway_graphql_operation_duration_seconds;
//   - its span covers the set-up only (parsing to the resolver's return,
//     the catch-up from a cursor included) and ends there; a set-up that
//     failed adds a short error span under it;
//   - each event counts in gateway_graphql_subscription_events_total and
//     its errors in gateway_graphql_subscription_event_errors_total. An
//     event is not traced: upstream requests made to resolve it (nested
//     references) get spans of their own, not children of a set-up span
//     that ended long before;
//   - the access log's record keeps a count of events and the distinct
//     error codes, so a connection open for hours does not grow it.

// Transports of a subscription, as its metrics label them.
const (
	TransportWebSocket = "websocket"
	TransportSSE       = "sse"
	TransportMultipart = "multipart"
	TransportHTTP      = "http"
)

// subscriptionMetrics are the metrics of GraphQL subscriptions.
type subscriptionMetrics struct {
	started     *prometheus.CounterVec
	active      *prometheus.GaugeVec
	events      *prometheus.CounterVec
	eventErrors *prometheus.CounterVec
	setup       prometheus.Histogram
}

func newSubscriptionMetrics(reg prometheus.Registerer) subscriptionMetrics {
	s := subscriptionMetrics{
		started: counterVec("gateway_graphql_subscriptions_started_total",
			"GraphQL subscriptions started, by transport (websocket, sse, multipart, http); those refused at set-up included (their codes are in gateway_graphql_errors_total). A surge is clients reconnecting.",
			"transport"),
		active: gaugeVec("gateway_graphql_subscriptions_active",
			"GraphQL subscriptions open now, by transport.",
			"transport"),
		events: counterVec("gateway_graphql_subscription_events_total",
			"Events (responses) sent to GraphQL subscriptions, by transport.",
			"transport"),
		eventErrors: counterVec("gateway_graphql_subscription_event_errors_total",
			"Errors in the events of GraphQL subscriptions, by extensions.code (a subscriber dropped for being too slow ends with one).",
			"code"),
		setup: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gateway_graphql_subscription_setup_duration_seconds",
			Help:    "Time from reading a GraphQL subscription to having it set up (the catch-up from a resumed cursor included); the queries' latency is in gateway_graphql_operation_duration_seconds.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
	}
	reg.MustRegister(s.started, s.active, s.events, s.eventErrors, s.setup)
	for _, t := range []string{TransportWebSocket, TransportSSE} {
		s.started.WithLabelValues(t)
		s.active.WithLabelValues(t)
		s.events.WithLabelValues(t)
	}
	return s
}

// subscriptionStarted counts a dispatched subscription; the returned
// function, called once it ends, takes it off the open ones.
func (m *Metrics) subscriptionStarted(transport string) (ended func()) {
	if m == nil {
		return func() {}
	}
	m.subscriptions.started.WithLabelValues(transport).Inc()
	active := m.subscriptions.active.WithLabelValues(transport)
	active.Inc()
	return sync.OnceFunc(active.Dec)
}

// observeSubscriptionSetup records a subscription set up (or refused) in
// d, under its operation label.
func (m *Metrics) observeSubscriptionSetup(operation string, d time.Duration) {
	if m == nil {
		return
	}
	m.operations.WithLabelValues(operation).Inc()
	m.subscriptions.setup.Observe(d.Seconds())
}

// observeSubscriptionEvent records one event of a subscription.
func (m *Metrics) observeSubscriptionEvent(transport string, codes []string) {
	if m == nil {
		return
	}
	m.subscriptions.events.WithLabelValues(transport).Inc()
	for _, c := range codes {
		m.subscriptions.eventErrors.WithLabelValues(errorCodeLabel(c)).Inc()
	}
}

// subscription is a dispatched subscription's telemetry.
type subscription struct {
	transport string
	// events counts the responses that went through InterceptResponse;
	// the transport asks for responses one at a time.
	events int
}

// transportOf names the transport a request came by, from its headers.
func transportOf(h http.Header) string {
	switch accept := h.Get("Accept"); {
	case strings.EqualFold(h.Get("Upgrade"), "websocket"):
		return TransportWebSocket
	case strings.Contains(accept, "text/event-stream"):
		return TransportSSE
	case strings.Contains(accept, "multipart/mixed"):
		return TransportMultipart
	default:
		return TransportHTTP
	}
}

// subscribe dispatches a subscription: the resolver subscribes within
// next, so its span ends when next returns. It is open from then until
// its last event or the end of its context (the client went, the
// connection closed), whichever comes first.
func (g *GraphQL) subscribe(ctx context.Context, op *operation, opCtx *graphql.OperationContext, next graphql.OperationHandler) graphql.ResponseHandler {
	sub := &subscription{transport: transportOf(opCtx.Headers)}
	op.sub = sub
	name, _ := operationName(opCtx)
	label := g.metrics.OperationLabel(name)
	ended := g.metrics.subscriptionStarted(sub.transport)
	stop := context.AfterFunc(ctx, ended)

	handler := next(ctx)
	start := startOf(ctx, opCtx)
	setUp := time.Now()
	op.span.End(trace.WithTimestamp(setUp))
	g.metrics.observeSubscriptionSetup(label, setUp.Sub(start))
	RequestFrom(ctx).setOperation(name, nil)

	first := true
	return func(ctx context.Context) *graphql.Response {
		events := sub.events
		resp := handler(ctx)
		if resp == nil {
			stop()
			ended()
			return nil
		}
		if first && sub.events == events {
			// gqlgen answers a resolver's refusal without the
			// response interceptors, before any event.
			codes := errorCodesOf(resp)
			g.metrics.observeErrors(label, codes)
			RequestFrom(ctx).addErrorCodes(codes)
			_, span := g.tracer.Start(trace.ContextWithSpan(ctx, op.span), "subscription refused", trace.WithTimestamp(setUp))
			setErrorStatus(span, codes)
			span.End()
		}
		first = false
		return resp
	}
}

// event resolves and records one event of a subscription, detached from
// the set-up's span.
func (g *GraphQL) event(ctx context.Context, sub *subscription, next graphql.ResponseHandler) *graphql.Response {
	resp := next(trace.ContextWithSpanContext(ctx, trace.SpanContext{}))
	if resp == nil {
		return nil
	}
	sub.events++
	codes := errorCodesOf(resp)
	g.metrics.observeSubscriptionEvent(sub.transport, codes)
	RequestFrom(ctx).addEvent(codes)
	return resp
}
