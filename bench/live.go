package main

// The live section: what the transaction subscription costs as subscribers
// are added. A gateway in this process serves GraphQL subscriptions over
// WebSocket (graphql-transport-ws) from one live feed (graph.NewLiveFeed)
// polling the sample service; subscribers connect over loopback, and blocks
// are appended to the sample service at a steady, jittered rate. Every
// delivery is checked: each subscriber receives every appended transaction
// its filter selects, exactly once, in chain order, with the fields the
// sample service appended.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sync/errgroup"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// liveShape is how a cell's subscribers are spread over WebSocket
// connections.
type liveShape struct {
	connections, perConnection int
}

func (s liveShape) subscribers() int { return s.connections * s.perConnection }

// liveParams are one run's cells.
type liveParams struct {
	// intervals are the feed's poll intervals: the default (500ms) and a
	// short one, to show the gateway's own share of the latency.
	intervals []time.Duration
	// shapes are the subscriber counts, the first the baseline.
	shapes []liveShape
	// filtered is the number of subscribers with different filters of the
	// filter cell (one per connection), compared with the baseline at the
	// first interval.
	filtered int
	// window is how long blocks are appended in each cell; blockEvery the
	// mean time between blocks (each wait drawn uniformly in [½, 1½] of it,
	// so that appends fall anywhere between two polls).
	window, blockEvery time.Duration
}

// liveCellParams are what the smoke run and the full run measure.
func liveCellParams(o *options) liveParams {
	if o.smoke {
		return liveParams{
			intervals:  []time.Duration{50 * time.Millisecond},
			shapes:     []liveShape{{1, 1}, {4, 5}},
			filtered:   10,
			window:     600 * time.Millisecond,
			blockEvery: 60 * time.Millisecond,
		}
	}
	return liveParams{
		intervals: []time.Duration{live500ms, 50 * time.Millisecond},
		// 10,000 subscribers as 100 connections of 100 subscriptions: one
		// process holds both ends of every connection, and 10,000
		// connections need more than the 20,000 descriptors
		// RLIMIT_NOFILE allows here (BENCHMARKS.md).
		shapes:   []liveShape{{1, 1}, {1000, 1}, {10, 100}, {100, 100}},
		filtered: 100,
		window:   o.liveWindow,
		// About 1.25 transactions a second (blocks of 1–4): 12,500
		// deliveries a second at 10,000 subscribers, within what two
		// cores deliver (BENCHMARKS.md).
		blockEvery: 2 * time.Second,
	}
}

// live500ms is the feed's default interval (live.Config.Interval).
const live500ms = 500 * time.Millisecond

// liveResult is one measured cell.
type liveResult struct {
	Run         int
	Interval    time.Duration
	Connections int
	// PerConnection is subscriptions per connection.
	PerConnection int
	Subscribers   int
	// Filtered: every subscriber has a filter of its own.
	Filtered bool
	// Transactions appended upstream; Deliveries received by the
	// subscribers (all checked).
	Transactions, Deliveries int
	// Latency from a transaction's append upstream to its receipt by a
	// subscriber, over every delivery.
	P50, P99 time.Duration
	// Heap in use and goroutines added, per subscriber, after
	// subscribing (client and gateway: one process); the same split into
	// what connecting cost per connection and what subscribing cost per
	// subscription.
	HeapPerSubscriber, HeapPerConnection, HeapPerSubscription                   float64
	GoroutinesPerSubscriber, GoroutinesPerConnection, GoroutinesPerSubscription float64
	// CPU of the process from the first append to the last delivery.
	CPUPerDelivery time.Duration
	CPUPerSecond   float64
	// UpstreamPerMinute are explorer requests per minute while
	// subscribed; Polls the feed's own count over the same time.
	UpstreamPerMinute float64
	Polls             uint64
	Elapsed           time.Duration
	// Offered is deliveries per second of the append window: the load.
	Offered float64
	// LoadAverage is the machine's (1 minute) when the cell started.
	LoadAverage float64
}

