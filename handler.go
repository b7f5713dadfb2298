package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/telemetry"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// newGraphQLHandler is the GraphQL endpoint over client, configured here
// in full: the executor (paging, query limits, the request deadline,
// cursor keys, loaders, the telemetry extension and the loaders' metrics,
// where persisted queries and the asset cache live: Redis when configured,
// else this process), then its HTTP side (the subscription transports over
// the live feed, and the HTTP caching of GET responses with the
// compression under it).
func newGraphQLHandler(cfg *config, client *upstream.Client, keys *graph.CursorKeys, feed *graph.LiveFeed, docs *graph.PersistedDocuments, ops *operations, logger *slog.Logger) http.Handler {
	exec := graph.NewExecutor(graph.ExecutorConfig{
		Upstream:      client,
		Paging:        graph.PagingConfig{DefaultSize: cfg.PageDefault, MaxSize: cfg.PageMax, NestedMaxSize: cfg.PageNestedMax},
		Introspection: cfg.Introspection,
		Loaders: graph.LoaderConfig{
			Wait:           cfg.LoaderWait,
			FewAssets:      graph.DefaultLoaderConfig.FewAssets,
			AssetCacheSize: cfg.AssetCacheSize,
			AssetCacheTTL:  cfg.AssetCacheTTL,
		},
		Logger:               logger,
		Limits:               cfg.limits(),
		RequestTimeout:       cfg.RequestTimeout,
		CursorKeys:           keys,
		Live:                 feed,
		Extensions:           []graphql.HandlerExtension{telemetry.NewGraphQL(ops.metrics, ops.tracing.Provider)},
		Hooks:                ops.graphQLHooks(),
		APQCache:             ops.apqCache(cfg.APQCacheSize),
		Documents:            docs,
		TrustedDocumentsOnly: cfg.TrustedDocumentsOnly,
		AssetCache:           ops.assetCache(cfg.AssetCacheSize, cfg.AssetCacheTTL),
	})
	return transport.NewHandler(exec, transport.Config{
		Subscriptions: cfg.subscriptions(),
		CacheMaxAge:   cfg.cacheMaxAge(),
		Compress:      compressor(cfg, ops),
	})
}

// cacheMaxAge is the handler's CacheMaxAge: HTTP_CACHE_MAX_AGE, whose 0
// (revalidate every time) the handler spells as a negative duration.
func (c *config) cacheMaxAge() time.Duration {
	if c.HTTPCacheMaxAge == 0 {
		return -1
	}
	return c.HTTPCacheMaxAge
}

// persistedDocuments loads PERSISTED_DOCUMENTS, the manifest of trusted
// documents (nil when unset), each validated against the schema: any
// that does not read, parse or validate fails start-up, its id named.
func (c *config) persistedDocuments(logger *slog.Logger) (*graph.PersistedDocuments, error) {
	if c.PersistedDocuments == "" {
		return nil, nil
	}
	docs, err := graph.LoadPersistedDocuments(c.PersistedDocuments, graph.PagingConfig{MaxSize: c.PageMax})
	if err != nil {
		return nil, fmt.Errorf("PERSISTED_DOCUMENTS: %w", err)
	}
	logger.Info("persisted documents loaded", "file", c.PersistedDocuments, "format", docs.Format(), "documents", docs.Len(), "trusted_only", c.TrustedDocumentsOnly)
	return docs, nil
}

// limits is the handler's query limits from the configuration.
func (c *config) limits() graph.Limits {
	calls, basis := c.upstreamCalls()
	return graph.Limits{
		MaxDepth:     c.MaxDepth,
		MaxCost:      c.MaxCost,
		MaxTokens:    c.MaxTokens,
		MaxAliases:   c.MaxAliases,
		MaxBodyBytes: c.MaxBodyBytes,

		MaxUpstreamCalls:   calls,
		UpstreamCallsBasis: basis,
		MaxCallsPerEvent:   c.MaxCallsPerEvent,
	}
}

// signingKeys returns the keys that sign and verify cursors: CURSOR_KEY's
// (parsed by validate), or, unset, a random key of this process's own,
// which the log says (cursors then stop working across replicas and
// restarts). The key is never logged.
func (c *config) signingKeys(logger *slog.Logger) *graph.CursorKeys {
	if c.cursorKeys != nil {
		return c.cursorKeys
	}
	logger.Info("no CURSOR_KEY configured: cursors are signed with a random key, valid only for this process; replicas behind one address need a shared CURSOR_KEY")
	return graph.RandomCursorKeys()
}
