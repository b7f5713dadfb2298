package redisstate

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// APQTTL is how long a persisted query stays in Redis after it was last
// registered or used.
const APQTTL = 24 * time.Hour

// APQCache stores automatic persisted queries by hash, for every replica:
// a query registered through one is served by hash from any other. It
// satisfies gqlgen's graphql.Cache[string].
type APQCache struct {
	store *Store
}

// APQ returns the persisted-query cache.
func (s *Store) APQ() *APQCache { return &APQCache{store: s} }

// Get returns the query registered under hash. A Redis failure is a miss:
// the client then sends the full query again.
func (c *APQCache) Get(ctx context.Context, hash string) (string, bool) {
	q, err := c.store.client.GetEx(ctx, c.store.key("apq", hash), APQTTL).Result()
	if err != nil {
		if !errors.Is(err, redis.Nil) {
			c.store.errors.report(ctx, "apq", err)
		}
		return "", false
	}
	return q, true
}

// Add registers query under hash (the gateway has checked that hash is
// the query's SHA-256, and that the query is a valid operation within
// the limits: graph/apq.go).
func (c *APQCache) Add(ctx context.Context, hash, query string) {
	if err := c.store.client.Set(ctx, c.store.key("apq", hash), query, APQTTL).Err(); err != nil {
		c.store.errors.report(ctx, "apq", err)
	}
}
