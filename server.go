package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/cors"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/httpcompress"
	"github.com/tradenet/gateway/playground"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], environ, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(2)
	}
}

// run is the whole program: it returns when ctx ends (after a graceful
// shutdown) or when the server cannot start.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "sample-upstream" {
		return sampleservice.Main(args[1:], stdout)
	}
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stdout)
	gw, err := newGateway(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer gw.Close()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	metricsLn, err := gw.listenMetrics()
	if err != nil {
		_ = ln.Close()
		return err
	}
	logger.Info("gateway serving", "addr", ln.Addr().String(), "playground", "http://"+displayAddr(ln.Addr()), "data_node", gw.dataNodeURL, "explorer", gw.explorerURL)
	return gw.serve(ctx, ln, metricsLn)
}

// gateway is a configured gateway, ready to serve.
type gateway struct {
	cfg         *config
	logger      *slog.Logger
	handler     http.Handler
	ready       atomic.Bool
	sample      *sampleservice.Server
	dataNodeURL string
	explorerURL string
	readiness   *readiness
	ops         *operations
	live        *graph.LiveFeed
}

// newGateway builds the gateway from the configuration, each part in
// its own place: the upstream services (the embedded sample service when
// none is configured) and their client (upstreamclient.go), operations
// (instrumentation.go, sharedstate.go), the GraphQL handler (handler.go),
// and the routes and middleware (below).
func newGateway(ctx context.Context, cfg *config, logger *slog.Logger) (*gateway, error) {
	gw := &gateway{cfg: cfg, logger: logger}
	docs, err := cfg.persistedDocuments(logger) // first: nothing started yet when it fails
	if err != nil {
		return nil, err
	}
	if err := gw.upstreamURLs(); err != nil {
		return nil, err
	}
	ops, err := newOperations(ctx, cfg, logger)
	if err != nil {
		gw.Close()
		return nil, err
	}
	gw.ops = ops
	client, budget, err := newUpstreamClient(cfg, gw.dataNodeURL, gw.explorerURL, ops)
	if err != nil {
		gw.Close()
		return nil, err
	}
	gw.readiness = &readiness{check: func(ctx context.Context) error {
		one := int32(1)
		// Asked of the data node itself, never of the cache.
		_, err := client.ListAssets(upstream.WithoutCache(ctx), upstream.AssetsParams{Pagination: upstream.Pagination{First: &one}})
		return err
	}, ttl: 5 * time.Second}
	keys := cfg.signingKeys(logger)
	gw.live = newLiveFeed(cfg, client, budget, ops, keys, logger)
	gw.handler = gw.routes(newGraphQLHandler(cfg, client, keys, gw.live, docs, ops, logger))
	gw.ready.Store(true)
	return gw, nil
}

// Close releases what newGateway started.
func (gw *gateway) Close() {
	if gw.live != nil {
		gw.live.Close()
	}
	gw.ops.close()
	if gw.sample != nil {
		_ = gw.sample.Close()
	}
}

// routes mounts the gateway's routes (README, Routes) behind its
// middleware: the client key, the access log, tracing, CORS.
func (gw *gateway) routes(api http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", playground.Handler(playground.Options{Title: "Trading network GraphQL gateway", Endpoint: "/graphql", DefaultQuery: defaultQuery}))
	mux.Handle(playground.AssetsPrefix, playground.AssetsHandler())
	mux.Handle("/graphql", api) // body limit, request deadline: graph.ExecutorConfig; compression: transport.Config
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writePlain(w, http.StatusOK, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !gw.ready.Load() {
			writePlain(w, http.StatusServiceUnavailable, "shutting down\n")
			return
		}
		if err := gw.readiness.ok(r.Context()); err != nil {
			writePlain(w, http.StatusServiceUnavailable, "upstream unreachable\n")
			return
		}
		if err := gw.liveReady(); err != nil {
			writePlain(w, http.StatusServiceUnavailable, err.Error()+"\n")
			return
		}
		writePlain(w, http.StatusOK, "ready\n")
	})
	if gw.ops.metrics != nil && gw.cfg.MetricsAddr == "" {
		mux.Handle("GET /metrics", gw.ops.metrics.Handler())
	}
	mux.Handle("GET /schema.graphql", gw.compress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The executable schema printed as SDL (schema.go), committed at schema/schema.graphql.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(schemaSDL)
	})))
	return upstream.WithClientKey(gw.accessLog(gw.ops.tracing.Middleware(metricsWithoutCORS(mux, gw.cors(mux)))), gw.cfg.trustedProxies)
}

