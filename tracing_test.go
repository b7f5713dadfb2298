package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/tradenet/gateway/sampleservice"
)

// otlpReceiver is an in-process OTLP/HTTP collector: it keeps the spans
// it receives, and the service name of their resource.
type otlpReceiver struct {
	URL string

	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rcv := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.Error(w, "not the traces route", http.StatusNotFound)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = gz
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rcv.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					rcv.services = append(rcv.services, kv.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				rcv.spans = append(rcv.spans, ss.Spans...)
			}
		}
		rcv.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	rcv.URL = srv.URL
	return rcv
}

// tracedQuery posts the query q to base as a request continuing the
// client's trace and span (a sampled traceparent), and fails t on any
// error.
func tracedQuery(t *testing.T, base, q, trace, span string) {
	t.Helper()
	r := postGraphQL(t, base, query(q, nil), map[string]string{"traceparent": "00-" + trace + "-" + span + "-01"})
	if len(r.Errors) > 0 {
		t.Fatalf("Traced: %+v", r.Errors)
	}
}

// flushed stops g, which flushes its spans, and returns what rcv received:
// the spans and the service names.
func (rcv *otlpReceiver) flushed(t *testing.T, g *opsGateway) ([]*tracepb.Span, []string) {
	t.Helper()
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	return slices.Clone(rcv.spans), slices.Clone(rcv.services)
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a traced request gives a span for
// its operation, child of the client's traceparent, and a client span per
// upstream request, child of the operation's; the upstream receives the
// traceparent of its request's span.
func TestTracingExportsLinkedSpansOverOTLP(t *testing.T) {
	rcv := startOTLPReceiver(t)
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	// Without the upstream cache the live feed polls only for
	// subscribers: every explorer request here is the operation's.
	g := startOpsGateway(t, u.args("-otel-endpoint", rcv.URL, "-otel-service-name", "gateway-under-test", "-upstream-cache-bytes", "0")...)

	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tracedQuery(t, g.URL, `query Traced { assets(first: 2) { edges { cursor } } transactions(first: 1) { edges { cursor } } }`, clientTrace, clientSpan)

	spans, services := rcv.flushed(t, g)
	if len(services) == 0 || services[0] != "gateway-under-test" {
		t.Errorf("service names %v", services)
	}
	byName := map[string][]*tracepb.Span{}
	for _, s := range spans {
		byName[s.GetName()] = append(byName[s.GetName()], s)
	}
	ops := byName["query Traced"]
	if len(ops) != 1 {
		t.Fatalf("%d operation spans; spans: %v", len(ops), names(spans))
	}
	op := ops[0]
	if hex.EncodeToString(op.GetTraceId()) != clientTrace || hex.EncodeToString(op.GetParentSpanId()) != clientSpan {
		t.Errorf("operation span: trace %x parent %x, want the client's %s %s", op.GetTraceId(), op.GetParentSpanId(), clientTrace, clientSpan)
	}
	if op.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("operation span kind %v", op.GetKind())
	}
	for _, name := range []string{"GET data-node assets", "GET explorer transactions"} {
		named := byName[name]
		if len(named) == 0 {
			t.Errorf("no %q span; spans: %v", name, names(spans))
			continue
		}
		for _, s := range named {
			if !bytes.Equal(s.GetTraceId(), op.GetTraceId()) || !bytes.Equal(s.GetParentSpanId(), op.GetSpanId()) {
				t.Errorf("%s: trace %x parent %x, want trace %x parent %x (the operation)", name, s.GetTraceId(), s.GetParentSpanId(), op.GetTraceId(), op.GetSpanId())
			}
			if s.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
				t.Errorf("%s kind %v", name, s.GetKind())
			}
		}
	}
	// The upstream received each request's span as its traceparent.
	upstreamSpans := map[string]bool{}
	for _, s := range spans {
		if s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT {
			upstreamSpans["00-"+clientTrace+"-"+hex.EncodeToString(s.GetSpanId())+"-01"] = true
		}
	}
	for _, path := range []string{"/api/v2/assets", "/rest/transactions"} {
		hs := u.headersOf(path)
		if len(hs) == 0 {
			t.Errorf("no request to %s", path)
		}
		for _, h := range hs {
			if tp := h.Get("Traceparent"); !upstreamSpans[tp] {
				t.Errorf("%s received traceparent %q, not one of the upstream spans %v", path, tp, upstreamSpans)
			}
		}
	}
}

// Without an endpoint nothing is traced and no traceparent is sent.
func TestTracingOffByDefault(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	g := startOpsGateway(t, u.args()...)
	postGraphQL(t, g.URL, query(`{ assets(first: 1) { edges { cursor } } }`, nil),
		map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	for _, h := range u.headersOf("/api/v2/assets") {
		if tp := h.Get("Traceparent"); tp != "" {
			t.Fatalf("traceparent %q sent with tracing off", tp)
		}
	}
}

func names(spans []*tracepb.Span) string {
	var n []string
	for _, s := range spans {
		n = append(n, s.GetName())
	}
	return strings.Join(n, ", ")
}
