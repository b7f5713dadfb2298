package graph_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/upstream"
)

// An upstream's error answer reaches clients only as the fields the wire
// document defines (docs/upstream-errors.md): the status, and the code and
// message of a JSON error body, network addresses redacted. An HTML page
// from a proxy or a plain-text body is never shown: the message says the
// status line ("the data-node answered 502 Bad Gateway"), and the body
// (clipped) goes to the log. The same holds for both services, and no
// failure to connect or time-out names an address.

// leaks are what no response may carry.
var leaks = []string{"10.1.2.3", "<html", "<!DOCTYPE", "proxy", "panic", "goroutine", "nginx", "datanode-7", "explorer.internal", "/srv/app"}

// queriesOf are a data-node query and two explorer queries.
var queriesOf = map[upstream.Service][]string{
	upstream.ServiceDataNode: {`{ assets(first: 2) { edges { cursor } } }`},
	upstream.ServiceExplorer: {`{ transactions(first: 2) { edges { cursor } } }`, `{ transaction(hash: "` + strings.Repeat("AB", 32) + `") { hash } }`},
}

// loggedGateway serves a gateway over upstreamURL whose log the test reads.
func loggedGateway(t *testing.T, upstreamURL string, adjust func(*gatewayOptions)) (*testGateway, *testutil.LockedBuffer) {
	t.Helper()
	logs := &testutil.LockedBuffer{}
	opts := gatewayOptions{
		Executor: graph.ExecutorConfig{Logger: slog.New(slog.NewTextHandler(logs, nil))},
		Client: upstream.Config{
			Retry: upstream.RetryConfig{InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond},
			// Every call fails: the breaker would answer for the upstream.
			Breaker: upstream.BreakerConfig{Failures: -1},
		},
	}
	if adjust != nil {
		adjust(&opts)
	}
	return newGatewayWith(t, upstreamURL, opts), logs
}

func TestUpstreamErrorBodiesAreNotForwarded(t *testing.T) {
	htmlProxy := "<html><head><title>502 Bad Gateway</title></head><body>internal proxy 10.1.2.3:8080</body></html>"
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		// wantMessage is the message's end, after "the <service> ";
		// wantUp extensions.upstream.message.
		wantMessage, wantUp string
		// logged must be in the log (the body as received).
		logged string
	}{
		{"html 502", 502, "text/html", htmlProxy, "answered 502 Bad Gateway", "502 Bad Gateway", "internal proxy 10.1.2.3:8080"},
		{"html 503", 503, "text/html", "<!DOCTYPE html><html>upstream connect error (backend datanode-7.svc:3008)</html>", "answered 503 Service Unavailable", "503 Service Unavailable", "datanode-7.svc:3008"},
		{"plain-text 500", 500, "text/plain", "panic: runtime error\ngoroutine 7 [running]:\n/srv/app/main.go:42 10.1.2.3", "answered 500 Internal Server Error", "500 Internal Server Error", "/srv/app/main.go:42"},
		{"html 400", 400, "text/html", "<html>400 Bad Request<hr>nginx/1.25.3 at 10.1.2.3</html>", "answered 400 Bad Request", "400 Bad Request", "nginx/1.25.3"},
		{"plain-text 404", 404, "text/plain", "no route to 10.1.2.3 via proxy\n", "answered 404 Not Found for its own route (check the configured base URL)", "404 Not Found", "no route to 10.1.2.3 via proxy"},
		{"plain-text 403", 403, "text/plain", "forbidden by proxy 10.1.2.3", "answered 403 Forbidden", "403 Forbidden", "forbidden by proxy 10.1.2.3"},
		{"json 400, an ordinary message", 400, "application/json", `{"code":3,"message":"first and last cannot be used together","details":[]}`,
			"answered 400: first and last cannot be used together", "first and last cannot be used together", ""},
		{"json 503 naming a backend", 503, "application/json", `{"code":14,"message":"connection error: desc = \"transport: Error while dialing: dial tcp 10.1.2.3:3007: connect: connection refused\"","details":[]}`,
			`answered 503: connection error: desc = "transport: Error while dialing: dial tcp [address]: connect: connection refused"`,
			`connection error: desc = "transport: Error while dialing: dial tcp [address]: connect: connection refused"`, "10.1.2.3:3007"},
		{"json 502 naming a URL", 502, "application/json", `{"code":13,"message":"Get \"http://explorer.internal:3009/rest/transactions\": EOF","details":[]}`,
			`answered 502: Get "[address]": EOF`, `Get "[address]": EOF`, "explorer.internal:3009"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeUpstream{status: c.status, headers: map[string][]string{"Content-Type": {c.contentType}}, body: c.body}
			srv := httptest.NewServer(f)
			t.Cleanup(srv.Close)
			g, logs := loggedGateway(t, srv.URL, nil)
			for service, queries := range queriesOf {
				for _, q := range queries {
					status, raw := rawPost(t, g.URL, q, nil)
					for _, leak := range append(leaks, strings.TrimPrefix(srv.URL, "http://")) {
						if strings.Contains(string(raw), leak) {
							t.Errorf("%s: the response carries %q: %s", q, leak, raw)
						}
					}
					var resp gqlResponse
					if err := json.Unmarshal(raw, &resp); err != nil || len(resp.Errors) != 1 {
						t.Fatalf("%s: status %d, %s", q, status, raw)
					}
					e := resp.Errors[0]
					if want := fmt.Sprintf("the %s %s", service, c.wantMessage); e.Message != want || e.code() != "UPSTREAM_ERROR" {
						t.Errorf("%s: %s %q\nwant UPSTREAM_ERROR %q", q, e.code(), e.Message, want)
					}
					up, _ := e.Extensions["upstream"].(map[string]any)
					if up["message"] != c.wantUp || up["status"] != float64(c.status) || up["service"] != string(service) {
						t.Errorf("%s: extensions.upstream = %v, want message %q", q, up, c.wantUp)
					}
				}
			}
			if c.logged != "" && !strings.Contains(logs.String(), c.logged) {
				t.Errorf("the log lacks the upstream's answer %q:\n%s", c.logged, logs.String())
			}
		})
	}
}

