package upstream

import (
	"context"
	"errors"
	"math"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The cache of upstream answers, over the sample data service on
// loopback: what each kind of answer is, how long it is served, and that
// what it serves is what the upstream answers.

// startSample starts the sample data service (the whole generated
// dataset, no block producer: tests append blocks themselves).
func startSample(t testing.TB) *SampleServer {
	t.Helper()
	return startSampleT(t, true)
}

// cacheEvents records a cache's events.
type cacheEvents struct {
	mu     sync.Mutex
	events []CacheEvent
}

func (e *cacheEvents) record(ev CacheEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
}

// count is the number of events of outcome for endpoint and kind.
func (e *cacheEvents) count(endpoint Endpoint, kind CacheKind, outcome CacheOutcome) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.events {
		if ev.Endpoint == endpoint && ev.Kind == kind && ev.Outcome == outcome {
			n++
		}
	}
	return n
}

// cachingClient is a client of srv with a cache of cfg (64 MiB unless
// cfg says otherwise), no retries, connections closed after each request
// (so that a synctest bubble has no idle connection goroutine).
func cachingClient(t testing.TB, srv *SampleServer, cfg CacheConfig) (*Client, *cacheEvents) {
	t.Helper()
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultCacheBytes
	}
	events := &cacheEvents{}
	cfg.OnEvent = events.record
	c, err := New(Config{
		DataNodeURL: srv.URL, ExplorerURL: srv.URL + "/rest",
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
		Retry:      RetryConfig{Retries: -1},
		Cache:      NewCache(cfg),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, events
}

// recording returns ctx whose answers are recorded, and a function that
// returns the last one.
func recording(ctx context.Context) (context.Context, func() Answer) {
	var mu sync.Mutex
	var last Answer
	return WithAnswers(ctx, func(a Answer) {
			mu.Lock()
			last = a
			mu.Unlock()
		}), func() Answer {
			mu.Lock()
			defer mu.Unlock()
			return last
		}
}

// sameAnswer compares decoded answers (a Float64 NaN equals a NaN).
func sameAnswer(a, b any) bool {
	return cmp.Equal(a, b, ignoreDerived,
		cmp.Exporter(func(reflect.Type) bool { return true }),
		cmp.Comparer(func(x, y Float64) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }))
}

