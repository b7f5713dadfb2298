package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/httpcompress"
	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// The gateway's settings: every one has a flag and an environment
// variable, the flag wins (the README's Configuration table lists them;
// docs/contracts.md, For operators). This file holds them all: the table
// (settings), the parsing (parseConfig), the one validation (validate)
// and the values derived from several settings (upstreamCalls). What
// each setting configures is built elsewhere, from this config alone
// (doc.go says where).

// config is the parsed configuration, its fields grouped by what they
// configure, as in the settings table.
type config struct {
	// The HTTP server.
	Listen              string
	CORSOrigins         []string
	ShutdownTimeout     time.Duration
	ShutdownDelay       time.Duration
	CompressionLevel    int
	CompressionMinBytes int

	// The upstream client: its services, deadline, retries, breakers,
	// concurrency, the rate budget and the client key of its fair share.
	UpstreamURL         string
	ExplorerURL         string
	UpstreamTimeout     time.Duration
	UpstreamRetries     int
	UpstreamConcurrency int
	BreakerFailures     int
	BreakerOpen         time.Duration
	UpstreamRate        float64
	UpstreamBurst       int
	ExplorerRate        float64
	ExplorerBurst       int
	TrustedProxies      []string
	trustedProxies      upstream.TrustedProxies // TrustedProxies parsed by validate
	// The cache of upstream answers (upstreamclient.go).
	UpstreamCacheBytes   int64
	UpstreamCacheMaxAge  time.Duration
	UpstreamCacheHeadTTL time.Duration

	// The GraphQL handler: deadline, query limits, paging, cursors,
	// loaders and caches.
	RequestTimeout   time.Duration
	MaxBodyBytes     int64
	Introspection    bool
	PageDefault      int
	PageMax          int
	PageNestedMax    int
	MaxDepth         int
	MaxCost          int
	MaxTokens        int
	MaxAliases       int
	MaxUpstreamCalls int
	MaxCallsPerEvent int
	CursorKey        string
	cursorKeys       *graph.CursorKeys // CursorKey parsed by validate; nil when unset
	AssetCacheSize   int
	AssetCacheTTL    time.Duration
	LoaderWait       time.Duration
	APQCacheSize     int
	// Trusted documents (handler.go loads the manifest).
	PersistedDocuments   string
	TrustedDocumentsOnly bool
	HTTPCacheMaxAge      time.Duration

	// The live feed (subscriptions) and its transports.
	LivePollInterval   time.Duration
	LiveMaxBacklog     int
	LiveBuffer         int
	LiveMaxSubs        int
	LiveMaxSubsClient  int
	LiveMaxCatchUps    int
	LiveMaxCallsClient int
	LiveLeaseTTL       time.Duration
	LiveBatchKey       string
	liveBatchKeys      *redisstate.BatchKeys // LIVE_BATCH_KEY, else CURSOR_KEY, parsed by validate; nil when neither is set
	WSMaxSubs          int
	WSMaxConnsClient   int
	WSInitTimeout      time.Duration
	WSKeepAlive        time.Duration
	StreamWriteTimeout time.Duration

	// Operations: Redis, metrics, tracing, logs.
	RedisURL         string
	RedisPrefix      string
	Metrics          bool
	MetricsAddr      string
	OTLPEndpoint     string
	OTelServiceName  string
	TraceSampleRatio float64
	LogFormat        string
	LogLevel         string

	// The embedded sample data service.
	SampleSeed          int64
	SampleScale         int
	SampleBlockInterval time.Duration
}

// setting describes one configuration entry for flags, the environment,
// -help and the README's table.
type setting struct {
	flag, env, usage string
	value            flag.Value
}

