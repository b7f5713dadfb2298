package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// The operations tests: metrics, logs, health and shutdown, APQ, tracing,
// and replicas sharing Redis. They run whole gateways as run() builds them,
// over a sample data service of their own.

// opsGateway is a gateway built from flags as run() builds it, with the
// logger its configuration asks for, writing into logs.
type opsGateway struct {
	URL string
	// MetricsAddr is METRICS_ADDR's listener's address, when set.
	MetricsAddr string
	logs        *testutil.LockedBuffer
	stop        func() error
	gw          *gateway
}

func startOpsGateway(t *testing.T, args ...string) *opsGateway {
	t.Helper()
	cfg, err := parseConfig(args, testEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testutil.LockedBuffer{}
	logger := newLogger(cfg, logs)
	ctx, cancel := context.WithCancel(context.Background())
	gw, err := newGateway(ctx, cfg, logger)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsLn, err := gw.listenMetrics() // as run() does
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gw.serve(ctx, ln, metricsLn) }()
	stop := sync.OnceValue(func() error {
		cancel()
		err := <-done
		gw.Close()
		return err
	})
	t.Cleanup(func() { _ = stop() })
	g := &opsGateway{URL: "http://" + ln.Addr().String(), logs: logs, stop: stop, gw: gw}
	if metricsLn != nil {
		g.MetricsAddr = metricsLn.Addr().String()
	}
	return g
}

// testUpstream serves a sample data service through a handler that
// records each request's headers and can hold chosen requests until
// released.
type testUpstream struct {
	URL    string
	Sample *sampleservice.Service

	mu      sync.Mutex
	headers map[string][]http.Header // by path

	// When hold is set, requests it matches signal arrived and wait for
	// release (or their client giving up).
	hold    func(*http.Request) bool
	arrived chan struct{}
	release chan struct{}
}

func startUpstream(t *testing.T, cfg sampleservice.Config, hold func(*http.Request) bool) *testUpstream {
	t.Helper()
	if cfg.Dataset.Seed == 0 {
		cfg.Dataset = sampleservice.DatasetOptions{Seed: 1, Scale: 1}
	}
	svc, err := sampleservice.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := &testUpstream{Sample: svc, headers: map[string][]http.Header{}, hold: hold,
		arrived: make(chan struct{}, 100), release: make(chan struct{})}
	inner := svc.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.headers[r.URL.Path] = append(u.headers[r.URL.Path], r.Header.Clone())
		u.mu.Unlock()
		if u.hold != nil && u.hold(r) {
			u.arrived <- struct{}{}
			select {
			case <-u.release:
			case <-r.Context().Done():
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		u.releaseAll()
		srv.Close()
	})
	u.URL = srv.URL
	return u
}

var releaseOnce sync.Map

func (u *testUpstream) releaseAll() {
	if _, done := releaseOnce.LoadOrStore(u, true); !done {
		close(u.release)
	}
}

func (u *testUpstream) headersOf(path string) []http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]http.Header(nil), u.headers[path]...)
}

// args are the flags of a gateway over u.
func (u *testUpstream) args(more ...string) []string {
	return append([]string{"-upstream", u.URL, "-explorer", u.URL + "/rest"}, more...)
}

// gqlResult is a GraphQL response.
type gqlResult struct {
	Status     int
	Data       map[string]any `json:"data"`
	Errors     []gqlErr       `json:"errors"`
	Extensions map[string]any `json:"extensions"`
}

type gqlErr struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

func (r gqlResult) codes() []string {
	var c []string
	for _, e := range r.Errors {
		s, _ := e.Extensions["code"].(string)
		c = append(c, s)
	}
	return c
}

// postGraphQL POSTs body (a JSON request) with optional headers.
func postGraphQL(t *testing.T, base string, body any, header map[string]string) gqlResult {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	return decodeResult(t, resp)
}

func decodeResult(t *testing.T, resp *http.Response) gqlResult {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var r gqlResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("status %d, body %q: %v", resp.StatusCode, raw, err)
	}
	r.Status = resp.StatusCode
	return r
}