// runLive measures the live section once and adds its cells to rep.
func runLive(ctx context.Context, o *options, rep *report, logf func(string, ...any)) error {
	run := 1
	for _, r := range rep.live {
		run = max(run, r.Run+1)
	}
	raiseOpenFileLimit()
	p := liveCellParams(o)
	sample, err := sampleservice.Start(sampleservice.Config{
		Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: 1},
		Defects: sampleservice.DefaultDefects(),
	}, "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("start the sample service: %w", err)
	}
	defer sample.Close()
	filters := liveFilters(sample.Service.Dataset(), p.filtered)
	measure := func(interval time.Duration, shape liveShape, filters []liveFilter) error {
		res, err := measureLive(ctx, sample, interval, shape, filters, p)
		if err != nil {
			return fmt.Errorf("interval %s, %d×%d subscribers: %w", interval, shape.connections, shape.perConnection, err)
		}
		res.Run = run
		logf("  live %-6s %5d conn × %3d sub%-9s p50 %s p99 %s  heap/sub %s  goroutines/sub %.2f  cpu/delivery %s  upstream/min %.0f  (%d deliveries checked)",
			interval, res.Connections, res.PerConnection, map[bool]string{true: " filtered"}[res.Filtered], ms(res.P50), ms(res.P99),
			kb(res.HeapPerSubscriber), res.GoroutinesPerSubscriber, micros(res.CPUPerDelivery), res.UpstreamPerMinute, res.Deliveries)
		rep.live = append(rep.live, res)
		return nil
	}
	for _, iv := range p.intervals {
		for _, s := range p.shapes {
			if err := measure(iv, s, nil); err != nil {
				return err
			}
		}
	}
	return measure(p.intervals[0], liveShape{connections: len(filters), perConnection: 1}, filters)
}

// liveFilter is one subscriber's filter: the subscription's variables, and
// the same selection applied to what was appended.
type liveFilter struct {
	cmdTypes, excludeCmdTypes, parties []string
	submitter                          string
}

func (f liveFilter) variables() map[string]any {
	v := map[string]any{}
	if f.cmdTypes != nil {
		v["cmdTypes"] = f.cmdTypes
	}
	if f.excludeCmdTypes != nil {
		v["excludeCmdTypes"] = f.excludeCmdTypes
	}
	if f.parties != nil {
		v["parties"] = f.parties
	}
	if f.submitter != "" {
		v["submitter"] = f.submitter
	}
	return v
}

func (f liveFilter) matches(tx appendedTx) bool {
	if f.cmdTypes != nil && !slices.Contains(f.cmdTypes, tx.typ) {
		return false
	}
	if slices.Contains(f.excludeCmdTypes, tx.typ) {
		return false
	}
	if f.parties != nil && !slices.ContainsFunc(f.parties, func(p string) bool { return strings.EqualFold(p, tx.submitter) }) {
		return false
	}
	return f.submitter == "" || strings.EqualFold(f.submitter, tx.submitter)
}

// liveFilters are n different filters over the dataset's most frequent
// command types and submitters (among its newest transactions): command
// types, excluded types, parties, a submitter, in turn.
func liveFilters(ds *sampleservice.Dataset, n int) []liveFilter {
	types, submitters := map[string]int{}, map[string]int{}
	txs := ds.Transactions
	for i := max(0, txs.Len()-2000); i < txs.Len(); i++ {
		m := txs.Meta(i)
		types[m.Type]++
		if len(m.Parties) > 0 {
			submitters[m.Parties[0]]++
		}
	}
	byCount := func(m map[string]int) []string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			if c := m[b] - m[a]; c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		return keys
	}
	ts, ss := byCount(types), byCount(submitters)
	pick := func(list []string, i int) string { return list[i%len(list)] }
	out := make([]liveFilter, n)
	for i := range out {
		switch j := i / 4; i % 4 {
		case 0:
			out[i].cmdTypes = []string{pick(ts, j), pick(ts, j+1)}
		case 1:
			out[i].excludeCmdTypes = []string{pick(ts, j)}
		case 2:
			out[i].parties = []string{pick(ss, j), pick(ss, j+7)}
		case 3:
			out[i].submitter = strings.ToUpper(pick(ss, j))
		}
	}
	return out
}

// appendedTx is a transaction appended upstream and when its block was.
type appendedTx struct {
	key            uint64
	block          string
	index          int
	hash           string
	typ, submitter string
	at             time.Time
}

