package graph

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/tradenet/gateway/upstream"
)

// The in-process asset cache serves an entry for its TTL and no longer,
// keeps at most its size, and starts no goroutine (the expirable LRU it
// replaced started one per cache that nothing stopped).
func TestMemoryAssetCache(t *testing.T) {
	before := goleak.IgnoreCurrent()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := NewAssetCache(2, 30*time.Second).(*memoryAssetCache)
		a := CachedAsset{ID: "a", Asset: &upstream.Asset{ID: "a"}}
		b := CachedAsset{ID: "b"} // an asset known not to exist
		c.Add(ctx, a, b)

		time.Sleep(29 * time.Second)
		got := c.Get(ctx, []string{"a", "b", "c"})
		if len(got) != 2 || got["a"].Asset == nil || got["a"].Asset.ID != "a" || got["b"].Asset != nil {
			t.Fatalf("within the TTL: %+v", got)
		}
		if _, ok := c.peek("a"); !ok {
			t.Fatal("peek within the TTL: missing")
		}

		time.Sleep(time.Second)
		if got := c.Get(ctx, []string{"a", "b"}); len(got) != 0 {
			t.Fatalf("at the TTL: %+v, want nothing", got)
		}
		if n := c.lru.Len(); n != 0 {
			t.Fatalf("expired entries read are removed: %d left", n)
		}

		// Size: the least recently used goes first; peek does not count
		// as a use.
		c.Add(ctx, a)
		c.Add(ctx, b)
		c.peek("a")
		c.get("b")
		c.Add(ctx, CachedAsset{ID: "c"})
		if _, ok := c.get("a"); ok {
			t.Fatal("a, least recently used, was kept over the size")
		}
		if _, ok := c.get("b"); !ok {
			t.Fatal("b, recently used, was evicted")
		}
	})
	if err := goleak.Find(before); err != nil {
		t.Fatalf("the cache left a goroutine: %v", err)
	}
}
