package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tradenet/gateway/upstream"
)

// upstreamCacheMetrics are the cache of upstream answers' (upstream.Cache).
type upstreamCacheMetrics struct {
	hits          *prometheus.CounterVec
	misses        *prometheus.CounterVec
	invalidations *prometheus.CounterVec
	kept          *prometheus.CounterVec
	evictions     *prometheus.CounterVec
}

// upstreamCacheEndpoints and upstreamCacheKinds label the series created
// at start, so that rate() and the dashboard see them before the first
// event.
var (
	upstreamCacheEndpoints = []upstream.Endpoint{upstream.EndpointAssets, upstream.EndpointFundingPayments,
		upstream.EndpointDelegations, upstream.EndpointTransactions, upstream.EndpointTransaction}
	upstreamCacheKinds = []upstream.CacheKind{upstream.CacheRecent, upstream.CacheUntilNextBlock, upstream.CacheImmutable}
)

func newUpstreamCacheMetrics(reg *prometheus.Registry) upstreamCacheMetrics {
	m := upstreamCacheMetrics{
		hits: counterVec("gateway_upstream_cache_hits_total",
			"Upstream requests answered from the cache of upstream answers, by endpoint, the answer's kind (recent, until_next_block, immutable) and tier (process: this replica's memory; redis: shared by the replicas; fleet: another replica's fetch of the same answer, waited for instead of asking the upstream, then read from redis).",
			"endpoint", "kind", "tier"),
		misses: counterVec("gateway_upstream_cache_misses_total",
			"Upstream requests the cache could not answer (they asked the service, or joined an identical request in flight), by endpoint and the kind of the answer they got (none: an error).",
			"endpoint", "kind"),
		invalidations: counterVec("gateway_upstream_cache_invalidations_total",
			"Cached answers dropped because the explorer's head moved past the block they were true at (a new block), by endpoint and kind.",
			"endpoint", "kind"),
		kept: counterVec("gateway_upstream_cache_kept_total",
			"Cached explorer lists kept across a new block none of whose transactions they list (the live feed told the cache every one), by endpoint and kind.",
			"endpoint", "kind"),
		evictions: counterVec("gateway_upstream_cache_evictions_total",
			"Cached answers dropped, least recently used first, to keep the cache within UPSTREAM_CACHE_BYTES, by endpoint and kind.",
			"endpoint", "kind"),
	}
	reg.MustRegister(m.hits, m.misses, m.invalidations, m.kept, m.evictions)
	for _, e := range upstreamCacheEndpoints {
		for _, k := range upstreamCacheKinds {
			m.hits.WithLabelValues(string(e), k.String(), "process")
			m.hits.WithLabelValues(string(e), k.String(), "redis")
			m.hits.WithLabelValues(string(e), k.String(), "fleet")
			m.misses.WithLabelValues(string(e), k.String())
			m.evictions.WithLabelValues(string(e), k.String())
		}
		m.misses.WithLabelValues(string(e), upstream.CacheNone.String())
		m.invalidations.WithLabelValues(string(e), upstream.CacheUntilNextBlock.String())
	}
	m.kept.WithLabelValues(string(upstream.EndpointTransactions), upstream.CacheUntilNextBlock.String())
	return m
}

// ObserveUpstreamCache records one event of the cache of upstream
// answers; it is upstream.CacheConfig.OnEvent.
func (m *Metrics) ObserveUpstreamCache(e upstream.CacheEvent) {
	if m == nil {
		return
	}
	endpoint, kind := string(e.Endpoint), e.Kind.String()
	switch e.Outcome {
	case upstream.CacheHit:
		m.upstreamCache.hits.WithLabelValues(endpoint, kind, "process").Inc()
	case upstream.CacheSharedHit:
		m.upstreamCache.hits.WithLabelValues(endpoint, kind, "redis").Inc()
	case upstream.CacheFleetHit:
		m.upstreamCache.hits.WithLabelValues(endpoint, kind, "fleet").Inc()
	case upstream.CacheMiss:
		m.upstreamCache.misses.WithLabelValues(endpoint, kind).Inc()
	case upstream.CacheInvalidated:
		m.upstreamCache.invalidations.WithLabelValues(endpoint, kind).Inc()
	case upstream.CacheKept:
		m.upstreamCache.kept.WithLabelValues(endpoint, kind).Inc()
	case upstream.CacheEvicted:
		m.upstreamCache.evictions.WithLabelValues(endpoint, kind).Inc()
	}
}

// WatchUpstreamCache exports what the cache of upstream answers holds in
// this process, read at every scrape (stats is upstream.Cache.Stats).
func (m *Metrics) WatchUpstreamCache(stats func() upstream.CacheStats) {
	if m == nil {
		return
	}
	bytes := prometheus.NewDesc("gateway_upstream_cache_bytes",
		"Bytes of upstream answers the cache holds in this process, as counted against UPSTREAM_CACHE_BYTES (twice each body's length, plus its key).", nil, nil)
	entries := prometheus.NewDesc("gateway_upstream_cache_entries",
		"Upstream answers the cache holds in this process.", nil, nil)
	m.registry.MustRegister(collectorFunc{desc: bytes, also: []*prometheus.Desc{entries}, collect: func(ch chan<- prometheus.Metric) {
		st := stats()
		ch <- prometheus.MustNewConstMetric(bytes, prometheus.GaugeValue, float64(st.Bytes))
		ch <- prometheus.MustNewConstMetric(entries, prometheus.GaugeValue, float64(st.Entries))
	}})
}