// txKey identifies a transaction by everything a subscriber is checked
// on, without keeping the strings of every delivery.
func txKey(hash, block string, index int, typ, submitter string) uint64 {
	h := fnv.New64a()
	for _, s := range []string{hash, block, strconv.Itoa(index), typ, strings.ToLower(submitter)} {
		_, _ = io.WriteString(h, s)
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// receipt is one delivery as a subscriber received it.
type receipt struct {
	key   uint64
	at    int64 // Unix nanoseconds
	block string
	index int
}

// liveSubscriber is one subscription of a connection.
type liveSubscriber struct {
	filter   *liveFilter
	receipts []receipt
	// ended says why the operation ended early (an error message, or a
	// completion before the feed closed).
	ended string
}

// liveConn is one WebSocket connection and its subscriptions (operation
// ids "0", "1", …).
type liveConn struct {
	ws   *websocket.Conn
	subs []*liveSubscriber
}

// liveGateway is a gateway serving subscriptions from its own feed.
type liveGateway struct {
	url       string
	feed      *graph.LiveFeed
	srv       *http.Server
	transport *http.Transport
}

func startLiveGateway(sample *sampleservice.Server, interval time.Duration, maxSubscriptions int) (*liveGateway, error) {
	upstreamTransport := http.DefaultTransport.(*http.Transport).Clone()
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL + "/rest", HTTPClient: &http.Client{Transport: upstreamTransport}})
	if err != nil {
		return nil, err
	}
	keys := graph.RandomCursorKeys()
	feed := graph.NewLiveFeed(live.Config{
		Explorer:         client,
		Interval:         interval,
		MaxSubscriptions: maxSubscriptions,
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, keys)
	handler := transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream:   client,
		Loaders:    graph.DefaultLoaderConfig,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		CursorKeys: keys,
		Live:       feed,
	}), transport.Config{
		Subscriptions: transport.SubscriptionConfig{MaxPerConnection: 100},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		feed.Close()
		return nil, err
	}
	g := &liveGateway{
		url:       "ws://" + ln.Addr().String() + "/graphql",
		feed:      feed,
		srv:       &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second},
		transport: upstreamTransport,
	}
	go func() {
		if err := g.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("live gateway server", "err", err)
		}
	}()
	return g, nil
}

// close drains the feed (every subscription completes, every WebSocket
// connection gets a close frame) and stops the server.
func (g *liveGateway) close() {
	g.feed.Close()
	_ = g.srv.Close()
	g.transport.CloseIdleConnections()
}

const liveSubscription = `subscription Live($cmdTypes: [String!], $excludeCmdTypes: [String!], $parties: [ID!], $submitter: ID) {
  transactions(cmdTypes: $cmdTypes, excludeCmdTypes: $excludeCmdTypes, parties: $parties, submitter: $submitter) {
    cursor
    node { hash block index type submitter { id } }
  }
}`

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// liveEvent is a `next` payload.
type liveEvent struct {
	Data struct {
		Transactions struct {
			Cursor string `json:"cursor"`
			Node   struct {
				Hash      string `json:"hash"`
				Block     string `json:"block"`
				Index     int    `json:"index"`
				Type      string `json:"type"`
				Submitter struct {
					ID string `json:"id"`
				} `json:"submitter"`
			} `json:"node"`
		} `json:"transactions"`
	} `json:"data"`
	Errors json.RawMessage `json:"errors"`
}

func writeWS(ctx context.Context, c *websocket.Conn, m wsMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.Write(ctx, websocket.MessageText, b)
}

// dialLive opens a connection for subs and initialises it
// (connection_init, awaiting connection_ack).
func dialLive(ctx context.Context, url string, subs []*liveSubscriber) (*liveConn, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, err
	}
	c := &liveConn{ws: ws, subs: subs}
	fail := func(err error) (*liveConn, error) {
		_ = ws.CloseNow()
		return nil, err
	}
	if ws.Subprotocol() != "graphql-transport-ws" {
		return fail(fmt.Errorf("subprotocol %q, want graphql-transport-ws", ws.Subprotocol()))
	}
	if err := writeWS(ctx, ws, wsMessage{Type: "connection_init", Payload: json.RawMessage(`{}`)}); err != nil {
		return fail(err)
	}
	for acked := false; !acked; {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return fail(fmt.Errorf("awaiting connection_ack: %w", err))
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return fail(fmt.Errorf("awaiting connection_ack: %w", err))
		}
		switch m.Type {
		case "connection_ack":
			acked = true
		case "ping":
			if err := writeWS(ctx, ws, wsMessage{Type: "pong"}); err != nil {
				return fail(err)
			}
		default:
			return fail(fmt.Errorf("awaiting connection_ack: got %s", b))
		}
	}
	return c, nil
}

