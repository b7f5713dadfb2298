package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/sampleservice"
)

// The cache of upstream answers, end to end: gateways over the sample data
// service on loopback (README, Caching upstream answers).

const (
	// historyQuery pages back from a cursor: explorer pages below the
	// head, immutable.
	historyQuery = `query History($after: String) { transactions(first: 50, after: $after) {
	  edges { node { hash block index type submitter { id } } } pageInfo { hasNextPage } } }`
	// newestQuery is the explorer's newest page: until the next block.
	newestQuery = `query Newest { transactions(first: 5) { edges { cursor node { hash } } } }`
)

// sumMetric adds up the series of name whose labels include labels.
func sumMetric(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	sum := 0.0
	for _, m := range metricSeries(families, name, labels) {
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return sum
}

// newestEdges runs newestQuery on base.
func newestEdges(t *testing.T, base string) []any {
	t.Helper()
	r := postGraphQL(t, base, query(newestQuery, nil), nil)
	if len(r.Errors) > 0 {
		t.Fatalf("Newest: %+v", r.Errors)
	}
	return r.Data["transactions"].(map[string]any)["edges"].([]any)
}

func edgeHash(e any) string {
	return e.(map[string]any)["node"].(map[string]any)["hash"].(string)
}

func edgeCursor(e any) string { return e.(map[string]any)["cursor"].(string) }

// history runs historyQuery after cursor on base, and returns its data.
func history(t *testing.T, base, cursor string) map[string]any {
	t.Helper()
	r := postGraphQL(t, base, query(historyQuery, map[string]any{"after": cursor}), nil)
	if len(r.Errors) > 0 {
		t.Fatalf("History: %+v", r.Errors)
	}
	if n := len(r.Data["transactions"].(map[string]any)["edges"].([]any)); n != 50 {
		t.Fatalf("History: %d rows", n)
	}
	return r.Data
}

// A history page is served from the cache after new blocks arrived, with
// no explorer request, and equals what a gateway without the cache gets
// from the explorer then. A cached data-node answer keeps the block it
// was fetched at: extensions.freshness says how old the response is.
func TestHistoryIsServedFromTheUpstreamCache(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	// Data-node answers kept a minute here, so that the cached one is
	// served on any machine.
	g := startOpsGateway(t, u.args("-cursor-key", cursorKeyA, "-upstream-cache-max-age", "1m")...)
	ref := startOpsGateway(t, u.args("-cursor-key", cursorKeyA, "-upstream-cache-bytes", "0")...)
	explorer := func() int64 { return u.Sample.Requests(sampleservice.EndpointTransactions) }

	cursor := edgeCursor(newestEdges(t, g.URL)[4])
	first := history(t, g.URL, cursor)
	for range 3 {
		if _, err := u.Sample.AppendBlock(); err != nil {
			t.Fatal(err)
		}
	}
	before := explorer()
	cached := history(t, g.URL, cursor)
	if n := explorer() - before; n != 0 {
		t.Fatalf("the history page again, after 3 blocks: %d explorer requests, want none", n)
	}
	if fromExplorer := history(t, ref.URL, cursor); !reflect.DeepEqual(cached, first) || !reflect.DeepEqual(cached, fromExplorer) {
		t.Fatal("the cached history page differs from the explorer's")
	}

	// What repeated history pages cost the explorer, with and without
	// the cache.
	const repeats = 20
	count := func(base string) int64 {
		before := explorer()
		for range repeats {
			history(t, base, cursor)
		}
		return explorer() - before
	}
	withCache, without := count(g.URL), count(ref.URL)
	t.Logf("%d repeated history pages: %d explorer requests with the cache, %d without", repeats, withCache, without)
	if withCache != 0 || without < repeats {
		t.Fatalf("%d repeated history pages: %d explorer requests with the cache (want 0), %d without (want at least %d)", repeats, withCache, without, repeats)
	}
	if hits := sumMetric(scrape(t, g.URL), "gateway_upstream_cache_hits_total", map[string]string{"endpoint": "transactions", "kind": "immutable"}); hits < repeats+1 {
		t.Fatalf("%v immutable hits counted, want at least %d", hits, repeats+1)
	}

	// Freshness: the cached asset list still says the block it was
	// fetched at when the data node has moved on; with a part fetched
	// now, the response reports the oldest.
	const assets = `query Assets { assets(first: 3) { edges { node { id } } } }`
	height := func(r gqlResult) string {
		t.Helper()
		if len(r.Errors) > 0 {
			t.Fatalf("errors %+v", r.Errors)
		}
		f, _ := r.Extensions["freshness"].(map[string]any)
		h, _ := f["blockHeight"].(string)
		return h
	}
	fetchedAt := height(postGraphQL(t, g.URL, query(assets, nil), nil))
	if _, err := u.Sample.AppendBlock(); err != nil {
		t.Fatal(err)
	}
	now := height(postGraphQL(t, ref.URL, query(assets, nil), nil))
	if fetchedAt == "" || now == fetchedAt {
		t.Fatalf("heights %q then %q: the data node did not move", fetchedAt, now)
	}
	if got := height(postGraphQL(t, g.URL, query(assets, nil), nil)); got != fetchedAt {
		t.Fatalf("the cached answer's freshness is %q, want the height it was fetched at, %q (the data node is at %q)", got, fetchedAt, now)
	}
	const both = `query Both { assets(first: 3) { edges { node { id } } } delegations(first: 2) { edges { node { epochSeq } } } }`
	if got := height(postGraphQL(t, g.URL, query(both, nil), nil)); got != fetchedAt {
		t.Fatalf("a response of a cached and a fresh answer reports height %q, want the oldest, %q", got, fetchedAt)
	}
}

// postSSE POSTs the GraphQL request body to base's /graphql asking for an
// SSE stream, and returns the response (its stream ends with ctx).
func postSSE(t *testing.T, ctx context.Context, base, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sseDataLines sends the data lines of the SSE stream r to events until
// the stream ends, dropping those events has no room for.
func sseDataLines(r io.Reader, events chan<- string) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if strings.HasPrefix(line, "data:") {
			select {
			case events <- line:
			default:
			}
		}
	}
}

