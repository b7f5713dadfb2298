package graph

import (
	"context"
	"log/slog"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// ExecutorConfig configures the GraphQL executor (NewExecutor).
type ExecutorConfig struct {
	// Upstream serves the data.
	Upstream Upstream
	// Paging sets page sizes; zero fields take DefaultPaging's.
	Paging PagingConfig
	// CursorKeys sign and verify cursors; nil takes a random key of this
	// executor's own (RandomCursorKeys), whose cursors no other executor
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
	// size: the transports apply MaxBodyBytes, Executor.MaxBodyBytes);
	// zero fields take DefaultLimits'.
	Limits Limits
	// RequestTimeout bounds each request, upstream calls included
	// (Executor.Request); 0 means no deadline of the executor's own.
	RequestTimeout time.Duration
	// Live is the transaction feed of Subscription.transactions; nil: the
	// subscription answers UPSTREAM_UNAVAILABLE ("live feed disabled").
	// Its cursor keys are the executor's: when CursorKeys is nil the
	// executor takes the feed's, and the two must not differ.
	Live *LiveFeed
	// QueryCacheSize is how many distinct documents are kept parsed,
	// validated and planned (documents_cache.go); 0 takes
	// DefaultQueryCacheSize.
	QueryCacheSize int
	// GqlgenExecutor answers every query with gqlgen's executor alone,
	// instead of the direct executor (fastexec.go): for comparisons in
	// tests and benchmarks. It is implied when an extension intercepts
	// fields or root fields, which gqlgen's executor calls around each
	// field and the direct one does not (the gateway's own, telemetry's,
	// intercepts operations and responses only): a choice made when the
	// executor is built, before any operation starts.
	GqlgenExecutor bool
}

// DefaultAPQCacheSize is how many persisted queries the in-memory APQ
// cache keeps when ExecutorConfig.APQCache is nil.
const DefaultAPQCacheSize = 1000

// Executor runs the gateway's GraphQL operations: the direct executor for
// queries, gqlgen's for introspection and subscriptions, chosen once per
// operation before it starts (fastexec.go), the
// query limits, automatic persisted queries and trusted documents, the
// error presenter and panic recovery, and each request's state (loaders,
// memo, the answers its response is made of). It knows nothing of HTTP:
// the transports (package transport) read requests, call it through
// gqlgen's graphql.GraphExecutor interface, which it implements, under the
// context Request gives each request, and write the responses.
type Executor struct {
	exec     *executor.Executor
	docs     *documentCache
	newState func() *requestState
	panics   *panicLog
	timeout  time.Duration
	conns    context.Context
	maxBody  int64
	// ephemeralCursors: the cursors are signed with a key of this process
	// alone (RandomCursorKeys).
	ephemeralCursors bool
}

var _ graphql.GraphExecutor = (*Executor)(nil)

// NewExecutor builds the executor cfg describes.
func NewExecutor(cfg ExecutorConfig) *Executor {
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
		panic("graph: ExecutorConfig.Live signs cursors with other keys than ExecutorConfig.CursorKeys; pass the same *CursorKeys to NewLiveFeed")
	}
	resolver := &Resolver{Upstream: cfg.Upstream, Paging: cfg.Paging, Cursors: cfg.CursorKeys, Live: cfg.Live}
	gqlgenOnly := cfg.GqlgenExecutor
	for _, ext := range cfg.Extensions {
		// Field interceptors run inside gqlgen's execution of each field,
		// which the direct executor does not do.
		_, field := ext.(graphql.FieldInterceptor)
		_, root := ext.(graphql.RootFieldInterceptor)
		gqlgenOnly = gqlgenOnly || field || root
	}
	srv := executor.New(newFastSchema(Config{Resolvers: resolver}, gqlgenOnly, cfg.Hooks.Execution))
	for _, ext := range cfg.Extensions {
		srv.Use(ext)
	}
	cfg.Limits = cfg.Limits.withDefaults()
	conns := context.Background() // WebSocket connections: closed by the feed's drain
	if cfg.Live != nil {
		conns = cfg.Live.conns
	}
	docs := newDocumentCache(cfg.QueryCacheSize)
	srv.SetQueryCache(docs)
	srv.SetParserTokenLimit(cfg.Limits.MaxTokens)
	srv.Use(&limitsExtension{limits: cfg.Limits, paging: cfg.Paging, assetRound: assetRoundCalls(cfg.Loaders), docs: docs})
	if cfg.APQCache == nil {
		cfg.APQCache = lru.New[string](DefaultAPQCacheSize)
	}
	if cfg.TrustedDocumentsOnly && cfg.Documents == nil {
		panic("graph: ExecutorConfig.TrustedDocumentsOnly without Documents would refuse every operation")
	}
	// Documents by id, then APQ, then the trusted-documents policy on
	// the text APQ leaves (documents_serve.go).
	srv.Use(documentLookup{docs: cfg.Documents, refused: cfg.Hooks.DocumentRefused})
	srv.Use(persistedQueries{cache: cfg.APQCache, max: MaxPersistedQueryBytes, docs: docs}) // after the limits: stores only what passed them (apq.go)
	srv.Use(documentPolicy{docs: cfg.Documents, parsed: docs, trustedOnly: cfg.TrustedDocumentsOnly, served: cfg.Hooks.DocumentServed, refused: cfg.Hooks.DocumentRefused})
	if cfg.Introspection {
		srv.Use(extension.Introspection{})
	}
	args := numericArgs{maxPage: cfg.Paging.MaxSize}
	srv.SetDefaultRulesFn(args.validationRules) // numeric literals (arguments.go)
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
	return &Executor{
		exec:             srv,
		docs:             docs,
		newState:         newState,
		panics:           panics,
		timeout:          cfg.RequestTimeout,
		conns:            conns,
		maxBody:          cfg.Limits.MaxBodyBytes,
		ephemeralCursors: cfg.CursorKeys.random,
	}
}

