package redisstate_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// open connects a Store to url: each call is one replica's connection.
func open(t *testing.T, url, prefix string, onError func(string, error)) *redisstate.Store {
	t.Helper()
	s, err := redisstate.Open(context.Background(), redisstate.Options{URL: url, Prefix: prefix, OnError: onError})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestOpenRefusesABadURLOrADeadServer(t *testing.T) {
	t.Parallel() // the Redis client's dial retries
	for _, url := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1:1/0"} {
		if _, err := redisstate.Open(context.Background(), redisstate.Options{URL: url}); err == nil {
			t.Errorf("Open(%q) succeeded", url)
		}
	}
}

func TestAPQIsSharedBetweenReplicas(t *testing.T) {
	url := redistest.Start(t)
	a, b := open(t, url, "", nil).APQ(), open(t, url, "", nil).APQ()
	ctx := context.Background()
	if _, ok := b.Get(ctx, "abc"); ok {
		t.Fatal("an unknown hash was found")
	}
	a.Add(ctx, "abc", "{ assets { edges { cursor } } }")
	got, ok := b.Get(ctx, "abc")
	if !ok || got != "{ assets { edges { cursor } } }" {
		t.Fatalf("replica b got %q, %v", got, ok)
	}
	// Another prefix (another network's gateways) does not see it.
	if _, ok := open(t, url, "testnet:", nil).APQ().Get(ctx, "abc"); ok {
		t.Fatal("a key of another prefix was found")
	}
}

func TestAssetCacheRoundTripsAssetsAndNegativeEntries(t *testing.T) {
	url := redistest.Start(t)
	a := open(t, url, "", nil).AssetCache(time.Minute)
	b := open(t, url, "", nil).AssetCache(time.Minute)
	ctx := context.Background()

	// Real decoded assets: every shape the sample dataset has (builtin,
	// ERC-20, no source, every status).
	sample, err := sampleservice.Start(sampleservice.Config{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sample.Close()
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL})
	if err != nil {
		t.Fatal(err)
	}
	size := int32(5000)
	page, err := client.ListAssets(ctx, upstream.AssetsParams{Pagination: upstream.Pagination{First: &size}})
	if err != nil {
		t.Fatal(err)
	}
	fresh := page.Freshness
	fresh.BlockTime = time.Date(2024, 3, 14, 12, 0, 2, 123456789, time.UTC)
	var entries []graph.CachedAsset
	var ids []string
	for i := range page.Edges {
		asset := page.Edges[i].Node
		entries = append(entries, graph.CachedAsset{ID: asset.ID, Asset: &asset, Freshness: fresh})
		ids = append(ids, asset.ID)
	}
	if len(entries) < 5 {
		t.Fatalf("only %d sample assets", len(entries))
	}
	entries = append(entries, graph.CachedAsset{ID: "no-such-asset"}) // negative entry
	a.Add(ctx, entries...)

	got := b.Get(ctx, append(ids, "no-such-asset", "never-cached"))
	if len(got) != len(entries) {
		t.Fatalf("got %d entries, want %d", len(got), len(entries))
	}
	for _, want := range entries {
		if diff := cmp.Diff(want, got[want.ID]); diff != "" {
			t.Fatalf("entry %s (-put +got):\n%s", want.ID, diff)
		}
	}
	if neg := got["no-such-asset"]; neg.Asset != nil {
		t.Fatalf("the negative entry came back as %+v", neg)
	}
	if _, ok := got["never-cached"]; ok {
		t.Fatal("an id never cached was found")
	}
}

