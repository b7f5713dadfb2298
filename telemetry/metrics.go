// Package telemetry is the gateway's operational instrumentation:
// Prometheus metrics on a registry of their own, OpenTelemetry tracing,
// and the per-request record the access log writes from.
package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tradenet/gateway/upstream"
)

// Metrics holds the gateway's metrics. Its registry is its own, not the
// global default: only what is registered here is exported (plus the Go
// runtime's and the process's collectors). Its methods are safe for
// concurrent use; a nil *Metrics records nothing.
type Metrics struct {
	registry *prometheus.Registry
	names    *nameSet

	operations       *prometheus.CounterVec
	operationSeconds *prometheus.HistogramVec
	// operationUpstream is the upstream requests each operation sent.
	operationUpstream *prometheus.HistogramVec
	operationErrors   *prometheus.CounterVec
	upstreamRequests  *prometheus.CounterVec
	upstreamSeconds   *prometheus.HistogramVec
	assetCache        *prometheus.CounterVec
	loaderBatch       *prometheus.HistogramVec
	loaderPrefetch    *prometheus.CounterVec
	breakerChanges    *prometheus.CounterVec
	redisErrors       *prometheus.CounterVec
	executions        *prometheus.CounterVec
	compressed        *prometheus.CounterVec
	compressedBytes   *prometheus.CounterVec
	documentsServed   *prometheus.CounterVec
	documentsRefused  *prometheus.CounterVec
	subscriptions     subscriptionMetrics
	upstreamCache     upstreamCacheMetrics
}

// MaxOperationNames bounds the distinct operation names in metric labels:
// names are chosen by clients, so past this many the rest are counted
// under OtherOperation, until a name unseen for OperationNameIdle gives
// up its label. Unnamed operations are AnonymousOperation, and requests
// refused before execution (unparsable, invalid, over the limits, unknown
// persisted query) are NoOperation: only operations that were executed
// get a label of their own.
const (
	MaxOperationNames = 200
	// OperationNameIdle is how long a name keeps its label unseen once
	// the labels are all taken: its series are then deleted and its slot
	// goes to a new name. Far longer than any scrape interval, so an
	// active name's series never vanish between scrapes; short enough
	// that a burst of junk names stops crowding real ones out soon after
	// it ends.
	OperationNameIdle  = 10 * time.Minute
	maxOperationName   = 100
	AnonymousOperation = "anonymous"
	OtherOperation     = "(other)"
	NoOperation        = "(none)"
)

// errorCodes are the extensions.code values counted as themselves; any
// other is counted as "OTHER" and an error without one as "NONE".
var errorCodes = map[string]bool{
	"BAD_USER_INPUT": true, "NOT_FOUND": true, "UPSTREAM_ERROR": true, "UPSTREAM_UNAVAILABLE": true,
	"RATE_LIMITED": true, "QUERY_TOO_COMPLEX": true, "INTERNAL": true, "PERSISTED_QUERY_NOT_FOUND": true,
}