// A body longer than the log's snippet is logged clipped.
func TestUpstreamErrorBodyIsLoggedClipped(t *testing.T) {
	body := "<html>" + strings.Repeat("internal proxy 10.1.2.3:8080 ", 2000) + "</html>"
	f := &fakeUpstream{status: 502, headers: map[string][]string{"Content-Type": {"text/html"}}, body: body}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	g, logs := loggedGateway(t, srv.URL, nil)
	_, raw := rawPost(t, g.URL, `{ assets(first: 2) { edges { cursor } } }`, nil)
	if strings.Contains(string(raw), "10.1.2.3") {
		t.Fatalf("response %s", raw)
	}
	s := logs.String()
	if !strings.Contains(s, "internal proxy 10.1.2.3:8080") || strings.Count(s, "internal proxy") > 20 {
		t.Fatalf("log (%d bytes) does not hold the clipped body:\n%.2000s", len(s), s)
	}
}

// Failures to connect and time-outs name no address, for either service
// (upstream.UnavailableError's text, which holds the URL, is never shown).
func TestUnavailableUpstreamNamesNoAddress(t *testing.T) {
	t.Parallel() // waits for time-outs; upstreams of its own
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	// An upstream that never answers.
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(hang.Close)
	hung := strings.TrimPrefix(hang.URL, "http://")

	cases := []struct {
		name, url, addr, want string
		adjust                func(*gatewayOptions)
	}{
		{"connection refused", "http://" + closed, closed, "is unavailable: the connection failed", nil},
		{"upstream time-out", hang.URL, hung, "is unavailable: no answer before the deadline", func(o *gatewayOptions) {
			o.Client.Timeout = 200 * time.Millisecond
			o.Client.Retry.Retries = -1
		}},
		{"request deadline", hang.URL, hung, "deadline", func(o *gatewayOptions) {
			o.Executor.RequestTimeout = 300 * time.Millisecond
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, _ := loggedGateway(t, c.url, c.adjust)
			for service, queries := range queriesOf {
				for _, q := range queries {
					_, raw := rawPost(t, g.URL, q, nil)
					host, port, _ := net.SplitHostPort(c.addr)
					for _, leak := range []string{c.addr, ":" + port, host, "dial", "Get \"", "127.0.0.1"} {
						if strings.Contains(string(raw), leak) {
							t.Errorf("%s: the response carries %q: %s", q, leak, raw)
						}
					}
					var resp gqlResponse
					if err := json.Unmarshal(raw, &resp); err != nil || len(resp.Errors) != 1 {
						t.Fatalf("%s: %s", q, raw)
					}
					if e := resp.Errors[0]; e.code() != "UPSTREAM_UNAVAILABLE" || !strings.Contains(e.Message, c.want) {
						t.Errorf("%s (%s): %s %q, want UPSTREAM_UNAVAILABLE %q", q, service, e.code(), e.Message, c.want)
					}
				}
			}
		})
	}
}
