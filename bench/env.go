package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/httpcompress"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// env is one measured set-up on loopback: the sample data service in its
// fast mode (response cache on), gateways in this process serving it
// through real listeners, and the two clients of the comparison.
type env struct {
	envOptions
	sample *sampleservice.Server
	// gateways: uncached (the comparison's default: no shared asset cache,
	// responses compressed as the options say), cached (the default
	// configuration, shared asset cache on), and the uncached gateway
	// with compression the other way round (for the compression section).
	uncached, cached, otherCompression *gatewayServer
	// zstd is the compressing one of uncached and otherCompression, its
	// client asking for zstd.
	zstd *gatewayServer
	// direct calls the sample service itself; graphql calls a gateway.
	direct  *directClient
	graphql *graphqlClient
	// wire counts bytes on the wire (both directions) per hop.
	wire wireCounters
}

// envOptions set up an env.
type envOptions struct {
	// scale is the sample dataset's.
	scale int
	// loaderWait is the gateways' LOADER_WAIT.
	loaderWait time.Duration
	// gqlgenOnly turns the direct executor off (-executor gqlgen).
	gqlgenOnly bool
	// genericDirect makes the direct client decode into any (generic.go;
	// the default) rather than into package upstream's wire types.
	genericDirect bool
	// compression is the gateways' COMPRESSION_LEVEL (0: off).
	compression int
}

// gatewayServer is one gateway instance and its listener.
type gatewayServer struct {
	url      string
	srv      *http.Server
	inflight *inflightTracker
	// compressed: the gateway compresses responses to clients that ask.
	compressed bool
	// clientCoding is what the client asks of this gateway: "" for what Go's
	// transport asks by itself (gzip, decompressed by the transport), or
	// "zstd" (decompressed by the client, as browsers that offer it get it).
	clientCoding string
}

// coding is the content coding of the responses the client gets.
func (g *gatewayServer) coding() string {
	switch {
	case !g.compressed:
		return ""
	case g.clientCoding != "":
		return g.clientCoding
	}
	return "gzip"
}

// wireCounters count the bytes read and written on each hop's
// connections: the direct client to the sample service, the client to the
// gateway, the gateway to the sample service.
type wireCounters struct {
	direct, client, upstream atomic.Int64
}

type wireSnapshot struct{ direct, client, upstream int64 }

func (w *wireCounters) snapshot() wireSnapshot {
	return wireSnapshot{w.direct.Load(), w.client.Load(), w.upstream.Load()}
}

func (s wireSnapshot) sub(o wireSnapshot) wireSnapshot {
	return wireSnapshot{s.direct - o.direct, s.client - o.client, s.upstream - o.upstream}
}

// newEnv starts the sample service with the dataset of o.scale and the
// gateways over it.
func newEnv(o envOptions) (*env, error) {
	sample, err := sampleservice.Start(sampleservice.Config{
		Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: o.scale},
		Defects: sampleservice.DefaultDefects(),
	}, "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the sample service: %w", err)
	}
	e := &env{envOptions: o, sample: sample}
	e.direct = &directClient{
		dataNode: sample.URL,
		explorer: sample.URL + "/rest",
		http:     &http.Client{Transport: countingTransport(&e.wire.direct, 512)},
	}
	e.graphql = &graphqlClient{http: &http.Client{Transport: countingTransport(&e.wire.client, 512)}}
	cached := graph.DefaultLoaderConfig
	cached.Wait = o.loaderWait
	uncached := cached
	uncached.AssetCacheSize = 0
	other := 0
	if o.compression == 0 {
		other = httpcompress.DefaultLevel
	}
	for _, g := range []struct {
		to          **gatewayServer
		loaders     graph.LoaderConfig
		compression int
	}{{&e.uncached, uncached, o.compression}, {&e.cached, cached, o.compression}, {&e.otherCompression, uncached, other}} {
		if *g.to, err = e.startGateway(g.loaders, g.compression); err != nil {
			e.close()
			return nil, err
		}
	}
	compressing := *e.uncached
	if !compressing.compressed {
		compressing = *e.otherCompression
	}
	compressing.clientCoding = httpcompress.Zstd
	e.zstd = &compressing
	return e, nil
}

