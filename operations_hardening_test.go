package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/telemetry"
)

// The tests of the operations hardening findings: garbage bodies, APQ
// errors and storage, operation-name labels, the metrics listener and
// CORS, and trace sampling.

// postRaw POSTs body as it is, as application/json.
func postRaw(t *testing.T, base, body string) gqlResult {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	return decodeResult(t, resp)
}

// A body that is not a GraphQL request in JSON is the client's mistake:
// BAD_USER_INPUT, counted under the (none) operation, and nothing logged
// at ERROR (it used to panic in the metrics extension: INTERNAL and a
// stack trace per request).
func TestGarbageBodiesAreBadUserInput(t *testing.T) {
	g := startOpsGateway(t, "-log-format", "json")
	counted := 0
	for _, tc := range []struct {
		body string
		// reachesGraphQL: the body gets past the request guard (which
		// refuses batches itself, before gqlgen and its metrics).
		reachesGraphQL bool
	}{
		{`{not json`, true},
		{`"x"`, true},
		{`{"query": 5}`, true},
		{`{"query": "{ __typename }", "variables": 7}`, true},
		{`[]`, false},
	} {
		r := postRaw(t, g.URL, tc.body)
		if fmt.Sprint(r.codes()) != "[BAD_USER_INPUT]" || r.Data != nil {
			t.Errorf("POST %s: status %d, errors %+v, want one BAD_USER_INPUT", tc.body, r.Status, r.Errors)
		}
		if r.Status == http.StatusOK || r.Status >= 500 {
			t.Errorf("POST %s: status %d, want a 4xx", tc.body, r.Status)
		}
		if tc.reachesGraphQL {
			counted++
		}
	}
	m := scrape(t, g.URL)
	if got := metricValue(m, "gateway_graphql_operations_total", map[string]string{"operation": "(none)"}); got != float64(counted) {
		t.Errorf("operations{(none)} = %v, want %d", got, counted)
	}
	if got := metricValue(m, "gateway_graphql_errors_total", map[string]string{"operation": "(none)", "code": "BAD_USER_INPUT"}); got != float64(counted) {
		t.Errorf("errors{(none), BAD_USER_INPUT} = %v, want %d", got, counted)
	}
	if got := metricValue(m, "gateway_graphql_errors_total", map[string]string{"code": "INTERNAL"}); got != -1 {
		t.Errorf("errors{INTERNAL} = %v, want none", got)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(g.logs.String(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("logged at ERROR: %.300s", line)
		}
	}
}

// apqPost POSTs query with the persistedQuery extension ext.
func apqPost(t *testing.T, base, q string, ext any) gqlResult {
	t.Helper()
	body := map[string]any{"extensions": map[string]any{"persistedQuery": ext}}
	if q != "" {
		body["query"] = q
	}
	return postGraphQL(t, base, body, nil)
}

// A persistedQuery extension that is wrong is the client's mistake, said
// as such; only an unknown hash is PERSISTED_QUERY_NOT_FOUND (the code
// Apollo clients react to by sending the query).
func TestAPQErrorsAreBadUserInput(t *testing.T) {
	g := startOpsGateway(t)
	hash := sha256Hex(persistedQuery)
	for _, tc := range []struct {
		name, query string
		ext         any
		want        string // in the message
	}{
		{"hash of another query", persistedQuery, map[string]any{"version": 1, "sha256Hash": sha256Hex("other")}, "sha256Hash is not the SHA-256 of the query"},
		{"version 2", persistedQuery, map[string]any{"version": 2, "sha256Hash": hash}, "version must be 1"},
		{"version missing", persistedQuery, map[string]any{"sha256Hash": hash}, "version must be 1"},
		{"version a string", "", map[string]any{"version": "1", "sha256Hash": hash}, "version must be 1"},
		{"hash a number", persistedQuery, map[string]any{"version": 1, "sha256Hash": 12}, "sha256Hash must be a string"},
		{"hash missing, hash only", "", map[string]any{"version": 1}, "sha256Hash must be a string"},
		{"hash not hex", "", map[string]any{"version": 1, "sha256Hash": strings.Repeat("z", 64)}, "64 hex digits"},
		{"not an object", persistedQuery, "x", "must be an object"},
		{"a list", "", []any{1, hash}, "must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := apqPost(t, g.URL, tc.query, tc.ext)
			if fmt.Sprint(r.codes()) != "[BAD_USER_INPUT]" || r.Data != nil || !strings.Contains(r.Errors[0].Message, tc.want) {
				t.Fatalf("status %d, errors %+v; want BAD_USER_INPUT saying %q", r.Status, r.Errors, tc.want)
			}
		})
	}
	if r := apqGet(t, g.URL, hash); fmt.Sprint(r.codes()) != "[PERSISTED_QUERY_NOT_FOUND]" || r.Errors[0].Message != "PersistedQueryNotFound" {
		t.Fatalf("unknown hash: %+v", r)
	}
}

