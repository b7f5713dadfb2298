package main

import (
	"context"
	"log/slog"
	"net/url"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/telemetry"
	"github.com/tradenet/gateway/upstream"
)

// Where the state that replicas can share lives: persisted queries, the
// asset cache and the data node's rate budget are kept in Redis when
// REDIS_URL is set (README, Running many replicas), else in this process;
// the cache of upstream answers is kept in this process and, with Redis
// and a key the replicas share, in Redis too;
// the live feed's poller is shared too when the replicas share a key to
// sign its batches (LIVE_BATCH_KEY, or CURSOR_KEY; livefeed.go).

// openSharedState connects to REDIS_URL; nil without it. Its failures are
// counted in metrics (nil: not counted).
func openSharedState(ctx context.Context, cfg *config, logger *slog.Logger, metrics *telemetry.Metrics) (*redisstate.Store, error) {
	if cfg.RedisURL == "" {
		return nil, nil
	}
	store, err := redisstate.Open(ctx, redisstate.Options{
		URL:     cfg.RedisURL,
		Prefix:  cfg.RedisPrefix,
		Logger:  logger,
		OnError: metrics.RedisError,
	})
	if err != nil {
		return nil, err
	}
	logger.Info("sharing persisted queries, the asset cache and the rate budget through Redis", "redis", redactedRedisURL(cfg.RedisURL), "prefix", cfg.RedisPrefix)
	switch {
	case cfg.LiveBatchKey != "":
		logger.Info("the live feed's poller is shared through Redis, its batches signed with LIVE_BATCH_KEY")
	case cfg.liveBatchKeys != nil:
		logger.Info("the live feed's poller is shared through Redis, its batches signed with a key derived from CURSOR_KEY (LIVE_BATCH_KEY is unset)")
	default:
		logger.Warn("neither LIVE_BATCH_KEY nor CURSOR_KEY is set: replicas cannot authenticate each other's live batches, so the live feed's poller is not shared and each replica polls the explorer for itself; give every replica the same LIVE_BATCH_KEY to share one poller")
	}
	return store, nil
}

// budget is the data node's rate budget of rate requests a second and
// burst: with Redis, the whole fleet's, falling back to this process's own
// while Redis fails; without, this process's own.
func (o *operations) budget(rate float64, burst int) upstream.Budget {
	local := upstream.NewLocalBudget(rate, burst)
	if o.shared == nil {
		return local
	}
	return o.shared.Budget(redisstate.BudgetOptions{Rate: rate, Burst: burst, Fallback: local})
}

// apqCache keeps automatic persisted queries: in Redis, else size of them
// in memory (none for 0).
func (o *operations) apqCache(size int) graphql.Cache[string] {
	switch {
	case o.shared != nil:
		return o.shared.APQ()
	case size == 0:
		return graphql.NoCache[string]{}
	default:
		return lru.New[string](size)
	}
}

// assetCache is the asset cache shared by all requests when it lives in
// Redis; nil when it lives in this process (graph makes it of
// ASSET_CACHE_SIZE entries) or is disabled (size 0).
func (o *operations) assetCache(size int, ttl time.Duration) graph.AssetCache {
	if o.shared == nil || size <= 0 {
		return nil
	}
	return o.shared.AssetCache(ttl)
}

// upstreamCache is the cache of upstream answers (UPSTREAM_CACHE_BYTES;
// nil when 0): in this process, and in Redis too when replicas share a
// key to sign its entries (LIVE_BATCH_KEY, or CURSOR_KEY's), so that
// whoever can write to Redis cannot feed answers to the fleet. Without a
// shared key each replica keeps its answers to itself (startup says so).
func (o *operations) upstreamCache(cfg *config) *upstream.Cache {
	cc := upstream.CacheConfig{
		MaxBytes: cfg.UpstreamCacheBytes,
		MaxAge:   cfg.UpstreamCacheMaxAge,
		HeadTTL:  cfg.UpstreamCacheHeadTTL,
	}
	if o.metrics != nil {
		cc.OnEvent = o.metrics.ObserveUpstreamCache
	}
	if cc.MaxBytes > 0 && o.shared != nil {
		if tier := o.shared.UpstreamCache(cfg.liveBatchKeys); tier != nil {
			cc.Shared = tier
			o.logger.Info("the upstream cache is shared through Redis, its entries signed with a key derived from LIVE_BATCH_KEY (or CURSOR_KEY)")
		} else {
			o.logger.Warn("neither LIVE_BATCH_KEY nor CURSOR_KEY is set: the upstream cache is not shared through Redis (replicas could not verify one another's entries); each replica caches for itself")
		}
	}
	return upstream.NewCache(cc)
}

// redactedRedisURL is the Redis URL without its password, for the log.
func redactedRedisURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}