// query is a request body of a query and its variables.
func query(q string, vars map[string]any) map[string]any {
	m := map[string]any{"query": q}
	if vars != nil {
		m["variables"] = vars
	}
	return m
}

// scrape reads /metrics.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// metricValue is the value of the series of family name with exactly
// the given labels (a subset match), or -1 when there is none. Histograms
// give their sample count.
func metricValue(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	for _, m := range metricSeries(families, name, labels) {
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			return m.Untyped.GetValue()
		}
	}
	return -1
}

// metricSeries are the series of name whose labels include labels.
func metricSeries(families map[string]*dto.MetricFamily, name string, labels map[string]string) []*dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
	var out []*dto.Metric
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if got[k] != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// TestMetricsCountPrefetches: an asset round started as soon as a page of
// transactions is decoded is counted, once, and is also a loader batch.
func TestMetricsCountPrefetches(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{}, nil)
	g := startOpsGateway(t, u.args()...)
	q := `{ transactions(first: 50, cmdTypes: ["Batch Proposal"]) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change {
	  ... on UpdateAsset { asset { id status } }
	} } } } } } } } }`
	r := postGraphQL(t, g.URL, query(q, nil), nil)
	for _, code := range r.codes() {
		if code != "NOT_FOUND" {
			t.Fatalf("errors %+v", r.Errors)
		}
	}
	m := scrape(t, g.URL)
	if got := metricValue(m, "gateway_loader_prefetches_total", map[string]string{"loader": "assets"}); got != 1 {
		t.Errorf("prefetches %v, want 1", got)
	}
	if got := metricValue(m, "gateway_loader_batch_size", map[string]string{"loader": "assets"}); got != 1 {
		t.Errorf("loader batches %v, want 1 (the prefetched one)", got)
	}
}