// A query sent with its hash is stored only once it has parsed, validated
// and passed the query limits; a valid one is then served by hash alone.
// In memory and in Redis.
func TestAPQStoresOnlyValidOperations(t *testing.T) {
	refused := []struct {
		name, query, code string
	}{
		{"unparsable", "this is not GraphQL, just text to keep", "BAD_USER_INPUT"},
		{"invalid", "query Invalid { noSuchField }", "BAD_USER_INPUT"},
		{"bad variables", "query Vars($n: Int!) { assets(first: $n) { edges { cursor } } }", "BAD_USER_INPUT"},
		{"over the cost limit", "query Costly { assets(first: 1000) { edges { node { id } } } transactions(first: 1000) { edges { node { block } } } }", "QUERY_TOO_COMPLEX"},
	}
	for _, backend := range []string{"memory", "redis"} {
		t.Run(backend, func(t *testing.T) {
			var args []string
			if backend == "redis" {
				args = []string{"-redis-url", redistest.Start(t)}
			}
			g := startOpsGateway(t, append(args, "-max-cost", "1000")...)
			for _, tc := range refused {
				hash := sha256Hex(tc.query)
				r := apqPost(t, g.URL, tc.query, map[string]any{"version": 1, "sha256Hash": hash})
				if fmt.Sprint(r.codes()) != "["+tc.code+"]" {
					t.Fatalf("%s: errors %+v, want %s", tc.name, r.Errors, tc.code)
				}
				if r := apqGet(t, g.URL, hash); fmt.Sprint(r.codes()) != "[PERSISTED_QUERY_NOT_FOUND]" {
					t.Errorf("%s: stored although refused; by hash: %+v", tc.name, r)
				}
			}
			registered := apqRegister(t, g.URL, persistedQuery)
			if len(registered.Errors) > 0 || registered.Data["assets"] == nil {
				t.Fatalf("register: %+v", registered)
			}
			byHash := apqGet(t, g.URL, sha256Hex(persistedQuery))
			if len(byHash.Errors) > 0 || fmt.Sprint(byHash.Data) != fmt.Sprint(registered.Data) {
				t.Fatalf("by hash: %+v, want %+v", byHash, registered.Data)
			}
		})
	}
}

// Operation-name labels, end to end: a name the gateway refused never
// takes one, and once the labels are all taken a new name is counted
// under (other). How an idle name gives its label up to a new one is
// telemetry's TestOperationLabelsRecoverFromIdleNames, under synctest
// (time cannot be moved here, over real connections).
func TestOperationLabelsOfRefusedAndExcessNames(t *testing.T) {
	g := startOpsGateway(t, "-max-cost", "1000")
	run := func(name string) {
		t.Helper()
		if r := postGraphQL(t, g.URL, query("query "+name+" { __typename }", nil), nil); len(r.Errors) > 0 {
			t.Fatalf("%s: %+v", name, r.Errors)
		}
	}
	operations := func(name string) float64 {
		t.Helper()
		return metricValue(scrape(t, g.URL), "gateway_graphql_operations_total", map[string]string{"operation": name})
	}

	// Refused operations take no label: invalid variables, over the
	// limits, invalid.
	for _, q := range []string{
		`query RefusedVars($n: Int!) { assets(first: $n) { edges { cursor } } }`,
		`query RefusedCost { assets(first: 1000) { edges { node { id } } } transactions(first: 1000) { edges { node { block } } } a: assets(first: 1000) { edges { node { id } } } }`,
		`query RefusedInvalid { noSuchField }`,
	} {
		if r := postGraphQL(t, g.URL, query(q, nil), nil); len(r.Errors) == 0 {
			t.Fatalf("%s: accepted", q)
		}
	}
	for _, name := range []string{"RefusedVars", "RefusedCost", "RefusedInvalid"} {
		if got := operations(name); got != -1 {
			t.Errorf("refused operation %s has a label (%v requests)", name, got)
		}
	}
	if got := operations(telemetry.NoOperation); got != 3 {
		t.Errorf("operations{(none)} = %v, want the 3 refused", got)
	}

	for i := range telemetry.MaxOperationNames {
		run(fmt.Sprintf("Junk%d", i))
	}
	run("Real") // every label is taken
	if got := operations("Real"); got != -1 {
		t.Fatalf("Real got a label while all were taken (%v)", got)
	}
	if got := operations(telemetry.OtherOperation); got != 1 {
		t.Fatalf("operations{(other)} = %v, want 1", got)
	}
}

