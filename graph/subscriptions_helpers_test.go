package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// The subscription tests run the gateway with a live feed over a sample
// service of their own, whose chain they grow (Service.AppendTransactions),
// and talk to it as browsers do: a WebSocket client speaking
// graphql-transport-ws by hand, an SSE client reading the event stream.
// Every wait is for a message, bounded by streamDeadline.

// streamDeadline bounds every wait for a message: generous, since the
// machine is shared; a test that reaches it has failed.
const streamDeadline = 60 * time.Second

// liveGateway is a gateway with a live feed over a sample of its own.
type liveGateway struct {
	*testGateway
	Live *graph.LiveFeed
	// subscribed receives a value each time the feed opens a subscription
	// (it then knows where it starts).
	subscribed chan struct{}
	Gate       *gate
	// upstream is the transport of the gateway's upstream client: its
	// idle connections are closed when goroutines are counted.
	upstream *http.Transport
}

type liveOptions struct {
	Executor  graph.ExecutorConfig
	Transport transport.Config
	Live      live.Config
	// Gate, if set, puts a gate in front of the sample for the resolvers'
	// calls whose path starts with it (liveGateway.Gate); the feed reads
	// the sample directly.
	Gate string
	// NoFeed serves without a live feed.
	NoFeed bool
	// Wrap, if set, wraps the resolvers' upstream (the feed's is not).
	Wrap func(graph.Upstream) graph.Upstream
	// Server, if set, adjusts the gateway's server before it starts (the
	// WebSocket tests set its timeouts, and its connections' buffers).
	Server func(*httptest.Server)
}

// newLiveGateway starts the gateway; it checks that the test leaks no
// goroutine (noLeaks), so call it before starting anything of the test's.
func newLiveGateway(t *testing.T, opts liveOptions) *liveGateway {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	noLeaks(t, tr)
	sample := startSample(t, sampleservice.Config{})
	client := &http.Client{Transport: tr}
	direct, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	g := &liveGateway{subscribed: make(chan struct{}, 1000), upstream: tr}
	resolvers := direct
	if opts.Gate != "" {
		g.Gate = newGate(t, sample.URL, opts.Gate)
		if resolvers, err = upstream.New(upstream.Config{DataNodeURL: g.Gate.URL, ExplorerURL: g.Gate.URL, HTTPClient: client}); err != nil {
			t.Fatal(err)
		}
	}
	keys := graph.CursorKeysForTest()
	if !opts.NoFeed {
		opts.Live.Explorer = direct
		if opts.Live.Interval == 0 {
			opts.Live.Interval = 10 * time.Millisecond
		}
		g.Live = graph.NewLiveFeed(opts.Live, keys)
		graph.OnSubscribedForTest(g.Live, func() { g.subscribed <- struct{}{} })
	}
	opts.Executor.Upstream = resolvers
	if opts.Wrap != nil {
		opts.Executor.Upstream = opts.Wrap(resolvers)
	}
	opts.Executor.CursorKeys = keys
	opts.Executor.Live = g.Live
	opts.Executor.Introspection = true
	srv := httptest.NewUnstartedServer(transport.NewHandler(graph.NewExecutor(opts.Executor), opts.Transport))
	if opts.Server != nil {
		opts.Server(srv)
	}
	srv.Start()
	t.Cleanup(func() {
		if g.Live != nil {
			g.Live.Close() // closes the WebSocket connections, which srv.Close does not wait for
		}
		srv.Close()
	})
	g.testGateway = &testGateway{URL: srv.URL, Sample: sample, Client: direct}
	return g
}

// waitSubscribed waits until the feed has opened n more subscriptions.
func (g *liveGateway) waitSubscribed(t *testing.T, n int) {
	t.Helper()
	timeout := time.NewTimer(streamDeadline)
	defer timeout.Stop()
	for range n {
		select {
		case <-g.subscribed:
		case <-timeout.C:
			t.Fatalf("the feed did not open %d subscriptions", n)
		}
	}
}

// headCursor is the connection cursor of the newest transaction.
func (g *liveGateway) headCursor(t *testing.T) string {
	t.Helper()
	var d struct {
		Transactions struct{ Edges []struct{ Cursor string } }
	}
	g.query(t, `{ transactions(first: 1) { edges { cursor } } }`, nil).mustData(t, &d)
	if len(d.Transactions.Edges) != 1 {
		t.Fatalf("no transactions: %+v", d)
	}
	return d.Transactions.Edges[0].Cursor
}