// NewMetrics makes the metrics and their registry.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		registry: reg,
		operations: counterVec("gateway_graphql_operations_total",
			"GraphQL operations answered, by operation name.",
			"operation"),
		operationSeconds: histogramVec("gateway_graphql_operation_duration_seconds",
			"Time from reading a GraphQL request to having its response (the last part of a @defer response), by operation name; subscriptions are not in it (gateway_graphql_subscription_setup_duration_seconds).",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "operation"),
		operationUpstream: histogramVec("gateway_graphql_operation_upstream_requests",
			"Upstream HTTP requests (data node and explorer, retries included) each GraphQL query sent, by operation name; answers from the upstream cache, or shared with a request in flight, send none. Subscriptions are not in it.",
			[]float64{0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 450}, "operation"),
		operationErrors: counterVec("gateway_graphql_errors_total",
			"Errors in GraphQL responses, by operation name and extensions.code.",
			"operation", "code"),
		upstreamRequests: counterVec("gateway_upstream_requests_total",
			"HTTP requests to the upstream services, by service, endpoint and status code (\"none\" when no response arrived).",
			"service", "endpoint", "code"),
		upstreamSeconds: histogramVec("gateway_upstream_request_duration_seconds",
			"Duration of HTTP requests to the upstream services, body included, by service and endpoint.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}, "service", "endpoint"),
		assetCache: counterVec("gateway_asset_cache_lookups_total",
			"Asset ids looked up in the shared asset cache, by result (hit or miss).",
			"result"),
		loaderBatch: histogramVec("gateway_loader_batch_size",
			"Keys per batch dispatched by a per-request loader.",
			[]float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, "loader"),
		loaderPrefetch: counterVec("gateway_loader_prefetches_total",
			"Loader batches started as soon as their keys were known (the asset references of a page of transactions), before the fields that need them asked; each is also counted in gateway_loader_batch_size.",
			"loader"),
		breakerChanges: counterVec("gateway_upstream_breaker_transitions_total",
			"Circuit breaker state changes, by service and the state entered.",
			"service", "state"),
		redisErrors: counterVec("gateway_redis_errors_total",
			"Failed Redis calls, by what they were for (apq, asset_cache, budget, live, upstream_cache); the gateway goes on without the shared state.",
			"use"),
		executions: counterVec("gateway_graphql_executions_total",
			"Queries executed, by executor, chosen before each starts: direct (the generated writers), or gqlgen (introspection, or an executor built with gqlgen's alone).",
			"executor"),
		compressed: counterVec("gateway_http_compressed_responses_total",
			"Responses sent compressed, by content coding (zstd or gzip; COMPRESSION_LEVEL, COMPRESSION_MIN_BYTES).",
			"encoding"),
		compressedBytes: counterVec("gateway_http_compressed_response_bytes_total",
			"Bytes of the compressed responses' bodies, by content coding, before (stage=\"in\") and after (stage=\"out\") compression.",
			"encoding", "stage"),
		documentsServed: counterVec("gateway_persisted_documents_served_total",
			"Operations run from a persisted document, by where its text came from: manifest (the trusted documents of PERSISTED_DOCUMENTS, by documentId, doc_id or persistedQuery hash) or apq (a hash alone, found among the automatic persisted queries).",
			"source"),
		documentsRefused: counterVec("gateway_documents_refused_total",
			"Documents refused, by reason: unknown_id (a documentId or doc_id the manifest does not list), untrusted (TRUSTED_DOCUMENTS_ONLY: a text not in the manifest), apq_registration (TRUSTED_DOCUMENTS_ONLY: an automatic persisted query's registration of a text not in the manifest).",
			"reason"),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.operations, m.operationSeconds, m.operationUpstream, m.operationErrors,
		m.upstreamRequests, m.upstreamSeconds,
		m.assetCache, m.loaderBatch, m.loaderPrefetch, m.breakerChanges, m.redisErrors, m.executions,
		m.compressed, m.compressedBytes, m.documentsServed, m.documentsRefused,
	)
	m.subscriptions = newSubscriptionMetrics(reg)
	m.upstreamCache = newUpstreamCacheMetrics(reg)
	for _, e := range []string{"direct", "gqlgen"} {
		m.executions.WithLabelValues(e)
	}
	m.loaderPrefetch.WithLabelValues("assets")
	for _, e := range []string{"zstd", "gzip"} {
		m.compressed.WithLabelValues(e)
		for _, s := range []string{"in", "out"} {
			m.compressedBytes.WithLabelValues(e, s)
		}
	}
	for _, r := range []string{"hit", "miss"} {
		m.assetCache.WithLabelValues(r)
	}
	for _, src := range []string{"manifest", "apq"} {
		m.documentsServed.WithLabelValues(src)
	}
	for _, r := range []string{"unknown_id", "untrusted", "apq_registration"} {
		m.documentsRefused.WithLabelValues(r)
	}
	// Series known in advance start at 0, so that rate() and the
	// dashboard see them before the first event.
	for _, use := range []string{"apq", "asset_cache", "budget", "upstream_cache"} {
		m.redisErrors.WithLabelValues(use)
	}
	m.names = &nameSet{max: MaxOperationNames, idle: OperationNameIdle, seen: map[string]time.Time{}, evict: m.deleteOperation}
	return m
}

// counterVec, gaugeVec and histogramVec make a metric with labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}

// deleteOperation removes an operation label's series.
func (m *Metrics) deleteOperation(name string) {
	m.operations.DeleteLabelValues(name)
	m.operationSeconds.DeleteLabelValues(name)
	m.operationUpstream.DeleteLabelValues(name)
	m.operationErrors.DeletePartialMatch(prometheus.Labels{"operation": name})
}

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.InstrumentMetricHandler(m.registry, promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
		Timeout:           10 * time.Second,
	}))
}

// ObserveOperation records one GraphQL response: its operation's label
// (see OperationLabel), its duration and the codes of its errors.
func (m *Metrics) ObserveOperation(operation string, d time.Duration, codes []string) {
	if m == nil {
		return
	}
	m.operations.WithLabelValues(operation).Inc()
	m.operationSeconds.WithLabelValues(operation).Observe(d.Seconds())
	m.observeErrors(operation, codes)
}

// observeOperationUpstream records the upstream requests an operation
// sent.
func (m *Metrics) observeOperationUpstream(operation string, calls int64) {
	if m == nil {
		return
	}
	m.operationUpstream.WithLabelValues(operation).Observe(float64(calls))
}

