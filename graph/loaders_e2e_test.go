package graph_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
)

// loaderCalls records the sizes of the asset batches, and of those a
// list made for its page.
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

// TestPageAssetsAreOneBatch: the asset references a page of transactions
// holds are looked up in one batch its list resolver makes as soon as the
// page is decoded, sent at once (LOADER_WAIT is an hour here), of only
// the reference fields the list selects, @include evaluated; the fields
// then ask for nothing more. Two lists of the same page make one batch:
// the second finds the first's ids in the request's loader.
func TestPageAssetsAreOneBatch(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	ds := sample.Service.Dataset()
	cfg := graph.DefaultLoaderConfig
	cfg.Wait = time.Hour // a batch made through the wait would not answer in time
	cfg.AssetCacheSize = 0
	var calls loaderCalls
	direct := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Loaders: cfg, Hooks: calls.hooks()}})
	gqlgen := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Loaders: cfg, Hooks: calls.hooks(), GqlgenExecutor: true}})

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
	withOn := func(q string) string {
		return strings.Replace(q, "query($types: [String!])", "query($types: [String!], $on: Boolean!)", 1)
	}
	for _, tc := range []struct {
		name  string
		query string
		batch []int // the sizes of the batches made, all of them by the list
	}{
		{"every reference", proposalAssetsQuery, []int{len(all)}},
		{"asset updates only", onlyUpdates, []int{len(updated)}},
		{"included by a variable", withOn(strings.Replace(onlyUpdates, "asset { id status }", "asset @include(if: $on) { id status }", 1)), []int{len(updated)}},
		{"skipped by a variable", withOn(strings.Replace(onlyUpdates, "asset { id status }", "assetId asset @skip(if: $on) { id status }", 1)), nil},
		{"no reference", strings.Replace(onlyUpdates, "asset { id status }", "assetId", 1), nil},
		{"two lists", strings.Replace(onlyUpdates, "{ transactions(", "{ a: transactions(first: 50, cmdTypes: $types) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change { ... on UpdateAsset { asset { id status } } } } } } } } } } b: transactions(", 1), []int{len(updated)}},
	} {
		for _, g := range []struct {
			name string
			gw   *testGateway
		}{{"direct", direct}, {"gqlgen", gqlgen}} {
			t.Run(tc.name+"/"+g.name, func(t *testing.T) {
				calls.take()
				vars := vars
				if strings.Contains(tc.query, "$on") {
					vars = map[string]any{"types": vars["types"], "on": true}
				}
				resp := g.gw.queryWithin(t, tc.query, vars, "the query waited for LOADER_WAIT (an hour)")
				for _, e := range resp.Errors {
					if e.code() != "NOT_FOUND" {
						t.Fatalf("unexpected error %+v", e)
					}
				}
				if len(tc.batch) > 0 && !strings.Contains(string(resp.Data), `"asset":{"id":`) && !strings.Contains(string(resp.Data), `"settlementAsset":{"id":`) {
					t.Fatalf("no asset resolved: %.300s", resp.Data)
				}
				batches, prefetch := calls.take()
				if !slices.Equal(batches, tc.batch) || !slices.Equal(prefetch, tc.batch) {
					t.Fatalf("batches of %v keys, %v of them by the list; want %v by the list", batches, prefetch, tc.batch)
				}
			})
		}
	}
}

// TestPageBatchCostsOneRound: the batch a page of transactions makes for
// its references costs what one round of the loader does (a listing, or
// single lookups for a few ids), sent at once though LOADER_WAIT is an
// hour, and the row fields then cost nothing more.
func TestPageBatchCostsOneRound(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	ds := sample.Service.Dataset()
	cfg := graph.DefaultLoaderConfig
	cfg.Wait = time.Hour
	cfg.AssetCacheSize = 0
	g := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Loaders: cfg}})

	refs := map[string]bool{}
	for _, raw := range proposalPage(ds) {
		assetReferences(raw, refs)
	}
	sample.Service.ResetCounters()
	resp := g.queryWithin(t, proposalAssetsQuery, map[string]any{"types": []string{"Batch Proposal"}},
		"the query waited for LOADER_WAIT (an hour): the page's batch was not sent at once")
	for _, e := range resp.Errors {
		if e.code() != "NOT_FOUND" {
			t.Fatalf("unexpected error %+v", e)
		}
	}
	if resolved := strings.Count(string(resp.Data), `"details":{`); resolved == 0 {
		t.Fatalf("no asset resolved: %.500s", resp.Data)
	}
	got := requests(sample)
	wantAssets := int64(1)
	if len(refs) <= graph.DefaultLoaderConfig.FewAssets {
		wantAssets = int64(len(refs))
	}
	if got[sampleservice.EndpointTransactions] != 1 || got[sampleservice.EndpointAssets] != wantAssets {
		t.Fatalf("upstream requests = %v for %d distinct assets; want 1 explorer request and %d asset requests (one round)", got, len(refs), wantAssets)
	}
}

