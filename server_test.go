package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/internal/testutil"
)

func TestConfigFlagWinsOverEnvironment(t *testing.T) {
	env := map[string]string{"LISTEN_ADDR": ":9000", "PAGE_MAX": "200", "CORS_ORIGINS": "https://a.example, https://b.example/"}
	cfg, err := parseConfig([]string{"-listen", ":9100"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != ":9100" || cfg.PageMax != 200 || strings.Join(cfg.CORSOrigins, " ") != "https://a.example https://b.example" {
		t.Fatalf("config = %+v", cfg)
	}
	if cfg.PageDefault != 50 || cfg.UpstreamTimeout != 10*time.Second || !cfg.Introspection {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"upstream not a URL":   {[]string{"-upstream", "host:1"}, `UPSTREAM_URL="host:1": want an http(s) URL`},
		"explorer alone":       {[]string{"-explorer", "https://e.example"}, "EXPLORER_URL is set without UPSTREAM_URL"},
		"wildcard with others": {[]string{"-cors-origins", "*,https://a.example"}, "cannot be combined"},
		"origin with a path":   {[]string{"-cors-origins", "https://a.example/app"}, "is not an origin"},
		"page sizes":           {[]string{"-page-default", "100", "-page-max", "10"}, "PAGE_DEFAULT (100) <= PAGE_MAX (10)"},
		"page max over 5000":   {[]string{"-page-max", "6000"}, "at most 5000"},
		"bad duration":         {[]string{"-upstream-timeout", "soon"}, "want a duration"},
		"stray argument":       {[]string{"serve"}, `unexpected argument "serve"`},
		"compression level":    {[]string{"-compression-level", "10"}, "COMPRESSION_LEVEL=10: want 1 (fastest) to 9"},
		"compression minimum":  {[]string{"-compression-min-bytes", "-1"}, "COMPRESSION_MIN_BYTES=-1: want 0 or more"},
		"HTTP cache max age":   {[]string{"-http-cache-max-age", "2m"}, "HTTP_CACHE_MAX_AGE=2m0s: want 0 to 1m"},
		"subscriptions per client over the process's": {[]string{"-live-max-subscriptions", "100", "-live-max-subscriptions-per-client", "101"}, "LIVE_MAX_SUBSCRIPTIONS_PER_CLIENT=101: want 1 to LIVE_MAX_SUBSCRIPTIONS (100)"},
		"no catch-ups per client":                     {[]string{"-live-max-catchups-per-client", "0"}, "LIVE_MAX_CATCHUPS_PER_CLIENT=0: want at least 1"},
		"no streams per client":                       {[]string{"-ws-max-connections-per-client", "0"}, "WS_MAX_CONNECTIONS_PER_CLIENT=0: want at least 1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := parseConfig(tc.args, func(string) string { return "" }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestReadmeListsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range (&config{}).settings() {
		if !bytes.Contains(readme, []byte("`"+s.env+"`")) || !bytes.Contains(readme, []byte("`-"+s.flag+"`")) {
			t.Errorf("README.md does not document %s / -%s", s.env, s.flag)
		}
	}
}

// testEnv is the environment of the gateways tests start: empty but for
// SAMPLE_BLOCK_INTERVAL=0, so that the embedded sample data service keeps
// its dataset still unless a test asks for new blocks (by flag, which
// wins over the environment).
func testEnv(key string) string {
	if key == "SAMPLE_BLOCK_INTERVAL" {
		return "0"
	}
	return ""
}

// startGateway runs the gateway as `go run .` does, on a loopback port.
func startGateway(t *testing.T, args ...string) (url string, logs *testutil.LockedBuffer, stop func() error) {
	t.Helper()
	cfg, err := parseConfig(args, testEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	logs = &testutil.LockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	gw, err := newGateway(ctx, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsLn, err := gw.listenMetrics()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gw.serve(ctx, ln, metricsLn) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		err := <-done
		gw.Close()
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), logs, stop
}

func get(t *testing.T, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	resp, body := testutil.Get(t, url, header)
	return resp, string(body)
}

func TestRoutesOverTheEmbeddedSampleService(t *testing.T) {
	base, logs, _ := startGateway(t)
	if !strings.Contains(logs.String(), "serving the embedded sample data service") {
		t.Errorf("the log does not say the sample service is used:\n%s", logs)
	}

	resp, body := get(t, base+"/", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "<html") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("GET / = %d %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	resp, body = get(t, base+"/healthz", nil)
	if resp.StatusCode != 200 || body != "ok\n" {
		t.Errorf("healthz = %d %q", resp.StatusCode, body)
	}
	resp, body = get(t, base+"/readyz", nil)
	if resp.StatusCode != 200 || body != "ready\n" {
		t.Errorf("readyz = %d %q", resp.StatusCode, body)
	}
	resp, body = get(t, base+"/schema.graphql", nil)
	if resp.StatusCode != 200 || body != string(schemaSDL) || !strings.Contains(body, "union Command") {
		t.Errorf("schema.graphql = %d, %d bytes", resp.StatusCode, len(body))
	}

	// GET and POST of the same query give the same data.
	const q = `{ assets(first: 2) { edges { node { id } } pageInfo { hasNextPage } } }`
	resp, viaGet := get(t, base+"/graphql?query="+urlQueryEscape(q), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /graphql = %d %s", resp.StatusCode, viaGet)
	}
	post, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":`+jsonString(q)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	viaPost, _ := io.ReadAll(post.Body)
	post.Body.Close()
	var a, b struct {
		Data struct {
			Assets struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	_ = json.Unmarshal([]byte(viaGet), &a)
	_ = json.Unmarshal(viaPost, &b)
	if len(a.Data.Assets.Edges) != 2 || a.Data.Assets.Edges[0] != b.Data.Assets.Edges[0] {
		t.Errorf("GET %s\nPOST %s", viaGet, viaPost)
	}
	// A mutation over GET is refused (there are no mutations at all).
	resp, body = get(t, base+"/graphql?query="+urlQueryEscape(`mutation { x }`), nil)
	if resp.StatusCode == 200 && !strings.Contains(body, "errors") {
		t.Errorf("GET mutation = %d %s", resp.StatusCode, body)
	}
}

func TestRequestBodyLimit(t *testing.T) {
	base, _, _ := startGateway(t, "-max-body-bytes", "2048")
	big := `{"query":"{ assets { edges { cursor } } }", "pad": "` + strings.Repeat("x", 4096) + `"}`
	resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "BAD_USER_INPUT") {
		t.Fatalf("oversized body = %d %s", resp.StatusCode, body)
	}
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