// appendTxs grows the sample's chain by n transactions.
func (g *liveGateway) appendTxs(t *testing.T, n int) []sampleservice.AppendedTx {
	t.Helper()
	txs, err := g.Sample.Service.AppendTransactions(n)
	if err != nil || len(txs) != n {
		t.Fatalf("append %d transactions: %d, %v", n, len(txs), err)
	}
	return txs
}

// edgeSelection is what the tests select of an edge, the same in the
// subscription and in the connection: nested references included.
const edgeSelection = `cursor node { hash block index type submitter { id } command { __typename
	... on WithdrawSubmission { asset { id details { symbol } } }
	... on TransferFunds { asset { id details { symbol } } } } }`

const txSubscription = `subscription($after: String, $cmdTypes: [String!]) {
	transactions(after: $after, cmdTypes: $cmdTypes) { ` + edgeSelection + ` } }`

// edge is an event's edge, raw and decoded.
type edge struct {
	raw    json.RawMessage
	Cursor string
	Node   struct{ Hash string }
}

// eventEdge decodes a subscription response; it fails on errors.
func eventEdge(t *testing.T, payload []byte) edge {
	t.Helper()
	var resp struct {
		Data   struct{ Transactions json.RawMessage }
		Errors []gqlError
	}
	if err := json.Unmarshal(payload, &resp); err != nil {
		t.Fatalf("event %s: %v", payload, err)
	}
	if len(resp.Errors) > 0 || resp.Data.Transactions == nil {
		t.Fatalf("event with errors: %s", payload)
	}
	e := edge{raw: resp.Data.Transactions}
	if err := json.Unmarshal(e.raw, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// checkHashes compares received edges with the expected transactions, in
// order.
func checkHashes(t *testing.T, name string, got []edge, want []sampleservice.AppendedTx) {
	t.Helper()
	var g, w []string
	for _, e := range got {
		g = append(g, e.Node.Hash)
	}
	for _, tx := range want {
		w = append(w, tx.Hash)
	}
	if strings.Join(g, ",") != strings.Join(w, ",") {
		t.Fatalf("%s: received %d transactions %v\nwant %d %v", name, len(g), g, len(w), w)
	}
}

func ofType(txs []sampleservice.AppendedTx, typ string) []sampleservice.AppendedTx {
	var out []sampleservice.AppendedTx
	for _, tx := range txs {
		if tx.Type == typ {
			out = append(out, tx)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// graphql-transport-ws, by hand

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
	// errored are the operations that received `error`: nothing may
	// follow it for them (no complete) until the client reuses the id.
	errored map[string]bool
}

func wsURL(httpURL string) string { return "ws" + strings.TrimPrefix(httpURL, "http") }

// dialWS opens a WebSocket to the gateway (origin "" sends none).
func dialWS(t *testing.T, gatewayURL, origin string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return dialWSHeader(gatewayURL, h)
}

func dialWSHeader(gatewayURL string, h http.Header) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	return websocket.Dial(ctx, wsURL(gatewayURL), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: h})
}

// connectWS opens a WebSocket and completes connection_init.
func connectWS(t *testing.T, gatewayURL string) *wsClient {
	t.Helper()
	return connectWSHeader(t, gatewayURL, nil)
}

// connectWSHeader is connectWS sending the upgrade request with h.
func connectWSHeader(t *testing.T, gatewayURL string, h http.Header) *wsClient {
	t.Helper()
	conn, _, err := dialWSHeader(gatewayURL, h)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	if conn.Subprotocol() != "graphql-transport-ws" {
		t.Fatalf("subprotocol %q", conn.Subprotocol())
	}
	c := &wsClient{t: t, conn: conn}
	c.send(wsMessage{Type: "connection_init"})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("got %+v, want connection_ack", m)
	}
	return c
}

func (c *wsClient) send(m wsMessage) {
	c.t.Helper()
	if m.Type == "subscribe" {
		delete(c.errored, m.ID)
	}
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	c.t.Helper()
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	c.send(wsMessage{ID: id, Type: "subscribe", Payload: payload})
}

// next reads the next message other than a ping (answered with a pong).
func (c *wsClient) next() (wsMessage, error) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
		_, b, err := c.conn.Read(ctx)
		cancel()
		if err != nil {
			return wsMessage{}, err
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatalf("message %s: %v", b, err)
		}
		if m.Type == "ping" {
			c.send(wsMessage{Type: "pong"})
			continue
		}
		if m.ID != "" && c.errored[m.ID] {
			c.t.Fatalf("%s %s after the error of %s", m.Type, m.Payload, m.ID)
		}
		if m.Type == "error" {
			if c.errored == nil {
				c.errored = map[string]bool{}
			}
			c.errored[m.ID] = true
		}
		return m, nil
	}
}