// observeErrors counts an operation's errors by code.
func (m *Metrics) observeErrors(operation string, codes []string) {
	if m == nil {
		return
	}
	for _, c := range codes {
		m.operationErrors.WithLabelValues(operation, errorCodeLabel(c)).Inc()
	}
}

// errorCodeLabel is the label of an error's extensions.code: the code
// itself when it is one of errorCodes, "NONE" when there is none, and
// "OTHER" for any other.
func errorCodeLabel(c string) string {
	switch {
	case errorCodes[c]:
		return c
	case c == "":
		return "NONE"
	default:
		return "OTHER"
	}
}

// OperationLabel is the label of an executed operation's name: name
// itself while it holds one of the MaxOperationNames labels (it takes a
// free one, or one whose name went unseen for OperationNameIdle),
// AnonymousOperation for "", and OtherOperation for any other name or a
// very long one.
func (m *Metrics) OperationLabel(name string) string {
	if name == "" {
		return AnonymousOperation
	}
	if m == nil || len(name) > maxOperationName || !m.names.admit(name) {
		return OtherOperation
	}
	return name
}

// ObserveUpstream records one finished upstream request; it is the
// upstream client's Config.OnResponse.
func (m *Metrics) ObserveUpstream(info upstream.RequestInfo) {
	if m == nil {
		return
	}
	code := "none"
	if info.StatusCode != 0 {
		code = strconv.Itoa(info.StatusCode)
	}
	m.upstreamRequests.WithLabelValues(string(info.Service), string(info.Endpoint), code).Inc()
	m.upstreamSeconds.WithLabelValues(string(info.Service), string(info.Endpoint)).Observe(info.Duration.Seconds())
}

// ObserveAssetCache records a batch's asset cache lookups.
func (m *Metrics) ObserveAssetCache(hits, misses int) {
	if m == nil {
		return
	}
	m.assetCache.WithLabelValues("hit").Add(float64(hits))
	m.assetCache.WithLabelValues("miss").Add(float64(misses))
}

// ObserveExecution counts a query executed by executor ("direct" or
// "gqlgen").
func (m *Metrics) ObserveExecution(executor string) {
	if m == nil {
		return
	}
	m.executions.WithLabelValues(executor).Inc()
}

// ObserveDocumentServed counts an operation run from a persisted
// document, by source ("manifest" or "apq").
func (m *Metrics) ObserveDocumentServed(source string) {
	if m == nil {
		return
	}
	m.documentsServed.WithLabelValues(source).Inc()
}

// ObserveDocumentRefused counts a refused document, by reason
// ("unknown_id", "untrusted" or "apq_registration").
func (m *Metrics) ObserveDocumentRefused(reason string) {
	if m == nil {
		return
	}
	m.documentsRefused.WithLabelValues(reason).Inc()
}

// ObserveLoaderBatch records the size of a batch a loader dispatched.
func (m *Metrics) ObserveLoaderBatch(loader string, size int) {
	if m == nil {
		return
	}
	m.loaderBatch.WithLabelValues(loader).Observe(float64(size))
}

// ObserveLoaderPrefetch counts a batch a loader started ahead of the
// fields that need it.
func (m *Metrics) ObserveLoaderPrefetch(loader string, _ int) {
	if m == nil {
		return
	}
	m.loaderPrefetch.WithLabelValues(loader).Inc()
}

// ObserveCompression records a compressed response: its content coding
// and its body's size before and after compression.
func (m *Metrics) ObserveCompression(coding string, in, out int64) {
	if m == nil {
		return
	}
	m.compressed.WithLabelValues(coding).Inc()
	m.compressedBytes.WithLabelValues(coding, "in").Add(float64(in))
	m.compressedBytes.WithLabelValues(coding, "out").Add(float64(out))
}

// BreakerChanged records a circuit breaker's change of state; it is the
// upstream client's Config.OnBreakerChange.
func (m *Metrics) BreakerChanged(service upstream.Service, _, to string) {
	if m == nil {
		return
	}
	m.breakerChanges.WithLabelValues(string(service), to).Inc()
}

// RedisError counts a failed Redis call (redisstate.Options.OnError).
func (m *Metrics) RedisError(use string, _ error) {
	if m == nil {
		return
	}
	m.redisErrors.WithLabelValues(use).Inc()
}

// breakerStates are the states a breaker reports, in gauge order.
var breakerStates = []string{upstream.BreakerClosed, upstream.BreakerHalfOpen, upstream.BreakerOpen}