// subscribe starts the connection's subscriptions (operation ids "0",
// "1", …).
func (c *liveConn) subscribe(ctx context.Context) error {
	for i, s := range c.subs {
		var f liveFilter
		if s.filter != nil {
			f = *s.filter
		}
		payload, err := json.Marshal(map[string]any{"query": liveSubscription, "variables": f.variables()})
		if err != nil {
			return err
		}
		if err := writeWS(ctx, c.ws, wsMessage{ID: strconv.Itoa(i), Type: "subscribe", Payload: payload}); err != nil {
			return err
		}
	}
	return nil
}

// read receives until the connection closes, recording each delivery with
// its time of receipt; delivered counts deliveries of every connection.
func (c *liveConn) read(ctx context.Context, delivered *liveCounter) error {
	for {
		_, b, err := c.ws.Read(ctx)
		at := time.Now().UnixNano()
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
				return nil
			}
			return err
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("bad message %q: %w", b, err)
		}
		if m.Type == "ping" {
			if err := writeWS(ctx, c.ws, wsMessage{Type: "pong"}); err != nil {
				return err
			}
			continue
		}
		if m.Type == "pong" || m.Type == "complete" && m.ID == "" {
			continue
		}
		i, err := strconv.Atoi(m.ID)
		if err != nil || i < 0 || i >= len(c.subs) {
			return fmt.Errorf("message for unknown operation: %s", b)
		}
		s := c.subs[i]
		switch m.Type {
		case "next":
			var ev liveEvent
			if err := json.Unmarshal(m.Payload, &ev); err != nil {
				return fmt.Errorf("bad next payload %q: %w", m.Payload, err)
			}
			if len(ev.Errors) > 0 && string(ev.Errors) != "null" {
				s.ended = "errors: " + string(ev.Errors)
				continue
			}
			n := ev.Data.Transactions.Node
			s.receipts = append(s.receipts, receipt{
				key: txKey(n.Hash, n.Block, n.Index, n.Type, n.Submitter.ID), at: at,
				block: n.Block, index: n.Index,
			})
			delivered.add(1)
		case "error":
			s.ended = "error: " + string(m.Payload)
		case "complete":
			// The feed's drain: expected at the end of the cell.
		default:
			return fmt.Errorf("unexpected message: %s", b)
		}
	}
}

// liveCounter counts deliveries and says when a target is reached.
type liveCounter struct {
	mu     sync.Mutex
	n      int
	target int
	done   chan struct{}
}

func newLiveCounter() *liveCounter { return &liveCounter{target: -1, done: make(chan struct{})} }

func (c *liveCounter) add(k int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += k
	c.check()
}

func (c *liveCounter) setTarget(t int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.target = t
	c.check()
}

func (c *liveCounter) check() {
	if c.target >= 0 && c.n >= c.target {
		select {
		case <-c.done:
		default:
			close(c.done)
		}
	}
}