// settings binds c's fields to their flags and variables.
func (c *config) settings() []setting {
	return []setting{
		// The HTTP server (server.go).
		{"listen", "LISTEN_ADDR", "address to serve on", stringValue(&c.Listen, ":8080")},
		{"cors-origins", "CORS_ORIGINS", "comma-separated exact origins allowed to call the API from a browser; unset = same-origin only; * = any origin, without credentials", listValue(&c.CORSOrigins)},
		{"shutdown-timeout", "SHUTDOWN_TIMEOUT", "how long shutdown waits for in-flight requests", durationValue(&c.ShutdownTimeout, 20*time.Second)},
		{"shutdown-delay", "SHUTDOWN_DELAY", "on SIGTERM, how long readiness fails while requests are still served, before draining (lets load balancers stop sending)", durationValue(&c.ShutdownDelay, 0)},
		{"compression-level", "COMPRESSION_LEVEL", "compression of responses to clients that accept zstd or gzip, 1 (fastest) to 9 (smallest); 0 sends every response uncompressed", intValue(&c.CompressionLevel, httpcompress.DefaultLevel)},
		{"compression-min-bytes", "COMPRESSION_MIN_BYTES", "smallest response body compressed; smaller ones are sent as they are", intValue(&c.CompressionMinBytes, httpcompress.DefaultMinBytes)},

		// The upstream client (upstreamclient.go) and the client key of its fair share (upstream/client_key.go).
		{"upstream", "UPSTREAM_URL", "data-node base URL, e.g. https://host; unset serves the embedded sample data service", stringValue(&c.UpstreamURL, "")},
		{"explorer", "EXPLORER_URL", "block-explorer REST base URL, e.g. https://host/rest (default: the upstream URL)", stringValue(&c.ExplorerURL, "")},
		{"upstream-timeout", "UPSTREAM_TIMEOUT", "deadline of each upstream call", durationValue(&c.UpstreamTimeout, 10*time.Second)},
		{"upstream-retries", "UPSTREAM_RETRIES", "retries of an upstream call that failed with a connection error, a timeout or a 5xx (0 = none)", intValue(&c.UpstreamRetries, upstream.DefaultRetries)},
		{"upstream-concurrency", "UPSTREAM_CONCURRENCY", "most requests in flight to each upstream service", intValue(&c.UpstreamConcurrency, upstream.DefaultMaxConcurrent)},
		{"breaker-failures", "BREAKER_FAILURES", "consecutive failed requests to a service that open its circuit breaker", intValue(&c.BreakerFailures, upstream.DefaultBreakerFailures)},
		{"breaker-open", "BREAKER_OPEN", "how long an open circuit breaker fails calls fast before probing the service", durationValue(&c.BreakerOpen, upstream.DefaultBreakerOpenFor)},
		{"upstream-rate", "UPSTREAM_RATE", "data-node requests per second this gateway allows itself (the data node's limit is 20)", float64Value(&c.UpstreamRate, upstream.DefaultBudgetRate)},
		{"upstream-burst", "UPSTREAM_BURST", "data-node requests this gateway may send at once within its rate (the data node's burst is 100)", intValue(&c.UpstreamBurst, upstream.DefaultBudgetBurst)},
		{"explorer-rate", "EXPLORER_RATE", "block-explorer requests per second this gateway allows itself, shared fairly between clients; the live feed's polls go first (the explorer has no limit of its own: this protects it)", float64Value(&c.ExplorerRate, upstream.DefaultExplorerRate)},
		{"explorer-burst", "EXPLORER_BURST", "block-explorer requests this gateway may send at once within its rate", intValue(&c.ExplorerBurst, upstream.DefaultExplorerBurst)},
		{"trusted-proxies", "TRUSTED_PROXIES", "comma-separated CIDRs or IPs of proxies whose X-Forwarded-For or Forwarded names the client (for the rate budget's fair share); unset = trust none, the peer's address is the client", listValue(&c.TrustedProxies)},
		{"upstream-cache-bytes", "UPSTREAM_CACHE_BYTES", "bytes of upstream answers the cache keeps in this process (with Redis, shared by every replica too); 0 disables the cache", int64Value(&c.UpstreamCacheBytes, upstream.DefaultCacheBytes)},
		{"upstream-cache-max-age", "UPSTREAM_CACHE_MAX_AGE", "oldest a cached data-node answer is served (about one block); 0 never serves one from the cache", durationValue(&c.UpstreamCacheMaxAge, upstream.DefaultCacheMaxAge)},
		{"upstream-cache-head-ttl", "UPSTREAM_CACHE_HEAD_TTL", "how long a cached answer reaching the explorer's head (its newest transactions) is served when no live feed confirms the head meanwhile (about one block); with the live feed polling, such answers are served until it sees a new block", durationValue(&c.UpstreamCacheHeadTTL, upstream.DefaultCacheHeadTTL)},

		// The GraphQL handler (handler.go).
		{"request-timeout", "REQUEST_TIMEOUT", "deadline of each GraphQL request", durationValue(&c.RequestTimeout, 30*time.Second)},
		{"max-body-bytes", "MAX_BODY_BYTES", "largest GraphQL request body accepted", int64Value(&c.MaxBodyBytes, 1<<20)},
		{"introspection", "INTROSPECTION", "allow schema introspection (the playground's docs need it)", boolValue(&c.Introspection, true)},
		{"page-default", "PAGE_DEFAULT", "page size when a connection gets neither first nor last", intValue(&c.PageDefault, 50)},
		{"page-max", "PAGE_MAX", "largest first or last accepted", intValue(&c.PageMax, 1000)},
		{"page-nested-max", "PAGE_NESTED_MAX", "largest first or last in a connection nested under a list (e.g. each row's party { delegations })", intValue(&c.PageNestedMax, 100)},
		{"max-depth", "MAX_DEPTH", "deepest field nesting accepted (default: the schema's deepest path of one list, plus 2)", intValue(&c.MaxDepth, graph.DefaultLimits().MaxDepth)},
		{"max-cost", "MAX_COST", "largest query cost accepted (a connection costs 100 plus its page size times its fields; objects 1, scalars 0)", intValue(&c.MaxCost, graph.DefaultMaxCost)},
		{"max-tokens", "MAX_TOKENS", "longest query accepted, in GraphQL tokens", intValue(&c.MaxTokens, graph.DefaultMaxTokens)},
		{"max-aliases", "MAX_ALIASES", "most aliased fields accepted in one query", intValue(&c.MaxAliases, graph.DefaultMaxAliases)},
		{"max-upstream-calls", "MAX_UPSTREAM_CALLS", "most data-node requests one query may make, counted before it runs; 0 derives it from the rate budget and the deadline: UPSTREAM_RATE × REQUEST_TIMEOUT (15/s × 30s = 450)", intValue(&c.MaxUpstreamCalls, 0)},
		{"max-calls-per-event", "MAX_CALLS_PER_EVENT", "most upstream requests (data node and explorer) a subscription may make for each transaction it delivers, counted before it starts and enforced on every event", intValue(&c.MaxCallsPerEvent, graph.DefaultMaxCallsPerEvent)},
		{"cursor-key", "CURSOR_KEY", "key that signs cursors, at least 32 characters (openssl rand -hex 32); several, comma-separated: the first signs, all verify (rotation); unset = a random key, cursors valid only for this process", stringValue(&c.CursorKey, "")},
		{"asset-cache-size", "ASSET_CACHE_SIZE", "assets kept in the cache shared by all requests (0 disables it)", intValue(&c.AssetCacheSize, 10000)},
		{"asset-cache-ttl", "ASSET_CACHE_TTL", "how long a cached asset is served", durationValue(&c.AssetCacheTTL, 30*time.Second)},
		{"loader-wait", "LOADER_WAIT", "how long a loader collects references before calling the upstream once for all", durationValue(&c.LoaderWait, 2*time.Millisecond)},
		{"apq-cache-size", "APQ_CACHE_SIZE", "automatic persisted queries kept in memory without Redis (0 keeps none)", intValue(&c.APQCacheSize, 1000)},
		{"persisted-documents", "PERSISTED_DOCUMENTS", "file of trusted documents that clients send by id (documentId, doc_id or the persistedQuery hash): Relay's persisted_queries.json or Apollo's persisted query manifest; each is validated against the schema at start, which fails on any invalid one", stringValue(&c.PersistedDocuments, "")},
		{"trusted-documents-only", "TRUSTED_DOCUMENTS_ONLY", "run only the documents of PERSISTED_DOCUMENTS (by id, or sent as their text): any other query, new automatic persisted queries and introspection are refused", boolValue(&c.TrustedDocumentsOnly, false)},
		{"http-cache-max-age", "HTTP_CACHE_MAX_AGE", "how long browsers and CDNs may keep a GET response made of answers that hold until the next block (the newest transactions, the data node's state), counted from the oldest of them; 0 = kept but revalidated every time. Committed history is cached for a year whatever this says", durationValue(&c.HTTPCacheMaxAge, transport.DefaultCacheMaxAge)},

		// The live feed and the subscription transports (livefeed.go, handler.go).
		{"live-poll-interval", "LIVE_POLL_INTERVAL", "how often the live feed polls the explorer's newest transactions while anyone is subscribed, or always while the upstream cache is on (one poller for every subscriber; with Redis, for every replica)", durationValue(&c.LivePollInterval, 500*time.Millisecond)},
		{"live-max-backlog", "LIVE_MAX_BACKLOG", "most transactions a subscription resuming from a cursor may replay before going live; an older cursor is refused", intValue(&c.LiveMaxBacklog, 1000)},
		{"live-buffer", "LIVE_BUFFER", "transactions that may wait undelivered for one subscription; a subscriber further behind is dropped with an error", intValue(&c.LiveBuffer, 256)},
		{"live-max-subscriptions", "LIVE_MAX_SUBSCRIPTIONS", "most subscriptions open in this process", intValue(&c.LiveMaxSubs, 10000)},
		{"live-max-subscriptions-per-client", "LIVE_MAX_SUBSCRIPTIONS_PER_CLIENT", "most subscriptions one client (its address, as for the rate budget's fair share) may hold open in this process, on every transport; 0 = a tenth of LIVE_MAX_SUBSCRIPTIONS", intValue(&c.LiveMaxSubsClient, 0)},
		{"live-max-catchups-per-client", "LIVE_MAX_CATCHUPS_PER_CLIENT", "most resumes of one client catching up from the explorer at once; more wait their turn", intValue(&c.LiveMaxCatchUps, 2)},
		{"live-max-calls-per-client", "LIVE_MAX_CALLS_PER_CLIENT", "most upstream requests one client's open subscriptions may make together for each transaction delivered (each subscription's MAX_CALLS_PER_EVENT figure, added up); more subscriptions are refused", intValue(&c.LiveMaxCallsClient, 20)},
		{"live-lease-ttl", "LIVE_LEASE_TTL", "with Redis: lifetime of the polling lease, renewed by its holder; a replica that dies is replaced within about this long", durationValue(&c.LiveLeaseTTL, 3*time.Second)},
		{"live-batch-key", "LIVE_BATCH_KEY", "with Redis: key that signs the live feed's batches between replicas (a batch no key verifies is dropped), at least 32 characters; several, comma-separated: the first signs, all verify (rotation); unset = derived from CURSOR_KEY; neither set = replicas share no batches, each polls for itself", stringValue(&c.LiveBatchKey, "")},
		{"ws-max-subscriptions", "WS_MAX_SUBSCRIPTIONS", "most subscriptions one WebSocket connection, and most operations one single-connection SSE stream, may hold open", intValue(&c.WSMaxSubs, 100)},
		{"ws-max-connections-per-client", "WS_MAX_CONNECTIONS_PER_CLIENT", "most streams one client (its address) may hold open at once: WebSocket connections, SSE and multipart streams together; past it a new one is refused with 429", intValue(&c.WSMaxConnsClient, 100)},
		{"ws-init-timeout", "WS_INIT_TIMEOUT", "how long a new WebSocket connection may take to send connection_init, and an SSE reservation (PUT) to be taken by its stream", durationValue(&c.WSInitTimeout, 10*time.Second)},
		{"ws-keepalive", "WS_KEEPALIVE", "interval of the keep-alive messages on every stream: WebSocket pings, SSE comments, multipart heartbeats", durationValue(&c.WSKeepAlive, 15*time.Second)},
		{"stream-write-timeout", "STREAM_WRITE_TIMEOUT", "how long one message of a stream (WebSocket, SSE, multipart) may take to be written; a client that does not read it within this is disconnected and its subscriptions ended", durationValue(&c.StreamWriteTimeout, 10*time.Second)},

		// Operations: Redis (sharedstate.go), metrics and tracing (instrumentation.go), logs (logging.go).
		{"redis-url", "REDIS_URL", "Redis shared by every replica (redis://host:6379/0): persisted queries, asset cache, rate budget, upstream cache; unset keeps them in this process", stringValue(&c.RedisURL, "")},
		{"redis-prefix", "REDIS_PREFIX", "prefix of this gateway's Redis keys (give each network's gateways their own)", stringValue(&c.RedisPrefix, "gateway:")},
		{"metrics", "METRICS", "serve Prometheus metrics at /metrics", boolValue(&c.Metrics, true)},
		{"metrics-addr", "METRICS_ADDR", "serve /metrics on this address only, not on the public one (recommended: 127.0.0.1:9090 or a cluster-internal port)", stringValue(&c.MetricsAddr, "")},
		{"otel-endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", "OpenTelemetry collector's OTLP/HTTP base URL, e.g. http://collector:4318; unset turns tracing off", stringValue(&c.OTLPEndpoint, "")},
		{"otel-service-name", "OTEL_SERVICE_NAME", "service name in traces", stringValue(&c.OTelServiceName, "tradenet-gateway")},
		{"trace-sample-ratio", "TRACE_SAMPLE_RATIO", "share of requests traced, 0 to 1, a client's sampled traceparent included (it is continued, but recorded only as this ratio says)", float64Value(&c.TraceSampleRatio, 1)},
		{"log-format", "LOG_FORMAT", "text or json", stringValue(&c.LogFormat, "text")},
		{"log-level", "LOG_LEVEL", "debug, info, warn or error", stringValue(&c.LogLevel, "info")},

		// The embedded sample data service, served when UPSTREAM_URL is unset.
		{"sample-seed", "SAMPLE_SEED", "seed of the embedded sample data service's dataset", int64Value(&c.SampleSeed, 1)},
		{"sample-scale", "SAMPLE_SCALE", "multiplier of the embedded sample dataset's transactions (200 = a million)", intValue(&c.SampleScale, 1)},
		{"sample-block-interval", "SAMPLE_BLOCK_INTERVAL", "how often the embedded sample data service adds a block of new transactions, so that subscriptions show a live feed; 0 = never", durationValue(&c.SampleBlockInterval, 2*time.Second)},
	}
}

