package graph

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
)

// HandlerConfig configures the GraphQL endpoint.
type HandlerConfig struct {
	// Upstream serves the data.
	Upstream Upstream
	// Paging sets page sizes; zero fields take DefaultPaging's.
	Paging PagingConfig
	// CursorKeys sign and verify cursors; nil takes a random key of this
	// handler's own (RandomCursorKeys), whose cursors no other handler
	// accepts.
	CursorKeys *CursorKeys
	// Introspection enables schema introspection (the playground's docs
	// pane needs it).
	Introspection bool
	// Loaders tunes batching and the shared asset cache; zero takes
	// DefaultLoaderConfig.
	Loaders LoaderConfig
	// Logger receives internal errors and recovered panics.
	Logger *slog.Logger
	// AssetCache is the asset cache shared by all requests; nil makes an
	// in-process one of Loaders.AssetCacheSize entries kept for
	// Loaders.AssetCacheTTL.
	AssetCache AssetCache
	// APQCache stores automatic persisted queries by their SHA-256 hash;
	// nil keeps DefaultAPQCacheSize of them in memory.
	APQCache graphql.Cache[string]
	// Documents is the manifest of trusted documents, served by id
	// (LoadPersistedDocuments; documents_serve.go); nil: none.
	Documents *PersistedDocuments
	// TrustedDocumentsOnly refuses every operation that is not a document
	// of Documents (which it needs).
	TrustedDocumentsOnly bool
	// Extensions are added to gqlgen's executor before any other, so that
	// they see every operation and response whole (metrics, tracing).
	Extensions []graphql.HandlerExtension
	// Hooks observe the loaders and the asset cache, for metrics.
	Hooks Hooks
	// Limits bound each request (depth, cost, tokens, aliases, body
	// size); zero fields take DefaultLimits'.
	Limits Limits
	// RequestTimeout bounds each request, upstream calls included; 0
	// means no deadline of the handler's own.
	RequestTimeout time.Duration
	// Live is the transaction feed of Subscription.transactions; nil: the
	// subscription answers UPSTREAM_UNAVAILABLE ("live feed disabled").
	// Its cursor keys are the handler's: when CursorKeys is nil the
	// handler takes the feed's, and the two must not differ.
	Live *LiveFeed
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
	// GqlgenExecutor answers every query with gqlgen's executor alone,
	// without the direct executor in front of it (fastexec.go): for
	// comparisons in tests and benchmarks. It is implied when an extension
	// intercepts fields or root fields.
	GqlgenExecutor bool
}

// DefaultAPQCacheSize is how many persisted queries the in-memory APQ
// cache keeps when HandlerConfig.APQCache is nil.
const DefaultAPQCacheSize = 1000

