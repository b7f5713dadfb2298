package graph

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/tradenet/gateway/upstream"
)

// LoaderConfig tunes the per-request loaders and the shared asset cache.
type LoaderConfig struct {
	// Wait is how long a loader collects keys before calling the upstream.
	Wait time.Duration
	// FewAssets is the largest batch looked up id by id (concurrently);
	// larger batches list all assets in pages of the data node's maximum,
	// which costs len(assets)/5000 requests however many ids are asked.
	FewAssets int
	// AssetCacheSize bounds the shared asset cache (entries); 0 disables it.
	AssetCacheSize int
	// AssetCacheTTL is how long a cached asset is served.
	AssetCacheTTL time.Duration
}

// DefaultLoaderConfig is the documented default.
var DefaultLoaderConfig = LoaderConfig{Wait: 2 * time.Millisecond, FewAssets: 4, AssetCacheSize: 10000, AssetCacheTTL: 30 * time.Second}

// assetPageSize is the data node's largest page, used to list all assets.
const assetPageSize = 5000

// maxAssetPages bounds a listing of all assets (5000 a page).
const maxAssetPages = 40

// Loaders are the per-request batching loaders, made fresh for every
// request so that their caches never outlive it.
//
// Assets are looked up by a dataloader (graph-gophers/dataloader): one per
// request, whose batch function is assetBatcher.load (the shared cache,
// then single lookups or one listing) and whose cache of thunks answers
// every later ask of an id within the request. Two ways lead into it:
//
//   - Load, for an asset a field asks for on its own (a single
//     transaction's reference, Query.asset): the batch is sent LOADER_WAIT
//     after its first id, as neither executor can tell when no other field
//     will ask;
//   - loadPage, for the references of a page of transactions, which its
//     list resolver knows as soon as the page is decoded: one batch of the
//     page's distinct ids, sent at once (see loadPage), whose thunks the
//     row fields then find in the request's cache.
//
// Where the dataloader does not serve as it is: it has no way to send a
// batch now (no flush), hence a loader per page batch; two loaders
// sharing a cache need a lock of ours (mu); and its thunks take no
// context, so a field cannot stop waiting for its batch on its own: the
// batch's upstream calls run under the context of the request that made
// it, and end with it.
type Loaders struct {
	batcher *assetBatcher
	// batch is the batch function of every asset batch.
	batch dataloader.BatchFunc[string, *upstream.Asset]
	wait  time.Duration

	// mu makes a look in the cache and the thunk set after it one step,
	// whichever loader takes it: without it the request's loader and a
	// page batch could both miss an id and look it up twice (a
	// dataloader locks its own cache, not another's use of it).
	mu     sync.Mutex
	cache  *dataloader.InMemoryCache[string, *upstream.Asset]
	assets *dataloader.Loader[string, *upstream.Asset]
}

// pageBatchBackstop is the wait of a page's batch: it is sent when its
// last id arrives (its capacity is the page's distinct ids), so the wait
// never ends it; it only bounds the batch if an id were ever lost.
const pageBatchBackstop = time.Second

// newLoaders makes one request's loaders.
func newLoaders(up Upstream, cache AssetCache, cfg LoaderConfig, hooks Hooks, fresh *freshness) *Loaders {
	b := &assetBatcher{upstream: up, cache: cache, few: cfg.FewAssets, hooks: hooks, fresh: fresh}
	l := &Loaders{batcher: b, batch: recoverBatch(b.load), wait: cfg.Wait, cache: dataloader.NewCache[string, *upstream.Asset]()}
	// No batch capacity: a batch of more ids costs no more requests (one
	// listing serves any number), so splitting one would only add some.
	l.assets = dataloader.NewBatchedLoader(l.batch,
		dataloader.WithWait[string, *upstream.Asset](cfg.Wait),
		dataloader.WithCache[string, *upstream.Asset](l.cache))
	return l
}

// load resolves one asset id through the request's loader: in a batch
// sent LOADER_WAIT after its first id, or from a batch already made for
// it (a page's).
func (l *Loaders) load(ctx context.Context, id string) (*upstream.Asset, error) {
	// An id asked before (a page's, most often) is the thunk in the cache:
	// read directly, it costs none of the allocations of Load's tracing.
	if thunk, ok := l.cache.Get(ctx, id); ok {
		return thunk()
	}
	l.mu.Lock()
	thunk := l.assets.Load(ctx, id)
	l.mu.Unlock()
	return thunk()
}