func TestMetricsCountKnownTraffic(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	// Data-node answers are served from the upstream cache for a minute
	// here, so that the repeated queries below are hits on any machine.
	// With the cache on, the live feed polls with no subscriber: here
	// only its head read at the start (its newest page is one of the
	// cache's entries), done before the traffic counted below, so that
	// no poll falls among the explorer's failures.
	g := startOpsGateway(t, u.args("-upstream-retries", "0", "-breaker-failures", "2", "-breaker-open", "1h", "-upstream-cache-max-age", "1m", "-live-poll-interval", "1h")...)
	awaitHeadRead(t, g.URL)
	assetID := u.Sample.Dataset().Assets[0].ID

	for range 3 {
		if r := postGraphQL(t, g.URL, query(`query Assets { assets(first: 2) { edges { node { id } } } }`, nil), nil); len(r.Errors) > 0 {
			t.Fatalf("Assets: %+v", r.Errors)
		}
	}
	postGraphQL(t, g.URL, query(`{ assets(first: 1) { edges { cursor } } }`, nil), nil)
	if r := postGraphQL(t, g.URL, query(`query BadPage { assets(first: -1) { edges { cursor } } }`, nil), nil); fmt.Sprint(r.codes()) != "[BAD_USER_INPUT]" {
		t.Fatalf("BadPage codes %v", r.codes())
	}
	if r := postGraphQL(t, g.URL, query(`{ assets(`, nil), nil); fmt.Sprint(r.codes()) != "[BAD_USER_INPUT]" {
		t.Fatalf("unparsable query codes %v", r.codes())
	}
	for range 2 { // a miss, then a hit of the shared asset cache
		if r := postGraphQL(t, g.URL, query(`query OneAsset($id: ID!) { asset(id: $id) { id } }`, map[string]any{"id": assetID}), nil); len(r.Errors) > 0 {
			t.Fatalf("OneAsset: %+v", r.Errors)
		}
	}
	// Introspection is answered by gqlgen's executor; everything else
	// above and below by the direct one.
	if r := postGraphQL(t, g.URL, query(`query Schema { __schema { queryType { name } } }`, nil), nil); len(r.Errors) > 0 {
		t.Fatalf("Schema: %+v", r.Errors)
	}
	// Two explorer failures open its breaker (BREAKER_FAILURES=2); the
	// third query is refused without a request.
	u.Sample.SetFault(sampleservice.EndpointTransactions, sampleservice.Fault{FailNext: 2})
	var txCodes []string
	for range 3 {
		txCodes = append(txCodes, postGraphQL(t, g.URL, query(`query Txs { transactions(first: 1) { edges { cursor } } }`, nil), nil).codes()...)
	}
	if fmt.Sprint(txCodes) != "[UPSTREAM_ERROR UPSTREAM_ERROR UPSTREAM_UNAVAILABLE]" {
		t.Fatalf("Txs codes %v", txCodes)
	}

	m := scrape(t, g.URL)
	want := []struct {
		name   string
		labels map[string]string
		value  float64
	}{
		{"gateway_graphql_operations_total", map[string]string{"operation": "Assets"}, 3},
		{"gateway_graphql_operations_total", map[string]string{"operation": "anonymous"}, 1},
		{"gateway_graphql_operations_total", map[string]string{"operation": "BadPage"}, 1},
		{"gateway_graphql_operations_total", map[string]string{"operation": "(none)"}, 1},
		{"gateway_graphql_operations_total", map[string]string{"operation": "OneAsset"}, 2},
		{"gateway_graphql_operations_total", map[string]string{"operation": "Txs"}, 3},
		{"gateway_graphql_operation_duration_seconds", map[string]string{"operation": "Assets"}, 3},
		{"gateway_graphql_errors_total", map[string]string{"operation": "BadPage", "code": "BAD_USER_INPUT"}, 1},
		{"gateway_graphql_errors_total", map[string]string{"operation": "(none)", "code": "BAD_USER_INPUT"}, 1},
		{"gateway_graphql_errors_total", map[string]string{"operation": "Txs", "code": "UPSTREAM_ERROR"}, 2},
		{"gateway_graphql_errors_total", map[string]string{"operation": "Txs", "code": "UPSTREAM_UNAVAILABLE"}, 1},
		{"gateway_graphql_errors_total", map[string]string{"operation": "Assets"}, -1},
		// 1 Assets (the other 2 from the upstream cache) + 1 anonymous +
		// 1 asset lookup (the second was in the asset cache).
		{"gateway_upstream_requests_total", map[string]string{"service": "data-node", "endpoint": "assets", "code": "200"}, 3},
		{"gateway_upstream_request_duration_seconds", map[string]string{"service": "data-node", "endpoint": "assets"}, 3},
		{"gateway_upstream_cache_hits_total", map[string]string{"endpoint": "assets", "kind": "recent", "tier": "process"}, 2},
		{"gateway_upstream_cache_misses_total", map[string]string{"endpoint": "assets", "kind": "recent"}, 3},
		// Errors are never kept: each Txs asked (the third was refused
		// by the open breaker).
		{"gateway_upstream_cache_misses_total", map[string]string{"endpoint": "transactions", "kind": "none"}, 3},
		{"gateway_upstream_cache_hits_total", map[string]string{"endpoint": "transactions", "kind": "until_next_block", "tier": "process"}, 0},
		// The 2 Assets pages, the asset, and the live feed's newest page.
		{"gateway_upstream_cache_entries", nil, 4},
		{"gateway_upstream_requests_total", map[string]string{"service": "explorer", "endpoint": "transactions", "code": "500"}, 2},
		{"gateway_asset_cache_lookups_total", map[string]string{"result": "hit"}, 1},
		{"gateway_asset_cache_lookups_total", map[string]string{"result": "miss"}, 1},
		// The miss went through a batch; the hit was served from the
		// in-process cache without waiting for one.
		{"gateway_loader_batch_size", map[string]string{"loader": "assets"}, 1},
		{"gateway_loader_prefetches_total", map[string]string{"loader": "assets"}, 0},
		{"gateway_upstream_breaker_state", map[string]string{"service": "explorer", "state": "open"}, 1},
		{"gateway_upstream_breaker_state", map[string]string{"service": "explorer", "state": "closed"}, 0},
		{"gateway_upstream_breaker_state", map[string]string{"service": "data-node", "state": "closed"}, 1},
		{"gateway_upstream_breaker_transitions_total", map[string]string{"service": "explorer", "state": "open"}, 1},
		// Executed: 3 Assets, the anonymous one, BadPage, 2 OneAsset and 3 Txs
		// directly; Schema by gqlgen; the unparsable query not at all.
		{"gateway_graphql_executions_total", map[string]string{"executor": "direct"}, 10},
		{"gateway_graphql_executions_total", map[string]string{"executor": "gqlgen"}, 1},
		{"gateway_upstream_budget_up", nil, 1},
		{"gateway_upstream_budget_banned", nil, 0},
		{"gateway_upstream_budget_paused_seconds", nil, 0},
	}
	for _, w := range want {
		if got := metricValue(m, w.name, w.labels); got != w.value {
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.value)
		}
	}
	if got, sent := metricValue(m, "gateway_upstream_requests_total", map[string]string{"endpoint": "assets"}), u.Sample.Requests(sampleservice.EndpointAssets); got != float64(sent) {
		t.Errorf("asset requests counted %v, the sample received %d", got, sent)
	}
	if tokens := metricValue(m, "gateway_upstream_budget_tokens", nil); tokens < 0 || tokens > upstream.DefaultBudgetBurst {
		t.Errorf("budget tokens %v, want within the burst", tokens)
	}
	if held := metricValue(m, "gateway_upstream_cache_bytes", nil); held <= 0 {
		t.Errorf("the upstream cache holds %v bytes, want its 3 answers' size", held)
	}
	// Upstream requests each query sent: Assets 1 of 3 (the others from
	// the upstream cache), OneAsset 1 of 2 (the asset cache), Txs 2 of 3
	// (the open breaker refused the third without a request), Schema none.
	for op, want := range map[string][2]float64{"Assets": {3, 1}, "OneAsset": {2, 1}, "Txs": {3, 2}, "Schema": {1, 0}} {
		var count, sum float64
		for _, metric := range m["gateway_graphql_operation_upstream_requests"].GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "operation" && l.GetValue() == op {
					count, sum = float64(metric.GetHistogram().GetSampleCount()), metric.GetHistogram().GetSampleSum()
				}
			}
		}
		if count != want[0] || sum != want[1] {
			t.Errorf("upstream requests of %s: %v queries sending %v, want %v sending %v", op, count, sum, want[0], want[1])
		}
	}
	if sum := m["gateway_loader_batch_size"].Metric[0].Histogram.GetSampleSum(); sum != 1 {
		t.Errorf("loader batch sizes sum to %v, want 1 batch of 1", sum)
	}
	// The Go runtime's and the process's collectors are there.
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if m[name] == nil {
			t.Errorf("/metrics has no %s", name)
		}
	}
}