func (c *wsClient) read() wsMessage {
	c.t.Helper()
	m, err := c.next()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

// collect reads until each subscription of want has received its number
// of events; messages of other operations are skipped, an error or
// completion of a wanted one fails the test.
func (c *wsClient) collect(want map[string]int) map[string][]edge {
	c.t.Helper()
	got := map[string][]edge{}
	missing := 0
	for _, n := range want {
		missing += n
	}
	for missing > 0 {
		m := c.read()
		n, ok := want[m.ID]
		if !ok {
			continue
		}
		if m.Type != "next" {
			c.t.Fatalf("%s: %s %s before %d events (got %d)", m.ID, m.Type, m.Payload, n, len(got[m.ID]))
		}
		if len(got[m.ID]) == n {
			c.t.Fatalf("%s: more than %d events: %s", m.ID, n, m.Payload)
		}
		got[m.ID] = append(got[m.ID], eventEdge(c.t, m.Payload))
		missing--
	}
	return got
}

// ---------------------------------------------------------------------------
// Server-Sent Events

type sseStream struct {
	t      *testing.T
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

// subscribeSSE POSTs a subscription accepting text/event-stream.
func subscribeSSE(t *testing.T, gatewayURL, query string, vars map[string]any) *sseStream {
	t.Helper()
	return subscribeSSERequest(t, gatewayURL, map[string]any{"query": query, "variables": vars})
}

// subscribeSSERequest POSTs request accepting text/event-stream.
func subscribeSSERequest(t *testing.T, gatewayURL string, request map[string]any) *sseStream {
	t.Helper()
	body, _ := json.Marshal(request)
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, gatewayURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		cancel()
		t.Fatalf("POST: %v", err)
	}
	s := &sseStream{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(func() {
		s.close()
		tr.CloseIdleConnections()
	})
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, ct, raw)
	}
	return s
}

func (s *sseStream) close() {
	s.cancel()
	_ = s.resp.Body.Close()
}

// event reads the next event (comments skipped): its name and data; io.EOF
// at the end of the stream.
func (s *sseStream) event() (name string, data []byte, err error) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if name != "" || data != nil {
				return name, data, nil
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimSpace(strings.TrimPrefix(line, "data:"))...)
		}
	}
}

func (s *sseStream) mustEvent() (string, []byte) {
	s.t.Helper()
	name, data, err := s.event()
	if err != nil {
		s.t.Fatalf("read event: %v", err)
	}
	return name, data
}

// edges reads n next events.
func (s *sseStream) edges(n int) []edge {
	s.t.Helper()
	var out []edge
	for len(out) < n {
		name, data := s.mustEvent()
		if name != "next" {
			s.t.Fatalf("event %q %s after %d of %d events", name, data, len(out), n)
		}
		out = append(out, eventEdge(s.t, data))
	}
	return out
}

// ---------------------------------------------------------------------------
// A gate in front of the sample

// gate is a proxy to the sample that holds the requests whose path starts
// with prefix until opened.
type gate struct {
	URL     string
	open    chan struct{}
	once    sync.Once
	held    chan string // the path of each request held, as it arrives
	release func()
}

func newGate(t *testing.T, target, prefix string) *gate {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{open: make(chan struct{}), held: make(chan string, 1000)}
	g.release = func() { g.once.Do(func() { close(g.open) }) }
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, prefix) {
			select {
			case <-g.open:
			default:
				g.held <- r.URL.Path
				select {
				case <-g.open:
				case <-r.Context().Done():
					return
				}
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		g.release()
		srv.Close()
	})
	g.URL = srv.URL
	return g
}