// loadPage starts the one batch of a page's asset references, ids, on a
// loader of its own sharing the request's cache: each id not asked yet in
// the request (nor held by the in-process cache, which answers without a
// batch) gets a thunk in the request's cache that waits for the page's
// batch, so that the row fields asking for them wait for it too. It
// returns without waiting: the lookups overlap with writing the page.
//
// The page's loader is built with a batch capacity of the page's distinct
// ids, so that the batch is sent as soon as LoadMany has queued the last
// of them, without the wait; the request's loader, whose capacity is
// fixed when it is made, cannot send a batch of a size known only now.
// A loader of its own costs a few allocations a page, and LoadMany a
// goroutine an id until the batch returns.
//
// Measured on the sample service 20 ms away (a page of 50 batch proposals
// whose references take one listing, the shared cache off, one query at a
// time, p50 of 60 on a shared 2-core machine): under the direct executor
// 45.6 ms and 47.4 ms in two runs (45.3 and 45.7 ms when its counted
// rounds and prefetch made the round), 48.7 ms when this batch waits
// LOADER_WAIT instead of its capacity; under gqlgen's executor 47.4 ms
// (52.2 ms when its timed rounds, which split a page's references into
// 1.17 listings a page, made them). Of these, 40 ms are the two round
// trips.
//
// A batch no field waits for (the request ended first) ends with its
// upstream calls, which the request's context bounds.
func (l *Loaders) loadPage(ctx context.Context, ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fresh := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, ok := l.cache.Get(ctx, id); ok || l.inLocalCache(id) {
			continue
		}
		fresh = append(fresh, id)
	}
	if len(fresh) == 0 {
		return
	}
	if h := l.batcher.hooks.LoaderPrefetch; h != nil {
		h("assets", len(fresh))
	}
	page := dataloader.NewBatchedLoader(l.batch,
		dataloader.WithBatchCapacity[string, *upstream.Asset](len(fresh)),
		dataloader.WithInputCapacity[string, *upstream.Asset](len(fresh)), // not the default 1000 a batch
		dataloader.WithWait[string, *upstream.Asset](pageBatchBackstop))
	many := page.LoadMany(ctx, fresh)
	for i, id := range fresh {
		l.cache.Set(ctx, id, func() (*upstream.Asset, error) {
			assets, errs := many()
			if errs != nil {
				return assets[i], errs[i]
			}
			return assets[i], nil
		})
	}
}

// inLocalCache reports whether cachedLocally would serve id, without
// counting a lookup or recording freshness (a page's batch asks first).
func (l *Loaders) inLocalCache(id string) bool {
	local, ok := l.batcher.cache.(*memoryAssetCache)
	if !ok {
		return false
	}
	_, ok = local.peek(id)
	return ok
}

// cachedLocally serves an asset from an in-process cache without waiting
// for a batch: waiting to batch only pays when the lookup costs a round
// trip (the upstream, or a shared cache such as Redis).
func (l *Loaders) cachedLocally(ctx context.Context, id string) (*upstream.Asset, error, bool) {
	local, ok := l.batcher.cache.(*memoryAssetCache)
	if !ok {
		return nil, nil, false
	}
	hit, ok := local.get(id)
	if !ok {
		return nil, nil, false
	}
	if h := l.batcher.hooks.AssetCache; h != nil {
		h(1, 0)
	}
	l.batcher.fresh.record(hit.Freshness)
	recordCacheHit(ctx, hit)
	if hit.Asset == nil {
		return nil, notFound("no asset has id %q", id), true
	}
	return hit.Asset, nil, true
}

// recordCacheHit reports an asset served from the shared cache to ctx's
// recorder, as the client reports the answers it returns: a data-node
// answer, true at the block it names (CacheRecent), as old as the entry.
func recordCacheHit(ctx context.Context, hit CachedAsset) {
	upstream.RecordAnswer(ctx, upstream.Answer{
		Service:   upstream.ServiceDataNode,
		Endpoint:  upstream.EndpointAssets,
		Freshness: hit.Freshness,
		Kind:      upstream.CacheRecent,
		FetchedAt: hit.FetchedAt,
		Cached:    true,
	})
}

