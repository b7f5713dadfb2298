package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
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
