package redisstate_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// Flights across replicas over a real Redis: replicas (each its own
// client, cache and Store) asking the sample data node the same question
// at the same moment.

// assetsResult is one ListAssets call's outcome.
type assetsResult struct {
	page *upstream.AssetPage
	ans  upstream.Answer
	err  error
}

// listAssets lists the assets on r, on a goroutine of its own.
func listAssets(ctx context.Context, r *cacheReplica) <-chan assetsResult {
	done := make(chan assetsResult, 1)
	go func() {
		var res assetsResult
		ctx := upstream.WithAnswers(ctx, func(a upstream.Answer) { res.ans = a })
		res.page, res.err = r.c.ListAssets(ctx, upstream.AssetsParams{})
		done <- res
	}()
	return done
}

// answered is the result on ch, failing t when none comes: a request
// that hangs.
func answered(t *testing.T, ch <-chan assetsResult, who string) assetsResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("%s's request was not answered within 20 s", who)
		return assetsResult{}
	}
}

// waiting is how many requests of store's process wait for another
// replica's fetch.
func waiting(store *redisstate.Store) int {
	return store.UpstreamCache(mustKeys(sharedKey)).Stats().Waiting
}

// newGate is a budget holding its callers until let is closed.
func newGate() *gateBudget {
	return &gateBudget{held: make(chan struct{}, 4), let: make(chan struct{})}
}

// Replicas asking the same data-node answer at the same moment share one
// fetch: the first claims it and queues for the budget; the others find
// it claimed and wait for it instead of queueing requests of their own,
// then are served its answer from Redis. The data node is asked once.
func TestReplicasShareOneFetchOfTheSameAnswer(t *testing.T) {
	url := redistest.Start(t)
	srv := startSample(t)
	gate := newGate()
	a := newBudgetedReplica(t, srv, open(t, url, "", nil), sharedKey, gate)
	storeB, storeC := open(t, url, "", nil), open(t, url, "", nil)
	b := newCacheReplica(t, srv, storeB, sharedKey)
	c := newCacheReplica(t, srv, storeC, sharedKey)
	ctx := context.Background()

	fromA := listAssets(ctx, a)
	<-gate.held // a claimed the fetch; its request waits for a token
	fromB, fromC := listAssets(ctx, b), listAssets(ctx, c)
	waitUntil(t, "b and c to wait for a's fetch", func() bool { return waiting(storeB) == 1 && waiting(storeC) == 1 })
	close(gate.let)

	ra := answered(t, fromA, "a")
	if ra.err != nil {
		t.Fatal(ra.err)
	}
	if n := srv.Service.Requests(sampleservice.EndpointAssets); n != 1 {
		t.Fatalf("the data node was asked %d times, want once", n)
	}
	for name, r := range map[string]*cacheReplica{"b": b, "c": c} {
		got := answered(t, map[string]<-chan assetsResult{"b": fromB, "c": fromC}[name], name)
		switch {
		case got.err != nil:
			t.Fatalf("%s: %v", name, got.err)
		case !got.ans.Cached || got.page.Freshness != ra.page.Freshness || !sameDecoded(got.page, ra.page):
			t.Fatalf("%s's answer %+v: want a's, from Redis", name, got.ans)
		case r.hits[upstream.CacheFleetHit].Load() != 1 || r.hits[upstream.CacheMiss].Load() != 0:
			t.Fatalf("%s counted %d answers of another replica's fetch and %d misses, want 1 and 0",
				name, r.hits[upstream.CacheFleetHit].Load(), r.hits[upstream.CacheMiss].Load())
		}
	}
	if gate.waits.Load() != 1 {
		t.Fatalf("%d tokens taken, want 1", gate.waits.Load())
	}
	if n := waiting(storeB) + waiting(storeC); n != 0 {
		t.Fatalf("%d requests still waiting", n)
	}
}

// A replica waiting for another's fetch that gives it no answer fetches
// for itself, and gets the right one: when the data node answered the
// claimant an error (errors are never shared), and when the claimant's
// callers gave up before it fetched.
func TestFleetWaiterFetchesForItselfWhenTheClaimantFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(srv *sampleservice.Server, cancel context.CancelFunc)
		// requests is what the data node is asked: the claimant's (if it
		// got to ask) and the waiter's.
		requests int64
	}{
		{"the data node answers the claimant an error", func(srv *sampleservice.Server, _ context.CancelFunc) {
			srv.Service.SetFault(sampleservice.EndpointAssets, sampleservice.Fault{FailNext: 1})
		}, 2},
		{"the claimant's callers give up", func(_ *sampleservice.Server, cancel context.CancelFunc) { cancel() }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := redistest.Start(t)
			srv := startSample(t)
			gate := newGate()
			a := newBudgetedReplica(t, srv, open(t, url, "", nil), sharedKey, gate)
			storeB := open(t, url, "", nil)
			b := newCacheReplica(t, srv, storeB, sharedKey)

			ctxA, cancelA := context.WithCancel(context.Background())
			defer cancelA()
			fromA := listAssets(ctxA, a)
			<-gate.held
			fromB := listAssets(context.Background(), b)
			waitUntil(t, "b to wait for a's fetch", func() bool { return waiting(storeB) == 1 })
			tc.fail(srv, cancelA)
			close(gate.let)

			if ra := answered(t, fromA, "a"); ra.err == nil {
				t.Fatal("a's request succeeded")
			}
			rb := answered(t, fromB, "b")
			if rb.err != nil {
				t.Fatalf("b: %v", rb.err)
			}
			want, err := b.c.ListAssets(upstream.WithoutCache(context.Background()), upstream.AssetsParams{})
			if err != nil {
				t.Fatal(err)
			}
			switch n := srv.Service.Requests(sampleservice.EndpointAssets) - 1; {
			case n != tc.requests:
				t.Fatalf("the data node was asked %d times before the check, want %d", n, tc.requests)
			case rb.ans.Cached || !sameDecoded(rb.page, want):
				t.Fatalf("b's answer %+v: want its own fetch's, the data node's", rb.ans)
			case b.hits[upstream.CacheFleetHit].Load() != 0:
				t.Fatal("b counted an answer of another replica's fetch")
			case waiting(storeB) != 0:
				t.Fatal("b still waits")
			}
		})
	}
}