// answeredAt runs call under ctx, passing on to ctx's recorder every
// answer it returns, and reports when the oldest of them left the
// upstream, the age of what the shared cache keeps of them: zero when one
// of them did not say; now when none was reported (an answer shared with
// a call made moments before: the request's memo, a subscription event's
// sharing).
func answeredAt(ctx context.Context, call func(ctx context.Context)) time.Time {
	var (
		mu      sync.Mutex
		at      time.Time
		undated bool
	)
	call(upstream.WithAnswers(ctx, func(a upstream.Answer) {
		mu.Lock()
		switch {
		case a.FetchedAt.IsZero():
			undated = true
		case at.IsZero() || a.FetchedAt.Before(at):
			at = a.FetchedAt
		}
		mu.Unlock()
		upstream.RecordAnswer(ctx, a)
	}))
	switch {
	case undated:
		return time.Time{}
	case at.IsZero():
		return time.Now()
	}
	return at
}

// assetBatcher resolves a batch of asset ids: from the shared cache, then
// by single lookups for a few ids, or one listing for many.
type assetBatcher struct {
	upstream Upstream
	cache    AssetCache
	few      int
	hooks    Hooks
	fresh    *freshness
}

// load is the batch function: exactly one result per id, in order.
func (b *assetBatcher) load(ctx context.Context, ids []string) []*dataloader.Result[*upstream.Asset] {
	results := make([]*dataloader.Result[*upstream.Asset], len(ids))
	if b.hooks.LoaderBatch != nil {
		b.hooks.LoaderBatch("assets", len(ids))
	}
	cached := b.cache.Get(ctx, ids)
	var missing []int
	for i, id := range ids {
		if hit, ok := cached[id]; ok {
			b.fresh.record(hit.Freshness)
			recordCacheHit(ctx, hit)
			if hit.Asset == nil {
				results[i] = &dataloader.Result[*upstream.Asset]{Error: notFound("no asset has id %q", id)}
			} else {
				results[i] = &dataloader.Result[*upstream.Asset]{Data: hit.Asset}
			}
			continue
		}
		missing = append(missing, i)
	}
	if b.hooks.AssetCache != nil {
		b.hooks.AssetCache(len(ids)-len(missing), len(missing))
	}
	if len(missing) == 0 {
		return results
	}
	if len(missing) <= b.few {
		b.lookupEach(ctx, ids, missing, results)
	} else {
		b.listAll(ctx, ids, missing, results)
	}
	return results
}

// lookupEach looks the missing ids up one by one, concurrently.
func (b *assetBatcher) lookupEach(ctx context.Context, ids []string, missing []int, results []*dataloader.Result[*upstream.Asset]) {
	var wg sync.WaitGroup
	for _, i := range missing {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A panic on this goroutine would end the process: it becomes
			// this id's error.
			defer func() {
				if p := recover(); p != nil {
					results[i] = &dataloader.Result[*upstream.Asset]{Error: panicError(ctx, "asset lookup", p)}
				}
			}()
			var (
				asset *upstream.Asset
				fresh *upstream.Freshness
				err   error
			)
			at := answeredAt(ctx, func(ctx context.Context) { asset, fresh, err = b.upstream.GetAsset(ctx, ids[i]) })
			switch {
			case upstream.IsNotFound(err):
				b.cache.Add(ctx, CachedAsset{ID: ids[i], FetchedAt: time.Now()})
				results[i] = &dataloader.Result[*upstream.Asset]{Error: notFound("no asset has id %q", ids[i])}
			case err != nil:
				results[i] = &dataloader.Result[*upstream.Asset]{Error: fmt.Errorf("look up asset %s: %w", ids[i], err)}
			default:
				entry := CachedAsset{ID: asset.ID, Asset: asset, FetchedAt: at}
				if fresh != nil {
					entry.Freshness = *fresh
				}
				b.cache.Add(ctx, entry)
				b.fresh.record(entry.Freshness)
				results[i] = &dataloader.Result[*upstream.Asset]{Data: asset}
			}
		}()
	}
	wg.Wait()
}