// poll reads the explorer's newest page as the live feed's poller does
// (WithoutCache): the client learns the head from it.
func poll(t testing.TB, c *Client) []Transaction {
	t.Helper()
	page, err := c.ListTransactions(WithoutCache(context.Background()), TransactionsParams{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Transactions
}

func explorerRequests(srv *SampleServer) int64 {
	return srv.Requests(EndpointTransactions)
}

// A history page (rows below the head, paged by cursor) is immutable: it
// is served from the cache after new blocks arrived, without a request,
// and equals what the explorer answers then.
func TestHistoryPagesAreServedFromTheCacheAfterNewBlocks(t *testing.T) {
	srv := startSample(t)
	c, events := cachingClient(t, srv, CacheConfig{MaxAge: time.Second})
	rows := poll(t, c) // the head, as the live feed would have read it
	head := uint64(rows[0].Block)
	old := rows[99].Position() // well below the head (at most 4 transactions a block)
	if old.Block >= head {
		t.Fatalf("row 99 is at block %d, the head %d", old.Block, head)
	}
	block := old.Block
	pages := map[string]TransactionsParams{
		"before a cursor":            {Last: 20, Before: &old},
		"a full page after a cursor": {First: 20, After: &old},
		"one block below the head":   {BlockHeight: &block},
		"a submitter's, before":      {Last: 5, Before: &old, Submitter: rows[99].Submitter},
	}
	first := map[string]*TransactionPage{}
	ctx, last := recording(context.Background())
	for name, p := range pages {
		page, err := c.ListTransactions(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a := last(); a.Kind != CacheImmutable || a.Cached {
			t.Fatalf("%s: answer %+v, want immutable, fetched", name, a)
		}
		first[name] = page
	}

	for range 3 {
		if _, err := srv.AppendBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if now := poll(t, c); uint64(now[0].Block) != head+3 {
		t.Fatalf("the head is at %d after 3 blocks past %d", now[0].Block, head)
	}
	for name, p := range pages {
		before := explorerRequests(srv)
		page, err := c.ListTransactions(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		a := last()
		if n := explorerRequests(srv) - before; n != 0 || !a.Cached || a.Kind != CacheImmutable {
			t.Fatalf("%s after 3 blocks: %d requests, answer %+v; want it from the cache, immutable", name, n, a)
		}
		upstream, err := c.ListTransactions(WithoutCache(ctx), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Transactions) == 0 || !sameAnswer(page, upstream) || !sameAnswer(page, first[name]) {
			t.Fatalf("%s: the cached page (%d rows) is not the explorer's (%d rows)", name, len(page.Transactions), len(upstream.Transactions))
		}
	}
	if n := events.count(EndpointTransactions, CacheImmutable, CacheHit); n != len(pages) {
		t.Fatalf("%d hits counted, want %d", n, len(pages))
	}
}

// What reaches the head, or cannot be judged, is not immutable.
func TestPagesReachingTheHeadAreNotImmutable(t *testing.T) {
	srv := startSample(t)
	c, _ := cachingClient(t, srv, CacheConfig{})
	ctx, last := recording(context.Background())
	kind := func(p TransactionsParams) CacheKind {
		t.Helper()
		if _, err := c.ListTransactions(WithoutCache(ctx), p); err != nil {
			t.Fatal(err)
		}
		return last().Kind
	}
	// With the head unknown, nothing from the explorer is immutable.
	fresh, _ := cachingClient(t, srv, CacheConfig{})
	deep := TxCursor{Block: 1, Index: 0}
	if _, err := fresh.ListTransactions(ctx, TransactionsParams{First: 10, After: &deep}); err != nil {
		t.Fatal(err)
	}
	if a := last(); a.Kind != CacheUntilNextBlock {
		t.Fatalf("a page after a cursor with the head unknown: %v, want until_next_block", a.Kind)
	}

	rows := poll(t, c)
	head := rows[0].Position()
	below := rows[60].Position()
	headBlock := head.Block
	future := TxCursor{Block: head.Block + 100}
	// A submitter with no transaction in the head block: its pages lie
	// below the head, yet a transaction of theirs may come with the next
	// block.
	quiet := ""
	for i := len(rows) - 1; i > 60 && quiet == ""; i-- {
		quiet = rows[i].Submitter
		for j := range rows {
			if uint64(rows[j].Block) == headBlock && rows[j].Submitter == quiet {
				quiet = ""
			}
		}
	}
	if quiet == "" {
		t.Fatal("every submitter of the newest page has a transaction in the head block")
	}
	for name, tc := range map[string]struct {
		p    TransactionsParams
		want CacheKind
	}{
		"the newest page":                                         {TransactionsParams{First: 10}, CacheUntilNextBlock},
		"a page after a cursor to the head":                       {TransactionsParams{First: 100, After: &below}, CacheUntilNextBlock},
		"a short page after a cursor":                             {TransactionsParams{First: 1000, After: &below}, CacheUntilNextBlock},
		"the head block":                                          {TransactionsParams{BlockHeight: &headBlock}, CacheUntilNextBlock},
		"a submitter's short page after a cursor, below the head": {TransactionsParams{First: 1000, After: &below, Submitter: quiet}, CacheUntilNextBlock},
		"a submitter's page before a cursor past the head":        {TransactionsParams{Last: 5, Before: &future, Submitter: quiet}, CacheUntilNextBlock},
		"a submitter's page before a cursor below the head":       {TransactionsParams{Last: 1000, Before: &below, Submitter: quiet}, CacheImmutable},
		"after the head (empty)":                                  {TransactionsParams{First: 10, After: &head}, CacheUntilNextBlock},
		"the oldest rows":                                         {TransactionsParams{Last: 10}, CacheImmutable},
	} {
		if got := kind(tc.p); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}

	// A transaction found by hash is immutable; not found is an error,
	// never kept.
	hash := rows[30].Hash
	if _, err := c.GetTransaction(ctx, hash); err != nil {
		t.Fatal(err)
	}
	if a := last(); a.Kind != CacheImmutable || a.Endpoint != EndpointTransaction {
		t.Fatalf("found by hash: %+v", a)
	}
	before := srv.Requests(EndpointTransaction)
	tx, err := c.GetTransaction(ctx, hash)
	if err != nil || tx.Hash != hash || !last().Cached || srv.Requests(EndpointTransaction) != before {
		t.Fatalf("found again: %v, %+v, %d requests", err, last(), srv.Requests(EndpointTransaction)-before)
	}
}

// Errors and not-found answers are never kept as immutable: an error is
// not kept at all (the next request asks again), a hash the explorer does
// not know is asked again too.
func TestErrorsAndNotFoundAreNotCached(t *testing.T) {
	srv := startSample(t)
	c, events := cachingClient(t, srv, CacheConfig{MaxAge: time.Hour})
	rows := poll(t, c)
	old := rows[50].Position()
	p := TransactionsParams{Last: 10, Before: &old}

	srv.SetFault(EndpointTransactions, SampleFault{FailNext: 1})
	if _, err := c.ListTransactions(context.Background(), p); err == nil {
		t.Fatal("the failing explorer answered")
	}
	before := explorerRequests(srv)
	ctx, last := recording(context.Background())
	page, err := c.ListTransactions(ctx, p)
	if err != nil || explorerRequests(srv)-before != 1 || last().Cached || len(page.Transactions) != 10 {
		t.Fatalf("after an error: %v, %d requests, %+v; want the explorer asked again", err, explorerRequests(srv)-before, last())
	}
	srv.SetFault(EndpointAssets, SampleFault{FailNext: 1})
	if _, err := c.ListAssets(ctx, AssetsParams{}); err == nil {
		t.Fatal("the failing data node answered")
	}
	if _, err := c.ListAssets(ctx, AssetsParams{}); err != nil || last().Cached {
		t.Fatalf("after a data-node error: %v, %+v", err, last())
	}

	const unknown = "00000000000000000000000000000000000000000000000000000000DEADBEEF"
	for i := range 2 {
		before := srv.Requests(EndpointTransaction)
		if _, err := c.GetTransaction(ctx, unknown); !IsNotFound(err) {
			t.Fatalf("lookup %d of an unknown hash: %v", i, err)
		}
		if n := srv.Requests(EndpointTransaction) - before; n != 1 {
			t.Fatalf("lookup %d of an unknown hash: %d requests, want 1 (not found is not kept)", i, n)
		}
	}
	if n := events.count(EndpointTransaction, CacheNone, CacheMiss); n != 2 {
		t.Fatalf("%d misses of kind none counted for the lookups, want 2", n)
	}
	if n := events.count(EndpointTransactions, CacheNone, CacheMiss); n != 1 {
		t.Fatalf("%d misses of kind none counted for the failed page, want 1", n)
	}
}

// The explorer's newest page is served until the head moves: the moment
// the client reads a newer head (the live feed's poll, or ObserveHead from
// the fleet), it is dropped, and the next request has the new block.
func TestTheNewestPageIsDroppedWhenANewBlockArrives(t *testing.T) {
	srv := startSample(t)
	// Only the head moving may drop it here, never its age.
	c, events := cachingClient(t, srv, CacheConfig{HeadTTL: time.Hour})
	newest := TransactionsParams{First: 10}
	ctx, last := recording(context.Background())
	if _, err := c.ListTransactions(ctx, newest); err != nil {
		t.Fatal(err)
	}
	before := explorerRequests(srv)
	if _, err := c.ListTransactions(ctx, newest); err != nil || !last().Cached || last().Kind != CacheUntilNextBlock || explorerRequests(srv) != before {
		t.Fatalf("the newest page again: %v, %+v, %d requests", err, last(), explorerRequests(srv)-before)
	}

	// A new block, seen by the poller.
	added, err := srv.AppendBlock()
	if err != nil {
		t.Fatal(err)
	}
	poll(t, c)
	if n := events.count(EndpointTransactions, CacheUntilNextBlock, CacheInvalidated); n == 0 {
		t.Fatal("no invalidation counted when the poller saw a new block")
	}
	page, err := c.ListTransactions(ctx, newest)
	if err != nil || last().Cached || page.Transactions[0].Hash != added[len(added)-1].Hash {
		t.Fatalf("after the block: %v, %+v, newest %s; want the new block's %s", err, last(), page.Transactions[0].Hash, added[len(added)-1].Hash)
	}

	// A new block, heard of from the fleet (a batch of the replica that
	// polls): ObserveHead, as the live feed calls it.
	added, err = srv.AppendBlock()
	if err != nil {
		t.Fatal(err)
	}
	pos, err := ParseTxCursor(added[len(added)-1].Cursor)
	if err != nil {
		t.Fatal(err)
	}
	c.ObserveHead(pos, false)
	page, err = c.ListTransactions(ctx, newest)
	if err != nil || last().Cached || page.Transactions[0].Hash != added[len(added)-1].Hash {
		t.Fatalf("after the fleet's batch: %v, %+v, newest %s; want the new block's %s", err, last(), page.Transactions[0].Hash, added[len(added)-1].Hash)
	}
	if _, err := c.ListTransactions(ctx, newest); err != nil || !last().Cached {
		t.Fatalf("the new newest page is not served again: %v, %+v", err, last())
	}
}

// Without a poller confirming the head, the newest page is served for
// HeadTTL after it was asked; each poll that finds the same head extends
// that (the page is still the newest then).
func TestTheNewestPageWithoutAPollerLastsHeadTTL(t *testing.T) {
	srv := startSample(t)
	synctest.Test(t, func(t *testing.T) {
		c, _ := cachingClient(t, srv, CacheConfig{HeadTTL: time.Second})
		newest := TransactionsParams{First: 10}
		ctx, last := recording(context.Background())
		get := func() Answer {
			t.Helper()
			if _, err := c.ListTransactions(ctx, newest); err != nil {
				t.Fatal(err)
			}
			return last()
		}
		// lastsHeadTTL checks that the page is served from the cache for
		// HeadTTL after since, and asked again then.
		lastsHeadTTL := func(since string) {
			t.Helper()
			time.Sleep(999 * time.Millisecond)
			if a := get(); !a.Cached {
				t.Fatalf("999ms after %s: %+v, want cached", since, a)
			}
			time.Sleep(time.Millisecond)
			if a := get(); a.Cached {
				t.Fatalf("HeadTTL after %s: %+v, want asked again", since, a)
			}
		}
		get()
		lastsHeadTTL("it was asked")
		// A poll 800ms later finds the same head: the page (asked at 1s)
		// is served until 1.8s + HeadTTL.
		time.Sleep(800 * time.Millisecond)
		poll(t, c)
		lastsHeadTTL("a poll confirmed the head")
	})
}

// A data-node answer is served for at most MaxAge after it was asked,
// with the freshness it came with; then it is fetched again, once for
// every caller waiting.
func TestDataNodeAnswersAreNeverOlderThanMaxAge(t *testing.T) {
	srv := startSample(t)
	synctest.Test(t, func(t *testing.T) {
		c, events := cachingClient(t, srv, CacheConfig{MaxAge: time.Second})
		requests := func() int64 { return srv.Requests(EndpointAssets) }
		ctx, last := recording(context.Background())
		first, err := c.ListAssets(ctx, AssetsParams{})
		if err != nil {
			t.Fatal(err)
		}
		fetched := last()
		if fetched.Kind != CacheRecent || fetched.Cached || first.Freshness.BlockHeight == 0 {
			t.Fatalf("first answer %+v, freshness %+v", fetched, first.Freshness)
		}
		start := requests()
		// The data node moves on: the cached answer still says the block
		// it was true at.
		if _, err := srv.AppendBlock(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(999 * time.Millisecond)
		page, err := c.ListAssets(ctx, AssetsParams{})
		a := last()
		switch {
		case err != nil:
			t.Fatal(err)
		case requests() != start || !a.Cached || a.Kind != CacheRecent:
			t.Fatalf("at 999ms: %d requests, answer %+v; want it from the cache", requests()-start, a)
		case page.Freshness != first.Freshness || a.Freshness != first.Freshness || !a.FetchedAt.Equal(fetched.FetchedAt):
			t.Fatalf("at 999ms: freshness %+v (answer %+v), want the cached answer's own %+v fetched at %v", page.Freshness, a, first.Freshness, fetched.FetchedAt)
		case time.Since(a.FetchedAt) > time.Second:
			t.Fatalf("served %v old", time.Since(a.FetchedAt))
		}

		time.Sleep(time.Millisecond) // MaxAge: fetched again, once for all
		var wg sync.WaitGroup
		pages := make([]*AssetPage, 20)
		for i := range pages {
			wg.Go(func() {
				p, err := c.ListAssets(context.Background(), AssetsParams{})
				if err != nil {
					t.Error(err)
				}
				pages[i] = p
			})
		}
		wg.Wait()
		if n := requests() - start; n != 1 {
			t.Fatalf("%d requests for 20 callers at MaxAge, want 1", n)
		}
		for _, p := range pages {
			if p == nil || p.Freshness.BlockHeight != first.Freshness.BlockHeight+1 {
				t.Fatalf("refreshed answer at block %+v, want %d", p, first.Freshness.BlockHeight+1)
			}
		}
		// A caller that joined the fetch in flight counts a miss; one that
		// arrived after it was answered (the fetch is real network I/O,
		// so the bubble's clock does not order them) counts a hit. Every
		// caller is counted once, and only the first fetch's hits came
		// before.
		misses := events.count(EndpointAssets, CacheRecent, CacheMiss)
		hits := events.count(EndpointAssets, CacheRecent, CacheHit)
		if misses < 2 || misses+hits != 22 {
			t.Fatalf("%d misses and %d hits counted, want 22 in all with at least 2 misses (the first call, the 999ms hit, then each of the 20 callers)", misses, hits)
		}
	})
}

// slowBudget lets every request through after wait, as a spent budget
// does.
type slowBudget struct{ wait time.Duration }

func (b slowBudget) Wait(ctx context.Context) error {
	select {
	case <-time.After(b.wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (slowBudget) Pause(context.Context, time.Duration, bool) {}

// A data-node answer ages from when its request was sent, not from when
// it began to wait for the budget: after a wait of seconds (a spent
// budget) it is still served for MaxAge, instead of arriving too old to
// serve anyone again.
func TestDataNodeAnswersAgeFromTheirRequestNotTheWaitForTheBudget(t *testing.T) {
	srv := startSample(t)
	synctest.Test(t, func(t *testing.T) {
		c, err := New(Config{
			DataNodeURL: srv.URL,
			HTTPClient:  &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
			Retry:       RetryConfig{Retries: -1},
			Budget:      slowBudget{5 * time.Second},
			Cache:       NewCache(CacheConfig{MaxBytes: DefaultCacheBytes, MaxAge: time.Second}),
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListAssets(context.Background(), AssetsParams{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(999 * time.Millisecond)
		ctx, last := recording(context.Background())
		if _, err := c.ListAssets(ctx, AssetsParams{}); err != nil {
			t.Fatal(err)
		}
		if n := srv.Requests(EndpointAssets); n != 1 || !last().Cached {
			t.Fatalf("999ms after an answer that waited 5s for the budget: %d requests, answer %+v; want it from the cache", n, last())
		}
	})
}

// A request that missed the cache just before an identical flight stored
// its answer and ended is served that answer: it sends no request of its
// own.
func TestMissJustBeforeAFlightEndedIsServedItsAnswer(t *testing.T) {
	srv := startSample(t)
	c, _ := cachingClient(t, srv, CacheConfig{MaxAge: time.Minute})
	// Between the first request's miss and its flight, another request
	// fetches the same answer whole (its flight stored and forgotten).
	var done atomic.Bool
	testAfterCacheMiss = func() {
		if done.CompareAndSwap(false, true) {
			if _, err := c.ListAssets(context.Background(), AssetsParams{}); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testAfterCacheMiss = nil })
	ctx, last := recording(context.Background())
	if _, err := c.ListAssets(ctx, AssetsParams{}); err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests(EndpointAssets); n != 1 || !last().Cached {
		t.Fatalf("%d data-node requests, answer %+v; want 1 request, the second served the first's answer", n, last())
	}
}

// MaxAge 0 serves no data-node answer from the cache.
func TestMaxAgeZeroKeepsNoDataNodeAnswer(t *testing.T) {
	srv := startSample(t)
	c, _ := cachingClient(t, srv, CacheConfig{})
	for range 2 {
		if _, err := c.ListAssets(context.Background(), AssetsParams{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Requests(EndpointAssets); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

// The cache stays within its bytes, the least recently used going first.
func TestTheCacheStaysWithinItsBytes(t *testing.T) {
	srv := startSample(t)
	const max = 2 << 20
	c, events := cachingClient(t, srv, CacheConfig{MaxBytes: max})
	rows := poll(t, c)
	var pages []TransactionsParams
	for i := 10; i < 90; i += 10 {
		pos := rows[i].Position()
		pages = append(pages, TransactionsParams{Last: 100, Before: &pos})
	}
	for _, p := range pages {
		if _, err := c.ListTransactions(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if st := c.cache.Stats(); st.Bytes > max {
			t.Fatalf("the cache holds %d bytes, over %d", st.Bytes, max)
		}
	}
	evicted := events.count(EndpointTransactions, CacheImmutable, CacheEvicted) + events.count(EndpointTransactions, CacheUntilNextBlock, CacheEvicted)
	if evicted == 0 || c.cache.Stats().Entries+evicted != len(pages)+1 {
		t.Fatalf("%d evicted, %d entries, for %d pages and the newest: want some evicted, the rest kept", evicted, c.cache.Stats().Entries, len(pages))
	}
	// The oldest page went first: it is asked again; the newest is kept.
	before := explorerRequests(srv)
	ctx, last := recording(context.Background())
	if _, err := c.ListTransactions(ctx, pages[len(pages)-1]); err != nil || !last().Cached {
		t.Fatalf("the last page stored: %v, %+v", err, last())
	}
	if _, err := c.ListTransactions(ctx, pages[0]); err != nil || last().Cached || explorerRequests(srv)-before != 1 {
		t.Fatalf("the first page stored: %v, %+v", err, last())
	}
}

// sharedMap is a shared tier in memory that can be made to fail.
type sharedMap struct {
	mu         sync.Mutex
	values     map[string][]byte
	down       bool
	gets, sets int
}

var errDown = errors.New("the shared store is down")

func (m *sharedMap) Get(_ context.Context, keys []string) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets++
	if m.down {
		return nil, errDown
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = m.values[k]
	}
	return out, nil
}

func (m *sharedMap) Set(_ context.Context, key string, value []byte, _ time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sets++
	if m.down {
		return errDown
	}
	m.values[key] = value
	return nil
}

// A shared tier that fails is skipped: requests are answered from this
// process's cache and the upstream, correctly, without waiting for the
// failing store; one request tries it again after a second, then after
// two while it keeps failing, and its success brings it back.
func TestASharedTierThatFailsIsSkipped(t *testing.T) {
	srv := startSample(t)
	synctest.Test(t, func(t *testing.T) {
		shared := &sharedMap{values: map[string][]byte{}}
		a, _ := cachingClient(t, srv, CacheConfig{MaxAge: time.Hour, Shared: shared})
		b, bEvents := cachingClient(t, srv, CacheConfig{MaxAge: time.Hour, Shared: shared})
		ctx, last := recording(context.Background())
		if _, err := a.ListAssets(ctx, AssetsParams{}); err != nil {
			t.Fatal(err)
		}
		before := srv.Requests(EndpointAssets)
		want, err := b.ListAssets(ctx, AssetsParams{})
		if err != nil || !last().Cached || srv.Requests(EndpointAssets) != before || bEvents.count(EndpointAssets, CacheRecent, CacheSharedHit) != 1 {
			t.Fatalf("b after a: %v, %+v: want a's answer from the shared tier", err, last())
		}

		calls := func() int {
			shared.mu.Lock()
			defer shared.mu.Unlock()
			return shared.gets + shared.sets
		}
		setDown := func(down bool) {
			shared.mu.Lock()
			shared.down = down
			shared.mu.Unlock()
		}
		// Each request below would use the tier: its answer is stored.
		newest := func() {
			t.Helper()
			page, err := b.ListTransactions(WithoutCache(ctx), TransactionsParams{First: 7})
			if err != nil || len(page.Transactions) != 7 {
				t.Fatalf("with the shared tier down: %v", err)
			}
		}
		setDown(true)
		start := calls()
		for range 3 {
			newest()
			got, err := b.ListAssets(ctx, AssetsParams{})
			if err != nil || !last().Cached || !sameAnswer(got, want) {
				t.Fatalf("b's own cache with the shared tier down: %v, %+v", err, last())
			}
		}
		if n := calls() - start; n != 1 {
			t.Fatalf("the failing tier was called %d times, want once, then skipped", n)
		}
		time.Sleep(999 * time.Millisecond)
		if newest(); calls()-start != 1 {
			t.Fatal("the tier was tried again before a second had passed")
		}
		time.Sleep(time.Millisecond)
		if newest(); calls()-start != 2 {
			t.Fatal("the tier was not tried again after a second")
		}
		time.Sleep(1999 * time.Millisecond) // failed again: two seconds now
		if newest(); calls()-start != 2 {
			t.Fatal("the tier was tried again before two seconds had passed")
		}
		setDown(false)
		time.Sleep(time.Millisecond)
		newest()
		newest()
		if n := calls() - start; n != 4 {
			t.Fatalf("the tier, back, was called %d times in all, want 4 (it is used again)", n)
		}
	})
}
