package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/transport"
)

// TestSubscriptionOverWebSocket: over one graphql-transport-ws connection,
// a subscription resuming from a connection cursor, a filtered one, and
// one starting at the chain head receive the appended transactions
// exactly once, in chain order, filtered, each edge the same as the
// connection's (cursor, nested references); a query on the connection is
// answered too.
func TestSubscriptionOverWebSocket(t *testing.T) {
	g := newLiveGateway(t, liveOptions{})
	head := g.headCursor(t)
	first := g.appendTxs(t, 12)
	typ := first[0].Type

	c := connectWS(t, g.URL)
	c.subscribe("all", txSubscription, map[string]any{"after": head})
	c.subscribe("typed", txSubscription, map[string]any{"after": head, "cmdTypes": []string{typ}})
	g.waitSubscribed(t, 2)
	c.subscribe("head", txSubscription, nil)
	g.waitSubscribed(t, 1)
	second := g.appendTxs(t, 12)
	all := append(slices.Clone(first), second...)

	got := c.collect(map[string]int{"all": len(all), "typed": len(ofType(all, typ)), "head": len(second)})
	checkHashes(t, "resumed", got["all"], all)
	checkHashes(t, "filtered", got["typed"], ofType(all, typ))
	checkHashes(t, "from the head", got["head"], second)

	// One more: each receives it next, and nothing before it again.
	marker := g.appendTxs(t, 1)
	want := map[string]int{"all": 1, "head": 1}
	if marker[0].Type == typ {
		want["typed"] = 1
	}
	more := c.collect(want)
	checkHashes(t, "resumed, then", more["all"], marker)
	checkHashes(t, "from the head, then", more["head"], marker)

	// The events are the connection's edges (oldest first there).
	var conn struct {
		Transactions struct{ Edges []json.RawMessage }
	}
	g.query(t, `{ transactions(first: 25) { edges { `+edgeSelection+` } } }`, nil).mustData(t, &conn)
	events := append(got["all"], more["all"]...)
	for i, e := range events {
		if w := conn.Transactions.Edges[len(events)-1-i]; string(e.raw) != string(w) {
			t.Fatalf("event %d:\n%s\nconnection edge:\n%s", i, e.raw, w)
		}
	}

	// A query over the connection: one next, then complete.
	c.subscribe("q", `{ transactions(first: 1) { edges { cursor } } }`, nil)
	for {
		m := c.read()
		if m.ID != "q" {
			continue
		}
		if m.Type != "next" || !strings.Contains(string(m.Payload), `"cursor"`) {
			t.Fatalf("query over WebSocket: %+v %s", m, m.Payload)
		}
		break
	}
	if m := c.read(); m.ID != "q" || m.Type != "complete" {
		t.Fatalf("got %+v %s, want complete of q", m, m.Payload)
	}
}

// TestSubscriptionResume: a client that stops after some events and
// subscribes again with the last cursor it received gets the rest, with
// no gap and no duplicate, then the live feed.
func TestSubscriptionResume(t *testing.T) {
	g := newLiveGateway(t, liveOptions{})
	head := g.headCursor(t)
	txs := g.appendTxs(t, 10)
	c := connectWS(t, g.URL)
	c.subscribe("a", txSubscription, map[string]any{"after": head})
	got := c.collect(map[string]int{"a": 4})
	checkHashes(t, "first part", got["a"], txs[:4])
	c.send(wsMessage{ID: "a", Type: "complete"})

	txs = append(txs, g.appendTxs(t, 10)...)
	c.subscribe("b", txSubscription, map[string]any{"after": got["a"][3].Cursor})
	rest := c.collect(map[string]int{"b": 16})
	checkHashes(t, "resumed", rest["b"], txs[4:])
	marker := g.appendTxs(t, 1)
	checkHashes(t, "live", c.collect(map[string]int{"b": 1})["b"], marker)
}