// listAll lists every asset and picks the missing ids; every asset listed
// goes into the shared cache.
func (b *assetBatcher) listAll(ctx context.Context, ids []string, missing []int, results []*dataloader.Result[*upstream.Asset]) {
	byID, err := b.listAssets(ctx)
	var absent []CachedAsset
	for _, i := range missing {
		switch a, ok := byID[ids[i]]; {
		case ok:
			results[i] = &dataloader.Result[*upstream.Asset]{Data: a}
		case err != nil:
			results[i] = &dataloader.Result[*upstream.Asset]{Error: err}
		default:
			absent = append(absent, CachedAsset{ID: ids[i], FetchedAt: time.Now()})
			results[i] = &dataloader.Result[*upstream.Asset]{Error: notFound("no asset has id %q", ids[i])}
		}
	}
	if len(absent) > 0 {
		b.cache.Add(ctx, absent...)
	}
}

func (b *assetBatcher) listAssets(ctx context.Context) (map[string]*upstream.Asset, error) {
	byID := map[string]*upstream.Asset{}
	size := int32(assetPageSize)
	p := upstream.Pagination{First: &size}
	for range maxAssetPages {
		var (
			pg  *upstream.AssetPage
			err error
		)
		at := answeredAt(ctx, func(ctx context.Context) { pg, err = b.upstream.ListAssets(ctx, upstream.AssetsParams{Pagination: p}) })
		if err != nil {
			return byID, fmt.Errorf("list assets: %w", err)
		}
		b.fresh.record(pg.Freshness)
		entries := make([]CachedAsset, 0, len(pg.Edges))
		for i := range pg.Edges {
			a := &pg.Edges[i].Node
			byID[a.ID] = a
			entries = append(entries, CachedAsset{ID: a.ID, Asset: a, Freshness: pg.Freshness, FetchedAt: at})
		}
		b.cache.Add(ctx, entries...)
		if !pg.PageInfo.HasNextPage || pg.PageInfo.EndCursor == "" {
			return byID, nil
		}
		p.After = pg.PageInfo.EndCursor
	}
	return byID, fmt.Errorf("list assets: more than %d pages", maxAssetPages)
}

// requestState is what one GraphQL request carries in its context.
type requestState struct {
	loaders  *Loaders
	fresh    *freshness
	upstream *requestUpstream
	// answers records the upstream answers the request's response is made
	// of, for its HTTP caching (answers.go).
	answers *answerLog
}

// withRequestState returns ctx carrying s, and s's answer log as the
// recorder of the upstream answers returned under it.
func withRequestState(ctx context.Context, s *requestState) context.Context {
	ctx = withValue(ctx, s)
	if s != nil && s.answers != nil {
		ctx = upstream.WithAnswers(ctx, s.answers.record)
	}
	return ctx
}

func stateFor(ctx context.Context) *requestState {
	return valueOf[requestState](ctx)
}

// lookupAsset looks an asset up through the request's loader: an unknown
// id is a NOT_FOUND error. An empty id (unset upstream) is null without an
// error. References go through loadAsset (references.go).
func lookupAsset(ctx context.Context, id string) (*upstream.Asset, error) {
	if id == "" {
		return nil, nil
	}
	s := stateFor(ctx)
	if s == nil {
		return nil, &Error{Code: CodeInternal, Message: "internal error", Err: fmt.Errorf("no loaders in the request context")}
	}
	if a, err, ok := s.loaders.cachedLocally(ctx, id); ok {
		return a, err
	}
	return s.loaders.load(ctx, id)
}

// batchPageAssets starts the one batch of the asset references a page of
// transactions holds (loadPage), of the reference fields its list selects
// (batchedRefs), as its resolver decodes it.
func batchPageAssets(ctx context.Context, rows []upstream.Transaction) {
	s := stateFor(ctx)
	if s == nil || s.loaders == nil || len(rows) == 0 {
		return
	}
	refs := batchedRefs(ctx)
	if refs == 0 {
		return
	}
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for i := range rows {
		assetRefsOf(reflect.ValueOf(&rows[i]), refs, add)
		// The command is decoded as far as the operation reads it
		// (commanduse.go), which the walk does not see into: its member,
		// decoded where the operation reads its fields, is walked here.
		if member, err := rows[i].CommandMember(); err == nil {
			assetRefsOf(reflect.ValueOf(member), refs, add)
		}
	}
	s.loaders.loadPage(ctx, ids)
}

// isNotFound reports a NOT_FOUND error.
func isNotFound(err error) bool {
	code, _, _ := classify(err)
	return code == CodeNotFound
}
