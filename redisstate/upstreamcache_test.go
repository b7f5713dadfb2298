package redisstate_test

import (
	"context"
	"math"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// The upstream cache's shared tier over a real Redis: replicas (each its
// own client, cache and connection) over one sample data service.

const sharedKey = "0123456789abcdef0123456789abcdef-upstream-cache-test"

func startSample(t *testing.T) *sampleservice.Server {
	t.Helper()
	srv, err := sampleservice.Start(sampleservice.Config{Defects: sampleservice.DefaultDefects()}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// cacheReplica is one gateway's upstream client, its cache sharing store's
// tier (none when store is nil).
type cacheReplica struct {
	c    *upstream.Client
	hits map[upstream.CacheOutcome]*atomic.Int64
}

func newCacheReplica(t *testing.T, srv *sampleservice.Server, store *redisstate.Store, key string) *cacheReplica {
	t.Helper()
	return newBudgetedReplica(t, srv, store, key, nil)
}

// newBudgetedReplica is newCacheReplica with budget on its data-node calls.
func newBudgetedReplica(t *testing.T, srv *sampleservice.Server, store *redisstate.Store, key string, budget upstream.Budget) *cacheReplica {
	t.Helper()
	r := &cacheReplica{hits: map[upstream.CacheOutcome]*atomic.Int64{}}
	for _, o := range []upstream.CacheOutcome{upstream.CacheHit, upstream.CacheSharedHit, upstream.CacheFleetHit, upstream.CacheMiss} {
		r.hits[o] = &atomic.Int64{}
	}
	cfg := upstream.CacheConfig{MaxBytes: upstream.DefaultCacheBytes, MaxAge: time.Hour, HeadTTL: time.Hour,
		OnEvent: func(e upstream.CacheEvent) {
			if n := r.hits[e.Outcome]; n != nil {
				n.Add(1)
			}
		}}
	if store != nil {
		cfg.Shared = store.UpstreamCache(mustKeys(key))
	}
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	c, err := upstream.New(upstream.Config{DataNodeURL: srv.URL, ExplorerURL: srv.URL + "/rest",
		HTTPClient: &http.Client{Transport: transport}, Retry: upstream.RetryConfig{Retries: -1}, Cache: upstream.NewCache(cfg),
		Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	r.c = c
	return r
}

// answer runs call with an answer recorder and returns the answer.
func answer(t *testing.T, call func(ctx context.Context) error) upstream.Answer {
	t.Helper()
	var mu sync.Mutex
	var a upstream.Answer
	ctx := upstream.WithAnswers(context.Background(), func(got upstream.Answer) {
		mu.Lock()
		a = got
		mu.Unlock()
	})
	if err := call(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return a
}

// An answer one cacheReplica fetched is served to the other from Redis, with
// no upstream request: history, data-node answers, and the newest page at
// the head both know. When a block arrives, the cacheReplica that hears of it
// (the live feed's batch: ObserveHead) no longer reads the older head's
// newest page, though it is still in Redis.
func TestUpstreamCacheIsSharedBetweenReplicas(t *testing.T) {
	url := redistest.Start(t)
	srv := startSample(t)
	a := newCacheReplica(t, srv, open(t, url, "", nil), sharedKey)
	b := newCacheReplica(t, srv, open(t, url, "", nil), sharedKey)
	explorer := func() int64 { return srv.Service.Requests(sampleservice.EndpointTransactions) }

	// a polls (as its live feed would): both know the head.
	newest, err := a.c.ListTransactions(upstream.WithoutCache(context.Background()), upstream.TransactionsParams{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	head := newest.Transactions[0].Position()
	b.c.ObserveHead(head, true)
	old := newest.Transactions[80].Position()
	history := upstream.TransactionsParams{Last: 30, Before: &old}
	latest := upstream.TransactionsParams{First: 10}

	var fromA [2]*upstream.TransactionPage
	for i, p := range []upstream.TransactionsParams{history, latest} {
		answer(t, func(ctx context.Context) (err error) { fromA[i], err = a.c.ListTransactions(ctx, p); return })
		before := explorer()
		var got *upstream.TransactionPage
		ans := answer(t, func(ctx context.Context) (err error) { got, err = b.c.ListTransactions(ctx, p); return })
		if n := explorer() - before; n != 0 || !ans.Cached {
			t.Fatalf("page %d on b: %d explorer requests, answer %+v; want a's answer from Redis", i, n, ans)
		}
		if !sameDecoded(got, fromA[i]) {
			t.Fatalf("page %d on b differs from a's", i)
		}
	}
	assets, err := a.c.ListAssets(context.Background(), upstream.AssetsParams{})
	if err != nil {
		t.Fatal(err)
	}
	before := srv.Service.Requests(sampleservice.EndpointAssets)
	var got *upstream.AssetPage
	ans := answer(t, func(ctx context.Context) (err error) { got, err = b.c.ListAssets(ctx, upstream.AssetsParams{}); return })
	if srv.Service.Requests(sampleservice.EndpointAssets) != before || !ans.Cached || ans.Kind != upstream.CacheRecent ||
		got.Freshness != assets.Freshness || !sameDecoded(got, assets) {
		t.Fatalf("assets on b: answer %+v, freshness %+v; want a's, from Redis, with its freshness %+v", ans, got.Freshness, assets.Freshness)
	}
	if n := b.hits[upstream.CacheSharedHit].Load(); n != 3 {
		t.Fatalf("b counted %d hits from Redis, want 3", n)
	}

	// A new block: a's poller sees it, b hears of it from a's batch.
	added, err := srv.Service.AppendBlock()
	if err != nil {
		t.Fatal(err)
	}
	polled, err := a.c.ListTransactions(upstream.WithoutCache(context.Background()), upstream.TransactionsParams{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	b.c.ObserveHead(polled.Transactions[0].Position(), false)
	var now *upstream.TransactionPage
	ans = answer(t, func(ctx context.Context) (err error) { now, err = b.c.ListTransactions(ctx, latest); return })
	if ans.Cached || now.Transactions[0].Hash != added[len(added)-1].Hash {
		t.Fatalf("b's newest page after the block: %+v, first %s; want the new block's %s from the explorer",
			ans, now.Transactions[0].Hash, added[len(added)-1].Hash)
	}
	// History stays, on both.
	ans = answer(t, func(ctx context.Context) error { _, err := b.c.ListTransactions(ctx, history); return err })
	if !ans.Cached || ans.Kind != upstream.CacheImmutable {
		t.Fatalf("history on b after the block: %+v", ans)
	}
}

// gateBudget holds each caller until let is closed, counting them.
type gateBudget struct {
	waits atomic.Int64
	held  chan struct{}
	let   chan struct{}
}

func (b *gateBudget) Wait(ctx context.Context) error {
	b.waits.Add(1)
	b.held <- struct{}{}
	select {
	case <-b.let:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (*gateBudget) Pause(context.Context, time.Duration, bool) {}

// A request that queued for the budget while another replica fetched the
// same answer is served that answer from Redis when its turn comes,
// without taking a token: the data node is asked once, and the fleet's
// budget is spent once.
func TestQueuedRequestTakesTheAnswerAnotherReplicaFetched(t *testing.T) {
	url := redistest.Start(t)
	srv := startSample(t)
	a := newCacheReplica(t, srv, open(t, url, "", nil), sharedKey)
	inner := &gateBudget{held: make(chan struct{}, 2), let: make(chan struct{})}
	fair := upstream.NewFairBudget(inner, 1000)
	b := newBudgetedReplica(t, srv, open(t, url, "", nil), sharedKey, fair)
	requests := func() int64 { return srv.Service.Requests(sampleservice.EndpointAssets) }

	// Another of b's callers holds the turn, waiting for a token.
	other := make(chan error, 1)
	go func() { other <- fair.Wait(context.Background()) }()
	<-inner.held

	// b's request finds nothing in Redis and queues behind it.
	type result struct {
		page *upstream.AssetPage
		ans  upstream.Answer
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		ctx := upstream.WithAnswers(context.Background(), func(a upstream.Answer) { r.ans = a })
		r.page, r.err = b.c.ListAssets(ctx, upstream.AssetsParams{})
		done <- r
	}()
	waitUntil(t, "b's request to queue", func() bool {
		st, err := fair.State(context.Background())
		return err == nil && st.Waiting == 1
	})

	// Meanwhile a fetches the same answer (without waiting for b's
	// fetch, which b claimed: as a's live feed's poller would, its answer
	// stored like any other); then the turn comes round.
	fromA, err := a.c.ListAssets(upstream.WithoutCache(context.Background()), upstream.AssetsParams{})
	if err != nil {
		t.Fatal(err)
	}
	close(inner.let)
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	got := <-done
	switch {
	case got.err != nil:
		t.Fatal(got.err)
	case requests() != 1 || !got.ans.Cached || got.page.Freshness != fromA.Freshness || !sameDecoded(got.page, fromA):
		t.Fatalf("%d data-node requests, b's answer %+v; want 1 request, a's answer from Redis", requests(), got.ans)
	case inner.waits.Load() != 1:
		t.Fatalf("%d tokens taken, want 1 (the other caller's): b's request needed none", inner.waits.Load())
	}
	if n := b.hits[upstream.CacheSharedHit].Load(); n != 1 {
		t.Fatalf("b counted %d hits from Redis, want 1", n)
	}
}

// Whoever can write to Redis cannot feed answers to the replicas: a value
// no key verifies is a miss, and the explorer is asked. Replicas with
// another key, or another prefix, share nothing.
func TestUpstreamCacheRefusesEntriesItCannotVerify(t *testing.T) {
	url := redistest.Start(t)
	srv := startSample(t)
	store := open(t, url, "", nil)
	a := newCacheReplica(t, srv, store, sharedKey)
	newest, err := a.c.ListTransactions(upstream.WithoutCache(context.Background()), upstream.TransactionsParams{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	old := newest.Transactions[50].Position()
	history := upstream.TransactionsParams{Last: 10, Before: &old}
	if _, err := a.c.ListTransactions(context.Background(), history); err != nil {
		t.Fatal(err)
	}

	rdb := redis.NewClient(&redis.Options{Addr: strings.TrimSuffix(strings.TrimPrefix(url, "redis://"), "/0")})
	defer rdb.Close()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "gateway:upstream:*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("no upstream cache keys in Redis: %v %v", keys, err)
	}
	// Rewrite every row's hash in every value, keeping its MAC.
	for _, k := range keys {
		v, err := rdb.Get(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		forged := strings.ReplaceAll(v, newest.Transactions[55].Hash, strings.Repeat("AB", 32))
		if forged == v {
			forged = v[:len(v)-2] + "x}"
		}
		if err := rdb.Set(ctx, k, forged, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Every forged value is counted as unverified when read (before the
	// replicas below write their own answers again).
	tier := store.UpstreamCache(mustKeys(sharedKey))
	trimmed := make([]string, len(keys))
	for i, k := range keys {
		trimmed[i] = strings.TrimPrefix(k, "gateway:")
	}
	vals, err := tier.Get(ctx, trimmed)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if v != nil {
			t.Fatalf("forged value of %s verified", keys[i])
		}
	}
	if n := tier.Stats().Unauthentic; n != uint64(len(keys)) {
		t.Fatalf("%d unverified values counted, want %d (keys %q)", n, len(keys), keys)
	}
	for name, r := range map[string]*cacheReplica{
		"a replica with the key":     newCacheReplica(t, srv, store, sharedKey),
		"a replica with another key": newCacheReplica(t, srv, open(t, url, "", nil), "another-key-of-at-least-32-characters-xyz"),
		"another prefix":             newCacheReplica(t, srv, open(t, url, "testnet:", nil), sharedKey),
	} {
		r.c.ObserveHead(newest.Transactions[0].Position(), true)
		before := srv.Service.Requests(sampleservice.EndpointTransactions)
		var page *upstream.TransactionPage
		ans := answer(t, func(ctx context.Context) (err error) { page, err = r.c.ListTransactions(ctx, history); return })
		if ans.Cached || srv.Service.Requests(sampleservice.EndpointTransactions)-before != 1 {
			t.Fatalf("%s: answer %+v: want the explorer asked", name, ans)
		}
		for _, tx := range page.Transactions {
			if tx.Hash == strings.Repeat("AB", 32) {
				t.Fatalf("%s was served the forged row", name)
			}
		}
	}
}

// sameDecoded compares decoded answers (a NaN equals a NaN).
func sameDecoded(a, b any) bool {
	return cmp.Equal(a, b,
		cmp.Exporter(func(reflect.Type) bool { return true }),
		cmp.Comparer(func(x, y upstream.Float64) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }))
}

// Redis lost mid-run: every request is still answered, correctly (the
// explorer's own answer), from this process's cache or the upstream; the
// failures are reported for "upstream_cache".
func TestUpstreamCacheGoesOnWhenRedisIsLost(t *testing.T) {
	server := redistest.StartServer(t)
	srv := startSample(t)
	var failures atomic.Int64
	store := open(t, server.URL(), "", func(use string, _ error) {
		if use == "upstream_cache" {
			failures.Add(1)
		}
	})
	r := newCacheReplica(t, srv, store, sharedKey)
	newest, err := r.c.ListTransactions(upstream.WithoutCache(context.Background()), upstream.TransactionsParams{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	var pages []upstream.TransactionsParams
	for i := 10; i < 100; i += 10 {
		pos := newest.Transactions[i].Position()
		pages = append(pages, upstream.TransactionsParams{Last: 20, Before: &pos})
	}
	kept := pages[0]
	if _, err := r.c.ListTransactions(context.Background(), kept); err != nil {
		t.Fatal(err)
	}

	server.Stop()
	for i, p := range append(pages, upstream.TransactionsParams{First: 10}) {
		var got *upstream.TransactionPage
		ans := answer(t, func(ctx context.Context) (err error) { got, err = r.c.ListTransactions(ctx, p); return })
		want, err := r.c.ListTransactions(upstream.WithoutCache(context.Background()), p)
		if err != nil {
			t.Fatal(err)
		}
		if !sameDecoded(got, want) || len(got.Transactions) == 0 {
			t.Fatalf("page %d without Redis differs from the explorer's", i)
		}
		if i == 0 && !ans.Cached {
			t.Fatalf("the page kept before Redis was lost: %+v, want it from this process's cache", ans)
		}
	}
	if _, err := r.c.ListAssets(context.Background(), upstream.AssetsParams{}); err != nil {
		t.Fatal(err)
	}
	if failures.Load() == 0 {
		t.Fatal("no Redis failure reported for upstream_cache")
	}
}