// TestSubscriptionOverSSE: graphql-sse's distinct connections mode: a POST
// accepting text/event-stream receives the appended transactions as
// `next` events, filtered, in order; the request deadline, which bounds
// queries, does not cut the stream.
func TestSubscriptionOverSSE(t *testing.T) {
	g := newLiveGateway(t, liveOptions{Executor: graph.ExecutorConfig{RequestTimeout: time.Millisecond}})
	head := g.headByAppend(t)
	first := g.appendTxs(t, 10)
	typ := first[0].Type
	all := subscribeSSE(t, g.URL, txSubscription, map[string]any{"after": head})
	typed := subscribeSSE(t, g.URL, txSubscription, map[string]any{"after": head, "cmdTypes": []string{typ}})
	fromHead := subscribeSSE(t, g.URL, txSubscription, nil)
	g.waitSubscribed(t, 3)
	txs := append(slices.Clone(first), g.appendTxs(t, 10)...)
	checkHashes(t, "resumed", all.edges(20), txs)
	checkHashes(t, "filtered", typed.edges(len(ofType(txs, typ))), ofType(txs, typ))
	checkHashes(t, "from the head", fromHead.edges(10), txs[10:])
	marker := g.appendTxs(t, 1)
	checkHashes(t, "then", all.edges(1), marker)
}

// headByAppend is the cursor of a transaction appended as the head, for a
// gateway whose request deadline is too
// short for a query.
func (g *liveGateway) headByAppend(t *testing.T) string {
	t.Helper()
	txs := g.appendTxs(t, 1)
	return graph.TxCursorAt(txs[0].Block, txs[0].Index)
}

// TestWebSocketOrigins: a WebSocket upgrade from an origin the CORS
// settings do not allow is refused with 403 before the upgrade; the same
// origin, a listed one, or any with "*" connect.
func TestWebSocketOrigins(t *testing.T) {
	cases := []struct {
		name    string
		allowed []string
		origin  string
		ok      bool
	}{
		{"same origin, none configured", nil, "same", true},
		{"no Origin (not a browser)", nil, "", true},
		{"another origin, none configured", nil, "https://evil.example", false},
		{"a listed origin", []string{"https://app.example"}, "https://app.example", true},
		{"a listed origin, other case", []string{"https://app.example"}, "https://APP.example", true},
		{"same origin, others listed", []string{"https://app.example"}, "same", true},
		{"an unlisted origin", []string{"https://app.example"}, "https://evil.example", false},
		{"another scheme", []string{"https://app.example"}, "http://app.example", false},
		{"a wildcard pattern is not a pattern", []string{"https://*.example"}, "https://evil.example", false},
		{"any origin", []string{"*"}, "https://evil.example", true},
	}
	g := newLiveGateway(t, liveOptions{NoFeed: true})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := g
			if tc.allowed != nil {
				g = newLiveGateway(t, liveOptions{NoFeed: true, Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{AllowedOrigins: tc.allowed}}})
			}
			origin := tc.origin
			if origin == "same" {
				origin = g.URL
			}
			conn, resp, err := dialWS(t, g.URL, origin)
			if tc.ok {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				_ = conn.Close(websocket.StatusNormalClosure, "")
				return
			}
			if err == nil {
				_ = conn.CloseNow()
				t.Fatal("upgraded")
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("response %+v, err %v; want 403", resp, err)
			}
			var body struct{ Errors []gqlError }
			raw, _ := io.ReadAll(resp.Body)
			if json.Unmarshal(raw, &body) != nil || len(body.Errors) != 1 || body.Errors[0].code() != "BAD_USER_INPUT" || !strings.Contains(body.Errors[0].Message, "origin") {
				t.Fatalf("body %s", raw)
			}
		})
	}
}

// TestWebSocketInitTimeout: a connection that sends no connection_init is
// closed with 4408, as graphql-transport-ws says.
func TestWebSocketInitTimeout(t *testing.T) {
	g := newLiveGateway(t, liveOptions{NoFeed: true, Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{InitTimeout: 50 * time.Millisecond}}})
	conn, _, err := dialWS(t, g.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	c := &wsClient{t: t, conn: conn}
	m, err := c.next()
	if code := websocket.CloseStatus(err); code != 4408 {
		t.Fatalf("got %+v, %v; want close 4408", m, err)
	}
}