// metricsWithoutCORS sends /metrics past the CORS layer: metrics are for
// scrapers, never for pages of another origin (README, Metrics).
func metricsWithoutCORS(mux, withCORS http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			mux.ServeHTTP(w, r)
			return
		}
		withCORS.ServeHTTP(w, r)
	})
}

// listenMetrics opens the listener of METRICS_ADDR, where serve then
// serves /metrics (and routes does not); nil when METRICS_ADDR is unset.
func (gw *gateway) listenMetrics() (net.Listener, error) {
	if gw.cfg.MetricsAddr == "" || gw.ops.metrics == nil {
		return nil, nil
	}
	ln, err := net.Listen("tcp", gw.cfg.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (METRICS_ADDR): %w", gw.cfg.MetricsAddr, err)
	}
	gw.logger.Info("metrics serving", "addr", ln.Addr().String(), "path", "/metrics")
	return ln, nil
}

// compress compresses next's responses for clients that accept zstd or
// gzip (the playground's assets are stored gzipped; /metrics negotiates
// its own; /graphql's compression sits inside the GraphQL handler, under
// its handling of If-None-Match: newGraphQLHandler).
func (gw *gateway) compress(next http.Handler) http.Handler {
	return compressor(gw.cfg, gw.ops)(next)
}

// compressor is the response compression COMPRESSION_LEVEL and
// COMPRESSION_MIN_BYTES configure, counted in the metrics.
func compressor(cfg *config, ops *operations) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return httpcompress.Handler(next, httpcompress.Options{
			Level:    cfg.CompressionLevel,
			MinBytes: cfg.CompressionMinBytes,
			Observe:  ops.metrics.ObserveCompression,
		})
	}
}

// cors applies the CORS contract: exact origins (credentials allowed),
// or * for any origin without credentials; unset, no cross-origin access.
func (gw *gateway) cors(next http.Handler) http.Handler {
	if len(gw.cfg.CORSOrigins) == 0 {
		return next
	}
	wildcard := len(gw.cfg.CORSOrigins) == 1 && gw.cfg.CORSOrigins[0] == "*"
	return cors.New(cors.Options{
		AllowedOrigins: gw.cfg.CORSOrigins,
		// PUT and DELETE, and the token header: graphql-sse's single
		// connection mode (reservation, operations, stop).
		AllowedMethods:   []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete},
		AllowedHeaders:   []string{"Content-Type", "Accept", "Authorization", "Apollo-Require-Preflight", "X-Apollo-Operation-Name", "Apollographql-Client-Name", "Apollographql-Client-Version", "X-GraphQL-Event-Stream-Token"},
		AllowCredentials: !wildcard,
		MaxAge:           600,
	}).Handler(next)
}

