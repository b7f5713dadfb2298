package main

import (
	"context"
	"fmt"
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

// operations is the gateway's operational plumbing: metrics, tracing, and
// the state shared with other replicas through Redis (README, Running
// many replicas).
type operations struct {
	metrics *telemetry.Metrics // nil when METRICS=false
	tracing *telemetry.Tracing // traces nothing without an OTLP endpoint
	shared  *redisstate.Store  // nil without REDIS_URL
	logger  *slog.Logger
}

// newOperations sets up metrics, tracing and the Redis connection.
func newOperations(ctx context.Context, cfg *config, logger *slog.Logger) (*operations, error) {
	o := &operations{logger: logger}
	if cfg.Metrics {
		o.metrics = telemetry.NewMetrics()
	}
	tracing, err := telemetry.NewTracing(ctx, telemetry.TracingOptions{
		Endpoint:    cfg.OTLPEndpoint,
		ServiceName: cfg.OTelServiceName,
		SampleRatio: cfg.TraceSampleRatio,
	})
	if err != nil {
		return nil, err
	}
	o.tracing = tracing
	if cfg.OTLPEndpoint != "" {
		logger.Info("tracing: exporting spans over OTLP/HTTP", "endpoint", cfg.OTLPEndpoint, "service", cfg.OTelServiceName, "sample_ratio", cfg.TraceSampleRatio)
	}
	if cfg.RedisURL != "" {
		store, err := redisstate.Open(ctx, redisstate.Options{
			URL:     cfg.RedisURL,
			Prefix:  cfg.RedisPrefix,
			Logger:  logger,
			OnError: o.metrics.RedisError,
		})
		if err != nil {
			o.close()
			return nil, err
		}
		o.shared = store
		logger.Info("sharing persisted queries, the asset cache and the rate budget through Redis", "redis", redactedRedisURL(cfg.RedisURL), "prefix", cfg.RedisPrefix)
	}
	return o, nil
}

// instrumentUpstream adds metrics and tracing to the upstream client's
// configuration and, with Redis, replaces its local rate budget by the
// shared one of rate requests a second and burst (the whole fleet's),
// falling back to the local one while Redis fails.
func (o *operations) instrumentUpstream(c *upstream.Config, rate float64, burst int) {
	if o.metrics != nil {
		prevResponse := c.OnResponse
		c.OnResponse = func(info upstream.RequestInfo) {
			o.metrics.ObserveUpstream(info)
			if prevResponse != nil {
				prevResponse(info)
			}
		}
		prevBreaker := c.OnBreakerChange
		c.OnBreakerChange = func(service upstream.Service, from, to string) {
			o.metrics.BreakerChanged(service, from, to)
			if prevBreaker != nil {
				prevBreaker(service, from, to)
			}
		}
	}
	c.TracerProvider = o.tracing.Provider
	if o.shared != nil && c.Budget != nil {
		c.Budget = o.shared.Budget(redisstate.BudgetOptions{Rate: rate, Burst: burst, Fallback: c.Budget})
	}
}

// instrumentHandler adds the telemetry extension and the loader hooks to
// the GraphQL handler's configuration, and chooses where persisted
// queries and the asset cache live: Redis when configured, else memory.
func (o *operations) instrumentHandler(h *graph.HandlerConfig, cfg *config) {
	h.Extensions = append([]graphql.HandlerExtension{telemetry.NewGraphQL(o.metrics, o.tracing.Provider)}, h.Extensions...)
	if o.metrics != nil {
		h.Hooks = graph.Hooks{AssetCache: o.metrics.ObserveAssetCache, LoaderBatch: o.metrics.ObserveLoaderBatch, LoaderPrefetch: o.metrics.ObserveLoaderPrefetch, Execution: o.metrics.ObserveExecution}
	}
	switch {
	case o.shared != nil:
		h.APQCache = o.shared.APQ()
		if cfg.AssetCacheSize > 0 {
			h.AssetCache = o.shared.AssetCache(cfg.AssetCacheTTL)
		}
	case cfg.APQCacheSize == 0:
		h.APQCache = graphql.NoCache[string]{}
	default:
		h.APQCache = lru.New[string](cfg.APQCacheSize)
	}
}

// watch exports the state of the client's circuit breakers and of its
// rate budget at every scrape.
func (o *operations) watch(client *upstream.Client, budget upstream.Budget) {
	if o.metrics == nil {
		return
	}
	o.metrics.WatchBreakers(client.BreakerState, upstream.ServiceDataNode, upstream.ServiceExplorer)
	if r, ok := budget.(upstream.BudgetReporter); ok {
		o.metrics.WatchBudget(r)
	}
}

// close flushes the spans still buffered (bounded) and closes Redis.
func (o *operations) close() {
	if o == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.tracing.Shutdown(ctx); err != nil {
		o.logger.Warn("tracing: spans not exported at shutdown", "error", err.Error())
	}
	if o.shared != nil {
		_ = o.shared.Close()
	}
}

// redactedRedisURL is the Redis URL without its password, for the log.
func redactedRedisURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}

// validateOps checks the operations settings.
func (c *config) validateOps() error {
	if c.RedisURL != "" {
		u, err := url.Parse(c.RedisURL)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			return fmt.Errorf("REDIS_URL: want redis://host:port/db or rediss://… (got %q)", redactedRedisURL(c.RedisURL))
		}
	}
	if c.OTLPEndpoint != "" {
		u, err := url.Parse(c.OTLPEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT=%q: want the collector's http(s) base URL, e.g. http://otel-collector:4318", c.OTLPEndpoint)
		}
	}
	if c.TraceSampleRatio < 0 || c.TraceSampleRatio > 1 {
		return fmt.Errorf("TRACE_SAMPLE_RATIO=%g: want a share from 0 to 1", c.TraceSampleRatio)
	}
	if c.MetricsAddr != "" && !c.Metrics {
		return fmt.Errorf("METRICS_ADDR is set with METRICS=false: unset one of them")
	}
	if c.MetricsAddr != "" && c.MetricsAddr == c.Listen {
		return fmt.Errorf("METRICS_ADDR=%q is LISTEN_ADDR: give metrics an address of their own, or unset METRICS_ADDR to serve them on the public one", c.MetricsAddr)
	}
	if c.APQCacheSize < 0 {
		return fmt.Errorf("APQ_CACHE_SIZE must be >= 0")
	}
	if c.ShutdownDelay < 0 {
		return fmt.Errorf("SHUTDOWN_DELAY must be >= 0")
	}
	return nil
}
