package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/transport"
)

// The WebSocket transport against graphql-ws's PROTOCOL.md
// (graphql-transport-ws): one row per requirement, each over a real
// socket to a gateway, each followed by the check that the connection's
// goroutines on the server have all returned once the socket closed.

// wsGateway starts the gateway of TestWebSocketProtocol's rows of a
// kind (each kind's rows share one; its cleanup, after them, checks that
// nothing they started is left); logs receives its log.
func wsGateway(t *testing.T, kind string, logs *testutil.LockedBuffer) *liveGateway {
	t.Helper()
	var opts liveOptions
	switch kind {
	case "plain":
		opts.NoFeed = true
	case "feed":
	case "gate": // every upstream call of the resolvers waits at the gate
		opts = liveOptions{NoFeed: true, Gate: "/"}
	case "short":
		opts = liveOptions{NoFeed: true, Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{
			InitTimeout: time.Second, KeepAlive: 50 * time.Millisecond}}}
	case "limit":
		opts.Transport.Subscriptions.MaxPerConnection = 1
	case "small":
		opts = liveOptions{NoFeed: true, Executor: graph.ExecutorConfig{Limits: graph.Limits{MaxBodyBytes: 1024}}}
	case "panic":
		opts = liveOptions{NoFeed: true, Executor: graph.ExecutorConfig{Extensions: []graphql.HandlerExtension{panicOnOperation{name: "Boom"}}}}
	default:
		t.Fatalf("no gateway %q", kind)
	}
	opts.Executor.Logger = slog.New(slog.NewTextHandler(logs, nil))
	return newLiveGateway(t, opts)
}

// panicOnOperation panics in the responses of the operations named name.
type panicOnOperation struct{ name string }

func (panicOnOperation) ExtensionName() string                   { return "panicOnOperation" }
func (panicOnOperation) Validate(graphql.ExecutableSchema) error { return nil }
func (p panicOnOperation) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if graphql.HasOperationContext(ctx) {
		if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Name == p.name {
			panic("boom in " + p.name)
		}
	}
	return next(ctx)
}

// wsRow is a requirement: the messages a client sends (raw text, after
// connection_init when init is set) and the close they must cause, or an
// exchange of its own (check).
type wsRow struct {
	name   string
	gw     string   // wsGateway's kind; "" is "plain"
	protos []string // the subprotocols offered; nil: graphql-transport-ws
	init   bool
	send   []string
	close  websocket.StatusCode
	reason string // the close reason, when it is set
	check  func(t *testing.T, g *liveGateway, c *wsClient)
}

const typenameQuery = `{"query":"{ __typename }"}`

