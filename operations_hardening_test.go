package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
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