// CreateOperationContext parses and validates an operation
// (graphql.GraphExecutor).
func (e *Executor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	return e.exec.CreateOperationContext(ctx, params)
}

// DispatchOperation runs an operation CreateOperationContext returned
// (graphql.GraphExecutor).
func (e *Executor) DispatchOperation(ctx context.Context, opCtx *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	return e.exec.DispatchOperation(ctx, opCtx)
}

// DispatchError presents the errors of an operation that did not execute
// (graphql.GraphExecutor).
func (e *Executor) DispatchError(ctx context.Context, list gqlerror.List) *graphql.Response {
	return e.exec.DispatchError(ctx, list)
}

// PresentRecoveredError turns a panic a transport recovered into the
// INTERNAL error the client sees, logged.
func (e *Executor) PresentRecoveredError(ctx context.Context, err any) error {
	return e.exec.PresentRecoveredError(ctx, err)
}

// Request returns the context a transport serves one request under, and
// the function that releases it once the request is served: the request's
// state and panic log, and its deadline (RequestTimeout). A stream (a
// WebSocket connection, an SSE or multipart/mixed response) lasts as long
// as its subscriptions: it has no deadline, and its queries get the
// deadline each (streamingOperations).
func (e *Executor) Request(ctx context.Context, stream bool) (context.Context, context.CancelFunc) {
	cancel := func() {}
	if e.timeout > 0 {
		if stream {
			ctx = withStreamTimeout(ctx, e.timeout)
		} else {
			ctx, cancel = context.WithTimeout(ctx, e.timeout)
		}
	}
	return withPanicLog(withRequestState(ctx, e.newState()), e.panics), cancel
}

// Connections ends when the connections that outlive a request (WebSocket
// connections, graphql-sse's reserved streams) are to close: once the live
// feed's drain has ended every subscription (LiveFeed.Shutdown). Without a
// live feed, never.
func (e *Executor) Connections() context.Context { return e.conns }

// MaxBodyBytes bounds a request body and a WebSocket message
// (Limits.MaxBodyBytes, defaults applied).
func (e *Executor) MaxBodyBytes() int64 { return e.maxBody }

// EphemeralCursors reports cursors signed with a key of this process
// alone (RandomCursorKeys): no response carrying them is true for ever,
// since a restart makes them fail.
func (e *Executor) EphemeralCursors() bool { return e.ephemeralCursors }

// recoverFunc turns a panic in a resolver into an INTERNAL error, logged
// (LogPanic); the process keeps serving.
func recoverFunc(log *panicLog) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		return panicError(withPanicLog(ctx, log), "resolver", p)
	}
}
