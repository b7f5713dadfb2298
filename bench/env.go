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
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// env is one measured set-up on loopback: the sample data service in its
// fast mode (response cache on), a gateway in this process serving it
// through a real listener, and the two clients of the comparison.
type env struct {
	scale      int
	sample     *sampleservice.Server
	gqlgenOnly bool
	// genericDirect: the direct client decodes into any (generic.go).
	genericDirect bool
	// gateways by asset-cache setting: uncached (the comparison's default)
	// and cached (the default configuration, shared asset cache on).
	uncached, cached *gatewayServer
	// direct calls the sample service itself; graphql calls a gateway.
	direct  *directClient
	graphql *graphqlClient
	// wire counts bytes on the wire (both directions) per hop.
	wire wireCounters
}

// gatewayServer is one gateway instance and its listener.
type gatewayServer struct {
	url      string
	srv      *http.Server
	inflight *inflightTracker
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

// newEnv starts the sample service with the dataset of the given scale and
// two gateways over it, whose asset loaders wait loaderWait; gqlgenOnly
// turns the direct executor off (-executor gqlgen), genericDirect makes the
// direct client decode into any (generic.go; the default) rather than into
// package upstream's wire types.
func newEnv(scale int, loaderWait time.Duration, gqlgenOnly, genericDirect bool) (*env, error) {
	sample, err := sampleservice.Start(sampleservice.Config{
		Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: scale},
		Defects: sampleservice.DefaultDefects(),
	}, "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the sample service: %w", err)
	}
	e := &env{scale: scale, sample: sample, gqlgenOnly: gqlgenOnly, genericDirect: genericDirect}
	e.direct = &directClient{
		dataNode: sample.URL,
		explorer: sample.URL + "/rest",
		http:     &http.Client{Transport: countingTransport(&e.wire.direct, 512)},
	}
	e.graphql = &graphqlClient{http: &http.Client{Transport: countingTransport(&e.wire.client, 512)}}
	cached := graph.DefaultLoaderConfig
	cached.Wait = loaderWait
	uncached := cached
	uncached.AssetCacheSize = 0
	if e.uncached, err = e.startGateway(uncached); err != nil {
		e.close()
		return nil, err
	}
	if e.cached, err = e.startGateway(cached); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// startGateway serves a gateway over the sample service on a loopback
// listener: graph.NewHandler over upstream.New, as the gateway's main
// wires them (without the access log and CORS middleware). Its upstream
// transport has the client's default pool sizes; it counts bytes and
// tracks identical requests in flight.
func (e *env) startGateway(loaders graph.LoaderConfig) (*gatewayServer, error) {
	inflight := &inflightTracker{}
	transport := countingTransport(&e.wire.upstream, 64)
	client, err := upstream.New(upstream.Config{
		DataNodeURL: e.sample.URL,
		ExplorerURL: e.sample.URL + "/rest",
		HTTPClient:  &http.Client{Transport: inflight.wrap(transport)},
	})
	if err != nil {
		return nil, err
	}
	handler := graph.NewHandler(graph.HandlerConfig{
		Upstream:       client,
		Loaders:        loaders,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		GqlgenExecutor: e.gqlgenOnly,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g := &gatewayServer{
		url:      "http://" + ln.Addr().String() + "/graphql",
		inflight: inflight,
		srv: &http.Server{
			Handler:           handler,
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
	for _, g := range []*gatewayServer{e.uncached, e.cached} {
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
