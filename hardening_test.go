package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestHardeningSettings(t *testing.T) {
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxDepth != 20 || cfg.MaxCost != 250000 || cfg.MaxTokens != 10000 || cfg.MaxAliases != 30 ||
		cfg.UpstreamRate != 15 || cfg.UpstreamBurst != 60 || cfg.UpstreamRetries != 2 || cfg.UpstreamConcurrency != 32 ||
		cfg.BreakerFailures != 5 || cfg.BreakerOpen.String() != "5s" {
		t.Fatalf("defaults: %+v", cfg)
	}
	for _, bad := range [][]string{
		{"-max-depth", "0"}, {"-max-cost", "-1"}, {"-max-tokens", "0"}, {"-max-aliases", "0"},
		{"-upstream-rate", "0"}, {"-upstream-burst", "0"}, {"-upstream-retries", "11"}, {"-upstream-concurrency", "0"},
		{"-breaker-failures", "0"}, {"-breaker-open", "0s"},
	} {
		if _, err := parseConfig(bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// The limits reach the handler.
	base, _, _ := startGateway(t, "-max-aliases", "2", "-max-depth", "5")
	post := func(q string) (int, []map[string]any) { return postForErrors(t, base, q) }
	if status, errs := post(`{ a: assets(first: 1) { edges { cursor } } b: assets(first: 2) { edges { cursor } } }`); status != 200 || len(errs) != 0 {
		t.Fatalf("two aliases: %d %v", status, errs)
	}
	for _, q := range []string{
		`{ a: assets(first: 1) { edges { cursor } } b: assets(first: 2) { edges { cursor } } c: assets(first: 3) { edges { cursor } } }`,
		`{ assets { edges { node { details { erc20 { contractAddress } } } } } }`,
	} {
		status, errs := post(q)
		if status != http.StatusOK || len(errs) != 1 || errs[0]["extensions"].(map[string]any)["code"] != "QUERY_TOO_COMPLEX" {
			t.Fatalf("%s: %d %v", q, status, errs)
		}
	}
}

// postForErrors POSTs query q to the gateway at base and returns the
// status and the response's errors.
func postForErrors(t *testing.T, base, q string) (int, []map[string]any) {
	t.Helper()
	resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":`+jsonString(q)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Errors []map[string]any }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Errors
}

func TestRequestBodyLimitWithoutContentLength(t *testing.T) {
	base, _, _ := startGateway(t, "-max-body-bytes", "2048")
	big := `{"query":"{ assets { edges { cursor } } }", "pad": "` + strings.Repeat("x", 4096) + `"}`
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1 // chunked: the limit is met while reading
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "BAD_USER_INPUT") || !strings.Contains(string(body), "2048") {
		t.Fatalf("chunked oversized body = %d %s", resp.StatusCode, body)
	}
}

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
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
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
		check(t, "preflight, PUT", preflight(t, base, "https://app.example", "PUT", ""), refused)
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

// TestNoWebSocketTransport: the API has no subscriptions and enables no
// WebSocket transport, so an upgrade is refused whatever its origin.
func TestNoWebSocketTransport(t *testing.T) {
	base, _, _ := startGateway(t, "-cors-origins", "https://app.example")
	addr := strings.TrimPrefix(base, "http://")
	for _, origin := range []string{"https://app.example", "https://evil.example"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		req := "GET /graphql HTTP/1.1\r\nHost: " + addr + "\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n" +
			"Origin: " + origin + "\r\n\r\n"
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode == http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != "" {
			t.Fatalf("origin %s: the upgrade was accepted", origin)
		}
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "WebSocket") || !strings.Contains(string(body), "BAD_USER_INPUT") {
			t.Fatalf("origin %s: %d %s", origin, resp.StatusCode, body)
		}
	}
}
