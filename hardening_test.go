package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tradenet/gateway/internal/testutil"
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
	resp, body := testutil.Do(t, req)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "BAD_USER_INPUT") || !strings.Contains(string(body), "2048") {
		t.Fatalf("chunked oversized body = %d %s", resp.StatusCode, body)
	}
}

// TestWebSocketOriginsAreCORSOrigins: a WebSocket opens only from the
// origins CORS_ORIGINS allows the API (unset: the gateway's own origin
// only; *: any), checked before the upgrade, since browsers apply no CORS
// to WebSockets. Clients that send no Origin (not browsers) may connect.
func TestWebSocketOriginsAreCORSOrigins(t *testing.T) {
	for _, tc := range []struct {
		cors    []string
		allowed map[string]bool // origin → may connect; "self" is the gateway's own
	}{
		{nil, map[string]bool{"self": true, "": true, "https://app.example": false}},
		{[]string{"https://app.example"}, map[string]bool{"self": true, "": true, "https://app.example": true, "https://evil.example": false, "http://app.example": false}},
		{[]string{"*"}, map[string]bool{"self": true, "https://evil.example": true}},
	} {
		var args []string
		if tc.cors != nil {
			args = []string{"-cors-origins", strings.Join(tc.cors, ",")}
		}
		base, _, _ := startGateway(t, args...)
		for origin, allowed := range tc.allowed {
			if origin == "self" {
				origin = base
			}
			header := http.Header{}
			if origin != "" {
				header.Set("Origin", origin)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql",
				&websocket.DialOptions{HTTPHeader: header, Subprotocols: []string{"graphql-transport-ws"}})
			switch {
			case allowed && err != nil:
				t.Errorf("CORS %v, origin %q: refused: %v", tc.cors, origin, err)
			case allowed:
				if err := conn.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_init"}`)); err != nil {
					t.Fatal(err)
				}
				_, msg, err := conn.Read(ctx)
				if err != nil || !strings.Contains(string(msg), `"connection_ack"`) {
					t.Errorf("CORS %v, origin %q: no connection_ack: %s %v", tc.cors, origin, msg, err)
				}
				conn.Close(websocket.StatusNormalClosure, "")
			case err == nil:
				conn.CloseNow()
				t.Errorf("CORS %v, origin %q: the upgrade was accepted", tc.cors, origin)
			case resp == nil || resp.StatusCode != http.StatusForbidden:
				t.Errorf("CORS %v, origin %q: want 403, got %v (%v)", tc.cors, origin, resp, err)
			}
			cancel()
		}
	}
}