func TestWebSocketProtocol(t *testing.T) {
	longID := strings.Repeat("x", 300)
	rows := []wsRow{
		// Messages that are not graphql-transport-ws: 4400.
		{name: "invalid JSON", send: []string{`{"type":"connection_init"`}, close: 4400},
		{name: "an array", send: []string{`[{"type":"connection_init"}]`}, close: 4400},
		{name: "a string", send: []string{`"connection_init"`}, close: 4400},
		{name: "null", send: []string{`null`}, close: 4400},
		{name: "no type", send: []string{`{"payload":{}}`}, close: 4400},
		{name: "type not a string", send: []string{`{"type":["ping"]}`}, close: 4400},
		{name: "type null", send: []string{`{"type":null}`}, close: 4400},
		{name: "unknown type (subscriptions-transport-ws's start)", init: true, send: []string{`{"type":"start","id":"1","payload":` + typenameQuery + `}`}, close: 4400},
		{name: "a server's message: next", init: true, send: []string{`{"type":"next","id":"1","payload":{}}`}, close: 4400},
		{name: "a server's message: connection_ack", send: []string{`{"type":"connection_ack"}`}, close: 4400},
		{name: "connection_init payload not an object", send: []string{`{"type":"connection_init","payload":"token"}`}, close: 4400},
		{name: "ping payload not an object", send: []string{`{"type":"ping","payload":1}`}, close: 4400},
		{name: "pong payload not an object", send: []string{`{"type":"pong","payload":[]}`}, close: 4400},
		{name: "subscribe without id", init: true, send: []string{`{"type":"subscribe","payload":` + typenameQuery + `}`}, close: 4400},
		{name: "subscribe with an empty id", init: true, send: []string{`{"type":"subscribe","id":"","payload":` + typenameQuery + `}`}, close: 4400},
		{name: "subscribe with a numeric id", init: true, send: []string{`{"type":"subscribe","id":1,"payload":` + typenameQuery + `}`}, close: 4400},
		{name: "subscribe without payload", init: true, send: []string{`{"type":"subscribe","id":"1"}`}, close: 4400},
		{name: "subscribe payload not an object", init: true, send: []string{`{"type":"subscribe","id":"1","payload":"{ __typename }"}`}, close: 4400},
		{name: "subscribe without query", init: true, send: []string{`{"type":"subscribe","id":"1","payload":{"variables":{}}}`}, close: 4400},
		{name: "subscribe query not a string", init: true, send: []string{`{"type":"subscribe","id":"1","payload":{"query":{"text":"{ __typename }"}}}`}, close: 4400},
		{name: "subscribe variables not an object", init: true, send: []string{`{"type":"subscribe","id":"1","payload":{"query":"{ __typename }","variables":[1]}}`}, close: 4400},
		{name: "subscribe operationName not a string", init: true, send: []string{`{"type":"subscribe","id":"1","payload":{"query":"{ __typename }","operationName":7}}`}, close: 4400},
		{name: "subscribe extensions not an object", init: true, send: []string{`{"type":"subscribe","id":"1","payload":{"query":"{ __typename }","extensions":"x"}}`}, close: 4400},
		{name: "complete without id", init: true, send: []string{`{"type":"complete"}`}, close: 4400},
		{name: "a message over the size limit (1009, coder/websocket's)", gw: "small", init: true,
			send: []string{`{"type":"subscribe","id":"1","payload":{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("p", 2000) + `"}}}`}, close: websocket.StatusMessageTooBig},

		// The connection's life.
		{name: "subscribe before connection_init: 4401", send: []string{`{"type":"subscribe","id":"1","payload":` + typenameQuery + `}`}, close: 4401, reason: "Unauthorized"},
		{name: "a second connection_init: 4429", init: true, send: []string{`{"type":"connection_init"}`}, close: 4429, reason: "Too many initialisation requests"},
		{name: "no connection_init within InitTimeout: 4408", gw: "short", close: 4408, reason: "Connection initialisation timeout"},
		{name: "pings do not stand for connection_init", gw: "short", send: []string{`{"type":"pong"}`, `{"type":"ping"}`}, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			expectRaw(t, c, `{"type":"pong"}`)
		}, close: 4408},
		{name: "no subprotocol: 4406", protos: []string{}, close: 4406, reason: "Subprotocol not acceptable"},
		{name: "the legacy graphql-ws only: 4406", protos: []string{"graphql-ws"}, close: 4406, reason: "Subprotocol not acceptable"},
		{name: "both offered: graphql-transport-ws is chosen", protos: []string{"graphql-ws", "graphql-transport-ws"}, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			if p := c.conn.Subprotocol(); p != "graphql-transport-ws" {
				t.Fatalf("subprotocol %q", p)
			}
			c.send(wsMessage{Type: "connection_init"})
			if m := c.read(); m.Type != "connection_ack" {
				t.Fatalf("got %+v, want connection_ack", m)
			}
		}},
		{name: "connection_init with a payload", send: []string{`{"type":"connection_init","payload":{"token":"t"}}`}, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			if m := c.read(); m.Type != "connection_ack" {
				t.Fatalf("got %+v, want connection_ack", m)
			}
		}},

		// Operation ids.
		{name: "subscribe with the id of an active subscription: 4409", gw: "feed", init: true, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			c.subscribe("s", txSubscription, nil)
			g.waitSubscribed(t, 1)
			c.subscribe("s", txSubscription, nil)
			expectClose(t, c, 4409, "Subscriber for s already exists")
			waitSubscriptions(t, g, 0) // the subscription ended with its connection
		}},
		{name: "subscribe with the id of a query under way: 4409", gw: "gate", init: true, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			c.subscribe("q", `{ transactions(first: 1) { edges { cursor } } }`, nil)
			<-g.Gate.held
			c.subscribe("q", `{ __typename }`, nil)
			expectClose(t, c, 4409, "Subscriber for q already exists")
		}},
		{name: "4409 with a long id: the reason is cut to fit a close frame", gw: "feed", init: true, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			c.subscribe(longID, txSubscription, nil)
			g.waitSubscribed(t, 1)
			c.subscribe(longID, txSubscription, nil)
			ce := expectClose(t, c, 4409, "")
			if !strings.HasPrefix(ce.Reason, "Subscriber for xxxx") || len(ce.Reason) > 123 {
				t.Fatalf("reason %q", ce.Reason)
			}
		}},
		{name: "a query: next, then complete; its id is free again after", init: true, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			for range 2 {
				c.subscribe("q", `{ __typename }`, nil)
				expectNext(t, c, "q", `{"data":{"__typename":"Query"}}`)
				expectComplete(t, c, "q")
			}
		}},
		{name: "a request error: error, no complete; the id is free; the connection goes on", init: true, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			for _, bad := range []string{`{ nope }`, `{ __typename`, `query($n: Int!) { assets(first: $n) { edges { cursor } } }`} {
				c.subscribe("a", bad, nil)
				m := c.read()
				var errs []gqlError
				if m.ID != "a" || m.Type != "error" || json.Unmarshal(m.Payload, &errs) != nil || len(errs) == 0 || errs[0].code() == "" {
					t.Fatalf("%s: got %s %s %s, want error with GraphQL errors", bad, m.ID, m.Type, m.Payload)
				}
				// The same id at once: a complete of the failed operation
				// would come before this one's next.
				c.subscribe("a", `{ __typename }`, nil)
				expectNext(t, c, "a", `{"data":{"__typename":"Query"}}`)
				expectComplete(t, c, "a")
			}
		}},
		{name: "a subscription's resolver error (per-connection limit): next with RATE_LIMITED, then complete; a completed subscription's slot is free", gw: "limit", init: true, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			c.subscribe("1", txSubscription, nil)
			g.waitSubscribed(t, 1)
			c.subscribe("2", txSubscription, nil)
			m := c.read()
			var resp struct{ Errors []gqlError }
			if m.ID != "2" || m.Type != "next" || json.Unmarshal(m.Payload, &resp) != nil || len(resp.Errors) != 1 {
				t.Fatalf("got %s %s %s, want next with one error", m.ID, m.Type, m.Payload)
			}
			wantError(t, resp.Errors[0], "RATE_LIMITED", "1 subscriptions")
			expectComplete(t, c, "2")
			c.send(wsMessage{ID: "1", Type: "complete"})
			waitSubscriptions(t, g, 0)
			c.subscribe("2", txSubscription, nil)
			g.waitSubscribed(t, 1)
			txs := g.appendTxs(t, 1)
			checkHashes(t, "2", c.collect(map[string]int{"2": 1})["2"], txs)
		}},
		{name: "client complete stops a subscription: nothing more for it, not even complete; its id is free again", gw: "feed", init: true, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			c.subscribe("s", txSubscription, nil)
			c.subscribe("w", txSubscription, nil) // a witness
			g.waitSubscribed(t, 2)
			first := g.appendTxs(t, 1)
			got := c.collect(map[string]int{"s": 1, "w": 1})
			checkHashes(t, "s", got["s"], first)
			c.send(wsMessage{ID: "s", Type: "complete"})
			c.send(wsMessage{ID: "never-started", Type: "complete"}) // an unknown id: ignored
			waitSubscriptions(t, g, 1)
			more := g.appendTxs(t, 3)
			var witness []edge
			for len(witness) < len(more) {
				m := c.read()
				if m.ID != "w" || m.Type != "next" {
					t.Fatalf("got %s %s %s, want the witness's events only", m.ID, m.Type, m.Payload)
				}
				witness = append(witness, eventEdge(t, m.Payload))
			}
			checkHashes(t, "w", witness, more)
			c.subscribe("s", txSubscription, map[string]any{"after": graph.TxCursorAt(more[0].Block, more[0].Index)})
			checkHashes(t, "s again", c.collect(map[string]int{"s": 2})["s"], more[1:])
		}},

		// ping, pong, keep-alive.
		{name: "ping before connection_init: pong, payload echoed", check: func(t *testing.T, g *liveGateway, c *wsClient) {
			c.sendRaw(`{"type":"ping","payload":{"n":1}}`)
			expectRaw(t, c, `{"type":"pong","payload":{"n":1}}`)
			c.sendRaw(`{"type":"ping"}`)
			expectRaw(t, c, `{"type":"pong"}`)
			c.sendRaw(`{"type":"connection_init"}`)
			expectRaw(t, c, `{"type":"connection_ack"}`)
			c.sendRaw(`{"type":"ping","payload":null}`)
			expectRaw(t, c, `{"type":"pong"}`)
		}},
		{name: "pong at any time: accepted, unanswered", check: func(t *testing.T, g *liveGateway, c *wsClient) {
			c.sendRaw(`{"type":"pong"}`)
			c.sendRaw(`{"type":"connection_init"}`)
			expectRaw(t, c, `{"type":"connection_ack"}`)
			c.sendRaw(`{"type":"pong","payload":{"x":[1]}}`)
			c.sendRaw(`{"type":"ping"}`)
			expectRaw(t, c, `{"type":"pong"}`)
		}},
		{name: "keep-alive: a ping every KeepAlive", gw: "short", init: true, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			for range 3 {
				expectRaw(t, c, `{"type":"ping"}`)
				c.sendRaw(`{"type":"pong"}`)
			}
		}},

		// Panics.
		{name: "a panic in an operation ends it alone, with INTERNAL", gw: "panic", init: true, check: func(t *testing.T, g *liveGateway, c *wsClient) {
			c.subscribe("boom", `query Boom { __typename }`, nil)
			m := c.read()
			var resp struct{ Errors []gqlError }
			if m.ID != "boom" || m.Type != "next" || json.Unmarshal(m.Payload, &resp) != nil || len(resp.Errors) != 1 || resp.Errors[0].code() != "INTERNAL" {
				t.Fatalf("got %s %s %s, want next with INTERNAL", m.ID, m.Type, m.Payload)
			}
			expectComplete(t, c, "boom")
			c.subscribe("ok", `{ __typename }`, nil)
			expectNext(t, c, "ok", `{"data":{"__typename":"Query"}}`)
			expectComplete(t, c, "ok")
		}},
	}
	// The rows by gateway, in order.
	var kinds []string
	byKind := map[string][]wsRow{}
	for _, row := range rows {
		if row.gw == "" {
			row.gw = "plain"
		}
		if byKind[row.gw] == nil {
			kinds = append(kinds, row.gw)
		}
		byKind[row.gw] = append(byKind[row.gw], row)
	}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			logs := &testutil.LockedBuffer{}
			g := wsGateway(t, kind, logs)
			for _, row := range byKind[kind] {
				t.Run(row.name, func(t *testing.T) {
					c := dialProtocols(t, g.URL, row.protos)
					if row.init {
						c.sendRaw(`{"type":"connection_init"}`)
						if m := c.read(); m.Type != "connection_ack" {
							t.Fatalf("got %+v, want connection_ack", m)
						}
					}
					for _, s := range row.send {
						c.sendRaw(s)
					}
					if row.check != nil {
						row.check(t, g, c)
					}
					if row.close != 0 {
						expectClose(t, c, row.close, row.reason)
					}
					_ = c.conn.CloseNow()
					waitNoWSGoroutines(t)
				})
			}
			if kind == "panic" && !strings.Contains(logs.String(), "boom in Boom") {
				t.Fatalf("the panic was not logged:\n%s", logs.String())
			}
		})
	}
}