// parseConfig reads the environment, then the flags over it.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	settings := c.settings()
	for _, s := range settings {
		fs.Var(s.value, s.flag, fmt.Sprintf("%s (env %s)", s.usage, s.env))
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: gateway [flags]\n       gateway sample-upstream [flags]\n\nThe GraphQL gateway over the data service. Every flag can also be set by its environment variable; the flag wins.\n\n")
		fs.PrintDefaults()
	}
	for _, s := range settings {
		if v := getenv(s.env); v != "" {
			if err := s.value.Set(v); err != nil {
				return nil, fmt.Errorf("%s=%q: %w", s.env, v, err)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see -help)", fs.Arg(0))
	}
	return c, c.validate()
}

// validate checks every setting, and parses those that need it
// (CURSOR_KEY, LIVE_BATCH_KEY, TRUSTED_PROXIES); its error names the
// setting.
func (c *config) validate() error {
	// Settings that must be at least 1, or positive.
	for _, l := range []struct {
		name  string
		value int
	}{{"MAX_DEPTH", c.MaxDepth}, {"MAX_COST", c.MaxCost}, {"MAX_TOKENS", c.MaxTokens}, {"MAX_ALIASES", c.MaxAliases},
		{"UPSTREAM_BURST", c.UpstreamBurst}, {"EXPLORER_BURST", c.ExplorerBurst}, {"MAX_CALLS_PER_EVENT", c.MaxCallsPerEvent}, {"LIVE_MAX_CALLS_PER_CLIENT", c.LiveMaxCallsClient}, {"UPSTREAM_CONCURRENCY", c.UpstreamConcurrency}, {"BREAKER_FAILURES", c.BreakerFailures},
		{"LIVE_MAX_BACKLOG", c.LiveMaxBacklog}, {"LIVE_BUFFER", c.LiveBuffer}, {"LIVE_MAX_SUBSCRIPTIONS", c.LiveMaxSubs}, {"WS_MAX_SUBSCRIPTIONS", c.WSMaxSubs},
		{"LIVE_MAX_CATCHUPS_PER_CLIENT", c.LiveMaxCatchUps}, {"WS_MAX_CONNECTIONS_PER_CLIENT", c.WSMaxConnsClient}} {
		if l.value < 1 {
			return fmt.Errorf("%s=%d: want at least 1", l.name, l.value)
		}
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{{"UPSTREAM_TIMEOUT", c.UpstreamTimeout}, {"REQUEST_TIMEOUT", c.RequestTimeout}, {"SHUTDOWN_TIMEOUT", c.ShutdownTimeout}, {"BREAKER_OPEN", c.BreakerOpen},
		{"LIVE_POLL_INTERVAL", c.LivePollInterval}, {"LIVE_LEASE_TTL", c.LiveLeaseTTL}, {"WS_INIT_TIMEOUT", c.WSInitTimeout}, {"WS_KEEPALIVE", c.WSKeepAlive}, {"STREAM_WRITE_TIMEOUT", c.StreamWriteTimeout}} {
		if d.value <= 0 {
			return fmt.Errorf("%s must be positive", d.name)
		}
	}

	// The HTTP server.
	for _, o := range c.CORSOrigins {
		if o == "*" {
			if len(c.CORSOrigins) > 1 {
				return fmt.Errorf("CORS_ORIGINS: * allows every origin and cannot be combined with others")
			}
			continue
		}
		parsed, err := url.Parse(o)
		if err != nil || parsed.Scheme == "" || parsed.Host == "" || (parsed.Path != "" && parsed.Path != "/") || parsed.RawQuery != "" {
			return fmt.Errorf("CORS_ORIGINS: %q is not an origin (scheme://host[:port])", o)
		}
	}
	if c.ShutdownDelay < 0 {
		return fmt.Errorf("SHUTDOWN_DELAY must be >= 0")
	}
	if c.CompressionLevel < 0 || c.CompressionLevel > 9 {
		return fmt.Errorf("COMPRESSION_LEVEL=%d: want 1 (fastest) to 9 (smallest), or 0 to turn compression off", c.CompressionLevel)
	}
	if c.CompressionMinBytes < 0 {
		return fmt.Errorf("COMPRESSION_MIN_BYTES=%d: want 0 or more", c.CompressionMinBytes)
	}

	// The upstream client.
	for _, u := range []struct{ name, value string }{{"UPSTREAM_URL", c.UpstreamURL}, {"EXPLORER_URL", c.ExplorerURL}} {
		if u.value == "" {
			continue
		}
		parsed, err := url.Parse(u.value)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return fmt.Errorf("%s=%q: want an http(s) URL such as https://host", u.name, u.value)
		}
	}
	if c.ExplorerURL != "" && c.UpstreamURL == "" {
		return fmt.Errorf("EXPLORER_URL is set without UPSTREAM_URL: set both, or neither to use the sample data service")
	}
	if c.UpstreamRetries < 0 || c.UpstreamRetries > 10 {
		return fmt.Errorf("UPSTREAM_RETRIES=%d: want 0 to 10", c.UpstreamRetries)
	}
	if c.UpstreamRate <= 0 {
		return fmt.Errorf("UPSTREAM_RATE=%g: want a positive number of requests per second", c.UpstreamRate)
	}
	if c.ExplorerRate <= 0 {
		return fmt.Errorf("EXPLORER_RATE=%g: want a positive number of requests per second", c.ExplorerRate)
	}
	var err error
	if c.trustedProxies, err = parseTrustedProxies(c.TrustedProxies); err != nil {
		return err
	}
	if c.UpstreamCacheBytes < 0 {
		return fmt.Errorf("UPSTREAM_CACHE_BYTES=%d: want 0 (no cache) or more", c.UpstreamCacheBytes)
	}
	if c.UpstreamCacheMaxAge < 0 || c.UpstreamCacheMaxAge > time.Minute {
		return fmt.Errorf("UPSTREAM_CACHE_MAX_AGE=%s: want 0 (data-node answers never served from the cache) to 1m; the data node's state changes with every block, about once a second", c.UpstreamCacheMaxAge)
	}
	if c.UpstreamCacheHeadTTL <= 0 || c.UpstreamCacheHeadTTL > time.Minute {
		return fmt.Errorf("UPSTREAM_CACHE_HEAD_TTL=%s: want more than 0, at most 1m; a new block arrives about once a second", c.UpstreamCacheHeadTTL)
	}

	// The GraphQL handler.
	if c.MaxBodyBytes < 1024 {
		return fmt.Errorf("MAX_BODY_BYTES=%d: want at least 1024", c.MaxBodyBytes)
	}
	if c.PageDefault < 1 || c.PageMax < 1 || c.PageDefault > c.PageMax {
		return fmt.Errorf("page sizes: want 1 <= PAGE_DEFAULT (%d) <= PAGE_MAX (%d)", c.PageDefault, c.PageMax)
	}
	if c.PageNestedMax < 1 || c.PageNestedMax > c.PageMax {
		return fmt.Errorf("PAGE_NESTED_MAX=%d: want 1 <= PAGE_NESTED_MAX <= PAGE_MAX (%d)", c.PageNestedMax, c.PageMax)
	}
	if c.PageMax > 5000 {
		return fmt.Errorf("PAGE_MAX=%d: the data node serves at most 5000 rows a page", c.PageMax)
	}
	if c.MaxUpstreamCalls < 0 {
		return fmt.Errorf("MAX_UPSTREAM_CALLS=%d: want at least 1, or 0 to derive it from UPSTREAM_RATE × REQUEST_TIMEOUT", c.MaxUpstreamCalls)
	}
	if c.CursorKey != "" {
		if c.cursorKeys, err = graph.NewCursorKeys(c.CursorKey); err != nil {
			return fmt.Errorf("CURSOR_KEY: %w", err) // never quotes the key
		}
	}
	if c.AssetCacheSize < 0 || c.AssetCacheTTL <= 0 || c.LoaderWait < 0 {
		return fmt.Errorf("ASSET_CACHE_SIZE must be >= 0, ASSET_CACHE_TTL > 0 and LOADER_WAIT >= 0")
	}
	if c.APQCacheSize < 0 {
		return fmt.Errorf("APQ_CACHE_SIZE must be >= 0")
	}
	if c.TrustedDocumentsOnly && c.PersistedDocuments == "" {
		return fmt.Errorf("TRUSTED_DOCUMENTS_ONLY=true needs PERSISTED_DOCUMENTS, the manifest of the documents to accept")
	}
	if c.HTTPCacheMaxAge < 0 || c.HTTPCacheMaxAge > time.Minute {
		return fmt.Errorf("HTTP_CACHE_MAX_AGE=%s: want 0 to 1m (about a block: the answers it applies to change with the next block)", c.HTTPCacheMaxAge)
	}

	// Operations.
	if c.RedisURL != "" {
		u, err := url.Parse(c.RedisURL)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			return fmt.Errorf("REDIS_URL: want redis://host:port/db or rediss://… (got %q)", redactedRedisURL(c.RedisURL))
		}
	}
	if c.MetricsAddr != "" && !c.Metrics {
		return fmt.Errorf("METRICS_ADDR is set with METRICS=false: unset one of them")
	}
	if c.MetricsAddr != "" && c.MetricsAddr == c.Listen {
		return fmt.Errorf("METRICS_ADDR=%q is LISTEN_ADDR: give metrics an address of their own, or unset METRICS_ADDR to serve them on the public one", c.MetricsAddr)
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
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("LOG_FORMAT=%q: want text or json", c.LogFormat)
	}

	// The live feed.
	if c.LivePollInterval < 50*time.Millisecond {
		return fmt.Errorf("LIVE_POLL_INTERVAL=%s: want at least 50ms (the explorer is polled once an interval)", c.LivePollInterval)
	}
	if c.LiveLeaseTTL < time.Second {
		return fmt.Errorf("LIVE_LEASE_TTL=%s: want at least 1s (the holder renews it three times a lifetime)", c.LiveLeaseTTL)
	}
	if c.LiveMaxSubsClient < 0 || c.LiveMaxSubsClient > c.LiveMaxSubs {
		return fmt.Errorf("LIVE_MAX_SUBSCRIPTIONS_PER_CLIENT=%d: want 1 to LIVE_MAX_SUBSCRIPTIONS (%d), or 0 for a tenth of it", c.LiveMaxSubsClient, c.LiveMaxSubs)
	}
	switch {
	case c.LiveBatchKey != "":
		if c.liveBatchKeys, err = redisstate.NewBatchKeys(c.LiveBatchKey); err != nil {
			return fmt.Errorf("LIVE_BATCH_KEY: %w", err) // never quotes the key
		}
	case c.CursorKey != "":
		// The same key texts, through another derivation than the
		// cursors' (redisstate.NewBatchKeys).
		if c.liveBatchKeys, err = redisstate.NewBatchKeys(c.CursorKey); err != nil {
			return fmt.Errorf("CURSOR_KEY (LIVE_BATCH_KEY's default): %w", err)
		}
	}
	if c.WSMaxSubs > c.LiveMaxSubs {
		return fmt.Errorf("WS_MAX_SUBSCRIPTIONS=%d is more than LIVE_MAX_SUBSCRIPTIONS=%d, the process's limit", c.WSMaxSubs, c.LiveMaxSubs)
	}

	if c.SampleScale < 1 {
		return fmt.Errorf("SAMPLE_SCALE must be at least 1")
	}
	if c.SampleBlockInterval < 0 {
		return fmt.Errorf("SAMPLE_BLOCK_INTERVAL must be >= 0 (0: no new blocks)")
	}
	return nil
}