// TestReferencesOfLookupsAndNestedLists: a single transaction's
// references are one batch its lookup makes, as a page's are (beside a
// list that selects none); a list's under another list make no batch of
// their own and are looked up through the loader's wait, together.
func TestReferencesOfLookupsAndNestedLists(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	ds := sample.Service.Dataset()
	cfg := graph.DefaultLoaderConfig
	cfg.Wait = 25 * time.Millisecond
	cfg.AssetCacheSize = 0
	var calls loaderCalls
	g := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Loaders: cfg, Hooks: calls.hooks()}})
	page := proposalPage(ds)
	refs := map[string]bool{}
	assetReferences(page[0], refs)
	if len(refs) == 0 {
		t.Fatal("the newest batch proposal references no asset")
	}
	var tx struct{ Hash string }
	if err := json.Unmarshal(page[0], &tx); err != nil {
		t.Fatal(err)
	}
	q := `query($h: String!) { transaction(hash: $h) { command { ... on BatchProposalSubmission { terms { changes { change { __typename
      ... on NewMarket { changes { instrument { future { settlementAsset { id status } } perpetual { settlementAsset { id status } } } } }
      ... on NewSpotMarket { changes { instrument { spot { baseAsset { id status } quoteAsset { id status } } } } }
      ... on UpdateAsset { asset { id status } }
      ... on NewTransfer { changes { asset { id status } recurring { dispatchStrategy { assetForMetric { id status } } } } }
    } } } } } }
    transactions(first: 50) { edges { node { hash } } } }`
	resp := g.query(t, q, map[string]any{"h": tx.Hash})
	for _, e := range resp.Errors {
		if e.code() != "NOT_FOUND" {
			t.Fatalf("unexpected error %+v", e)
		}
	}
	if batches, prefetch := calls.take(); !slices.Equal(batches, []int{len(refs)}) || !slices.Equal(prefetch, []int{len(refs)}) {
		t.Fatalf("batches of %v keys, %v of them by a resolver; want [%d], made by the lookup", batches, prefetch, len(refs))
	}

	nested := `{ delegations(first: 2) { edges { node { party { transactions(first: 5, cmdTypes: ["Batch Proposal"]) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change {
      ... on UpdateAsset { asset { id status } }
    } } } } } } } } } } } } }`
	resp = g.query(t, nested, nil)
	for _, e := range resp.Errors {
		if e.code() != "NOT_FOUND" {
			t.Fatalf("unexpected error %+v", e)
		}
	}
	if _, prefetch := calls.take(); prefetch != nil {
		t.Fatalf("lists under a list made batches of %v keys, want none", prefetch)
	}
}

// TestPageBatchCountsCacheHitsOnce: ids the in-process asset cache holds
// are not batched, and the list's look at the cache is no lookup: with a
// warm cache a query counts one hit for each reference it resolves.
func TestPageBatchCountsCacheHitsOnce(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	var mu sync.Mutex
	hits, misses, batched := 0, 0, 0
	hooks := graph.Hooks{
		AssetCache: func(h, m int) {
			mu.Lock()
			defer mu.Unlock()
			hits, misses = hits+h, misses+m
		},
		LoaderPrefetch: func(string, int) {
			mu.Lock()
			defer mu.Unlock()
			batched++
		},
	}
	g := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Hooks: hooks}})
	vars := map[string]any{"types": []string{"Batch Proposal"}}
	count := func() (h, m, p int, resolved int) {
		mu.Lock()
		hits, misses, batched = 0, 0, 0
		mu.Unlock()
		data := string(g.query(t, proposalAssetsQuery, vars).Data)
		mu.Lock()
		defer mu.Unlock()
		// Every asset the query selects selects status or details.
		return hits, misses, batched, strings.Count(data, `"status":`) + strings.Count(data, `"details":`)
	}
	if _, m, p, _ := count(); m == 0 || p != 1 {
		t.Fatalf("cold cache: %d misses, %d batches by the list; want some, and 1", m, p)
	}
	h, m, p, resolved := count()
	if p != 0 || m != 0 {
		t.Fatalf("warm cache: %d batches by the list, %d misses; want none", p, m)
	}
	if resolved == 0 || h != resolved {
		t.Fatalf("warm cache: %d hits for %d references resolved; want one each, not 0", h, resolved)
	}
}