// dialProtocols opens a WebSocket offering protos (nil:
// graphql-transport-ws).
func dialProtocols(t *testing.T, gatewayURL string, protos []string) *wsClient {
	t.Helper()
	if protos == nil {
		protos = []string{"graphql-transport-ws"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, wsURL(gatewayURL), &websocket.DialOptions{Subprotocols: protos})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &wsClient{t: t, conn: conn}
}

// sendRaw sends a text message as it is.
func (c *wsClient) sendRaw(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// expectRaw reads the next message, pings included: it must be want,
// byte for byte.
func expectRaw(t *testing.T, c *wsClient, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	_, b, err := c.conn.Read(ctx)
	if err != nil || string(b) != want {
		t.Fatalf("got %s, %v; want %s", b, err, want)
	}
}

func expectNext(t *testing.T, c *wsClient, id, payload string) {
	t.Helper()
	if m := c.read(); m.ID != id || m.Type != "next" || string(m.Payload) != payload {
		t.Fatalf("got %s %s %s, want next of %s: %s", m.ID, m.Type, m.Payload, id, payload)
	}
}

func expectComplete(t *testing.T, c *wsClient, id string) {
	t.Helper()
	if m := c.read(); m.ID != id || m.Type != "complete" || m.Payload != nil {
		t.Fatalf("got %s %s %s, want complete of %s", m.ID, m.Type, m.Payload, id)
	}
}

// expectClose reads until the connection closes (pings answered, any
// other message fails): its close frame must have code, and reason when
// reason is set; a 44xx reason is never empty.
func expectClose(t *testing.T, c *wsClient, code websocket.StatusCode, reason string) websocket.CloseError {
	t.Helper()
	m, err := c.next()
	if err == nil {
		t.Fatalf("got %s %s %s, want close %d", m.ID, m.Type, m.Payload, code)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("got %v, want close %d", err, code)
	}
	if reason != "" && ce.Reason != reason || code >= 4000 && ce.Reason == "" {
		t.Fatalf("close %d reason %q, want %q", code, ce.Reason, reason)
	}
	return ce
}

// waitSubscriptions waits until the feed holds n subscriptions.
func waitSubscriptions(t *testing.T, g *liveGateway, n int) {
	t.Helper()
	waitFor(t, func() bool { return g.Live.Stats().Subscriptions == n }, func() string {
		return "the feed holds " + strconv.Itoa(g.Live.Stats().Subscriptions) + " subscriptions, want " + strconv.Itoa(n)
	})
}

// waitFor polls cond until it holds, within streamDeadline (a goroutine's
// end, a count in the feed: nothing sends a message for them).
func waitFor(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(streamDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(what())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// wsGoroutines are the stacks of the goroutines of the WebSocket
// transport's connections (those serving one, its heartbeat, closer,
// operations and their pumps).
func wsGoroutines() []string {
	var out []string
	for _, g := range allStacks() {
		if strings.Contains(g, "transport.(*wsSession)") || strings.Contains(g, "transport.(*wsTransport)") || strings.Contains(g, "transport.pump[") {
			out = append(out, g)
		}
	}
	return out
}

// waitNoWSGoroutines waits until no goroutine of a WebSocket connection
// is left: none outlives its socket.
func waitNoWSGoroutines(t *testing.T) {
	t.Helper()
	waitFor(t, func() bool { return len(wsGoroutines()) == 0 }, func() string {
		return "goroutines of closed WebSocket connections are left:\n\n" + strings.Join(wsGoroutines(), "\n\n")
	})
}

// TestWebSocketNonReadingPeer: a client that stops reading, while it
// keeps sending pongs, is closed once a write has waited WriteTimeout
// (without a close frame, which could not reach it: it sees an abnormal
// closure), its subscription ends and every goroutine of its connection
// returns. The feed does not drop it as too slow first (its buffer holds
// every event): the write deadline does it.
func TestWebSocketNonReadingPeer(t *testing.T) {
	const writeTimeout = 300 * time.Millisecond
	g := newLiveGateway(t, liveOptions{
		Live:      live.Config{Buffer: 100_000},
		Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{WriteTimeout: writeTimeout}},
		Server: func(srv *httptest.Server) {
			// Small socket buffers: a few events fill them.
			srv.Listener = smallBuffers{srv.Listener}
		},
	})
	// A client whose socket takes little before the server's writes block.
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			_ = conn.(*net.TCPConn).SetReadBuffer(4096)
		}
		return conn, err
	}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, wsURL(g.URL), &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"}, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	c := &wsClient{t: t, conn: conn}
	c.sendRaw(`{"type":"connection_init"}`) // the ack is never read
	c.subscribe("s", txSubscription, nil)
	g.waitSubscribed(t, 1)
	// Blind pongs, never reading.
	stop, pongsDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(pongsDone)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				// Blocks once the server no longer reads (its socket
				// closed, the kernel stops acknowledging): CloseNow ends it.
				if conn.Write(context.Background(), websocket.MessageText, []byte(`{"type":"pong"}`)) != nil {
					return
				}
			}
		}
	}()
	defer func() {
		close(stop)
		_ = conn.CloseNow()
		<-pongsDone
	}()

	g.appendTxs(t, 300) // far more than the buffers hold
	appended := time.Now()
	waitSubscriptions(t, g, 0) // its slot is free
	// The first write that blocks started after the events existed: the
	// end comes WriteTimeout after it at the earliest.
	if d := time.Since(appended); d < writeTimeout || d > writeTimeout+5*time.Second {
		t.Errorf("the subscription ended %v after the events were appended; WriteTimeout is %v", d, writeTimeout)
	}
	if st := g.Live.Stats(); st.DroppedSlow != 0 {
		t.Fatalf("the feed dropped the subscription as too slow (%+v): the write deadline should have closed it", st)
	}
	waitNoWSGoroutines(t)
	// The client's side: what had been written, then the end of the
	// connection, without a close frame.
	var err2 error
	for err2 == nil {
		ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
		_, _, err2 = conn.Read(ctx)
		cancel()
	}
	if code := websocket.CloseStatus(err2); code != -1 {
		t.Fatalf("the connection ended with %v (close %d); want no close frame", err2, code)
	}
}

