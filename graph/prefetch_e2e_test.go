package graph_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
)

// loaderCalls records the sizes of the asset batches and prefetches.
type loaderCalls struct {
	mu                sync.Mutex
	batches, prefetch []int
}

func (c *loaderCalls) hooks() graph.Hooks {
	record := func(to *[]int) func(string, int) {
		return func(_ string, n int) {
			c.mu.Lock()
			defer c.mu.Unlock()
			*to = append(*to, n)
		}
	}
	return graph.Hooks{LoaderBatch: record(&c.batches), LoaderPrefetch: record(&c.prefetch)}
}

func (c *loaderCalls) take() (batches, prefetch []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	batches, prefetch = c.batches, c.prefetch
	c.batches, c.prefetch = nil, nil
	return batches, prefetch
}

// updateAssetReferences collects the ids of a transaction's JSON that
// UpdateAsset.asset resolves (updateAsset.assetId).
func updateAssetReferences(raw []byte, into map[string]bool) {
	eachMemberJSON(raw, func(k string, x any) {
		if u, ok := x.(map[string]any); ok && k == "updateAsset" {
			if id, ok := u["assetId"].(string); ok && id != "" {
				into[id] = true
			}
		}
	})
}

// TestAssetReferencesArePrefetched: under the direct executor, the asset
// references a page of transactions holds are looked up as soon as the
// page is decoded, in the one round the fields would have made (the same
// ids: the fields then ask for nothing more), and only those of the
// reference fields the query selects. A query whose selections carry a
// directive, or that selects no reference, gets no prefetch.
func TestAssetReferencesArePrefetched(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	ds := sample.Service.Dataset()
	cfg := graph.DefaultLoaderConfig
	cfg.Wait = time.Hour // a round the prefetch missed would show as a second batch, not a wait
	cfg.AssetCacheSize = 0
	var calls loaderCalls
	g := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Loaders: cfg, Hooks: calls.hooks()}})

	all, updated := map[string]bool{}, map[string]bool{}
	for _, raw := range proposalPage(ds) {
		assetReferences(raw, all)
		updateAssetReferences(raw, updated)
	}
	if len(updated) == 0 || len(updated) >= len(all) {
		t.Fatalf("the page references %d assets, %d of them by asset updates; the test needs some of each", len(all), len(updated))
	}
	vars := map[string]any{"types": []string{"Batch Proposal"}}
	onlyUpdates := `query($types: [String!]) { transactions(first: 50, cmdTypes: $types) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change {
      ... on UpdateAsset { asset { id status } }
    } } } } } } } } }`
	for _, tc := range []struct {
		name     string
		query    string
		batch    []int // the sizes of the batches made
		prefetch []int // and of those started ahead
	}{
		{"every reference", proposalAssetsQuery, []int{len(all)}, []int{len(all)}},
		{"asset updates only", onlyUpdates, []int{len(updated)}, []int{len(updated)}},
		{"a directive", strings.Replace(onlyUpdates, "asset { id status }", "asset @include(if: true) { id status }", 1), []int{len(updated)}, nil},
		{"no reference", strings.Replace(onlyUpdates, "asset { id status }", "assetId", 1), nil, nil},
		// Two lists would make two rounds where the fields make one.
		{"two lists", strings.Replace(onlyUpdates, "{ transactions(", "{ a: transactions(first: 50, cmdTypes: $types) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change { ... on UpdateAsset { asset { id status } } } } } } } } } } b: transactions(", 1), []int{len(updated)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls.take()
			resp := g.queryWithin(t, tc.query, vars, "the query waited for LOADER_WAIT (an hour)")
			for _, e := range resp.Errors {
				if e.code() != "NOT_FOUND" {
					t.Fatalf("unexpected error %+v", e)
				}
			}
			if len(tc.batch) > 0 && !strings.Contains(string(resp.Data), `"asset":{"id":`) && !strings.Contains(string(resp.Data), `"settlementAsset":{"id":`) {
				t.Fatalf("no asset resolved: %.300s", resp.Data)
			}
			batches, prefetch := calls.take()
			if !slices.Equal(batches, tc.batch) || !slices.Equal(prefetch, tc.prefetch) {
				t.Fatalf("batches of %v keys, prefetched %v; want %v and %v", batches, prefetch, tc.batch, tc.prefetch)
			}
		})
	}
}

// TestPrefetchCountsCacheHitsOnce: ids the in-process asset cache holds
// are not prefetched, and the prefetch's look at the cache is no lookup:
// a query counts the same cache hits with the prefetch as without it.
func TestPrefetchCountsCacheHitsOnce(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	var mu sync.Mutex
	hits, misses, prefetched := 0, 0, 0
	hooks := graph.Hooks{
		AssetCache: func(h, m int) {
			mu.Lock()
			defer mu.Unlock()
			hits, misses = hits+h, misses+m
		},
		LoaderPrefetch: func(string, int) {
			mu.Lock()
			defer mu.Unlock()
			prefetched++
		},
	}
	g := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Hooks: hooks}})
	vars := map[string]any{"types": []string{"Batch Proposal"}}
	withoutPrefetch := strings.Replace(proposalAssetsQuery, "settlementAsset {", "settlementAsset @include(if: true) {", 1)
	count := func(query string) (h, m, p int) {
		mu.Lock()
		hits, misses, prefetched = 0, 0, 0
		mu.Unlock()
		g.query(t, query, vars)
		mu.Lock()
		defer mu.Unlock()
		return hits, misses, prefetched
	}
	if _, m, p := count(proposalAssetsQuery); m == 0 || p != 1 {
		t.Fatalf("cold cache: %d misses, %d prefetches; want some, and 1", m, p)
	}
	hPrefetch, mPrefetch, p := count(proposalAssetsQuery)
	hPlain, mPlain, _ := count(withoutPrefetch)
	if p != 0 || mPrefetch != 0 || mPlain != 0 {
		t.Fatalf("warm cache: %d prefetches, misses %d and %d; want none", p, mPrefetch, mPlain)
	}
	if hPrefetch == 0 || hPrefetch != hPlain {
		t.Fatalf("warm cache: %d hits with the prefetch, %d without; want the same, not 0", hPrefetch, hPlain)
	}
}

// TestGqlgenExecutorBatchesAssetRounds: under gqlgen's executor, which
// cannot tell when a round is complete, the same scheduler makes one round
// of LOADER_WAIT for a page's references (a second of it here: far longer
// than gqlgen takes to reach every row), with nothing prefetched, and the
// same ids as the direct executor.
func TestGqlgenExecutorBatchesAssetRounds(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	all := map[string]bool{}
	for _, raw := range proposalPage(sample.Service.Dataset()) {
		assetReferences(raw, all)
	}
	cfg := graph.DefaultLoaderConfig
	cfg.Wait = time.Second
	cfg.AssetCacheSize = 0
	var calls loaderCalls
	g := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Loaders: cfg, Hooks: calls.hooks(), GqlgenExecutor: true}})
	resp := g.query(t, proposalAssetsQuery, map[string]any{"types": []string{"Batch Proposal"}})
	for _, e := range resp.Errors {
		if e.code() != "NOT_FOUND" {
			t.Fatalf("unexpected error %+v", e)
		}
	}
	if !strings.Contains(string(resp.Data), `"settlementAsset":{"id":`) {
		t.Fatalf("no asset resolved: %.300s", resp.Data)
	}
	if batches, prefetch := calls.take(); !slices.Equal(batches, []int{len(all)}) || prefetch != nil {
		t.Fatalf("batches of %v keys, prefetched %v; want [%d] and none", batches, prefetch, len(all))
	}
}
