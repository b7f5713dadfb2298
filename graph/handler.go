package graph

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

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
	// Introspection enables schema introspection (the playground's docs
	// pane needs it).
	Introspection bool
	// Loaders tunes batching and the shared asset cache; zero takes
	// DefaultLoaderConfig.
	Loaders LoaderConfig
	// Logger receives internal errors and recovered panics.
	Logger *slog.Logger
}

// NewHandler builds the GraphQL endpoint: gqlgen's server with explicit
// transports (GET and POST; no WebSocket, no multipart: the API has no
// subscriptions and no uploads), the error presenter and panic recovery.
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
	resolver := &Resolver{Upstream: cfg.Upstream, Paging: cfg.Paging}
	srv := handler.New(NewExecutableSchema(Config{Resolvers: resolver}))
	srv.AddTransport(transport.Options{AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodOptions}})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	if cfg.Introspection {
		srv.Use(extension.Introspection{})
	}
	srv.SetErrorPresenter(ErrorPresenter(cfg.Logger))
	srv.SetRecoverFunc(recoverFunc(cfg.Logger))
	srv.AroundResponses(freshnessExtension)
	cache := NewAssetCache(cfg.Loaders.AssetCacheSize, cfg.Loaders.AssetCacheTTL)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fresh := &freshness{}
		up := newRequestUpstream(cfg.Upstream)
		state := &requestState{loaders: newLoaders(up, cache, cfg.Loaders, fresh), fresh: fresh, upstream: up}
		srv.ServeHTTP(w, r.WithContext(withRequestState(r.Context(), state)))
	})
}

// recoverFunc turns a panic in a resolver into an INTERNAL error, logged
// with its stack; the process keeps serving.
func recoverFunc(logger *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		logger.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return &Error{Code: CodeInternal, Message: "internal error", Err: fmt.Errorf("panic: %v", p)}
	}
}
