package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// The clients' fair share of the live feed over real connections: each
// client (the client key the gateway's middleware sets; here the test's
// X-Test-Client header) holds a bounded share of the subscriptions, on
// every transport, and of the open streams; a resume the feed's history
// can answer, or refuse, costs no explorer request.

const testClientHeader = "X-Test-Client"

// clientGateway is a live gateway whose requests carry the client key of
// their X-Test-Client header, as the gateway's middleware sets the
// address's.
func clientGateway(t *testing.T, opts liveOptions) *liveGateway {
	t.Helper()
	adjust := opts.Server
	opts.Server = func(s *httptest.Server) {
		h := s.Config.Handler
		s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if key := r.Header.Get(testClientHeader); key != "" {
				r = r.WithContext(upstream.WithClient(r.Context(), key))
			}
			h.ServeHTTP(w, r)
		})
		if adjust != nil {
			adjust(s)
		}
	}
	return newLiveGateway(t, opts)
}

func dialWSAs(t *testing.T, gatewayURL, client string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	return websocket.Dial(ctx, wsURL(gatewayURL), &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
		HTTPHeader:   http.Header{testClientHeader: {client}},
	})
}

// connectWSAs opens a WebSocket as client and completes connection_init.
func connectWSAs(t *testing.T, gatewayURL, client string) *wsClient {
	t.Helper()
	conn, _, err := dialWSAs(t, gatewayURL, client)
	if err != nil {
		t.Fatalf("dial as %s: %v", client, err)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	c := &wsClient{t: t, conn: conn}
	c.send(wsMessage{Type: "connection_init"})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("got %+v, want connection_ack", m)
	}
	return c
}

// streamAs sends a streaming request (method, Accept) as client; the
// response is closed at the test's end.
func streamAs(t *testing.T, gatewayURL, client, method, accept, query string, vars map[string]any, header http.Header) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	var body io.Reader
	if method == http.MethodPost {
		b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, gatewayURL, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set(testClientHeader, client)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		cancel()
		t.Fatalf("%s as %s: %v", method, client, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = resp.Body.Close()
		tr.CloseIdleConnections()
	})
	return resp, cancel
}

// sseAs POSTs a subscription as client, accepting text/event-stream.
func sseAs(t *testing.T, gatewayURL, client, query string, vars map[string]any) *sseStream {
	t.Helper()
	resp, cancel := streamAs(t, gatewayURL, client, http.MethodPost, "text/event-stream", query, vars, nil)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, ct, raw)
	}
	return &sseStream{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
}

// sseError reads an SSE subscription's refusal: a next event with one
// error, then complete.
func sseError(t *testing.T, s *sseStream) gqlError {
	t.Helper()
	name, data := s.mustEvent()
	var resp struct{ Errors []gqlError }
	if err := json.Unmarshal(data, &resp); name != "next" || err != nil || len(resp.Errors) != 1 {
		t.Fatalf("SSE: %s %s, want one error", name, data)
	}
	if name, _ := s.mustEvent(); name != "complete" {
		t.Fatalf("SSE: %s after the error, want complete", name)
	}
	return resp.Errors[0]
}