// accessControlHeaders are the response's Access-Control-* headers.
func accessControlHeaders(h http.Header) []string {
	var found []string
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			found = append(found, k)
		}
	}
	return found
}

// With METRICS_ADDR, /metrics is served on that listener only (logged,
// and closed with the gateway), never on the public one.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	g := startOpsGateway(t, "-metrics-addr", "127.0.0.1:0", "-cors-origins", "https://app.example")
	metricsURL := "http://" + g.MetricsAddr
	if g.MetricsAddr == "" || !strings.Contains(g.logs.String(), "metrics serving") || !strings.Contains(g.logs.String(), g.MetricsAddr) {
		t.Errorf("the metrics address is not logged:\n%s", g.logs.String())
	}
	postGraphQL(t, g.URL, query(`query Counted { __typename }`, nil), nil)

	resp, _ := get(t, g.URL+"/metrics", map[string]string{"Origin": "https://app.example"})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("public GET /metrics = %d, want 404", resp.StatusCode)
	}
	if h := accessControlHeaders(resp.Header); len(h) > 0 {
		t.Errorf("public GET /metrics carries %v", h)
	}
	resp, _ = get(t, metricsURL+"/metrics", map[string]string{"Origin": "https://app.example"})
	if h := accessControlHeaders(resp.Header); len(h) > 0 {
		t.Errorf("GET /metrics on METRICS_ADDR carries %v", h)
	}
	if got := metricValue(scrape(t, metricsURL), "gateway_graphql_operations_total", map[string]string{"operation": "Counted"}); got != 1 {
		t.Errorf("operations{Counted} on METRICS_ADDR = %v, want 1", got)
	}
	// Only /metrics there: not the API.
	if resp, _ := get(t, metricsURL+"/graphql?query="+urlQueryEscape("{ __typename }"), nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /graphql on METRICS_ADDR = %d, want 404", resp.StatusCode)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(metricsURL + "/metrics"); err == nil {
		resp.Body.Close()
		t.Errorf("METRICS_ADDR still serves after shutdown (%d)", resp.StatusCode)
	}
}

func TestMetricsAddrConfig(t *testing.T) {
	for _, args := range [][]string{
		{"-metrics-addr", "127.0.0.1:9090", "-metrics=false"},
		{"-metrics-addr", ":8080", "-listen", ":8080"},
	} {
		if _, err := parseConfig(args, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "METRICS_ADDR") {
			t.Errorf("%v: err = %v, want METRICS_ADDR refused", args, err)
		}
	}
}

// TRACE_SAMPLE_RATIO applies to requests that continue a client's trace:
// a sampled traceparent is continued (same trace, the client's span as
// parent) but recorded only as the ratio says, so clients cannot have
// every request recorded and exported.
func TestClientTraceparentDoesNotForceSampling(t *testing.T) {
	const clientSpan = "00f067aa0ba902b7"
	for _, tc := range []struct {
		name, ratio, trace string
		recorded           bool
	}{
		{"ratio 0", "0", "4bf92f3577b34da6a3ce929d0e0e4736", false},
		// A trace id whose low bits are zero passes TraceIDRatioBased at
		// any ratio above 0: remote parents are not sampled by their id.
		{"tiny ratio, a trace id chosen to pass", "0.000000001", "4bf92f3577b34da60000000000000000", false},
		{"ratio 1", "1", "4bf92f3577b34da6a3ce929d0e0e4736", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := startOTLPReceiver(t)
			u := startUpstream(t, sampleservice.Config{}, nil)
			g := startOpsGateway(t, u.args("-otel-endpoint", rcv.URL, "-trace-sample-ratio", tc.ratio)...)
			for range 5 {
				tracedQuery(t, g.URL, `query Traced { assets(first: 1) { edges { cursor } } }`, tc.trace, clientSpan)
			}
			spans, _ := rcv.flushed(t, g)
			if !tc.recorded {
				if len(spans) > 0 {
					t.Fatalf("TRACE_SAMPLE_RATIO=%s, yet %d spans recorded: %v", tc.ratio, len(spans), names(spans))
				}
				return
			}
			ops := 0
			for _, s := range spans {
				if hex.EncodeToString(s.GetTraceId()) != tc.trace {
					t.Errorf("span %s in trace %x, want the client's %s", s.GetName(), s.GetTraceId(), tc.trace)
				}
				if s.GetName() == "query Traced" {
					ops++
					if hex.EncodeToString(s.GetParentSpanId()) != clientSpan {
						t.Errorf("operation span's parent %x, want the client's %s", s.GetParentSpanId(), clientSpan)
					}
				}
			}
			if ops != 5 {
				t.Errorf("%d operation spans, want 5; spans: %v", ops, names(spans))
			}
		})
	}
}
