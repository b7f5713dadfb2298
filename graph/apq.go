package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// MaxPersistedQueryBytes is the longest query kept as an automatic
// persisted query. gqlgen stores a query with its hash before parsing it,
// so without a bound a client could fill the cache (memory, or Redis) with
// bodies of MAX_BODY_BYTES each. A longer query still runs; it is just not
// kept, and its client sends it in full every time.
const MaxPersistedQueryBytes = 64 << 10

// boundedAPQCache keeps only queries of at most max bytes.
type boundedAPQCache struct {
	graphql.Cache[string]
	max int
}

func (c boundedAPQCache) Add(ctx context.Context, hash, query string) {
	if len(query) <= c.max {
		c.Cache.Add(ctx, hash, query)
	}
}