// tooManyStreams checks a stream refused by the per-client limit: 429,
// Retry-After, a GraphQL error RATE_LIMITED naming the limit.
func tooManyStreams(t *testing.T, what string, resp *http.Response, limit string) {
	t.Helper()
	if resp == nil {
		t.Fatalf("%s: no response", what)
	}
	raw, _ := io.ReadAll(resp.Body)
	var body struct{ Errors []gqlError }
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || json.Unmarshal(raw, &body) != nil || len(body.Errors) != 1 {
		t.Fatalf("%s: status %d, Retry-After %q: %s; want 429 with a GraphQL error", what, resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}
	wantError(t, body.Errors[0], "RATE_LIMITED", limit+" streams open", "per-client connection limit")
}

// TestSubscriptionsPerClientOnEveryTransport: a client holds at most
// MaxSubscriptionsPerClient subscriptions, whatever the transports and
// connections they are spread over; past it, RATE_LIMITED naming the
// limit; other clients are not held back, and a subscription that ends
// frees its slot.
func TestSubscriptionsPerClientOnEveryTransport(t *testing.T) {
	g := clientGateway(t, liveOptions{Live: live.Config{MaxSubscriptionsPerClient: 3}})
	const a, b = "198.51.100.7", "198.51.100.8"
	ws := connectWSAs(t, g.URL, a)
	ws.subscribe("1", txSubscription, nil)
	ws.subscribe("2", txSubscription, nil)
	g.waitSubscribed(t, 2)
	sse := sseAs(t, g.URL, a, txSubscription, nil)
	g.waitSubscribed(t, 1)

	ws.subscribe("3", txSubscription, nil)
	wantError(t, ws.errorOf("3"), "RATE_LIMITED", "3 subscriptions", "per-client subscription limit")
	other := connectWSAs(t, g.URL, a) // another connection of the client
	other.subscribe("1", txSubscription, nil)
	wantError(t, other.errorOf("1"), "RATE_LIMITED", "3 subscriptions")
	wantError(t, sseError(t, sseAs(t, g.URL, a, txSubscription, nil)), "RATE_LIMITED", "3 subscriptions")
	resp, _ := streamAs(t, g.URL, a, http.MethodPost, `multipart/mixed;subscriptionSpec=1.0`, txSubscription, nil, nil)
	raw, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), "RATE_LIMITED") || !strings.Contains(string(raw), "3 subscriptions") {
		t.Fatalf("multipart subscription past the limit: %d %s", resp.StatusCode, raw)
	}

	bws := connectWSAs(t, g.URL, b)
	bws.subscribe("1", txSubscription, nil)
	g.waitSubscribed(t, 1)

	// One of a's ends: its slot is free.
	ws.send(wsMessage{ID: "1", Type: "complete"})
	waitFor(t, func() bool { return g.Live.Stats().Subscriptions == 3 }, func() string { return "the completed subscription did not end" })
	ws.subscribe("4", txSubscription, nil)
	g.waitSubscribed(t, 1)
	txs := g.appendTxs(t, 2)
	got := ws.collect(map[string]int{"2": 2, "4": 2})
	checkHashes(t, "a 2", got["2"], txs)
	checkHashes(t, "a 4", got["4"], txs)
	checkHashes(t, "a sse", sse.edges(2), txs)
	checkHashes(t, "b 1", bws.collect(map[string]int{"1": 2})["1"], txs)
	if st := g.Live.Stats(); st.RefusedClient != 4 || st.Refused != 0 {
		t.Errorf("stats %+v, want 4 refused by the per-client limit", st)
	}
}

// TestStreamsPerClient: a client holds at most MaxConnectionsPerClient
// streams (WebSocket connections, SSE and multipart streams together);
// past it the stream is refused before it starts, 429 with a GraphQL
// error; other clients are not held back; a stream that closes frees its
// slot.
func TestStreamsPerClient(t *testing.T) {
	g := clientGateway(t, liveOptions{Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{MaxConnectionsPerClient: 2}}})
	const a, b = "198.51.100.7", "198.51.100.8"
	ws := connectWSAs(t, g.URL, a)
	sse := sseAs(t, g.URL, a, txSubscription, nil)
	g.waitSubscribed(t, 1)

	conn, resp, err := dialWSAs(t, g.URL, a)
	if err == nil {
		_ = conn.CloseNow()
		t.Fatal("a third stream's WebSocket upgrade was accepted")
	}
	tooManyStreams(t, "WebSocket", resp, "2")
	resp, _ = streamAs(t, g.URL, a, http.MethodPost, "text/event-stream", txSubscription, nil, nil)
	tooManyStreams(t, "SSE", resp, "2")
	resp, _ = streamAs(t, g.URL, a, http.MethodGet, `multipart/mixed;subscriptionSpec=1.0`, "", nil, nil)
	tooManyStreams(t, "multipart", resp, "2")
	// graphql-sse's single connection mode: the reservation is answered
	// at once (not a stream), its event stream is one.
	resp, _ = streamAs(t, g.URL, a, http.MethodPut, "", "", nil, nil)
	token, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT: %d %s", resp.StatusCode, token)
	}
	resp, _ = streamAs(t, g.URL, a, http.MethodGet, "text/event-stream", "", nil, http.Header{"X-Graphql-Event-Stream-Token": {string(token)}})
	tooManyStreams(t, "SSE single connection mode", resp, "2")
	// Queries are not streams.
	var d struct{ Transactions struct{ Edges []any } }
	g.query(t, `{ transactions(first: 1) { edges { cursor } } }`, nil).mustData(t, &d)

	// Another client.
	bws := connectWSAs(t, g.URL, b)
	bws.subscribe("1", txSubscription, nil)
	g.waitSubscribed(t, 1)

	// a closes its SSE stream: a new connection is accepted once the
	// gateway has seen it close.
	sse.close()
	var again *websocket.Conn
	waitFor(t, func() bool {
		c, resp, err := dialWSAs(t, g.URL, a)
		if err != nil {
			if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("dial: %v", err)
			}
			return false
		}
		again = c
		return true
	}, func() string { return "no connection accepted after one closed" })
	_ = again.Close(websocket.StatusNormalClosure, "")
	ws.subscribe("1", txSubscription, nil)
	g.waitSubscribed(t, 1)
	txs := g.appendTxs(t, 1)
	checkHashes(t, "a", ws.collect(map[string]int{"1": 1})["1"], txs)
	checkHashes(t, "b", bws.collect(map[string]int{"1": 1})["1"], txs)
}