func TestAssetCacheEntriesExpire(t *testing.T) {
	url := redistest.Start(t)
	c := open(t, url, "", nil).AssetCache(50 * time.Millisecond)
	ctx := context.Background()
	c.Add(ctx, graph.CachedAsset{ID: "x"})
	deadline := time.Now().Add(10 * time.Second)
	for len(c.Get(ctx, []string{"x"})) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the entry never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCachesReportMissesWhenRedisFails(t *testing.T) {
	url := redistest.Start(t)
	var failures sync.Map
	s := open(t, url, "", func(use string, err error) { failures.Store(use, err) })
	apq, cache := s.APQ(), s.AssetCache(time.Minute)
	_ = s.Close() // every command now fails
	ctx := context.Background()
	apq.Add(ctx, "h", "{ __typename }")
	if _, ok := apq.Get(ctx, "h"); ok {
		t.Error("APQ found a query without Redis")
	}
	cache.Add(ctx, graph.CachedAsset{ID: "x"})
	if got := cache.Get(ctx, []string{"x"}); len(got) != 0 {
		t.Errorf("asset cache found %v without Redis", got)
	}
	for _, use := range []string{"apq", "asset_cache"} {
		if _, ok := failures.Load(use); !ok {
			t.Errorf("no failure reported for %s", use)
		}
	}
}

// Budgets of two replicas draw from one bucket: with a rate so slow that
// no token comes back during the test, exactly Burst requests pass in
// all, and the next is refused, not queued past the caller's deadline.
func TestBudgetReplicasShareOneBucket(t *testing.T) {
	url := redistest.Start(t)
	opts := redisstate.BudgetOptions{Rate: 0.01, Burst: 5}
	a, b := open(t, url, "", nil).Budget(opts), open(t, url, "", nil).Budget(opts)
	granted := 0
	for i := range 8 {
		budget := a
		if i%2 == 1 {
			budget = b
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := budget.Wait(ctx)
		cancel()
		var be *upstream.BudgetError
		switch {
		case err == nil:
			granted++
		case errors.As(err, &be):
			if be.Banned || be.RetryAfter < 50*time.Second {
				t.Fatalf("refusal %+v: want a wait of about 100s, not banned", be)
			}
		default:
			t.Fatalf("Wait: %v", err)
		}
	}
	if granted != 5 {
		t.Fatalf("%d requests granted, want the burst of 5", granted)
	}
	st, err := a.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Tokens > 0.01 || st.Tokens < -0.01 || st.PausedFor != 0 || st.Banned {
		t.Fatalf("state %+v, want an empty bucket, not paused", st)
	}
}

// A pause set by one replica holds back the others; a 429's pause also
// empties the bucket; a ban refuses at once.
func TestBudgetPauseAndBanAreShared(t *testing.T) {
	url := redistest.Start(t)
	// A slow refill, so that "emptied" can be read on a busy machine.
	opts := redisstate.BudgetOptions{Rate: 2, Burst: 100}
	a, b := open(t, url, "", nil).Budget(opts), open(t, url, "", nil).Budget(opts)

	a.Pause(context.Background(), 30*time.Second, false)
	st, err := b.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.PausedFor <= 20*time.Second || st.Banned || st.Tokens > 1 {
		t.Fatalf("after a 429: state %+v, want paused about 30s, not banned, bucket emptied", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	err = b.Wait(ctx)
	cancel()
	var be *upstream.BudgetError
	if !errors.As(err, &be) || be.Banned || be.RetryAfter <= 20*time.Second {
		t.Fatalf("Wait during a pause longer than the deadline = %v, want a BudgetError of about 30s", err)
	}

	a.Pause(context.Background(), 10*time.Minute, true)
	err = b.Wait(context.Background()) // no deadline: a ban still refuses at once
	if !errors.As(err, &be) || !be.Banned || be.RetryAfter <= 9*time.Minute {
		t.Fatalf("Wait during a ban = %v, want a banned BudgetError of about 10m", err)
	}
	// A shorter pause never shortens a longer one.
	a.Pause(context.Background(), time.Second, true)
	if st, _ := b.State(context.Background()); !st.Banned || st.PausedFor <= 9*time.Minute {
		t.Fatalf("a shorter ban shortened the longer one: %+v", st)
	}
}

func TestBudgetWaitsOutAShortPause(t *testing.T) {
	url := redistest.Start(t)
	b := open(t, url, "", nil).Budget(redisstate.BudgetOptions{Rate: 1000, Burst: 100})
	b.Pause(context.Background(), 200*time.Millisecond, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Wait(ctx); err != nil {
		t.Fatalf("Wait = %v, want it to wait the pause out", err)
	}
	if st, _ := b.State(context.Background()); st.PausedFor != 0 {
		t.Fatalf("Wait returned during the pause: %+v", st)
	}
}

// fakeBudget is an upstream.Budget of function fields.
type fakeBudget struct {
	wait  func(context.Context) error
	pause func(context.Context, time.Duration, bool)
}

var _ upstream.Budget = fakeBudget{}

func (f fakeBudget) Wait(ctx context.Context) error { return f.wait(ctx) }
func (f fakeBudget) Pause(ctx context.Context, d time.Duration, banned bool) {
	f.pause(ctx, d, banned)
}

func TestBudgetFallsBackWhileRedisFails(t *testing.T) {
	url := redistest.Start(t)
	var failures atomic.Int64
	s := open(t, url, "", func(use string, _ error) {
		if use == "budget" {
			failures.Add(1)
		}
	})
	var waits, pauses atomic.Int64
	b := s.Budget(redisstate.BudgetOptions{Rate: 10, Burst: 10, Fallback: fakeBudget{
		wait:  func(context.Context) error { waits.Add(1); return nil },
		pause: func(context.Context, time.Duration, bool) { pauses.Add(1) },
	}})
	if err := b.Wait(context.Background()); err != nil || waits.Load() != 0 {
		t.Fatalf("with Redis: Wait = %v, fallback waits %d", err, waits.Load())
	}
	b.Pause(context.Background(), time.Millisecond, false)
	if pauses.Load() != 1 {
		t.Fatalf("the fallback was not paused with Redis: %d", pauses.Load())
	}
	_ = s.Close()
	if err := b.Wait(context.Background()); err != nil || waits.Load() != 1 {
		t.Fatalf("without Redis: Wait = %v, fallback waits %d, want 1", err, waits.Load())
	}
	if failures.Load() == 0 {
		t.Fatal("the Redis failure was not reported")
	}
	if _, err := b.State(context.Background()); err == nil {
		t.Fatal("State succeeded without Redis")
	}
}
