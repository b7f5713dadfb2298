package telemetry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/tradenet/gateway/telemetry"
)

// tinySchema is an executable schema of a query, a query with a deferred
// part, and a subscription whose events the test sends (ticks). Its
// resolvers start a span where an upstream request would, so the tests
// see which span they belong to.
type tinySchema struct {
	schema *ast.Schema
	tracer trace.Tracer
	ticks  chan tick
}

// tick is an event the test sends to the subscription; code, if set, is
// the code of an error the event carries.
type tick struct {
	n    int
	code string
}

func newTinySchema(tp trace.TracerProvider) *tinySchema {
	return &tinySchema{
		schema: gqlparser.MustLoadSchema(&ast.Source{Input: `
			type Query { ping: String, slow: String }
			type Subscription { ticks(refuse: Boolean): Int! }
		`}),
		tracer: tp.Tracer("upstream"),
		ticks:  make(chan tick),
	}
}

func (s *tinySchema) executable() graphql.ExecutableSchema {
	return &graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return s.schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 1, false },
		ExecFunc:       s.exec,
	}
}

func (s *tinySchema) upstream(ctx context.Context, name string) {
	_, span := s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
	span.End()
}

func codeError(code string) *gqlerror.Error {
	return &gqlerror.Error{Message: "failed: " + code, Extensions: map[string]any{"code": code}}
}

func (s *tinySchema) exec(ctx context.Context) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	s.upstream(ctx, "set-up request")
	if opCtx.Operation.Operation == ast.Subscription {
		if refuse, _ := opCtx.Variables["refuse"].(bool); refuse {
			graphql.AddError(ctx, codeError("BAD_USER_INPUT"))
			return nil
		}
		return func(ctx context.Context) *graphql.Response {
			select {
			case t, ok := <-s.ticks:
				if !ok {
					return nil
				}
				s.upstream(ctx, "event request")
				if t.code != "" {
					graphql.AddError(ctx, codeError(t.code))
				}
				return &graphql.Response{Data: fmt.Appendf(nil, `{"ticks":%d}`, t.n)}
			case <-ctx.Done():
				return nil
			}
		}
	}
	// A query: with a deferred part when it is named Deferred, as
	// gqlgen's generated code answers @defer.
	parts := []*graphql.Response{{Data: []byte(`{"ping":"pong"}`)}}
	if opCtx.Operation.Name == "Deferred" {
		more, last := true, false
		parts = []*graphql.Response{
			{Data: []byte(`{"ping":"pong"}`), HasNext: &more},
			{Data: []byte(`{"slow":null}`), Path: ast.Path{}, HasNext: &last, Errors: gqlerror.List{codeError("NOT_FOUND")}},
		}
	}
	return func(context.Context) *graphql.Response {
		if len(parts) == 0 {
			return nil
		}
		p := parts[0]
		parts = parts[1:]
		return p
	}
}

// endSignal is an extension outside the telemetry one: it says when an
// operation's response handler gave its last response (nil), so by then
// the telemetry extension has seen the end of it too.
type endSignal chan string

func (endSignal) ExtensionName() string                   { return "EndSignal" }
func (endSignal) Validate(graphql.ExecutableSchema) error { return nil }
func (e endSignal) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	name := graphql.GetOperationContext(ctx).Operation.Name
	handler := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := handler(ctx)
		if resp == nil {
			e <- name
		}
		return resp
	}
}

// subscribable is a GraphQL server of the tiny schema over WebSocket, SSE
// and multipart/mixed, with the telemetry extension recording into
// metrics and a span recorder, and each request's record kept.
type subscribable struct {
	URL      string
	schema   *tinySchema
	metrics  *telemetry.Metrics
	recorder *tracetest.SpanRecorder
	ended    endSignal
	records  chan *telemetry.Request
	server   *httptest.Server
}

func startSubscribable(t *testing.T) *subscribable {
	t.Helper()
	s := &subscribable{metrics: telemetry.NewMetrics(), recorder: tracetest.NewSpanRecorder(), ended: make(endSignal, 8), records: make(chan *telemetry.Request, 8)}
	tracing := telemetry.NewTracingWith(telemetry.TracingOptions{ServiceName: "test", SampleRatio: 1}, sdktrace.WithSpanProcessor(s.recorder))
	s.schema = newTinySchema(tracing.Provider)
	srv := handler.New(s.schema.executable())
	srv.AddTransport(transport.Websocket{InitTimeout: time.Minute})
	srv.AddTransport(transport.SSE{})
	srv.AddTransport(transport.MultipartMixed{})
	srv.AddTransport(transport.POST{})
	srv.Use(s.ended)
	srv.Use(telemetry.NewGraphQL(s.metrics, tracing.Provider))
	s.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, rec := telemetry.WithRequest(r.Context())
		srv.ServeHTTP(w, r.WithContext(ctx))
		s.records <- rec
	}))
	s.URL = s.server.URL
	return s
}

