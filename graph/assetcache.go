package graph

import (
	"context"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/tradenet/gateway/upstream"
)

// CachedAsset is an asset with the freshness of the response it came in,
// and its time.
// A nil Asset records that the id does not exist: negative entries are
// cached too, so a dangling reference does not cost a lookup on every
// request. It is JSON-encodable, for caches outside the process.
type CachedAsset struct {
	ID        string             `json:"id"`
	Asset     *upstream.Asset    `json:"asset,omitempty"`
	Freshness upstream.Freshness `json:"freshness"`
	// FetchedAt is when the answer left the data node (zero: unknown), so
	// that a hit is served with its age (HTTP caching: ResponseAnswers).
	FetchedAt time.Time `json:"fetchedAt,omitzero"`
}

// AssetCache is the cache of assets shared by all requests (and, with a
// shared implementation such as redisstate's, by all replicas). Assets
// change rarely. Implementations are safe for concurrent use, bound their
// size or their entries' lifetime, and are best-effort: a cache that
// fails reports misses and drops additions, it never fails a request.
type AssetCache interface {
	// Get returns the entries it holds for ids, by id; an id it does not
	// hold (or no longer holds) is absent from the map.
	Get(ctx context.Context, ids []string) map[string]CachedAsset
	// Add stores entries, replacing older entries of the same ids.
	Add(ctx context.Context, entries ...CachedAsset)
}

// NewAssetCache makes the in-process cache: at most size assets, each
// kept for ttl; size 0 gives a cache that holds nothing.
func NewAssetCache(size int, ttl time.Duration) AssetCache {
	if size <= 0 {
		return noAssetCache{}
	}
	entries, err := lru.New[string, expiringAsset](size)
	if err != nil {
		panic(fmt.Sprintf("asset cache of %d entries: %v", size, err)) // size > 0 cannot fail
	}
	return &memoryAssetCache{lru: entries, ttl: ttl}
}

// memoryAssetCache is an LRU in the process's memory whose entries expire
// ttl after they were added. Expiry is checked when an entry is read
// (an expired one is removed then); the size bounds the entries waiting
// to be read. golang-lru's expirable LRU would purge them on a timer, but
// from a goroutine that nothing stops: one per handler, outliving it.
type memoryAssetCache struct {
	lru *lru.Cache[string, expiringAsset]
	ttl time.Duration
}

// expiringAsset is an entry with the time it stops being served.
type expiringAsset struct {
	CachedAsset
	expires time.Time
}

func (c *memoryAssetCache) Get(_ context.Context, ids []string) map[string]CachedAsset {
	found := make(map[string]CachedAsset, len(ids))
	for _, id := range ids {
		if e, ok := c.get(id); ok {
			found[id] = e
		}
	}
	return found
}

func (c *memoryAssetCache) Add(_ context.Context, entries ...CachedAsset) {
	expires := time.Now().Add(c.ttl)
	for _, e := range entries {
		c.lru.Add(e.ID, expiringAsset{CachedAsset: e, expires: expires})
	}
}

// get returns id's entry while it is fresh, marking it recently used.
func (c *memoryAssetCache) get(id string) (CachedAsset, bool) {
	e, ok := c.lru.Get(id)
	return c.fresh(id, e, ok)
}

// peek is get without marking the entry used.
func (c *memoryAssetCache) peek(id string) (CachedAsset, bool) {
	e, ok := c.lru.Peek(id)
	return c.fresh(id, e, ok)
}

// fresh returns a found entry unless it has expired, which it removes.
func (c *memoryAssetCache) fresh(id string, e expiringAsset, ok bool) (CachedAsset, bool) {
	if !ok {
		return CachedAsset{}, false
	}
	if !time.Now().Before(e.expires) {
		c.lru.Remove(id)
		return CachedAsset{}, false
	}
	return e.CachedAsset, true
}

// noAssetCache holds nothing (ASSET_CACHE_SIZE=0).
type noAssetCache struct{}

func (noAssetCache) Get(context.Context, []string) map[string]CachedAsset { return nil }
func (noAssetCache) Add(context.Context, ...CachedAsset)                  {}

// Hooks observe the loaders and the asset cache, for metrics. A nil field
// is skipped. They are called on the request's path: they must be fast
// and safe for concurrent use.
type Hooks struct {
	// AssetCache is called once per asset batch with the number of ids
	// found in the shared cache and the number missing from it.
	AssetCache func(hits, misses int)
	// LoaderBatch is called with the number of keys of every batch a
	// loader dispatches ("assets" is the only loader today).
	LoaderBatch func(loader string, size int)
	// LoaderPrefetch is called with the number of keys of every batch a
	// list of transactions starts for its page's asset references, before
	// the fields that need them ask (Loaders.loadPage); that batch is also
	// a LoaderBatch.
	LoaderPrefetch func(loader string, size int)
	// Execution is called once per query with the executor chosen, before
	// it starts, to answer it whole: "direct" (fastexec.go) or "gqlgen"
	// (introspection, or the direct executor off).
	Execution func(executor string)
	// DocumentServed is called once per operation that runs a persisted
	// document, with where its text came from: DocumentSourceManifest or
	// DocumentSourceAPQ (a hash alone, found in the APQ cache).
	DocumentServed func(source string)
	// DocumentRefused is called once per document refused, with the
	// reason: RefusedUnknownID, RefusedUntrusted or
	// RefusedAPQRegistration.
	DocumentRefused func(reason string)
}