func TestMetricsCanBeTurnedOff(t *testing.T) {
	g := startOpsGateway(t, "-metrics=false")
	resp, err := http.Get(g.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /metrics with METRICS=false = %d, want 404", resp.StatusCode)
	}
}

// One JSON access line per request, with the operation, its upstream
// calls and its error codes; never its variables, nor any header.
func TestAccessLogOneJSONLinePerRequest(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	// The second Funding is served by the upstream cache (kept a minute
	// here, whatever the machine's speed): its line says so, 0 calls.
	g := startOpsGateway(t, u.args("-log-format", "json", "-upstream-cache-max-age", "1m")...)

	const party = "5ec7e7000000000000000000000000000000000000000000000000000000cafe" // a "secret" variable
	const funding = `query Funding($party: ID!) { fundingPayments(partyId: $party, first: 5) { edges { node { amount } } } }`
	secrets := map[string]string{
		"Authorization": "Bearer header-secret-token",
		"Cookie":        "session=cookie-secret",
		"X-Api-Key":     "api-key-secret",
	}
	before := u.Sample.Requests(sampleservice.EndpointFundingPayments)
	if r := postGraphQL(t, g.URL, query(funding, map[string]any{"party": party}), secrets); len(r.Errors) > 0 {
		t.Fatalf("Funding: %+v", r.Errors)
	}
	fundingCalls := u.Sample.Requests(sampleservice.EndpointFundingPayments) - before
	// GET carries its variables in the query string.
	getURL := g.URL + "/graphql?" + url.Values{"query": {funding}, "variables": {`{"party":"` + party + `"}`}}.Encode()
	req, _ := http.NewRequest(http.MethodGet, getURL, nil)
	for k, v := range secrets {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	postGraphQL(t, g.URL, query(`query Broken { assets(first: -1) { edges { cursor } } }`, nil), nil)
	for _, probe := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get(g.URL + probe)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}

	logs := g.logs.String()
	for _, secret := range append([]string{party}, "header-secret-token", "cookie-secret", "api-key-secret") {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains %q:\n%s", secret, logs)
		}
	}
	type line struct {
		Level         string   `json:"level"`
		Msg           string   `json:"msg"`
		Method        string   `json:"method"`
		Path          string   `json:"path"`
		Status        int      `json:"status"`
		Operation     *string  `json:"operation"`
		UpstreamCalls *int64   `json:"upstream_calls"`
		Errors        []string `json:"errors"`
	}
	var requests []line
	for _, raw := range strings.Split(strings.TrimSpace(logs), "\n") {
		var l line
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("a log line is not JSON: %q", raw)
		}
		if l.Msg == "request" {
			requests = append(requests, l)
		}
	}
	if len(requests) != 3 {
		t.Fatalf("%d access lines at info level, want one per GraphQL request (3; probes at debug only):\n%s", len(requests), logs)
	}
	for i, want := range []struct {
		method, operation string
		calls             int64
		errors            string
	}{
		{"POST", "Funding", fundingCalls, "[]"},
		{"GET", "Funding", 0, "[]"},
		{"POST", "Broken", 0, "[BAD_USER_INPUT]"},
	} {
		l := requests[i]
		if l.Method != want.method || l.Path != "/graphql" || l.Status != 200 && l.Status != 422 ||
			l.Operation == nil || *l.Operation != want.operation || l.UpstreamCalls == nil || *l.UpstreamCalls != want.calls ||
			fmt.Sprint(l.Errors) != want.errors {
			t.Errorf("access line %d = %+v (operation %v, calls %v), want %+v", i, l, deref(l.Operation), deref(l.UpstreamCalls), want)
		}
	}
	if fundingCalls != 1 {
		t.Errorf("a funding page cost %d upstream calls, want 1", fundingCalls)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestOperationsConfigRejectsBadValues(t *testing.T) {
	t.Parallel() // mostly the Redis client's dial retries
	cases := map[string]struct {
		args []string
		want string
	}{
		"redis URL not redis":  {[]string{"-redis-url", "http://cache:6379"}, "REDIS_URL: want redis://"},
		"redis password shown": {[]string{"-redis-url", "tcp://user:hunter2@cache:6379"}, "xxxxx"},
		"otlp not http":        {[]string{"-otel-endpoint", "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		"sample ratio":         {[]string{"-trace-sample-ratio", "1.5"}, "TRACE_SAMPLE_RATIO=1.5"},
		"apq cache size":       {[]string{"-apq-cache-size", "-1"}, "APQ_CACHE_SIZE"},
		"shutdown delay":       {[]string{"-shutdown-delay", "-1s"}, "SHUTDOWN_DELAY"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := parseConfig(tc.args, func(string) string { return "" }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("err = %v, want it to contain %q (and no password)", err, tc.want)
			}
		})
	}
	// An unreachable Redis stops the start with a clear error.
	cfg, err := parseConfig([]string{"-redis-url", "redis://127.0.0.1:1/0"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newGateway(context.Background(), cfg, newLogger(cfg, io.Discard)); err == nil || !strings.Contains(err.Error(), "redis at 127.0.0.1:1") {
		t.Fatalf("newGateway with a dead Redis = %v", err)
	}
}