// startGateway serves a gateway over the sample service on a loopback
// listener: transport.NewHandler over upstream.New behind response
// compression at the given level, as the gateway's main wires them
// (without the access log and CORS middleware). Its upstream transport has
// the client's default pool sizes; it counts bytes and tracks identical
// requests in flight.
func (e *env) startGateway(loaders graph.LoaderConfig, compression int) (*gatewayServer, error) {
	inflight := &inflightTracker{}
	counting := countingTransport(&e.wire.upstream, 64)
	client, err := upstream.New(upstream.Config{
		DataNodeURL: e.sample.URL,
		ExplorerURL: e.sample.URL + "/rest",
		HTTPClient:  &http.Client{Transport: inflight.wrap(counting)},
	})
	if err != nil {
		return nil, err
	}
	handler := transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream:       client,
		Loaders:        loaders,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		GqlgenExecutor: e.gqlgenOnly,
	}), transport.Config{})
	compressing := httpcompress.Handler(handler, httpcompress.Options{Level: compression, MinBytes: httpcompress.DefaultMinBytes})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g := &gatewayServer{
		url:        "http://" + ln.Addr().String() + "/graphql",
		inflight:   inflight,
		compressed: compression > 0,
		srv: &http.Server{
			Handler:           compressing,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       time.Minute,
		},
	}
	go func() {
		if err := g.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("gateway server", "err", err)
		}
	}()
	return g, nil
}

func (e *env) close() {
	for _, g := range []*gatewayServer{e.uncached, e.cached, e.otherCompression} {
		if g != nil {
			_ = g.srv.Close()
		}
	}
	_ = e.sample.Close()
}

// upstreamRequests is the number of requests the sample service has
// received so far, all endpoints together.
func (e *env) upstreamRequests() int64 {
	var n int64
	for _, ep := range allEndpoints {
		n += e.sample.Service.Requests(ep)
	}
	return n
}

var allEndpoints = []sampleservice.Endpoint{
	sampleservice.EndpointAssets, sampleservice.EndpointFundingPayments,
	sampleservice.EndpointDelegations, sampleservice.EndpointTransactions,
}

// countingTransport is a pooled transport (the standard one's settings,
// idle connections per host as given) whose connections add the bytes
// they read and write to n.
func countingTransport(n *atomic.Int64, idlePerHost int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = max(idlePerHost, 256)
	t.MaxIdleConnsPerHost = idlePerHost
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, n: n}, nil
	}
	return t
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// inflightTracker records, per upstream URL, how many identical requests
// were in flight at once: coalescing promises at most one.
type inflightTracker struct {
	mu      sync.Mutex
	now     map[string]int
	maxSeen map[string]int
}

func (t *inflightTracker) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		key := r.URL.String()
		t.mu.Lock()
		if t.now == nil {
			t.now, t.maxSeen = map[string]int{}, map[string]int{}
		}
		t.now[key]++
		t.maxSeen[key] = max(t.maxSeen[key], t.now[key])
		t.mu.Unlock()
		done := sync.OnceFunc(func() {
			t.mu.Lock()
			t.now[key]--
			t.mu.Unlock()
		})
		resp, err := next.RoundTrip(r)
		if err != nil {
			done()
			return nil, err
		}
		// The request is in flight until its body is read and closed.
		resp.Body = &closeNotifier{ReadCloser: resp.Body, done: done}
		return resp, nil
	})
}

type closeNotifier struct {
	io.ReadCloser
	done func()
}

func (c *closeNotifier) Close() error {
	err := c.ReadCloser.Close()
	c.done()
	return err
}

// reset forgets what was seen.
func (t *inflightTracker) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.maxSeen = map[string]int{}
}

// peak returns the most identical requests seen in flight at once, and the
// number of distinct URLs requested, since the last reset.
func (t *inflightTracker) peak() (most, distinct int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range t.maxSeen {
		most = max(most, n)
	}
	return most, len(t.maxSeen)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// directCall is q's direct path as measured: generic or typed decoding.
func (e *env) directCall(q query) func(ctx context.Context) error {
	if e.genericDirect {
		return func(ctx context.Context) error { _, err := q.directAny(ctx, e.direct); return err }
	}
	return func(ctx context.Context) error { _, err := q.direct(ctx, e.direct); return err }
}