// NewHandler builds the GraphQL endpoint: gqlgen's server with explicit
// transports (GET and POST; for subscriptions and @defer, WebSocket,
// Server-Sent Events in both of graphql-sse's modes, and multipart/mixed;
// no uploads; docs/transports.md), the error presenter and panic
// recovery, and the HTTP caching of GET responses (httpcache.go):
// Cache-Control and ETag by what each response is made of, and 304 on
// If-None-Match, outside the compression (Compress).
func NewHandler(cfg HandlerConfig) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Paging.DefaultSize == 0 {
		cfg.Paging.DefaultSize = DefaultPaging.DefaultSize
	}
	if cfg.Paging.MaxSize == 0 {
		cfg.Paging.MaxSize = DefaultPaging.MaxSize
	}
	if cfg.Paging.NestedMaxSize == 0 {
		cfg.Paging.NestedMaxSize = DefaultPaging.NestedMaxSize
	}
	if cfg.Loaders == (LoaderConfig{}) {
		cfg.Loaders = DefaultLoaderConfig
	}
	if cfg.CursorKeys == nil && cfg.Live != nil {
		cfg.CursorKeys = cfg.Live.keys
	}
	if cfg.CursorKeys == nil {
		cfg.CursorKeys = RandomCursorKeys()
	}
	if cfg.Live != nil && cfg.Live.keys != cfg.CursorKeys {
		// A wiring mistake: the events' cursors would not page the
		// connection, nor its cursors resume the subscription.
		panic("graph: HandlerConfig.Live signs cursors with other keys than HandlerConfig.CursorKeys; pass the same *CursorKeys to NewLiveFeed")
	}
	cfg.Subscriptions = cfg.Subscriptions.withDefaults()
	resolver := &Resolver{Upstream: cfg.Upstream, Paging: cfg.Paging, Cursors: cfg.CursorKeys, Live: cfg.Live}
	gqlgenOnly := cfg.GqlgenExecutor
	for _, ext := range cfg.Extensions {
		// Field interceptors run inside gqlgen's execution of each field,
		// which the direct executor does not do.
		_, field := ext.(graphql.FieldInterceptor)
		_, root := ext.(graphql.RootFieldInterceptor)
		gqlgenOnly = gqlgenOnly || field || root
	}
	srv := handler.New(newFastSchema(Config{Resolvers: resolver}, gqlgenOnly, cfg.Hooks.Execution))
	for _, ext := range cfg.Extensions {
		srv.Use(ext)
	}
	cfg.Limits = cfg.Limits.withDefaults()
	conns := context.Background() // WebSocket connections: closed by the feed's drain
	if cfg.Live != nil {
		conns = cfg.Live.conns
	}
	// In this order: gqlgen serves a request with the first transport
	// that supports it, and directPOST supports every POST.
	srv.AddTransport(websocketTransport(cfg.Subscriptions, conns, cfg.Limits.MaxBodyBytes))
	srv.AddTransport(newEventStreams(cfg.Subscriptions, conns))
	caching := &httpCaching{maxAge: cfg.CacheMaxAge, ephemeralCursors: cfg.CursorKeys.random}
	if caching.maxAge == 0 {
		caching.maxAge = DefaultCacheMaxAge
	}
	srv.AddTransport(streamTransport{cfg: cfg.Subscriptions, cache: caching})
	srv.AddTransport(transport.Options{AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions}})
	srv.AddTransport(getTransport{cache: caching})
	srv.AddTransport(directPOST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(cfg.Limits.MaxTokens)
	srv.Use(&limitsExtension{limits: cfg.Limits, paging: cfg.Paging, assetRound: assetRoundCalls(cfg.Loaders)})
	if cfg.APQCache == nil {
		cfg.APQCache = lru.New[string](DefaultAPQCacheSize)
	}
	if cfg.TrustedDocumentsOnly && cfg.Documents == nil {
		panic("graph: HandlerConfig.TrustedDocumentsOnly without Documents would refuse every operation")
	}
	// Documents by id, then APQ, then the trusted-documents policy on
	// the text APQ leaves (documents_serve.go).
	srv.Use(documentLookup{docs: cfg.Documents, refused: cfg.Hooks.DocumentRefused})
	srv.Use(persistedQueries{cache: cfg.APQCache, max: MaxPersistedQueryBytes}) // after the limits: stores only what passed them (apq.go)
	srv.Use(documentPolicy{docs: cfg.Documents, trustedOnly: cfg.TrustedDocumentsOnly, served: cfg.Hooks.DocumentServed, refused: cfg.Hooks.DocumentRefused})
	if cfg.Introspection {
		srv.Use(extension.Introspection{})
	}
	args := numericArgs{maxPage: cfg.Paging.MaxSize}
	srv.SetValidationRulesFn(args.validationRules) // numeric literals (arguments.go)
	present := errorPresenter(cfg.Logger, args)
	srv.SetErrorPresenter(present)
	panics := newPanicLog(cfg.Logger)
	srv.SetRecoverFunc(recoverFunc(panics))
	cache := cfg.AssetCache
	if cache == nil {
		cache = NewAssetCache(cfg.Loaders.AssetCacheSize, cfg.Loaders.AssetCacheTTL)
	}
	// A request's state: its loaders and memo over next.
	stateOver := func(next Upstream) *requestState {
		fresh := &freshness{}
		up := newRequestUpstream(next)
		return &requestState{loaders: newLoaders(up, cache, cfg.Loaders, cfg.Hooks, fresh), fresh: fresh, upstream: up, answers: newAnswerLog()}
	}
	newState := func() *requestState { return stateOver(cfg.Upstream) }
	streams := streamingOperations{newState: newState, present: present, live: cfg.Live}
	if cfg.Live != nil {
		shared := newSharedEvents(cfg.Upstream, cfg.Live.newestBlock)
		streams.newEventState = func() *requestState {
			return stateOver(&eventUpstream{shared: shared, max: cfg.Limits.MaxCallsPerEvent})
		}
	}
	srv.AroundOperations(streams.operations)
	srv.AroundResponses(streams.responses) // outside freshnessExtension: it reads the event's state
	srv.AroundResponses(freshnessExtension)
	compress := cfg.Compress
	if compress == nil {
		compress = func(h http.Handler) http.Handler { return h }
	}
	return conditionalGET(compress(guardRequest(cfg.Limits.MaxBodyBytes, cfg.Subscriptions, limitClientStreams(cfg.Subscriptions.MaxConnectionsPerClient, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cfg.RequestTimeout > 0 {
			if isStream(r) {
				// A stream lasts as long as its subscriptions; its
				// queries get the deadline each (streamingOperations).
				r = r.WithContext(withStreamTimeout(r.Context(), cfg.RequestTimeout))
			} else {
				ctx, cancel := context.WithTimeout(r.Context(), cfg.RequestTimeout)
				defer cancel()
				r = r.WithContext(ctx)
			}
		}
		srv.ServeHTTP(w, r.WithContext(withPanicLog(withRequestState(r.Context(), newState()), panics)))
	})))))
}

// recoverFunc turns a panic in a resolver into an INTERNAL error, logged
// (logPanic); the process keeps serving.
func recoverFunc(log *panicLog) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		return panicError(withPanicLog(ctx, log), "resolver", p)
	}
}