// close stops the server and the tracer (before goleak looks).
func (s *subscribable) close() {
	s.server.CloseClientConnections()
	s.server.Close()
	_ = s.recorder.Shutdown(context.Background())
}

func (s *subscribable) expectEnd(t *testing.T, op string) {
	t.Helper()
	select {
	case got := <-s.ended:
		if got != op {
			t.Fatalf("operation %q ended, want %q", got, op)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("operation %q did not end", op)
	}
}

func (s *subscribable) record(t *testing.T) *telemetry.Request {
	t.Helper()
	select {
	case r := <-s.records:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not end")
		return nil
	}
}

func (s *subscribable) send(t *testing.T, ev tick) {
	t.Helper()
	select {
	case s.schema.ticks <- ev:
	case <-time.After(10 * time.Second):
		t.Fatalf("the subscription did not take event %d", ev.n)
	}
}

// metricsHave checks that the exposition has every one of want, each a
// whole line.
func metricsHave(t *testing.T, m *telemetry.Metrics, when string, want ...string) string {
	t.Helper()
	text := gather(t, m)
	for _, w := range want {
		if !strings.Contains(text, "\n"+w+"\n") {
			t.Errorf("%s: no %q in:\n%s", when, w, text)
		}
	}
	return text
}

func spansNamed(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// sseStream is a subscription over Server-Sent Events.
type sseStream struct {
	resp *http.Response
	r    *bufio.Reader
}

func subscribeSSE(t *testing.T, client *http.Client, url, body string) *sseStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
}

// next reads the next event: its type and data ("" for none).
func (s *sseStream) next(t *testing.T) (event, data string) {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (event %q so far)", err, event)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && event != "":
			return event, data
		}
	}
}

// A subscription over SSE counts once as an operation, never in the
// queries' latency; its span ends at set-up, before any event; its
// events and their errors have metrics of their own; the request's
// record counts the events and keeps each code once.
func TestSubscriptionIsOneOperationAndItsEvents(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := startSubscribable(t)
	defer s.close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	stream := subscribeSSE(t, client, s.URL, `{"query":"subscription Ticks { ticks }"}`)
	defer stream.resp.Body.Close()
	events := []tick{{n: 1}, {n: 2, code: "UPSTREAM_ERROR"}, {n: 3}, {n: 4, code: "UPSTREAM_ERROR"}}
	for _, ev := range events {
		s.send(t, ev)
		kind, data := stream.next(t)
		if want := fmt.Sprintf(`"data":{"ticks":%d}`, ev.n); kind != "next" || !strings.Contains(data, want) {
			t.Fatalf("event %q %s, want next with %s", kind, data, want)
		}
	}
	// Open, with four events delivered.
	text := metricsHave(t, s.metrics, "open",
		`gateway_graphql_subscriptions_started_total{transport="sse"} 1`,
		`gateway_graphql_subscriptions_active{transport="sse"} 1`,
		`gateway_graphql_subscriptions_active{transport="websocket"} 0`,
		`gateway_graphql_subscription_events_total{transport="sse"} 4`,
		`gateway_graphql_subscription_event_errors_total{code="UPSTREAM_ERROR"} 2`,
		`gateway_graphql_operations_total{operation="Ticks"} 1`,
		"gateway_graphql_subscription_setup_duration_seconds_count 1",
	)
	if strings.Contains(text, `gateway_graphql_operation_duration_seconds_count{operation="Ticks"}`) || strings.Contains(text, `gateway_graphql_errors_total{`) {
		t.Errorf("the subscription is in the queries' latency or errors:\n%s", text)
	}
	ended := s.recorder.Ended()
	setUp := spansNamed(ended, "subscription Ticks")
	if len(setUp) != 1 {
		t.Fatalf("%d ended spans named \"subscription Ticks\" while it is open, want its set-up's", len(setUp))
	}
	if setUp[0].Status().Code.String() == "Error" {
		t.Errorf("set-up span status %v", setUp[0].Status())
	}
	if calls := spansNamed(ended, "set-up request"); len(calls) != 1 || calls[0].Parent().SpanID() != setUp[0].SpanContext().SpanID() {
		t.Errorf("the set-up's upstream request is not the set-up span's child: %d spans", len(calls))
	}
	calls := spansNamed(ended, "event request")
	if len(calls) != len(events) {
		t.Fatalf("%d event requests, want %d", len(calls), len(events))
	}
	for _, c := range calls {
		if c.Parent().IsValid() {
			t.Errorf("an event's upstream request has parent %v: events are detached from the set-up span", c.Parent().SpanID())
		}
	}

	close(s.schema.ticks) // the feed ends: the subscription completes
	if kind, _ := stream.next(t); kind != "complete" {
		t.Errorf("after the last event: %q, want complete", kind)
	}
	s.expectEnd(t, "Ticks")
	metricsHave(t, s.metrics, "ended",
		`gateway_graphql_subscriptions_active{transport="sse"} 0`,
		`gateway_graphql_subscriptions_started_total{transport="sse"} 1`,
	)
	rec := s.record(t)
	if op, ok := rec.GraphQL(); !ok || op != "Ticks" {
		t.Errorf("record: operation %q, %v", op, ok)
	}
	if n := rec.SubscriptionEvents(); n != int64(len(events)) {
		t.Errorf("record: %d events, want %d", n, len(events))
	}
	if codes := rec.ErrorCodes(); !slices.Equal(codes, []string{"UPSTREAM_ERROR"}) {
		t.Errorf("record: codes %v, want each code once", codes)
	}
}