// serve runs the HTTP server on ln, and /metrics on metricsLn (from
// listenMetrics; nil for none), until ctx ends, then shuts down
// gracefully: readiness fails first, in-flight requests drain, bounded by
// the timeout.
func (gw *gateway) serve(ctx context.Context, ln, metricsLn net.Listener) error {
	srv := gw.server(gw.handler)
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	var metricsSrv *http.Server
	if metricsLn != nil {
		metrics := http.NewServeMux()
		metrics.Handle("GET /metrics", gw.ops.metrics.Handler())
		metricsSrv = gw.server(metrics)
		go func() { errc <- metricsSrv.Serve(metricsLn) }()
	}
	select {
	case err := <-errc:
		_ = srv.Close()
		if metricsSrv != nil {
			_ = metricsSrv.Close()
		}
		return err
	case <-ctx.Done():
	}
	// Readiness fails first, so that load balancers stop sending; during
	// the shutdown delay new requests are still served, each on a
	// connection closed after its response (clients reconnect, to another
	// replica). Then the listener closes and in-flight requests drain,
	// for at most the shutdown timeout.
	gw.ready.Store(false)
	srv.SetKeepAlivesEnabled(false)
	if d := gw.cfg.ShutdownDelay; d > 0 {
		gw.logger.Info("shutting down: readiness fails; still serving for the shutdown delay", "delay", d)
		time.Sleep(d)
	}
	// Subscriptions end first, cleanly: each receives its completion and
	// WebSocket connections a close frame; clients resubscribe elsewhere
	// from their last cursor. Then HTTP requests (SSE streams, now ended,
	// among them) drain.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), gw.cfg.ShutdownTimeout)
	defer cancel()
	gw.logger.Info("shutting down: ending subscriptions", "subscriptions", gw.live.Stats().Subscriptions, "timeout", gw.cfg.ShutdownTimeout)
	if err := gw.live.Shutdown(shutdownCtx); err != nil {
		gw.logger.Warn("shutting down: subscriptions did not all end in time; closing their connections", "err", err)
	}
	gw.logger.Info("shutting down: draining in-flight requests", "timeout", gw.cfg.ShutdownTimeout)
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
		if metricsSrv != nil {
			_ = metricsSrv.Close()
		}
		return fmt.Errorf("shutdown: %w", err)
	}
	if metricsSrv != nil {
		// Scraped until the drain ends; a scrape in flight is waited for.
		if err := metricsSrv.Shutdown(shutdownCtx); err != nil {
			_ = metricsSrv.Close()
		}
	}
	gw.logger.Info("stopped")
	return nil
}

// server is an HTTP server of h with the gateway's timeouts.
func (gw *gateway) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      gw.cfg.RequestTimeout + 5*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(gw.logger.Handler(), slog.LevelWarn),
	}
}

// liveReady fails while the live feed has subscriptions and has not
// reached the chain head for longer than its stall bound
// (live.Stats.StallAfter: ten poll intervals, at least 30 s): its
// subscribers receive nothing, whatever the reason (the explorer failing,
// or answering without the feed reaching its head). A feed without
// subscribers never fails readiness.
func (gw *gateway) liveReady() error {
	if gw.live == nil {
		return nil
	}
	st := gw.live.Stats()
	if st.Subscriptions == 0 || st.StallAfter <= 0 || st.Lag <= st.StallAfter {
		return nil
	}
	return fmt.Errorf("live feed stalled: %d subscriptions, lag %s over %s (state %s, delivered %s, explorer head %s)",
		st.Subscriptions, st.Lag.Round(time.Second), st.StallAfter, st.State, st.DeliveredAt, st.Head)
}

// readiness caches the upstream check so probes do not hammer it.
type readiness struct {
	check func(context.Context) error
	ttl   time.Duration

	last atomic.Pointer[readyResult]
}

type readyResult struct {
	at  time.Time
	err error
}

func (r *readiness) ok(ctx context.Context) error {
	if last := r.last.Load(); last != nil && time.Since(last.at) < r.ttl {
		return last.err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err := r.check(ctx)
	r.last.Store(&readyResult{at: time.Now(), err: err})
	return err
}

func writePlain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		if ok {
			return fmt.Sprintf("localhost:%d", tcp.Port)
		}
	}
	return a.String()
}

const defaultQuery = `# Welcome to the trading network's GraphQL gateway.
# Open the docs (top left) to browse the schema; press the run button.
# For a live feed of new transactions, run a subscription:
#   subscription { transactions { cursor node { hash block type } } }
query LatestTransactions {
  transactions(first: 5) {
    edges {
      node {
        block
        index
        type
        submitter { id }
        command {
          __typename
          ... on BatchMarketInstructions {
            submissions { marketId side size price }
          }
          ... on BatchProposalSubmission {
            rationale { title }
          }
          ... on UnknownCommand { name }
        }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`