// TestWebSocketProtocolErrors: a subscribe before connection_init closes
// the connection with 4401 (Unauthorized), as graphql-transport-ws says;
// the other protocol errors are TestWebSocketProtocol's.
func TestWebSocketProtocolErrors(t *testing.T) {
	g := newLiveGateway(t, liveOptions{NoFeed: true})
	conn, _, err := dialWS(t, g.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	c := &wsClient{t: t, conn: conn}
	c.subscribe("1", `subscription { transactions { cursor } }`, nil)
	if _, err := c.next(); websocket.CloseStatus(err) != 4401 {
		t.Fatalf("got %v; want close 4401", err)
	}
}

// errorOf returns the error of a subscription's refusal: a next with one
// error then complete (an error of the resolver: the operation executed),
// or an error message (a request error: it never executed; no complete
// follows, which wsClient.next checks).
func (c *wsClient) errorOf(id string) gqlError {
	c.t.Helper()
	for {
		m := c.read()
		if m.ID != id {
			continue
		}
		var errs []gqlError
		switch m.Type {
		case "next":
			var resp struct{ Errors []gqlError }
			_ = json.Unmarshal(m.Payload, &resp)
			errs = resp.Errors
			if n := c.read(); n.ID != id || n.Type != "complete" {
				c.t.Fatalf("after the error: %+v", n)
			}
		case "error":
			_ = json.Unmarshal(m.Payload, &errs)
		default:
			c.t.Fatalf("%s: %s %s, want an error", id, m.Type, m.Payload)
		}
		if len(errs) != 1 {
			c.t.Fatalf("%s: errors %s", id, m.Payload)
		}
		return errs[0]
	}
}

func wantError(t *testing.T, e gqlError, code string, parts ...string) {
	t.Helper()
	if e.code() != code {
		t.Fatalf("error %+v, want %s", e, code)
	}
	for _, p := range parts {
		if !strings.Contains(e.Message, p) {
			t.Fatalf("message %q does not contain %q", e.Message, p)
		}
	}
}

// TestWebSocketSubscriptionLimit: a connection holds at most
// MaxPerConnection subscriptions; another connection has its own.
func TestWebSocketSubscriptionLimit(t *testing.T) {
	g := newLiveGateway(t, liveOptions{Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{MaxPerConnection: 2}}})
	c := connectWS(t, g.URL)
	c.subscribe("1", txSubscription, nil)
	c.subscribe("2", txSubscription, nil)
	g.waitSubscribed(t, 2)
	c.subscribe("3", txSubscription, nil)
	wantError(t, c.errorOf("3"), "RATE_LIMITED", "2 subscriptions", "connection")

	other := connectWS(t, g.URL)
	other.subscribe("1", txSubscription, nil)
	other.subscribe("2", txSubscription, nil)
	g.waitSubscribed(t, 2)
	txs := g.appendTxs(t, 2)
	for _, cl := range []*wsClient{c, other} {
		got := cl.collect(map[string]int{"1": 2, "2": 2})
		checkHashes(t, "1", got["1"], txs)
		checkHashes(t, "2", got["2"], txs)
	}
}

// TestSubscriptionBadInput: arguments are validated as Query.transactions
// validates them, before any upstream request; a replay past the backlog
// is refused saying what to do; a gateway without a feed says so.
func TestSubscriptionBadInput(t *testing.T) {
	g := newLiveGateway(t, liveOptions{Live: live.Config{MaxBacklog: 5}})
	head := g.headCursor(t)
	g.Sample.Service.ResetCounters()
	c := connectWS(t, g.URL)
	cases := []struct {
		name  string
		vars  map[string]any
		parts []string
	}{
		{"unknown type string", map[string]any{"cmdTypes": []string{"Submit order"}}, []string{"cmdTypes[0]", `did you mean "Submit Order"`}},
		{"forged cursor", map[string]any{"after": "bm90IGEgY3Vyc29y"}, []string{"after", "not issued by this gateway"}},
		{"cursor of another list", map[string]any{"after": assetsCursor(t, g)}, []string{"after"}},
	}
	for i, tc := range cases {
		id := string(rune('a' + i))
		c.subscribe(id, txSubscription, tc.vars)
		wantError(t, c.errorOf(id), "BAD_USER_INPUT", tc.parts...)
	}
	c.subscribe("party", `subscription { transactions(parties: ["nope"]) { cursor } }`, nil)
	wantError(t, c.errorOf("party"), "BAD_USER_INPUT", "parties[0]")
	c.subscribe("invalid", `subscription { transactions(nope: 1) { cursor } }`, nil)
	wantError(t, c.errorOf("invalid"), "BAD_USER_INPUT", "nope")
	c.subscribe("deep", `subscription { transactions { node { submitter { transactions { edges { node { submitter { transactions { edges { node { submitter { transactions { edges { cursor } } } } } } } } } } } } } }`, nil)
	wantError(t, c.errorOf("deep"), "QUERY_TOO_COMPLEX")
	if n := g.Sample.Service.Requests(sampleservice.EndpointTransactions); n != 0 {
		t.Fatalf("bad input made %d explorer requests", n)
	}

	g.appendTxs(t, 6)
	c.subscribe("backlog", txSubscription, map[string]any{"after": head})
	wantError(t, c.errorOf("backlog"), "BAD_USER_INPUT", "more than 5", "Query.transactions", "newest cursor")

	off := newLiveGateway(t, liveOptions{NoFeed: true})
	oc := connectWS(t, off.URL)
	oc.subscribe("1", txSubscription, nil)
	wantError(t, oc.errorOf("1"), "UPSTREAM_UNAVAILABLE", "live feed disabled")
	s := subscribeSSE(t, off.URL, txSubscription, nil)
	if name, data := s.mustEvent(); name != "next" || !strings.Contains(string(data), "live feed disabled") {
		t.Fatalf("SSE: %s %s", name, data)
	}
	if name, _ := s.mustEvent(); name != "complete" {
		t.Fatalf("SSE: %s, want complete", name)
	}
}

