package main

import (
	"io"
	"strings"
	"testing"
)

// MAX_UPSTREAM_CALLS is derived from the rate budget and the request
// deadline unless set, and reaches the handler with its explanation.
func TestMaxUpstreamCallsSetting(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, tc := range []struct {
		name      string
		vars      map[string]string
		want      int
		wantBasis string
	}{
		{"default: 15/s × 30s", nil, 450, "what the rate budget of 15 a second serves within the 30s request deadline"},
		{"derived from other settings", map[string]string{"UPSTREAM_RATE": "2.5", "REQUEST_TIMEOUT": "9s"}, 22, "rate budget of 2.5 a second serves within the 9s request deadline"},
		{"never below one", map[string]string{"UPSTREAM_RATE": "0.5", "REQUEST_TIMEOUT": "1s"}, 1, "0.5 a second"},
		{"0 derives it", map[string]string{"MAX_UPSTREAM_CALLS": "0"}, 450, "rate budget of 15"},
		{"set", map[string]string{"MAX_UPSTREAM_CALLS": "1000"}, 1000, "MAX_UPSTREAM_CALLS"},
	} {
		cfg, err := parseConfig(nil, env(tc.vars), io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		l := cfg.limits()
		if l.MaxUpstreamCalls != tc.want || !strings.Contains(l.UpstreamCallsBasis, tc.wantBasis) {
			t.Errorf("%s: %d (%s), want %d (%s)", tc.name, l.MaxUpstreamCalls, l.UpstreamCallsBasis, tc.want, tc.wantBasis)
		}
	}
	if _, err := parseConfig([]string{"-max-upstream-calls", "-1"}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "MAX_UPSTREAM_CALLS") {
		t.Errorf("-max-upstream-calls -1: %v, want refused", err)
	}

	// The derived limit reaches the handler: 1/s × 2s admits two root
	// lookups, not three.
	base, _, _ := startGateway(t, "-upstream-rate", "1", "-request-timeout", "2s")
	post := func(q string) []map[string]any {
		_, errs := postForErrors(t, base, q)
		return errs
	}
	if errs := post(`{ a: asset(id: "x") { id } b: asset(id: "y") { id } }`); len(errs) != 2 || errs[0]["extensions"].(map[string]any)["code"] != "NOT_FOUND" {
		t.Fatalf("two lookups: %v, want two NOT_FOUND", errs)
	}
	errs := post(`{ a: asset(id: "x") { id } b: asset(id: "y") { id } c: asset(id: "z") { id } }`)
	want := "the query could make 3 data-node requests, over the limit of 2 (what the rate budget of 1 a second serves within the 2s request deadline)"
	if len(errs) != 1 || errs[0]["extensions"].(map[string]any)["code"] != "QUERY_TOO_COMPLEX" || !strings.Contains(errs[0]["message"].(string), want) {
		t.Fatalf("three lookups: %v, want QUERY_TOO_COMPLEX: %s", errs, want)
	}
}