// parseTrustedProxies parses TRUSTED_PROXIES: comma-separated CIDRs or
// single addresses.
func parseTrustedProxies(entries []string) (upstream.TrustedProxies, error) {
	var tp upstream.TrustedProxies
	for _, e := range entries {
		if p, err := netip.ParsePrefix(e); err == nil {
			tp = append(tp, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("TRUSTED_PROXIES: %q is neither a CIDR (10.0.0.0/8, fd00::/8) nor an IP address", e)
		}
		a = a.Unmap()
		tp = append(tp, netip.PrefixFrom(a, a.BitLen()))
	}
	return tp, nil
}

// upstreamCalls is the bound on one query's data-node requests, and what
// it is for the error message: MAX_UPSTREAM_CALLS when set, else what the
// rate budget serves within the request's deadline, so that no query can
// hold the budget every client shares for longer than its own deadline.
func (c *config) upstreamCalls() (calls int, basis string) {
	if c.MaxUpstreamCalls > 0 {
		return c.MaxUpstreamCalls, "MAX_UPSTREAM_CALLS"
	}
	calls = max(int(math.Floor(c.UpstreamRate*c.RequestTimeout.Seconds())), 1)
	return calls, fmt.Sprintf("what the rate budget of %s a second serves within the %s request deadline",
		strconv.FormatFloat(c.UpstreamRate, 'f', -1, 64), c.RequestTimeout)
}

// Typed flag.Values that also set their default.

type stringFlag struct{ p *string }

func stringValue(p *string, def string) flag.Value { *p = def; return stringFlag{p} }
func (f stringFlag) String() string {
	if f.p == nil {
		return ""
	}
	return *f.p
}
func (f stringFlag) Set(s string) error { *f.p = s; return nil }

type listFlag struct{ p *[]string }

func listValue(p *[]string) flag.Value { return listFlag{p} }
func (f listFlag) String() string {
	if f.p == nil {
		return ""
	}
	return strings.Join(*f.p, ",")
}
func (f listFlag) Set(s string) error {
	*f.p = nil
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*f.p = append(*f.p, strings.TrimSuffix(part, "/"))
		}
	}
	return nil
}