// A claim whose claimant is gone never holds a waiter for long: a dead
// replica's expires (it renews it no more) and the waiter, told by its
// check of the claims it waits on, fetches for itself; a claim no
// replica can have taken (without expiry) is taken over at once.
func TestFleetWaiterOutlivesAClaimWithoutClaimant(t *testing.T) {
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{
		{"a dead replica's claim", 2 * time.Second},
		{"a claim without expiry", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := redistest.Start(t)
			srv := startSample(t)
			storeB := open(t, url, "", nil)
			b := newCacheReplica(t, srv, storeB, sharedKey)
			rdb := redis.NewClient(&redis.Options{Addr: strings.TrimSuffix(strings.TrimPrefix(url, "redis://"), "/0")})
			defer rdb.Close()
			// The flight's key, as the upstream client names it.
			sum := sha256.Sum256([]byte(srv.URL + "/api/v2/assets"))
			claim := "gateway:upstream-flight:" + base64.RawURLEncoding.EncodeToString(sum[:])
			if err := rdb.Set(context.Background(), claim, "dead-replica-1", tc.ttl).Err(); err != nil {
				t.Fatal(err)
			}

			fromB := listAssets(context.Background(), b)
			if tc.ttl > 0 {
				waitUntil(t, "b to wait for the claim", func() bool { return waiting(storeB) == 1 })
			}
			rb := answered(t, fromB, "b")
			if rb.err != nil || rb.ans.Cached || len(rb.page.Edges) == 0 {
				t.Fatalf("b: %+v, %v: want the data node's answer", rb.ans, rb.err)
			}
			if n := srv.Service.Requests(sampleservice.EndpointAssets); n != 1 {
				t.Fatalf("the data node was asked %d times, want once", n)
			}
		})
	}
}

// Requests that bypass the cache (the live feed's poller, the readiness
// probe) never wait for another replica's fetch.
func TestRequestsWithoutCacheNeverWaitForAnotherReplica(t *testing.T) {
	url := redistest.Start(t)
	srv := startSample(t)
	gate := newGate()
	a := newBudgetedReplica(t, srv, open(t, url, "", nil), sharedKey, gate)
	b := newCacheReplica(t, srv, open(t, url, "", nil), sharedKey)

	fromA := listAssets(context.Background(), a)
	<-gate.held
	if _, err := b.c.ListAssets(upstream.WithoutCache(context.Background()), upstream.AssetsParams{}); err != nil {
		t.Fatal(err)
	}
	if n := srv.Service.Requests(sampleservice.EndpointAssets); n != 1 {
		t.Fatalf("the data node was asked %d times while a's fetch waited, want once (b's)", n)
	}
	close(gate.let)
	if ra := answered(t, fromA, "a"); ra.err != nil {
		t.Fatal(ra.err)
	}
}

// Redis lost while a replica waits for another's fetch: the waiter stops
// waiting (its subscription broke) and fetches for itself, the claimant
// answers too, and later requests go on without Redis; the failures are
// reported for "upstream_cache".
func TestFleetFlightsGoOnWhenRedisIsLost(t *testing.T) {
	server := redistest.StartServer(t)
	srv := startSample(t)
	var failures atomic.Int64
	onError := func(use string, _ error) {
		if use == "upstream_cache" {
			failures.Add(1)
		}
	}
	gate := newGate()
	a := newBudgetedReplica(t, srv, open(t, server.URL(), "", onError), sharedKey, gate)
	storeB := open(t, server.URL(), "", onError)
	b := newCacheReplica(t, srv, storeB, sharedKey)

	fromA := listAssets(context.Background(), a)
	<-gate.held
	fromB := listAssets(context.Background(), b)
	waitUntil(t, "b to wait for a's fetch", func() bool { return waiting(storeB) == 1 })
	server.Stop()

	rb := answered(t, fromB, "b")
	if rb.err != nil {
		t.Fatalf("b without Redis: %v", rb.err)
	}
	close(gate.let)
	ra := answered(t, fromA, "a")
	if ra.err != nil {
		t.Fatalf("a without Redis: %v", ra.err)
	}
	if !sameDecoded(ra.page, rb.page) || len(ra.page.Edges) == 0 {
		t.Fatal("a's and b's answers differ")
	}
	one, err := b.c.ListAssets(context.Background(), upstream.AssetsParams{Pagination: upstream.Pagination{First: ptr(int32(1))}})
	if err != nil || len(one.Edges) != 1 {
		t.Fatalf("a later request without Redis: %v", err)
	}
	if failures.Load() == 0 {
		t.Fatal("no Redis failure reported for upstream_cache")
	}
}

func ptr[T any](v T) *T { return &v }
