package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/99designs/gqlgen/graphql"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/telemetry"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// tracedGateway is the GraphQL handler with the telemetry extension and an
// upstream client, both tracing into a span recorder, over a sample
// service whose received traceparent headers are kept.
type tracedGateway struct {
	URL      string
	recorder *tracetest.SpanRecorder
	metrics  *telemetry.Metrics

	mu           sync.Mutex
	traceparents []string
}

func startTraced(t *testing.T) *tracedGateway {
	t.Helper()
	svc, err := sampleservice.New(sampleservice.Config{Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: 1}, Defects: sampleservice.DefaultDefects()})
	if err != nil {
		t.Fatal(err)
	}
	g := &tracedGateway{recorder: tracetest.NewSpanRecorder(), metrics: telemetry.NewMetrics()}
	sample := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.traceparents = append(g.traceparents, r.Header.Get("Traceparent"))
		g.mu.Unlock()
		svc.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(sample.Close)
	tracing := telemetry.NewTracingWith(telemetry.TracingOptions{ServiceName: "test", SampleRatio: 1}, sdktrace.WithSpanProcessor(g.recorder))
	t.Cleanup(func() { _ = tracing.Shutdown(context.Background()) })
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL + "/rest",
		TracerProvider: tracing.Provider, OnResponse: g.metrics.ObserveUpstream})
	if err != nil {
		t.Fatal(err)
	}
	h := transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream:   client,
		Extensions: []graphql.HandlerExtension{telemetry.NewGraphQL(g.metrics, tracing.Provider)},
		Hooks:      graph.Hooks{AssetCache: g.metrics.ObserveAssetCache, LoaderBatch: g.metrics.ObserveLoaderBatch},
	}), transport.Config{})
	srv := httptest.NewServer(tracing.Middleware(h))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