type durationFlag struct{ p *time.Duration }

func durationValue(p *time.Duration, def time.Duration) flag.Value { *p = def; return durationFlag{p} }
func (f durationFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.String()
}
func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 10s")
	}
	*f.p = d
	return nil
}

type intFlag struct{ p *int }

func intValue(p *int, def int) flag.Value { *p = def; return intFlag{p} }
func (f intFlag) String() string {
	if f.p == nil {
		return ""
	}
	return strconv.Itoa(*f.p)
}
func (f intFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want an integer")
	}
	*f.p = n
	return nil
}

type int64Flag struct{ p *int64 }

func int64Value(p *int64, def int64) flag.Value { *p = def; return int64Flag{p} }
func (f int64Flag) String() string {
	if f.p == nil {
		return ""
	}
	return strconv.FormatInt(*f.p, 10)
}
func (f int64Flag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want an integer")
	}
	*f.p = n
	return nil
}

type float64Flag struct{ p *float64 }

func float64Value(p *float64, def float64) flag.Value { *p = def; return float64Flag{p} }
func (f float64Flag) String() string {
	if f.p == nil {
		return ""
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}
func (f float64Flag) Set(s string) error {
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a number")
	}
	*f.p = n
	return nil
}

type boolFlag struct{ p *bool }

func boolValue(p *bool, def bool) flag.Value { *p = def; return boolFlag{p} }
func (f boolFlag) String() string {
	if f.p == nil {
		return ""
	}
	return strconv.FormatBool(*f.p)
}
func (f boolFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	*f.p = b
	return nil
}
func (f boolFlag) IsBoolFlag() bool { return true }

// environ adapts os.Getenv.
func environ(key string) string { return os.Getenv(key) }