func (c *liveCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// memSnapshot is the heap in use and the goroutines, after a collection.
type memSnapshot struct {
	heap       uint64
	goroutines int
}

func snapshotMem() memSnapshot {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memSnapshot{heap: m.HeapInuse, goroutines: runtime.NumGoroutine()}
}

func perEach(after, before float64, n int) float64 { return (after - before) / float64(max(n, 1)) }

// measureLive measures one cell: a fresh gateway, shape's subscribers
// (each with filters[i] if given), blocks appended for p.window, every
// delivery awaited and checked.
func measureLive(ctx context.Context, sample *sampleservice.Server, interval time.Duration, shape liveShape, filters []liveFilter, p liveParams) (liveResult, error) {
	n := shape.subscribers()
	res := liveResult{Interval: interval, Connections: shape.connections, PerConnection: shape.perConnection, Subscribers: n, Filtered: filters != nil, LoadAverage: loadAverage()}
	if need := 2*shape.connections + 256; need > openFileLimit() {
		return res, fmt.Errorf("%d connections need about %d file descriptors (both ends are in this process); RLIMIT_NOFILE allows %d", shape.connections, need, openFileLimit())
	}
	g, err := startLiveGateway(sample, interval, max(n, 10000))
	if err != nil {
		return res, err
	}
	var gatewayClosed atomic.Bool
	closeGateway := func() {
		if !gatewayClosed.Swap(true) {
			g.close()
		}
	}
	defer closeGateway()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m0 := snapshotMem()

	// Connect (a few at a time, as clients arrive), then subscribe.
	subs := make([]*liveSubscriber, n)
	for i := range subs {
		subs[i] = &liveSubscriber{}
		if filters != nil {
			subs[i].filter = &filters[i%len(filters)]
		}
	}
	conns := make([]*liveConn, shape.connections)
	dialCtx, dialCancel := context.WithTimeout(ctx, time.Minute)
	defer dialCancel()
	var dial errgroup.Group
	dial.SetLimit(32)
	for i := range conns {
		dial.Go(func() error {
			c, err := dialLive(dialCtx, g.url, subs[i*shape.perConnection:(i+1)*shape.perConnection])
			conns[i] = c
			return err
		})
	}
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.ws.CloseNow()
			}
		}
	}()
	if err := dial.Wait(); err != nil {
		return res, fmt.Errorf("connect: %w", err)
	}
	delivered := newLiveCounter()
	var readers errgroup.Group
	for _, c := range conns {
		readers.Go(func() error { return c.read(ctx, delivered) })
	}
	readersDone := make(chan error, 1)
	go func() { readersDone <- readers.Wait() }()
	m1 := snapshotMem()

	// Subscribe; every subscription is open once the feed counts them.
	var subscribe errgroup.Group
	subscribe.SetLimit(32)
	for _, c := range conns {
		subscribe.Go(func() error { return c.subscribe(dialCtx) })
	}
	if err := subscribe.Wait(); err != nil {
		return res, fmt.Errorf("subscribe: %w", err)
	}
	if err := awaitSubscriptions(ctx, g.feed, n, readersDone); err != nil {
		return res, err
	}
	m2 := snapshotMem()
	res.HeapPerSubscriber = perEach(float64(m2.heap), float64(m0.heap), n)
	res.HeapPerConnection = perEach(float64(m1.heap), float64(m0.heap), shape.connections)
	res.HeapPerSubscription = perEach(float64(m2.heap), float64(m1.heap), n)
	res.GoroutinesPerSubscriber = perEach(float64(m2.goroutines), float64(m0.goroutines), n)
	res.GoroutinesPerConnection = perEach(float64(m1.goroutines), float64(m0.goroutines), shape.connections)
	res.GoroutinesPerSubscription = perEach(float64(m2.goroutines), float64(m1.goroutines), n)

	// Append blocks for the window, at jittered times.
	upstream0, polls0 := sample.Service.Requests(sampleservice.EndpointTransactions), g.feed.Stats().Polls
	cpu0, start := cpuTime(), time.Now()
	var appended []appendedTx
	rng := rand.New(rand.NewPCG(uint64(shape.connections), uint64(interval)))
	timer := time.NewTimer(0)
	defer timer.Stop()
	for first := true; time.Since(start) < p.window; first = false {
		if !first {
			timer.Reset(p.blockEvery/2 + time.Duration(rng.Int64N(int64(p.blockEvery)+1)))
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case err := <-readersDone:
			return res, fmt.Errorf("a connection ended while blocks were appended: %v", err)
		case <-timer.C:
		}
		txs, err := sample.Service.AppendBlock()
		if err != nil {
			return res, fmt.Errorf("append a block: %w", err)
		}
		at := time.Now()
		for _, tx := range txs {
			block := fmt.Sprint(tx.Block)
			appended = append(appended, appendedTx{
				key:   txKey(tx.Hash, block, int(tx.Index), tx.Type, tx.Submitter),
				block: block, index: int(tx.Index), hash: tx.Hash, typ: tx.Type, submitter: tx.Submitter, at: at,
			})
		}
	}
	expected := make([][]appendedTx, n)
	total := 0
	for i, s := range subs {
		expected[i] = appended
		if s.filter != nil {
			expected[i] = slices.DeleteFunc(slices.Clone(appended), func(tx appendedTx) bool { return !s.filter.matches(tx) })
		}
		total += len(expected[i])
	}
	delivered.setTarget(total)
	deadline := time.NewTimer(time.Minute + 20*interval)
	defer deadline.Stop()
	select {
	case <-delivered.done:
	case err := <-readersDone:
		return res, fmt.Errorf("a connection ended before every transaction was delivered: %v", err)
	case <-deadline.C:
		return res, fmt.Errorf("%d of %d deliveries after a minute", delivered.count(), total)
	case <-ctx.Done():
		return res, ctx.Err()
	}
	res.Elapsed = time.Since(start)
	cpu := cpuTime() - cpu0
	res.Polls = g.feed.Stats().Polls - polls0
	requests := sample.Service.Requests(sampleservice.EndpointTransactions) - upstream0
	if uint64(requests) > res.Polls+2 {
		// The feed's polls are the only explorer requests a subscription
		// makes: more would grow with the subscribers.
		return res, fmt.Errorf("%d explorer requests for %d polls of the feed", requests, res.Polls)
	}

	// Drain: every subscription completes, every connection closes
	// normally; then whatever arrived is checked.
	closeGateway()
	select {
	case err := <-readersDone:
		if err != nil {
			return res, fmt.Errorf("connection after the drain: %w", err)
		}
	case <-time.After(time.Minute):
		return res, errors.New("connections still open a minute after the feed closed")
	}
	latencies := make([]time.Duration, 0, total)
	for i, s := range subs {
		if s.ended != "" {
			return res, fmt.Errorf("subscriber %d: %s", i, s.ended)
		}
		if err := checkReceipts(s.receipts, expected[i]); err != nil {
			return res, fmt.Errorf("subscriber %d (filter %+v): %w", i, s.filter, err)
		}
		for k, r := range s.receipts {
			latencies = append(latencies, time.Unix(0, r.at).Sub(expected[i][k].at))
		}
	}
	res.Transactions, res.Deliveries = len(appended), total
	if total == 0 {
		return res, errors.New("no transaction was delivered")
	}
	slices.Sort(latencies)
	res.P50, res.P99 = percentile(latencies, 50), percentile(latencies, 99)
	res.Offered = float64(total) / p.window.Seconds()
	res.CPUPerDelivery = cpu / time.Duration(total)
	res.CPUPerSecond = cpu.Seconds() / res.Elapsed.Seconds()
	res.UpstreamPerMinute = float64(requests) / res.Elapsed.Minutes()
	return res, nil
}