func (g *tracedGateway) post(t *testing.T, body string) string {
	t.Helper()
	resp, err := http.Post(g.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestSpansPerOperationAndUpstreamRequest(t *testing.T) {
	g := startTraced(t)
	// An asset reference goes through the loader; a list goes straight.
	body := g.post(t, `{"query":"query Both { assets(first: 1) { edges { cursor } } transactions(first: 2) { edges { node { block } } } }"}`)
	if strings.Contains(body, `"errors"`) {
		t.Fatal(body)
	}
	spans := g.recorder.Ended()
	var op sdktrace.ReadOnlySpan
	var upstreamSpans []sdktrace.ReadOnlySpan
	for _, s := range spans {
		switch {
		case s.Name() == "query Both":
			op = s
		case strings.HasPrefix(s.Name(), "GET "):
			upstreamSpans = append(upstreamSpans, s)
		}
	}
	if op == nil {
		t.Fatalf("no operation span among %d spans", len(spans))
	}
	if op.Parent().IsValid() || op.SpanKind() != trace.SpanKindServer {
		t.Errorf("operation span: parent %v kind %v, want a server root", op.Parent(), op.SpanKind())
	}
	if len(upstreamSpans) < 2 {
		t.Fatalf("%d upstream spans, want one per upstream request (at least 2)", len(upstreamSpans))
	}
	sent := map[string]bool{}
	for _, s := range upstreamSpans {
		if s.Parent().SpanID() != op.SpanContext().SpanID() || s.SpanContext().TraceID() != op.SpanContext().TraceID() {
			t.Errorf("%s: parent %v, want the operation span %v", s.Name(), s.Parent().SpanID(), op.SpanContext().SpanID())
		}
		if s.SpanKind() != trace.SpanKindClient {
			t.Errorf("%s kind %v", s.Name(), s.SpanKind())
		}
		sent[fmt.Sprintf("00-%s-%s-01", s.SpanContext().TraceID(), s.SpanContext().SpanID())] = true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.traceparents) != len(upstreamSpans) {
		t.Errorf("the sample got %d requests for %d upstream spans", len(g.traceparents), len(upstreamSpans))
	}
	for _, tp := range g.traceparents {
		if !sent[tp] {
			t.Errorf("the sample received traceparent %q, which is no upstream span's", tp)
		}
	}
}

// A request refused before any operation (unparsable) still gets a span,
// marked as an error.
func TestSpanOfARefusedRequest(t *testing.T) {
	g := startTraced(t)
	g.post(t, `{"query":"{ assets("}`)
	spans := g.recorder.Ended()
	if len(spans) != 1 || spans[0].Name() != "graphql request" || spans[0].Status().Code.String() != "Error" {
		var got []string
		for _, s := range spans {
			got = append(got, s.Name()+"/"+s.Status().Code.String())
		}
		t.Fatalf("spans %v, want one errored \"graphql request\"", got)
	}
}

// The extension counts by operation name, bounded.
func TestOperationLabelsAreBounded(t *testing.T) {
	m := telemetry.NewMetrics()
	if got := m.OperationLabel(""); got != telemetry.AnonymousOperation {
		t.Errorf("unnamed = %q", got)
	}
	if got := m.OperationLabel(strings.Repeat("x", 101)); got != telemetry.OtherOperation {
		t.Errorf("a 101-byte name = %q", got)
	}
	for i := range telemetry.MaxOperationNames {
		if got := m.OperationLabel(fmt.Sprintf("Op%d", i)); got != fmt.Sprintf("Op%d", i) {
			t.Fatalf("name %d = %q", i, got)
		}
	}
	if got := m.OperationLabel("OneTooMany"); got != telemetry.OtherOperation {
		t.Errorf("name past the cap = %q", got)
	}
	if got := m.OperationLabel("Op7"); got != "Op7" {
		t.Errorf("a known name past the cap = %q", got)
	}
	// Error codes are bounded too.
	m.ObserveOperation("Op1", 0, []string{"NOT_FOUND", "SOMETHING_NEW", ""})
	text := gather(t, m)
	if n := strings.Count(text, "\ngateway_graphql_errors_total{"); n != 3 {
		t.Errorf("%d error series, want NOT_FOUND, OTHER and NONE:\n%s", n, text)
	}
	for _, code := range []string{"NOT_FOUND", "OTHER", "NONE"} {
		if want := fmt.Sprintf(`gateway_graphql_errors_total{code=%q,operation="Op1"} 1`, code); !strings.Contains(text, want) {
			t.Errorf("no %s", want)
		}
	}
}

// Once the labels are all taken, a name unseen for OperationNameIdle
// gives its label, series included, up to a new name, while a name in use
// keeps its own. Time is the bubble's: it moves only by time.Sleep.
func TestOperationLabelsRecoverFromIdleNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := telemetry.NewMetrics()
		observe := func(name string) string {
			label := m.OperationLabel(name)
			m.ObserveOperation(label, 0, nil)
			return label
		}
		for i := range telemetry.MaxOperationNames - 1 {
			observe(fmt.Sprintf("Junk%d", i))
		}
		observe("Active")
		if got := observe("Real"); got != telemetry.OtherOperation { // every label is taken
			t.Fatalf("Real = %q while every label was taken, want %q", got, telemetry.OtherOperation)
		}

		time.Sleep(telemetry.OperationNameIdle / 2)
		observe("Active")
		time.Sleep(telemetry.OperationNameIdle/2 + time.Second)
		if got := observe("Real"); got != "Real" { // the junk names are idle now; Active is not
			t.Fatalf("Real = %q once the junk names went idle, want its own label", got)
		}
		text := gather(t, m)
		for _, want := range []string{
			`gateway_graphql_operations_total{operation="Real"} 1`,
			`gateway_graphql_operations_total{operation="Active"} 2`, // a name in use keeps its label
			`gateway_graphql_operations_total{operation="(other)"} 1`,
		} {
			if !strings.Contains(text, want+"\n") {
				t.Errorf("no %s in:\n%s", want, text)
			}
		}
		if strings.Contains(text, `operation="Junk`) {
			t.Errorf("idle names kept their series after %v unseen:\n%s", telemetry.OperationNameIdle, text)
		}
		if got := observe("Later"); got != "Later" { // another new name finds another idle slot
			t.Errorf("Later = %q, want its own label", got)
		}
	})
}

func gather(t *testing.T, m *telemetry.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// budgetReporter is an upstream.BudgetReporter of a function field.
type budgetReporter func(context.Context) (upstream.BudgetState, error)

func (f budgetReporter) State(ctx context.Context) (upstream.BudgetState, error) { return f(ctx) }

func TestBudgetMetricsSayWhenTheStateCannotBeRead(t *testing.T) {
	m := telemetry.NewMetrics()
	var fail bool
	m.WatchBudget(budgetReporter(func(context.Context) (upstream.BudgetState, error) {
		if fail {
			return upstream.BudgetState{}, errors.New("redis down")
		}
		return upstream.BudgetState{Tokens: 12.5, PausedFor: 1500 * time.Millisecond, Banned: true, Waiting: 7, WaitingClients: 2}, nil
	}))
	text := gather(t, m)
	for _, want := range []string{"gateway_upstream_budget_up 1", "gateway_upstream_budget_tokens 12.5", "gateway_upstream_budget_paused_seconds 1.5", "gateway_upstream_budget_banned 1", "gateway_upstream_budget_waiting 7", "gateway_upstream_budget_waiting_clients 2"} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	fail = true
	text = gather(t, m)
	if !strings.Contains(text, "gateway_upstream_budget_up 0\n") || strings.Contains(text, "gateway_upstream_budget_tokens") {
		t.Errorf("with the state unreadable:\n%s", text)
	}
}