// clientBudget records the feed's budget waits: the poller's (priority)
// and those charged to clients, by key.
type clientBudget struct {
	mu       sync.Mutex
	priority int
	byKey    map[string]int
}

func (b *clientBudget) Wait(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if upstream.PriorityFrom(ctx) {
		b.priority++
		return nil
	}
	if b.byKey == nil {
		b.byKey = map[string]int{}
	}
	b.byKey[upstream.ClientFrom(ctx)]++
	return nil
}

func (*clientBudget) Pause(context.Context, time.Duration, bool) {}

func (b *clientBudget) clients() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for k, v := range b.byKey {
		out[k] = v
	}
	return out
}

// TestResumeFromHistoryOverWebSocket: a resume from a cursor the feed's
// history holds is caught up with no explorer request; one the history
// proves too old is refused with none; one older than the history with
// a rare filter reads the explorer, charged to its client. The poller's
// requests are all priority.
func TestResumeFromHistoryOverWebSocket(t *testing.T) {
	budget := &clientBudget{}
	g := clientGateway(t, liveOptions{Live: live.Config{MaxBacklog: 5, Budget: budget}}) // remembers 10
	const a = "198.51.100.7"
	head := g.headCursor(t)
	watcher := connectWSAs(t, g.URL, "198.51.100.9")
	watcher.subscribe("w", txSubscription, nil)
	g.waitSubscribed(t, 1)
	txs := g.appendTxs(t, 12)
	seen := watcher.collect(map[string]int{"w": 12})["w"]
	checkHashes(t, "watcher", seen, txs)
	if c := budget.clients(); len(c) != 0 {
		t.Fatalf("budget waits charged to clients before any resume: %v", c)
	}

	ws := connectWSAs(t, g.URL, a)
	// Within the history: the last 3, from memory.
	ws.subscribe("mem", txSubscription, map[string]any{"after": seen[8].Cursor})
	checkHashes(t, "from memory", ws.collect(map[string]int{"mem": 3})["mem"], txs[9:])
	// Older than the history, which holds more than 5 matching: refused.
	ws.subscribe("old", txSubscription, map[string]any{"after": head})
	wantError(t, ws.errorOf("old"), "BAD_USER_INPUT", "more than 5")
	if c := budget.clients(); len(c) != 0 {
		t.Fatalf("resumes the history served or refused made budget waits: %v", c)
	}
	// Older than the history, with a filter it holds few of: the explorer
	// is read, charged to the client.
	typ := txs[0].Type
	rare := ofType(txs, typ)
	if len(rare) > 5 {
		t.Skipf("the sample appended %d of type %s", len(rare), typ)
	}
	ws.subscribe("rare", txSubscription, map[string]any{"after": head, "cmdTypes": []string{typ}})
	checkHashes(t, "rare", ws.collect(map[string]int{"rare": len(rare)})["rare"], rare)
	if c := budget.clients(); c[a] == 0 || len(c) != 1 {
		t.Fatalf("budget waits by client %v, want the catch-up's charged to %s", c, a)
	}
	// And live after, every one of them.
	more := g.appendTxs(t, 2)
	got := ws.collect(map[string]int{"mem": 2})
	checkHashes(t, "mem live", got["mem"], more)
	if st := g.Live.Stats(); st.CaughtUpFromHistory != 1 || st.HistoryRefused != 1 {
		t.Errorf("stats %+v", st)
	}
}