// smallBuffers gives accepted connections a small send buffer (no
// autotuning: a peer that does not read blocks writes early).
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8192)
	}
	return c, err
}

// TestWebSocketOutlivesServerTimeouts: the server's ReadTimeout and
// WriteTimeout (deadlines on the connection, which Hijack's contract
// lets a hijacked one keep) do not end a WebSocket: pings and results
// flow long after them. (A regression test: net/http clears them today.)
func TestWebSocketOutlivesServerTimeouts(t *testing.T) {
	g := newLiveGateway(t, liveOptions{
		NoFeed:    true,
		Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{KeepAlive: 100 * time.Millisecond}},
		Server: func(srv *httptest.Server) {
			srv.Config.ReadTimeout = 50 * time.Millisecond
			srv.Config.WriteTimeout = 50 * time.Millisecond
		},
	})
	c := connectWS(t, g.URL)
	for range 3 { // each at least 100 ms after the last: the deadlines have passed
		expectRaw(t, c, `{"type":"ping"}`)
		c.sendRaw(`{"type":"pong"}`)
	}
	c.subscribe("q", `{ __typename }`, nil)
	expectNext(t, c, "q", `{"data":{"__typename":"Query"}}`)
	expectComplete(t, c, "q")
}

// TestWebSocketShutdownAnswersQueries: when the gateway shuts down, a
// query under way on a connection is answered (next, complete) before
// the connection closes with 1000.
func TestWebSocketShutdownAnswersQueries(t *testing.T) {
	g := newLiveGateway(t, liveOptions{Gate: "/"})
	c := connectWS(t, g.URL)
	c.subscribe("q", `{ transactions(first: 1) { edges { cursor } } }`, nil)
	<-g.Gate.held
	if err := g.Live.Shutdown(context.Background()); err != nil { // the connections' context has ended
		t.Fatal(err)
	}
	g.Gate.release()
	m := c.read()
	if m.ID != "q" || m.Type != "next" || !strings.Contains(string(m.Payload), `"cursor"`) {
		t.Fatalf("got %s %s %s, want the query's result", m.ID, m.Type, m.Payload)
	}
	expectComplete(t, c, "q")
	expectClose(t, c, websocket.StatusNormalClosure, "the gateway is shutting down")
	waitNoWSGoroutines(t)
}
