package graph

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/upstream"
)

// freshness collects the data node's X-Block-Height and X-Block-Timestamp
// over a request. The response reports the oldest: the whole response is
// at least that fresh.
type freshness struct {
	mu   sync.Mutex
	seen bool
	min  upstream.Freshness
}

func (f *freshness) record(fr upstream.Freshness) {
	if f == nil || fr.BlockHeight == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.seen || fr.BlockHeight < f.min.BlockHeight {
		f.min, f.seen = fr, true
	}
}

// extension is the value of extensions.freshness, or nil when no data-node
// response was seen.
func (f *freshness) extension() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.seen {
		return nil
	}
	ext := map[string]any{"blockHeight": strconv.FormatUint(f.min.BlockHeight, 10)}
	if !f.min.BlockTime.IsZero() {
		ext["blockTime"] = f.min.BlockTime.UTC().Format(time.RFC3339Nano)
	}
	return ext
}

// recordFreshness notes a data-node response's freshness for the request.
func recordFreshness(ctx context.Context, fr upstream.Freshness) {
	if s := stateFor(ctx); s != nil {
		s.fresh.record(fr)
	}
}

// freshnessExtension adds extensions.freshness to every response.
func freshnessExtension(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil {
		return resp
	}
	if s := stateFor(ctx); s != nil {
		if ext := s.fresh.extension(); ext != nil {
			if resp.Extensions == nil {
				resp.Extensions = map[string]any{}
			}
			resp.Extensions["freshness"] = ext
		}
	}
	return resp
}
