package transport

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	gqltransport "github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/graph"
)

// Config configures the HTTP side of the GraphQL endpoint.
type Config struct {
	// Subscriptions configures the WebSocket and SSE transports; zero
	// fields take DefaultSubscriptions'.
	Subscriptions SubscriptionConfig
	// CacheMaxAge is how long browsers and CDNs may keep the response to a
	// GET made of answers that hold until the next block (the explorer's
	// newest page, the data node's state), counted from the oldest of
	// them: about a block. 0 takes DefaultCacheMaxAge; negative: such
	// responses are kept but revalidated on every use (no-cache). See
	// httpcache.go.
	CacheMaxAge time.Duration
	// Compress, if set, wraps the handler's responses (the gateway's
	// response compression), inside the handling of If-None-Match, so that
	// an ETag is compared, and a 304 sent, as the response leaves
	// compressed or not.
	Compress func(http.Handler) http.Handler
}

// NewHandler builds the GraphQL endpoint over exec: explicit transports
// (GET and POST; for subscriptions and @defer, WebSocket, Server-Sent
// Events in both of graphql-sse's modes, and multipart/mixed; no uploads;
// docs/transports.md), the refusals of what they do not serve
// (guardRequest), the per-client bound on open streams, and the HTTP
// caching of GET responses (httpcache.go): Cache-Control and ETag by what
// each response is made of, and 304 on If-None-Match, outside the
// compression (Compress).
func NewHandler(exec *graph.Executor, cfg Config) http.Handler {
	cfg.Subscriptions = cfg.Subscriptions.withDefaults()
	conns := exec.Connections()
	caching := &httpCaching{maxAge: cfg.CacheMaxAge, ephemeralCursors: exec.EphemeralCursors()}
	if caching.maxAge == 0 {
		caching.maxAge = DefaultCacheMaxAge
	}
	// In this order: a request is served by the first transport that
	// supports it, and directPOST supports every POST.
	srv := &server{exec: exec, transports: []graphql.Transport{
		websocketTransport(cfg.Subscriptions, conns, exec.MaxBodyBytes()),
		newEventStreams(cfg.Subscriptions, conns),
		streamTransport{cfg: cfg.Subscriptions, cache: caching},
		gqltransport.Options{AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions}},
		getTransport{cache: caching},
		directPOST{},
	}}
	compress := cfg.Compress
	if compress == nil {
		compress = func(h http.Handler) http.Handler { return h }
	}
	return conditionalGET(compress(guardRequest(exec.MaxBodyBytes(), cfg.Subscriptions, limitClientStreams(cfg.Subscriptions.MaxConnectionsPerClient, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := exec.Request(r.Context(), isStream(r))
		defer cancel()
		srv.ServeHTTP(w, r.WithContext(ctx))
	})))))
}

// server serves a request with the first of its transports that supports
// it, running operations on exec: gqlgen's handler.Server, whose
// ServeHTTP this is, for an executor built apart (graph.NewExecutor).
type server struct {
	exec       *graph.Executor
	transports []graphql.Transport
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if err := recover(); err != nil {
			err := s.exec.PresentRecoveredError(r.Context(), err)
			gqlErr, _ := err.(*gqlerror.Error)
			resp := &graphql.Response{Errors: []*gqlerror.Error{gqlErr}}
			b, _ := json.Marshal(resp)
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(b)
		}
	}()
	r = r.WithContext(graphql.StartOperationTrace(r.Context()))
	for _, t := range s.transports {
		if t.Supports(r) {
			t.Do(w, r, s.exec)
			return
		}
	}
	w.WriteHeader(http.StatusBadRequest)
	b, err := json.Marshal(&graphql.Response{Errors: []*gqlerror.Error{{Message: "transport not supported"}}})
	if err != nil {
		panic(err)
	}
	_, _ = w.Write(b)
}
