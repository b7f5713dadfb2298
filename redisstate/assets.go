package redisstate

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/graph"
)

// AssetCache is the asset cache shared by every replica: JSON-encoded
// entries (negative ones included) under one key per asset id, each
// expiring after the TTL. Redis bounds its memory, not this cache: set
// maxmemory with an LRU policy on a Redis dedicated to caching.
type AssetCache struct {
	store *Store
	ttl   time.Duration
}

var _ graph.AssetCache = (*AssetCache)(nil)

// AssetCache returns the shared asset cache, whose entries live for ttl.
func (s *Store) AssetCache(ttl time.Duration) *AssetCache {
	return &AssetCache{store: s, ttl: ttl}
}

// Get reads the entries of ids in one round trip. An undecodable entry
// (written by another version, say) is a miss.
func (c *AssetCache) Get(ctx context.Context, ids []string) map[string]graph.CachedAsset {
	if len(ids) == 0 {
		return nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = c.store.key("asset", id)
	}
	vals, err := c.store.client.MGet(ctx, keys...).Result()
	if err != nil {
		if !errors.Is(err, redis.Nil) {
			c.store.errors.report(ctx, "asset_cache", err)
		}
		return nil
	}
	found := make(map[string]graph.CachedAsset, len(ids))
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue
		}
		var e graph.CachedAsset
		if err := json.Unmarshal([]byte(s), &e); err != nil || e.ID != ids[i] {
			continue
		}
		found[ids[i]] = e
	}
	return found
}

// Add writes entries in one pipelined round trip.
func (c *AssetCache) Add(ctx context.Context, entries ...graph.CachedAsset) {
	if len(entries) == 0 {
		return
	}
	pipe := c.store.client.Pipeline()
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			c.store.errors.report(ctx, "asset_cache", err)
			continue
		}
		pipe.Set(ctx, c.store.key("asset", e.ID), b, c.ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		c.store.errors.report(ctx, "asset_cache", err)
	}
}