// subscribe opens a subscription to the transactions after cursor over
// SSE on base, and returns the data lines it receives.
func subscribe(t *testing.T, base, cursor string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp := postSSE(t, ctx, base, `{"query":"subscription($after: String) { transactions(after: $after) { node { hash } } }","variables":{"after":"`+cursor+`"}}`)
	events := make(chan string, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sseDataLines(resp.Body, events)
	}()
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	return events
}

// await waits for an event naming hash.
func await(t *testing.T, events <-chan string, hash, where string) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case e := <-events:
			if strings.Contains(e, hash) {
				return
			}
		case <-timeout:
			t.Fatalf("%s: transaction %s not delivered within 15s", where, hash)
		}
	}
}

// The explorer's newest page is served from the cache until a block
// arrives; once the live feed delivered the block, the newest page has
// it: in one process (its poller) and on each of two replicas sharing
// Redis, whichever polls (the other hears of the block from its batch).
// Answers reaching the head are kept a minute here (HEAD_TTL): only the
// new block may drop them.
func TestTheNewestPageFollowsNewBlocks(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	args := u.args("-cursor-key", cursorKeyA, "-upstream-cache-head-ttl", "1m", "-live-poll-interval", "50ms")
	for name, fleet := range map[string]func() []*opsGateway{
		"one process": func() []*opsGateway { return []*opsGateway{startOpsGateway(t, args...)} },
		"two replicas sharing Redis": func() []*opsGateway {
			shared := append(args[:len(args):len(args)], "-redis-url", redistest.Start(t))
			return []*opsGateway{startOpsGateway(t, shared...), startOpsGateway(t, shared...)}
		},
	} {
		t.Run(name, func(t *testing.T) {
			gateways := fleet()
			feeds := make([]<-chan string, len(gateways))
			for i, g := range gateways {
				feeds[i] = subscribe(t, g.URL, edgeCursor(newestEdges(t, g.URL)[0]))
			}
			for i, g := range gateways {
				newestEdges(t, g.URL)
				hits := func() float64 {
					return sumMetric(scrape(t, g.URL), "gateway_upstream_cache_hits_total", map[string]string{"endpoint": "transactions", "kind": "until_next_block"})
				}
				before := hits()
				newestEdges(t, g.URL)
				if hits() != before+1 {
					t.Fatalf("gateway %d: the newest page again was not served from the cache", i)
				}
				added, err := u.Sample.AppendBlock()
				if err != nil {
					t.Fatal(err)
				}
				last := added[len(added)-1].Hash
				await(t, feeds[i], last, "gateway "+string(rune('0'+i)))
				if got := edgeHash(newestEdges(t, g.URL)[0]); got != last {
					t.Fatalf("gateway %d delivered the new block; its newest page starts at %s, want the block's %s", i, got, last)
				}
			}
		})
	}
}