// WatchBreakers exports each service's circuit breaker state, read at
// every scrape: gateway_upstream_breaker_state{service,state} is 1 for the
// current state and 0 for the others.
func (m *Metrics) WatchBreakers(state func(upstream.Service) string, services ...upstream.Service) {
	if m == nil {
		return
	}
	for _, s := range services {
		for _, st := range breakerStates {
			m.breakerChanges.WithLabelValues(string(s), st)
		}
	}
	desc := prometheus.NewDesc("gateway_upstream_breaker_state",
		"Circuit breaker state of each upstream service: 1 for the current state (closed, half-open, open), 0 for the others.",
		[]string{"service", "state"}, nil)
	m.registry.MustRegister(collectorFunc{desc: desc, collect: func(ch chan<- prometheus.Metric) {
		for _, s := range services {
			current := state(s)
			for _, st := range breakerStates {
				v := 0.0
				if st == current {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, string(s), st)
			}
		}
	}})
}

// WatchBudget exports the data node's rate budget, read at every scrape
// (from Redis for the shared budget): tokens left, the pause left, and
// whether the pause is a ban. When the budget cannot be read, its
// metrics are left out of that scrape and gateway_upstream_budget_up is 0.
func (m *Metrics) WatchBudget(b upstream.BudgetReporter) {
	if m == nil || b == nil {
		return
	}
	var (
		up     = prometheus.NewDesc("gateway_upstream_budget_up", "1 when the rate budget's state could be read (the shared one lives in Redis).", nil, nil)
		tokens = prometheus.NewDesc("gateway_upstream_budget_tokens", "Requests the data node's rate budget allows at once now; negative while requests wait for slots reserved ahead.", nil, nil)
		paused = prometheus.NewDesc("gateway_upstream_budget_paused_seconds", "How much longer the rate budget holds every data-node request back after a 429 or a ban.", nil, nil)
		banned = prometheus.NewDesc("gateway_upstream_budget_banned", "1 while the data node bans this gateway's address (requests are refused), else 0.", nil, nil)
		// Fair share (upstream.FairBudget): who waits for a turn.
		waiting        = prometheus.NewDesc("gateway_upstream_budget_waiting", "Data-node calls of this replica waiting for their turn at the rate budget.", nil, nil)
		waitingClients = prometheus.NewDesc("gateway_upstream_budget_waiting_clients", "Clients (addresses, IPv6 /64s) whose calls wait for their turn at the rate budget; turns go round them.", nil, nil)
	)
	m.registry.MustRegister(collectorFunc{desc: up, also: []*prometheus.Desc{tokens, paused, banned, waiting, waitingClients}, collect: func(ch chan<- prometheus.Metric) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := b.State(ctx)
		if err != nil {
			ch <- prometheus.MustNewConstMetric(up, prometheus.GaugeValue, 0)
			return
		}
		ch <- prometheus.MustNewConstMetric(up, prometheus.GaugeValue, 1)
		ch <- prometheus.MustNewConstMetric(tokens, prometheus.GaugeValue, st.Tokens)
		ch <- prometheus.MustNewConstMetric(paused, prometheus.GaugeValue, st.PausedFor.Seconds())
		b := 0.0
		if st.Banned {
			b = 1
		}
		ch <- prometheus.MustNewConstMetric(banned, prometheus.GaugeValue, b)
		ch <- prometheus.MustNewConstMetric(waiting, prometheus.GaugeValue, float64(st.Waiting))
		ch <- prometheus.MustNewConstMetric(waitingClients, prometheus.GaugeValue, float64(st.WaitingClients))
	}})
}

// collectorFunc is a collector whose metrics are computed at scrape time.
type collectorFunc struct {
	desc    *prometheus.Desc
	also    []*prometheus.Desc
	collect func(chan<- prometheus.Metric)
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	for _, d := range c.also {
		ch <- d
	}
}

func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }

// nameSet admits at most max distinct names. Once full, a name unseen
// for idle is evicted (its series deleted) when a new name needs its
// slot; names in use keep theirs.
type nameSet struct {
	max   int
	idle  time.Duration
	evict func(name string)

	mu        sync.Mutex
	seen      map[string]time.Time // name → when last admitted
	nextSweep time.Time            // no name is idle before then
}

func (s *nameSet) admit(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if _, ok := s.seen[name]; ok {
		s.seen[name] = now
		return true
	}
	if len(s.seen) >= s.max && !now.Before(s.nextSweep) {
		s.sweep(now)
	}
	if len(s.seen) >= s.max {
		return false
	}
	s.seen[name] = now
	return true
}

// sweep evicts the idle names and notes when the next one can be.
func (s *nameSet) sweep(now time.Time) {
	oldest := now
	for name, at := range s.seen {
		if now.Sub(at) >= s.idle {
			delete(s.seen, name)
			s.evict(name)
			continue
		}
		if at.Before(oldest) {
			oldest = at
		}
	}
	s.nextSweep = oldest.Add(s.idle)
}
