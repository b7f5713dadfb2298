package redisstate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/upstream"
)

// UpstreamCache is the tier of the upstream client's cache that every
// replica shares (upstream.SharedCache): the client's values under
// {prefix}upstream:…, each with the expiry the client gives. It also
// coalesces identical requests across the replicas (Claim,
// upstream.SharedFlights: flights.go).
//
// Redis is not a way in: whoever can write to it must not be able to feed
// answers to the clients of every replica. Each value is stored with an
// HMAC-SHA256, under a key derived from the replicas' shared key
// (LIVE_BATCH_KEY, or CURSOR_KEY's), of its Redis key and its bytes; a
// value no key verifies is a miss (counted in Stats). Redis bounds the
// memory: give it maxmemory with an LRU policy.
type UpstreamCache struct {
	store *Store
	keys  [][]byte // the first signs, all verify
	// unauthentic counts values read that no key verifies.
	unauthentic atomic.Uint64
}

var _ upstream.SharedCache = (*UpstreamCache)(nil)

// upstreamCacheLabel derives the cache's MAC keys from the fleet's batch
// keys: HMAC-SHA256 keyed with each, of this label. A value signed for
// the cache is never a valid live batch, nor the reverse.
const upstreamCacheLabel = "tradenet-gateway upstream cache key v1"

// UpstreamCache returns the shared tier of the upstream cache, signing
// with keys (the replicas' shared key: NewBatchKeys). Without keys the
// replicas cannot verify one another's values: nil is returned, and each
// replica keeps its answers to itself.
func (s *Store) UpstreamCache(keys *BatchKeys) *UpstreamCache {
	if keys == nil || len(keys.keys) == 0 {
		return nil
	}
	c := &UpstreamCache{store: s}
	for _, k := range keys.keys {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(upstreamCacheLabel))
		c.keys = append(c.keys, m.Sum(nil))
	}
	return c
}

// UpstreamCacheStats are the shared tier's own figures.
type UpstreamCacheStats struct {
	// Unauthentic counts values read that no key verified: written by
	// someone without the key, or by a replica with another one.
	Unauthentic uint64
	// Waiting is the requests of this process waiting now for another
	// replica's fetch of the same answer (flights.go).
	Waiting int
}

// Stats returns the tier's figures.
func (c *UpstreamCache) Stats() UpstreamCacheStats {
	st := UpstreamCacheStats{Unauthentic: c.unauthentic.Load()}
	if h := c.store.hub.Load(); h != nil {
		st.Waiting = h.waiting()
	}
	return st
}

// mac is the MAC of value stored under the full Redis key.
func (c *UpstreamCache) mac(key []byte, redisKey string, value []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(redisKey))
	m.Write([]byte{'\n'})
	m.Write(value)
	return m.Sum(nil)
}

// Get reads the values of keys in one round trip; a missing, foreign or
// unverified value is nil.
func (c *UpstreamCache) Get(ctx context.Context, keys []string) ([][]byte, error) {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = c.store.key(k)
	}
	vals, err := c.store.client.MGet(ctx, full...).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		c.store.errors.report(ctx, "upstream_cache", err)
		return nil, err
	}
	out := make([][]byte, len(keys))
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if len(s) < sha256.Size {
			c.unauthentic.Add(1)
			continue
		}
		given, value := []byte(s[:sha256.Size]), []byte(s[sha256.Size:])
		for _, key := range c.keys {
			if hmac.Equal(c.mac(key, full[i], value), given) {
				out[i] = value
				break
			}
		}
		if out[i] == nil {
			c.unauthentic.Add(1)
		}
	}
	return out, nil
}

// Set stores value under key, signed, for ttl.
func (c *UpstreamCache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	full := c.store.key(key)
	signed := make([]byte, 0, sha256.Size+len(value))
	signed = append(signed, c.mac(c.keys[0], full, value)...)
	signed = append(signed, value...)
	if err := c.store.client.Set(ctx, full, signed, ttl).Err(); err != nil {
		c.store.errors.report(ctx, "upstream_cache", err)
		return err
	}
	return nil
}