func assetsCursor(t *testing.T, g *liveGateway) string {
	t.Helper()
	var d struct {
		Assets struct{ Edges []struct{ Cursor string } }
	}
	g.query(t, `{ assets(first: 1) { edges { cursor } } }`, nil).mustData(t, &d)
	return d.Assets.Edges[0].Cursor
}

// TestSubscriptionSlowConsumer: a subscription whose events cannot be
// written as fast as they come (each needs a data-node call, held at a
// gate) is dropped once Buffer transactions wait: its client receives
// what was delivered, in order, then an error saying how to resume; a
// subscription of another connection keeps receiving throughout.
func TestSubscriptionSlowConsumer(t *testing.T) {
	g := newLiveGateway(t, liveOptions{Gate: "/api/v2/", Live: live.Config{Buffer: 25}})
	head := g.headCursor(t)
	fast, slow := connectWS(t, g.URL), connectWS(t, g.URL)
	fast.subscribe("f", `subscription($after: String) { transactions(after: $after) { cursor node { hash } } }`, map[string]any{"after": head})
	const slowQuery = `subscription($after: String) { transactions(after: $after) {
		cursor node { hash submitter { delegations(first: 1) { edges { cursor } } } } } }`
	slow.subscribe("s", slowQuery, map[string]any{"after": head})
	slowSSE := subscribeSSE(t, g.URL, slowQuery, map[string]any{"after": head})
	g.waitSubscribed(t, 3)
	// In steps the fast one reads in full (a batch is handed out at once),
	// 40 in all, more than the slow one's buffer.
	var txs []sampleservice.AppendedTx
	for range 2 {
		step := g.appendTxs(t, 20)
		checkHashes(t, "fast", fast.collect(map[string]int{"f": 20})["f"], step)
		txs = append(txs, step...)
	}
	// Batches are handed out one after the other: once the fast one has
	// this one, the slow one has been offered all 40 before it.
	marker := g.appendTxs(t, 1)
	checkHashes(t, "fast, then", fast.collect(map[string]int{"f": 1})["f"], marker)
	// The slow subscriptions' first events wait at the gate, on one
	// request, which the two share (the same selection of the same
	// transaction: liveshare.go); what was offered behind them waits in
	// their overflows until the feed drops them (after slowAfter, a
	// second), and only then is the gate opened. (It waited for a second
	// held request: the held one's retry, after the upstream's deadline,
	// 10 s, which only happened to be longer than slowAfter.)
	<-g.Gate.held
	waitFor(t, func() bool { return g.Live.Stats().DroppedSlow == 2 }, func() string {
		return fmt.Sprintf("the feed did not drop the slow subscriptions: %+v", g.Live.Stats())
	})
	g.Gate.release()

	// Over WebSocket: the events, then a last next with the error, then
	// complete (the operation executed: `error` is for one that did not).
	var got []edge
	for {
		m := slow.read()
		var resp struct{ Errors []gqlError }
		if m.Type != "next" || json.Unmarshal(m.Payload, &resp) != nil {
			t.Fatalf("slow: %s %s", m.Type, m.Payload)
		}
		if len(resp.Errors) == 0 {
			got = append(got, eventEdge(t, m.Payload))
			continue
		}
		if len(resp.Errors) != 1 {
			t.Fatalf("last next %s", m.Payload)
		}
		wantError(t, resp.Errors[0], "RATE_LIMITED", "fell 25 transactions behind", "resubscribe with `after`")
		break
	}
	if m := slow.read(); m.ID != "s" || m.Type != "complete" {
		t.Fatalf("slow, after the error: %s %s %s, want complete", m.ID, m.Type, m.Payload)
	}
	if len(got) == 0 || len(got) > 26 {
		t.Fatalf("the slow subscription received %d events before its error", len(got))
	}
	checkHashes(t, "slow", got, txs[:len(got)])
	// Over SSE: the events, then a last next with the error, then complete.
	var gotSSE []edge
	for {
		name, data := slowSSE.mustEvent()
		var resp struct{ Errors []gqlError }
		if name != "next" || json.Unmarshal(data, &resp) != nil {
			t.Fatalf("SSE: %s %s", name, data)
		}
		if len(resp.Errors) == 0 {
			gotSSE = append(gotSSE, eventEdge(t, data))
			continue
		}
		wantError(t, resp.Errors[0], "RATE_LIMITED", "fell 25 transactions behind", "resubscribe with `after`")
		break
	}
	checkHashes(t, "slow over SSE", gotSSE, txs[:len(gotSSE)])
	if name, data := slowSSE.mustEvent(); name != "complete" {
		t.Fatalf("SSE after the error: %s %s", name, data)
	}
	if st := g.Live.Stats(); st.DroppedSlow != 2 {
		t.Fatalf("stats %+v", st)
	}
	// The connection is still open, and the other subscription live.
	after := g.appendTxs(t, 1)
	checkHashes(t, "fast, after the drop", fast.collect(map[string]int{"f": 1})["f"], after)
	slow.subscribe("again", txSubscription, map[string]any{"after": got[len(got)-1].Cursor})
	rest := append(append(slices.Clone(txs[len(got):]), marker...), after...)
	checkHashes(t, "slow, resumed", slow.collect(map[string]int{"again": len(rest)})["again"], rest)
}