// awaitSubscriptions waits until the feed has n subscriptions.
func awaitSubscriptions(ctx context.Context, feed *graph.LiveFeed, n int, readersDone <-chan error) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for feed.Stats().Subscriptions < n {
		select {
		case <-tick.C:
		case err := <-readersDone:
			return fmt.Errorf("a connection ended while subscribing: %v", err)
		case <-deadline.C:
			return fmt.Errorf("%d of %d subscriptions open after a minute", feed.Stats().Subscriptions, n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// checkReceipts checks that got is want: every transaction once, in
// chain order, with the appended fields.
func checkReceipts(got []receipt, want []appendedTx) error {
	for k := range min(len(got), len(want)) {
		if got[k].key != want[k].key {
			return fmt.Errorf("delivery %d is %s.%d (or differs in a field); want %s.%d %s (%s, %s)",
				k, got[k].block, got[k].index, want[k].block, want[k].index, want[k].hash, want[k].typ, want[k].submitter)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d deliveries, want %d", len(got), len(want))
	}
	return nil
}

// openFileLimit is the process's RLIMIT_NOFILE (soft).
func openFileLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 1024
	}
	return int(l.Cur)
}

// raiseOpenFileLimit raises RLIMIT_NOFILE's soft limit to the hard one.
func raiseOpenFileLimit() {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// loadAverage is the machine's load average over the last minute (0 where
// /proc/loadavg is not).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return f
}

func micros(d time.Duration) string {
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
}

// liveGroups groups the live cells of every run, in order.
func liveGroups(results []liveResult) [][]liveResult {
	return groupBy[[]liveResult](results, func(r liveResult) string {
		return fmt.Sprintf("%s|%d|%d|%v", r.Interval, r.Connections, r.PerConnection, r.Filtered)
	})
}

// liveBaseline is the cell r is compared with: one unfiltered subscriber
// at the same interval, in the same run.
func liveBaseline(results []liveResult, r liveResult) (liveResult, bool) {
	for _, b := range results {
		if b.Run == r.Run && b.Interval == r.Interval && b.Subscribers == 1 && !b.Filtered {
			return b, true
		}
	}
	return liveResult{}, false
}

// liveMedian is the median over runs of f, with the range when there were
// several runs.
func liveMedian(g []liveResult, f func(liveResult) float64, format string) string {
	v := make([]float64, len(g))
	for i, r := range g {
		v[i] = f(r)
	}
	s := fmt.Sprintf(format, median(v))
	if len(v) > 1 {
		s += fmt.Sprintf(" ("+format+"–"+format+")", slices.Min(v), slices.Max(v))
	}
	return s
}

func (r liveResult) shapeText() string {
	s := fmt.Sprintf("%d × %d", r.Connections, r.PerConnection)
	if r.Filtered {
		s += ", a filter each"
	}
	return s
}

// writeLive writes the live section's tables.
func writeLive(p func(string, ...any), results []liveResult) {
	if len(results) == 0 {
		return
	}
	groups := liveGroups(results)
	toBase := func(f func(liveResult) float64) func(liveResult) float64 {
		return func(r liveResult) float64 {
			b, ok := liveBaseline(results, r)
			if !ok || f(b) == 0 {
				return 0
			}
			return f(r) / f(b)
		}
	}
	durMs := func(f func(liveResult) time.Duration) func(liveResult) float64 {
		return func(r liveResult) float64 { return float64(f(r)) / float64(time.Millisecond) }
	}
	p50 := durMs(func(r liveResult) time.Duration { return r.P50 })
	p99 := durMs(func(r liveResult) time.Duration { return r.P99 })
	upm := func(r liveResult) float64 { return r.UpstreamPerMinute }
	p("## Live transactions: subscribers of one process\n\n")
	p("Delivery latency: from a block's append at the sample service to a subscriber's receipt of each transaction, over every delivery; × is the ratio to one subscriber at the same poll interval in the same run (median over runs, range in brackets). Every delivery checked: each subscriber received every appended transaction its filter selects, once, in chain order.\n\n")
	p("| Poll interval | Subscribers | Connections × subscriptions | Transactions appended | Deliveries checked | Deliveries per second offered | Load average | p50 | p50 × | p99 | p99 × |\n")
	p("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range groups {
		r := g[0]
		p("| %s | %d | %s | %s | %s | %s | %s | %s ms | %s | %s ms | %s |\n", r.Interval, r.Subscribers, r.shapeText(),
			liveMedian(g, func(r liveResult) float64 { return float64(r.Transactions) }, "%.0f"),
			liveMedian(g, func(r liveResult) float64 { return float64(r.Deliveries) }, "%.0f"),
			liveMedian(g, func(r liveResult) float64 { return r.Offered }, "%.0f"),
			liveMedian(g, func(r liveResult) float64 { return r.LoadAverage }, "%.1f"),
			liveMedian(g, p50, "%.0f"), liveMedian(g, toBase(p50), "%.2f"),
			liveMedian(g, p99, "%.0f"), liveMedian(g, toBase(p99), "%.2f"))
	}
	p("\nCosts (the process: subscribers' clients, gateway and sample service together). Heap and goroutines are added by connecting and subscribing, after a collection; CPU from the first append to the last delivery.\n\n")
	p("| Poll interval | Subscribers | Connections × subscriptions | Heap per subscriber | per connection / per subscription | Goroutines per subscriber | per connection / per subscription | CPU per delivery | CPU (cores busy) | Upstream requests per minute | × | Feed polls |\n")
	p("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range groups {
		r := g[0]
		p("| %s | %d | %s | %s kB | %s kB / %s kB | %s | %s / %s | %s µs | %s | %s | %s | %s |\n", r.Interval, r.Subscribers, r.shapeText(),
			liveMedian(g, func(r liveResult) float64 { return r.HeapPerSubscriber / 1000 }, "%.1f"),
			liveMedian(g, func(r liveResult) float64 { return r.HeapPerConnection / 1000 }, "%.1f"),
			liveMedian(g, func(r liveResult) float64 { return r.HeapPerSubscription / 1000 }, "%.1f"),
			liveMedian(g, func(r liveResult) float64 { return r.GoroutinesPerSubscriber }, "%.2f"),
			liveMedian(g, func(r liveResult) float64 { return r.GoroutinesPerConnection }, "%.2f"),
			liveMedian(g, func(r liveResult) float64 { return r.GoroutinesPerSubscription }, "%.2f"),
			liveMedian(g, func(r liveResult) float64 { return float64(r.CPUPerDelivery) / float64(time.Microsecond) }, "%.1f"),
			liveMedian(g, func(r liveResult) float64 { return r.CPUPerSecond }, "%.2f"),
			liveMedian(g, upm, "%.0f"), liveMedian(g, toBase(upm), "%.2f"),
			liveMedian(g, func(r liveResult) float64 { return float64(r.Polls) }, "%.0f"))
	}
	p("\n")
}
