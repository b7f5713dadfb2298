package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/telemetry"
)

// operations is the gateway's operational plumbing: metrics, tracing, and
// the state shared with other replicas through Redis (sharedstate.go;
// README, Running many replicas). The builders of the upstream client and
// of the GraphQL handler take what they observe with, and where their
// state lives, from it.
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
	if o.shared, err = openSharedState(ctx, cfg, logger, o.metrics); err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

// graphQLHooks are the GraphQL handler's hooks into the metrics: none
// without metrics.
func (o *operations) graphQLHooks() graph.Hooks {
	if o.metrics == nil {
		return graph.Hooks{}
	}
	return graph.Hooks{AssetCache: o.metrics.ObserveAssetCache, LoaderBatch: o.metrics.ObserveLoaderBatch, LoaderPrefetch: o.metrics.ObserveLoaderPrefetch, Execution: o.metrics.ObserveExecution,
		DocumentServed: o.metrics.ObserveDocumentServed, DocumentRefused: o.metrics.ObserveDocumentRefused}
}

// watchLive exports the live feed's figures on /metrics, read at each
// scrape (stats is the feed's Stats), and those of its Redis coordinator
// when it has one (coord, nil without); nothing without metrics.
func (o *operations) watchLive(stats func() live.Stats, coord *redisstate.LiveCoordinator) {
	o.metrics.WatchLive(stats)
	if coord == nil {
		return
	}
	o.metrics.WatchLiveCoordinator(func() telemetry.LiveCoordinatorStats {
		st := coord.Stats()
		return telemetry.LiveCoordinatorStats{Oversized: st.Oversized, Unauthentic: st.Unauthentic, Stale: st.Stale, Takeovers: st.Takeovers}
	})
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