// A subscription over WebSocket whose client goes away is no longer
// counted as open; several on one connection count each.
func TestWebSocketSubscriptionsEndWithTheirConnection(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := startSubscribable(t)
	defer s.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http"), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	write := func(msg string) {
		t.Helper()
		if err := conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() (kind, id, payload string) {
		t.Helper()
		_, b, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Type    string          `json:"type"`
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(b, &msg); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return msg.Type, msg.ID, string(msg.Payload)
	}
	write(`{"type":"connection_init"}`)
	if kind, _, _ := read(); kind != "connection_ack" {
		t.Fatalf("%q, want connection_ack", kind)
	}
	write(`{"type":"subscribe","id":"a","payload":{"query":"subscription Ticks { ticks }"}}`)
	write(`{"type":"subscribe","id":"b","payload":{"query":"subscription Ticks { ticks }"}}`)
	// Both are set up before the events are sent: else the first may
	// take both while the second is still starting.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(gather(t, s.metrics), "\n"+`gateway_graphql_subscriptions_active{transport="websocket"} 2`+"\n"); {
		if time.Now().After(deadline) {
			t.Fatal("the two subscriptions did not both start within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Two events (the subscriptions share the tiny schema's channel:
	// either may take each).
	for n := range 2 {
		s.send(t, tick{n: n})
		if kind, id, payload := read(); kind != "next" || (id != "a" && id != "b") || !strings.Contains(payload, `"ticks"`) {
			t.Fatalf("%q %q %s, want next for a or b", kind, id, payload)
		}
	}
	metricsHave(t, s.metrics, "open",
		`gateway_graphql_subscriptions_started_total{transport="websocket"} 2`,
		`gateway_graphql_subscriptions_active{transport="websocket"} 2`,
		`gateway_graphql_subscription_events_total{transport="websocket"} 2`,
		`gateway_graphql_operations_total{operation="Ticks"} 2`,
	)

	conn.CloseNow() // the client goes without a word
	s.expectEnd(t, "Ticks")
	s.expectEnd(t, "Ticks")
	metricsHave(t, s.metrics, "after the client went",
		`gateway_graphql_subscriptions_active{transport="websocket"} 0`,
		`gateway_graphql_subscriptions_started_total{transport="websocket"} 2`,
	)
	if rec := s.record(t); rec.SubscriptionEvents() != 2 {
		t.Errorf("the connection's record: %d events, want 2", rec.SubscriptionEvents())
	}
}

// A subscription its resolver refuses (a bad cursor, a limit) counts as
// an operation with its error, ends at once, and its set-up span has an
// error child.
func TestSubscriptionRefusedAtSetUp(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := startSubscribable(t)
	defer s.close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	stream := subscribeSSE(t, client, s.URL, `{"query":"subscription Ticks($refuse: Boolean) { ticks(refuse: $refuse) }","variables":{"refuse":true}}`)
	defer stream.resp.Body.Close()
	if kind, data := stream.next(t); kind != "next" || !strings.Contains(data, `"BAD_USER_INPUT"`) {
		t.Fatalf("%q %s, want the refusal", kind, data)
	}
	s.expectEnd(t, "Ticks")
	metricsHave(t, s.metrics, "refused",
		`gateway_graphql_operations_total{operation="Ticks"} 1`,
		`gateway_graphql_errors_total{code="BAD_USER_INPUT",operation="Ticks"} 1`,
		`gateway_graphql_subscriptions_active{transport="sse"} 0`,
		`gateway_graphql_subscription_events_total{transport="sse"} 0`,
	)
	stream.resp.Body.Close()
	if codes := s.record(t).ErrorCodes(); !slices.Equal(codes, []string{"BAD_USER_INPUT"}) {
		t.Errorf("record: codes %v", codes)
	}
	ended := s.recorder.Ended()
	setUp, refused := spansNamed(ended, "subscription Ticks"), spansNamed(ended, "subscription refused")
	if len(setUp) != 1 || len(refused) != 1 {
		t.Fatalf("%d set-up spans and %d refusal spans, want 1 and 1", len(setUp), len(refused))
	}
	if refused[0].Parent().SpanID() != setUp[0].SpanContext().SpanID() || refused[0].Status().Code.String() != "Error" {
		t.Errorf("refusal span: parent %v status %v, want an error under the set-up span", refused[0].Parent().SpanID(), refused[0].Status())
	}
}

// A query with a deferred part is one operation: observed once, with the
// errors of every part, and one span that ends with the last part.
func TestDeferredQueryIsOneOperation(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := startSubscribable(t)
	defer s.close()
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(`{"query":"query Deferred { ping ... @defer { slow } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "multipart/mixed")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
	resp.Body.Close()
	if !strings.Contains(body.String(), `"slow":null`) || !strings.Contains(body.String(), "NOT_FOUND") {
		t.Fatalf("response without its deferred part:\n%s", body.String())
	}
	s.expectEnd(t, "Deferred")
	metricsHave(t, s.metrics, "deferred",
		`gateway_graphql_operations_total{operation="Deferred"} 1`,
		`gateway_graphql_operation_duration_seconds_count{operation="Deferred"} 1`,
		`gateway_graphql_errors_total{code="NOT_FOUND",operation="Deferred"} 1`,
	)
	spans := spansNamed(s.recorder.Ended(), "query Deferred")
	if len(spans) != 1 || spans[0].Status().Code.String() != "Error" {
		t.Fatalf("%d spans \"query Deferred\", want one, errored by its deferred part", len(spans))
	}
	if codes := s.record(t).ErrorCodes(); !slices.Equal(codes, []string{"NOT_FOUND"}) {
		t.Errorf("record: codes %v", codes)
	}
}

// A transport that asks for the first part only (plain POST) ends a
// deferred operation when its request ends. No network here: the
// executor is called directly, in a bubble, so the end is awaited.
func TestDeferredQueryEndsWithItsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := telemetry.NewMetrics()
		recorder := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
		exec := executor.New(newTinySchema(tp).executable())
		exec.Use(telemetry.NewGraphQL(m, tp))

		ctx, cancel := context.WithCancel(graphql.StartOperationTrace(context.Background()))
		opCtx, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: "query Deferred { ping ... @defer { slow } }"})
		if errs != nil {
			t.Fatal(errs)
		}
		responses, rctx := exec.DispatchOperation(graphql.WithOperationContext(ctx, opCtx), opCtx)
		if first := responses(rctx); first == nil || first.HasNext == nil || !*first.HasNext {
			t.Fatalf("first part %+v, want more to follow", first)
		}
		text := gather(t, m)
		if strings.Contains(text, `operation="Deferred"`) || len(spansNamed(recorder.Ended(), "query Deferred")) != 0 {
			t.Fatalf("observed before its request ended:\n%s", text)
		}
		cancel() // the request ends: the rest is never asked for
		synctest.Wait()
		metricsHave(t, m, "request ended",
			`gateway_graphql_operations_total{operation="Deferred"} 1`,
			`gateway_graphql_operation_duration_seconds_count{operation="Deferred"} 1`,
		)
		if n := len(spansNamed(recorder.Ended(), "query Deferred")); n != 1 {
			t.Errorf("%d spans ended, want 1", n)
		}
		_ = tp.Shutdown(context.Background())
	})
}

// A connection that runs operations for hours keeps a bounded record:
// its queries' codes up to a limit (events keep each code once:
// TestSubscriptionIsOneOperationAndItsEvents).
func TestRequestRecordIsBounded(t *testing.T) {
	exec := executor.New(newTinySchema(noop.NewTracerProvider()).executable())
	exec.Use(telemetry.NewGraphQL(nil, nil))
	ctx, rec := telemetry.WithRequest(context.Background())
	for range 1000 {
		ctx := graphql.StartOperationTrace(ctx)
		opCtx, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: "query Deferred { ping ... @defer { slow } }"})
		if errs != nil {
			t.Fatal(errs)
		}
		responses, rctx := exec.DispatchOperation(graphql.WithOperationContext(ctx, opCtx), opCtx)
		for responses(rctx) != nil {
		}
	}
	if n := len(rec.ErrorCodes()); n == 0 || n > 100 {
		t.Errorf("after 1000 failing operations the record holds %d codes, want some and a bounded number", n)
	}
}