// Redis lost mid-run: the gateways keep answering, correctly (what a
// gateway without the cache answers), from their own caches and the
// upstream; the failures are counted. Before, an answer one replica
// fetched was served to the other from Redis.
func TestTheGatewayAnswersWhenRedisIsLost(t *testing.T) {
	t.Parallel() // mostly the Redis client's dial retries; a Redis and a data node of its own
	server := redistest.StartServer(t)
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	args := u.args("-cursor-key", cursorKeyA, "-redis-url", server.URL())
	a, b := startOpsGateway(t, args...), startOpsGateway(t, args...)
	ref := startOpsGateway(t, u.args("-cursor-key", cursorKeyA, "-upstream-cache-bytes", "0")...)

	edges := newestEdges(t, a.URL)
	kept := edgeCursor(edges[2])
	history(t, a.URL, kept)
	before := u.Sample.Requests(sampleservice.EndpointTransactions)
	history(t, b.URL, kept)
	if n := u.Sample.Requests(sampleservice.EndpointTransactions) - before; n != 0 {
		t.Fatalf("b asked the explorer %d times for a page a had fetched", n)
	}
	if hits := sumMetric(scrape(t, b.URL), "gateway_upstream_cache_hits_total", map[string]string{"tier": "redis", "kind": "immutable"}); hits != 1 {
		t.Fatalf("b counted %v immutable hits from Redis, want 1", hits)
	}

	server.Stop()
	for _, g := range []*opsGateway{a, b} {
		for _, cursor := range []string{kept, edgeCursor(edges[4])} {
			if got, want := history(t, g.URL, cursor), history(t, ref.URL, cursor); !reflect.DeepEqual(got, want) {
				t.Fatal("a history page without Redis differs from the explorer's")
			}
		}
		if r := postGraphQL(t, g.URL, query(`{ assets(first: 2) { edges { node { id } } } }`, nil), nil); len(r.Errors) > 0 {
			t.Fatalf("assets without Redis: %+v", r.Errors)
		}
		newestEdges(t, g.URL)
	}
	if n := sumMetric(scrape(t, a.URL), "gateway_redis_errors_total", map[string]string{"use": "upstream_cache"}); n == 0 {
		t.Fatal("no Redis error counted for the upstream cache")
	}
}

// The cache's settings: defaults, refusals, and 0 bytes turning it off;
// without a key the replicas share, Redis holds none of its answers.
func TestUpstreamCacheSettings(t *testing.T) {
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.UpstreamCacheBytes != 64<<20 || cfg.UpstreamCacheMaxAge != time.Second || cfg.UpstreamCacheHeadTTL != time.Second {
		t.Fatalf("defaults %d bytes, max age %s, head TTL %s", cfg.UpstreamCacheBytes, cfg.UpstreamCacheMaxAge, cfg.UpstreamCacheHeadTTL)
	}
	for _, tc := range [][]string{
		{"-upstream-cache-bytes", "-1", "UPSTREAM_CACHE_BYTES"},
		{"-upstream-cache-max-age", "-1s", "UPSTREAM_CACHE_MAX_AGE"},
		{"-upstream-cache-max-age", "2m", "UPSTREAM_CACHE_MAX_AGE"},
		{"-upstream-cache-head-ttl", "0s", "UPSTREAM_CACHE_HEAD_TTL"},
		{"-upstream-cache-head-ttl", "1h", "UPSTREAM_CACHE_HEAD_TTL"},
	} {
		if _, err := parseConfig(tc[:2], func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), tc[2]) {
			t.Errorf("%v: %v, want an error naming %s", tc[:2], err, tc[2])
		}
	}

	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	off := startOpsGateway(t, u.args("-upstream-cache-bytes", "0")...)
	cursor := edgeCursor(newestEdges(t, off.URL)[4])
	before := u.Sample.Requests(sampleservice.EndpointTransactions)
	history(t, off.URL, cursor)
	history(t, off.URL, cursor)
	if n := u.Sample.Requests(sampleservice.EndpointTransactions) - before; n < 2 {
		t.Fatalf("without the cache, a history page twice cost %d explorer requests", n)
	}
	if _, held := scrape(t, off.URL)["gateway_upstream_cache_bytes"]; held {
		t.Fatal("gateway_upstream_cache_bytes is served without a cache")
	}

	redisURL := redistest.Start(t)
	keyless := startOpsGateway(t, u.args("-redis-url", redisURL)...)
	if !strings.Contains(keyless.logs.String(), "the upstream cache is not shared through Redis") {
		t.Fatalf("no warning that the cache is not shared without a key:\n%s", keyless.logs.String())
	}
	history(t, keyless.URL, edgeCursor(newestEdges(t, keyless.URL)[4]))
	rdb := redistest.Client(t, redisURL)
	if keys, err := rdb.Keys(context.Background(), "gateway:upstream:*").Result(); err != nil || len(keys) != 0 {
		t.Fatalf("Redis holds upstream cache keys %v (%v) though no replica could verify them", keys, err)
	}
}
