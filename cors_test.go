package main

// The CORS contract (README, Configuration: CORS_ORIGINS), in one place:
// the API's answers to preflight, simple and actual requests by origin
// setting, and /metrics, which never carries CORS headers. (Compression
// with CORS is in compression_test.go.)

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tradenet/gateway/internal/testutil"
)

// TestCORSOrigins covers the CORS contract case by case: preflight and
// simple requests from allowed and refused origins, with exact origins
// (credentials allowed) and with the wildcard (never with credentials).
func TestCORSOrigins(t *testing.T) {
	type want struct {
		allow       string // Access-Control-Allow-Origin
		credentials bool
	}
	preflight := func(t *testing.T, base, origin, method, headers string) *http.Response {
		req, _ := http.NewRequest(http.MethodOptions, base+"/graphql", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", method)
		if headers != "" {
			req.Header.Set("Access-Control-Request-Headers", headers)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	post := func(t *testing.T, base, origin, contentType, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(body))
		req.Header.Set("Origin", origin)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Cookie", "session=1")
		resp, b := testutil.Do(t, req)
		return resp, string(b)
	}
	check := func(t *testing.T, what string, resp *http.Response, w want) {
		t.Helper()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != w.allow {
			t.Errorf("%s: Access-Control-Allow-Origin = %q, want %q", what, got, w.allow)
		}
		creds := resp.Header.Get("Access-Control-Allow-Credentials") == "true"
		if creds != w.credentials {
			t.Errorf("%s: credentials allowed = %v, want %v", what, creds, w.credentials)
		}
		if creds && resp.Header.Get("Access-Control-Allow-Origin") == "*" {
			t.Errorf("%s: credentials with a wildcard", what)
		}
	}
	const query = `{"query":"{ __typename }"}`

	t.Run("exact origins", func(t *testing.T) {
		base, _, _ := startGateway(t, "-cors-origins", "https://app.example,https://other.example")
		allowed, refused := want{"https://app.example", true}, want{}
		// Preflight from an allowed origin: method and headers allowed.
		resp := preflight(t, base, "https://app.example", "POST", "apollo-require-preflight,content-type") // sorted and lower-case, as browsers send them
		check(t, "preflight, allowed", resp, allowed)
		if !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "content-type") {
			t.Errorf("preflight, allowed: methods %q, headers %q", resp.Header.Get("Access-Control-Allow-Methods"), resp.Header.Get("Access-Control-Allow-Headers"))
		}
		if !strings.Contains(resp.Header.Get("Vary"), "Origin") {
			t.Errorf("preflight: Vary = %q, want Origin in it (caches must not share answers across origins)", resp.Header.Get("Vary"))
		}
		check(t, "preflight, other allowed origin", preflight(t, base, "https://other.example", "POST", "content-type"), want{"https://other.example", true})
		// Refused: another origin, a look-alike, a method or header not
		// allowed.
		check(t, "preflight, refused origin", preflight(t, base, "https://evil.example", "POST", "content-type"), refused)
		check(t, "preflight, look-alike origin", preflight(t, base, "https://app.example.evil.example", "POST", "content-type"), refused)
		check(t, "preflight, scheme differs", preflight(t, base, "http://app.example", "POST", "content-type"), refused)
		check(t, "preflight, PATCH", preflight(t, base, "https://app.example", "PATCH", ""), refused)
		// graphql-sse's single connection mode: PUT reserves, DELETE stops,
		// with the reservation's token header.
		check(t, "preflight, PUT", preflight(t, base, "https://app.example", "PUT", "x-graphql-event-stream-token"), allowed)
		check(t, "preflight, DELETE", preflight(t, base, "https://app.example", "DELETE", "x-graphql-event-stream-token"), allowed)
		check(t, "preflight, unknown header", preflight(t, base, "https://app.example", "POST", "x-evil"), refused)
		// Simple and actual requests: allowed origins can read the answer
		// (errors included), refused ones cannot.
		resp, body := post(t, base, "https://app.example", "application/json", query)
		check(t, "POST, allowed", resp, allowed)
		if resp.StatusCode != 200 || !strings.Contains(body, "Query") {
			t.Errorf("POST, allowed: %d %s", resp.StatusCode, body)
		}
		resp, _ = post(t, base, "https://app.example", "application/json", `{"query":"{ nope }"}`)
		check(t, "POST error, allowed", resp, allowed)
		resp, _ = post(t, base, "https://evil.example", "application/json", query)
		check(t, "POST, refused", resp, refused)
		resp, _ = get(t, base+"/graphql?query="+url.QueryEscape("{ __typename }"), map[string]string{"Origin": "https://app.example"})
		check(t, "GET, allowed", resp, allowed)
		resp, _ = get(t, base+"/graphql?query="+url.QueryEscape("{ __typename }"), map[string]string{"Origin": "https://evil.example"})
		check(t, "GET, refused", resp, refused)
		// A "simple" cross-site POST (text/plain, sent by browsers without
		// preflight) is never executed, from any origin.
		for _, origin := range []string{"https://app.example", "https://evil.example"} {
			resp, body := post(t, base, origin, "text/plain", query)
			if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(body, "BAD_USER_INPUT") {
				t.Errorf("text/plain POST from %s: %d %s", origin, resp.StatusCode, body)
			}
		}
	})

	t.Run("wildcard", func(t *testing.T) {
		base, _, _ := startGateway(t, "-cors-origins", "*")
		any := want{"*", false}
		resp := preflight(t, base, "https://anyone.example", "POST", "content-type")
		check(t, "preflight", resp, any)
		resp, _ = post(t, base, "https://anyone.example", "application/json", query)
		check(t, "POST with a cookie", resp, any)
		resp, _ = get(t, base+"/graphql?query="+url.QueryEscape("{ __typename }"), map[string]string{"Origin": "null"})
		check(t, "GET from an opaque origin", resp, any)
	})

	t.Run("unset: same origin only", func(t *testing.T) {
		base, _, _ := startGateway(t)
		check(t, "preflight", preflight(t, base, "https://app.example", "POST", "content-type"), want{})
		resp, _ := post(t, base, "https://app.example", "application/json", query)
		check(t, "POST", resp, want{})
	})
}

// /metrics never carries CORS headers: metrics are for scrapers, not for
// pages of another origin, even one allowed to call the API.
func TestMetricsWithoutCORS(t *testing.T) {
	const origin = "https://app.example"
	g := startOpsGateway(t, "-cors-origins", origin)
	resp, body := get(t, g.URL+"/metrics", map[string]string{"Origin": origin})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	if h := accessControlHeaders(resp.Header); len(h) > 0 {
		t.Errorf("GET /metrics with Origin carries %v", h)
	}
	req, _ := http.NewRequest(http.MethodOptions, g.URL+"/metrics", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "GET")
	pre, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pre.Body.Close()
	if h := accessControlHeaders(pre.Header); len(h) > 0 {
		t.Errorf("a preflight of /metrics is answered with %v", h)
	}
	// The API still gets them.
	resp, _ = get(t, g.URL+"/graphql?query="+urlQueryEscape("{ __typename }"), map[string]string{"Origin": origin})
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
		t.Errorf("/graphql Access-Control-Allow-Origin = %q, want %q", got, origin)
	}
}