// TestSubscriptionDrain: LiveFeed.Shutdown completes every subscription
// (WebSocket `complete`, SSE `event: complete`), then closes WebSocket
// connections with a normal close frame; a new subscription is refused
// saying why.
func TestSubscriptionDrain(t *testing.T) {
	g := newLiveGateway(t, liveOptions{})
	c := connectWS(t, g.URL)
	c.subscribe("1", txSubscription, nil)
	c.subscribe("2", txSubscription, nil)
	s := subscribeSSE(t, g.URL, txSubscription, nil)
	g.waitSubscribed(t, 3)
	idle := connectWS(t, g.URL) // a connection without subscriptions

	done := make(chan error, 1)
	go func() { done <- g.Live.Shutdown(context.Background()) }()
	completed := map[string]bool{}
	for len(completed) < 2 {
		m := c.read()
		if m.Type != "complete" {
			t.Fatalf("got %s %s, want complete", m.Type, m.Payload)
		}
		completed[m.ID] = true
	}
	for _, cl := range []*wsClient{c, idle} {
		if _, err := cl.next(); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
			t.Fatalf("after the completions: %v, want a normal close", err)
		}
	}
	if name, data := s.mustEvent(); name != "complete" {
		t.Fatalf("SSE: %s %s, want complete", name, data)
	}
	if _, _, err := s.event(); !errors.Is(err, io.EOF) {
		t.Fatalf("SSE after complete: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	after := subscribeSSE(t, g.URL, txSubscription, nil)
	if name, data := after.mustEvent(); name != "next" || !strings.Contains(string(data), "UPSTREAM_UNAVAILABLE") || !strings.Contains(string(data), "shutting down") {
		t.Fatalf("after the drain: %s %s", name, data)
	}
	if conn, _, err := dialWS(t, g.URL, ""); err == nil {
		wc := &wsClient{t: t, conn: conn}
		wc.send(wsMessage{Type: "connection_init"})
		if _, err := wc.next(); websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Fatalf("init after the drain: %v, want going away", err)
		}
		_ = conn.CloseNow()
	}
}
