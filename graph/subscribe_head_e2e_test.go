package graph_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// A subscription needs the chain head (the explorer's newest transaction)
// to start. Started while the explorer is down, it gets an
// UPSTREAM_UNAVAILABLE error within live.HeadTimeout, as its first event,
// then completes: it used to wait, silent, as long as the explorer was
// down. The queries, over the same explorer, fail as usual meanwhile.

// headTimeout is the feed's bound on the wait for the head: the default,
// live.HeadTimeout (10 s), or 1 s under -short.
func headTimeout() time.Duration {
	if testing.Short() {
		return time.Second
	}
	return live.HeadTimeout
}

// downExplorerGateway serves a gateway with a live feed whose explorer
// (and upstream) is explorerURL, reached through tr (the caller checks
// for leaks: noLeaks).
func downExplorerGateway(t *testing.T, tr *http.Transport, explorerURL string) *testGateway {
	t.Helper()
	client, err := upstream.New(upstream.Config{
		DataNodeURL: explorerURL, ExplorerURL: explorerURL, HTTPClient: &http.Client{Transport: tr},
		Retry: upstream.RetryConfig{InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := graph.CursorKeysForTest()
	logs := &testutil.LockedBuffer{}
	feed := graph.NewLiveFeed(live.Config{Explorer: client, Interval: 20 * time.Millisecond, Linger: time.Millisecond,
		HeadTimeout: headTimeout(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, keys)
	srv := httptest.NewServer(transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream:   client,
		CursorKeys: keys,
		Live:       feed,
		Logger:     slog.New(slog.NewTextHandler(logs, nil)),
	}), transport.Config{}))
	t.Cleanup(func() {
		feed.Close()
		srv.Close()
	})
	return &testGateway{URL: srv.URL, Client: client}
}

// closedPort is an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// checkNoHead checks the subscription's error payload, received after
// elapsed.
func checkNoHead(t *testing.T, payload []byte, elapsed time.Duration, explorer string) {
	t.Helper()
	var resp gqlResponse
	if err := json.Unmarshal(payload, &resp); err != nil {
		t.Fatalf("payload %s: %v", payload, err)
	}
	if len(resp.Errors) != 1 || resp.Errors[0].code() != "UPSTREAM_UNAVAILABLE" {
		t.Fatalf("payload %s, want one UPSTREAM_UNAVAILABLE error", payload)
	}
	if msg := resp.Errors[0].Message; !strings.Contains(msg, "explorer") || !strings.Contains(msg, "subscribe again") {
		t.Errorf("message %q", msg)
	}
	if strings.Contains(string(payload), explorer) || strings.Contains(string(payload), "127.0.0.1") {
		t.Errorf("the error names the explorer's address: %s", payload)
	}
	if elapsed > headTimeout()+5*time.Second {
		t.Errorf("the error came after %s; the bound is %s", elapsed, headTimeout())
	}
	t.Logf("error after %s: %s", elapsed.Round(time.Millisecond), payload)
}

// Over Server-Sent Events with the explorer's port closed, and over
// WebSocket with the explorer answering 503. Each waits out the head
// timeout (headTimeout), so the two wait together; the leak check is the
// parent's, once both are done.
func TestSubscriptionWithExplorerDown(t *testing.T) {
	sseTransport, wsTransport := &http.Transport{}, &http.Transport{}
	noLeaks(t, sseTransport, wsTransport)
	t.Run("SSE", func(t *testing.T) {
		t.Parallel()
		subscriptionWithExplorerDownSSE(t, sseTransport)
	})
	t.Run("WebSocket", func(t *testing.T) {
		t.Parallel()
		subscriptionWithExplorerDownWebSocket(t, wsTransport)
	})
}

// Over Server-Sent Events, the explorer's port closed.
func subscriptionWithExplorerDownSSE(t *testing.T, tr *http.Transport) {
	addr := closedPort(t)
	g := downExplorerGateway(t, tr, "http://"+addr)
	start := time.Now()
	s := subscribeSSE(t, g.URL, `subscription { transactions { cursor node { hash } } }`, nil)
	name, data := s.mustEvent()
	elapsed := time.Since(start)
	if name != "next" {
		t.Fatalf("event %q %s, want next with the error", name, data)
	}
	checkNoHead(t, data, elapsed, addr)
	if name, data := s.mustEvent(); name != "complete" {
		t.Fatalf("event %q %s after the error, want complete", name, data)
	}
}

// Over WebSocket, the explorer answering 503.
func subscriptionWithExplorerDownWebSocket(t *testing.T, tr *http.Transport) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>maintenance, proxy 10.1.2.3</html>", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	g := downExplorerGateway(t, tr, down.URL)
	ws := connectWS(t, g.URL)
	start := time.Now()
	ws.subscribe("1", `subscription { transactions { cursor } }`, nil)
	m := ws.read()
	elapsed := time.Since(start)
	// graphql-transport-ws: an operation that could not start is an
	// `error` message (its payload the errors), and no `complete` follows.
	if m.ID != "1" || (m.Type != "error" && m.Type != "next") {
		t.Fatalf("message %+v", m)
	}
	payload := m.Payload
	if m.Type == "error" {
		payload, _ = json.Marshal(map[string]json.RawMessage{"errors": m.Payload})
	}
	checkNoHead(t, payload, elapsed, strings.TrimPrefix(down.URL, "http://"))
	if strings.Contains(string(payload), "10.1.2.3") {
		t.Errorf("payload %s", payload)
	}
	// The connection still serves.
	ws.subscribe("2", `{ __typename }`, nil)
	for {
		m := ws.read()
		if m.ID == "2" && m.Type == "next" {
			break
		}
		if m.ID != "1" {
			t.Fatalf("message %+v", m)
		}
	}
}
