package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
)

// requests reads the sample service's request counters.
func requests(s *sampleservice.Server) map[sampleservice.Endpoint]int64 {
	out := map[sampleservice.Endpoint]int64{}
	for _, e := range []sampleservice.Endpoint{sampleservice.EndpointAssets, sampleservice.EndpointFundingPayments, sampleservice.EndpointDelegations, sampleservice.EndpointTransactions} {
		out[e] = s.Service.Requests(e)
	}
	return out
}

// batchingGateway is a gateway whose loaders wait long enough that a busy
// test machine cannot split one round into two.
func batchingGateway(t *testing.T, sample *sampleservice.Server) *testGateway {
	t.Helper()
	cfg := graph.DefaultLoaderConfig
	cfg.Wait = 25 * time.Millisecond
	return newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Loaders: cfg}})
}

const proposalAssetsQuery = `query($types: [String!]) {
  transactions(first: 50, cmdTypes: $types) {
    edges { node { block command { __typename ... on BatchProposalSubmission { terms { changes { change {
      __typename
      ... on NewMarket { changes { instrument { future { settlementAsset { id details { symbol decimals } } } perpetual { settlementAsset { id details { symbol } } } } } }
      ... on NewSpotMarket { changes { instrument { spot { baseAsset { id status } quoteAsset { id status } } } } }
      ... on UpdateAsset { assetId asset { id details { name } } }
      ... on NewTransfer { changes { asset { id status } recurring { dispatchStrategy { assetForMetric { id status } } } } }
    } } } } } } }
  }
}`

// assetReferences collects the asset ids a transaction's JSON references.
func assetReferences(raw []byte, into map[string]bool) {
	eachMemberJSON(raw, func(k string, x any) {
		switch k {
		case "settlementAsset", "baseAsset", "quoteAsset", "assetId", "asset", "assetForMetric":
			if id, ok := x.(string); ok && id != "" {
				into[id] = true
			}
		}
	})
}

// proposalPage returns the JSON of the dataset's newest 50 Batch Proposal
// transactions: the page proposalAssetsQuery reads.
func proposalPage(ds *sampleservice.Dataset) [][]byte {
	var page [][]byte
	for i := ds.Transactions.Len() - 1; i >= 0 && len(page) < 50; i-- {
		if ds.Transactions.Meta(i).Type == "Batch Proposal" {
			page = append(page, ds.Transactions.AppendJSON(nil, i))
		}
	}
	return page
}

// queryWithin runs a query that must answer within two minutes: far less
// than the hour of LOADER_WAIT the tests that use it set, so that a query
// left waiting for it fails the test, with why.
func (g *testGateway) queryWithin(t *testing.T, query string, vars map[string]any, why string) gqlResponse {
	t.Helper()
	done := make(chan gqlResponse, 1)
	go func() { done <- g.query(t, query, vars) }()
	select {
	case resp := <-done:
		return resp
	case <-time.After(2 * time.Minute):
		t.Fatal(why)
		return gqlResponse{}
	}
}

// eachMemberJSON calls visit with every member of every object in the
// JSON document raw, at any depth.
func eachMemberJSON(raw []byte, visit func(key string, value any)) {
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				visit(k, x)
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	walk(v)
}

func TestReferencesCostOneAssetRound(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := batchingGateway(t, sample)
	ds := sample.Service.Dataset()

	// The assets the first page of 50 batch proposals references.
	refs := map[string]bool{}
	for _, raw := range proposalPage(ds) {
		assetReferences(raw, refs)
	}
	if len(refs) < 3 {
		t.Fatalf("the page references only %d assets; the test needs several", len(refs))
	}
	sample.Service.ResetCounters()
	resp := g.query(t, proposalAssetsQuery, map[string]any{"types": []string{"Batch Proposal"}})
	for _, e := range resp.Errors {
		if e.code() != "NOT_FOUND" {
			t.Fatalf("unexpected error %+v", e)
		}
	}
	got := requests(sample)
	wantAssets := int64(1) // one listing of all assets
	if len(refs) <= graph.DefaultLoaderConfig.FewAssets {
		wantAssets = int64(len(refs)) // one round of single lookups
	}
	if got[sampleservice.EndpointTransactions] != 1 || got[sampleservice.EndpointAssets] != wantAssets {
		t.Fatalf("upstream requests = %v for %d distinct assets; want 1 explorer request and %d asset requests", got, len(refs), wantAssets)
	}

	t.Run("a second query within the cache's lifetime costs no asset request", func(t *testing.T) {
		sample.Service.ResetCounters()
		g.query(t, proposalAssetsQuery, map[string]any{"types": []string{"Batch Proposal"}})
		if got := requests(sample); got[sampleservice.EndpointAssets] != 0 {
			t.Fatalf("upstream requests = %v, want no asset request", got)
		}
	})
}

func TestFewReferencesAreLookedUpOneByOne(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := batchingGateway(t, sample)
	ds := sample.Service.Dataset()
	ids := []string{ds.Assets[0].ID, ds.Assets[1].ID, ds.Assets[2].ID}
	var q strings.Builder
	q.WriteString("{")
	for i, id := range ids {
		for copy := range 2 { // the same asset twice: one lookup
			fmt.Fprintf(&q, " a%d_%d: asset(id: %q) { id details { symbol } }", i, copy, id)
		}
	}
	q.WriteString(" }")
	sample.Service.ResetCounters()
	var data map[string]struct{ ID string }
	g.query(t, q.String(), nil).mustData(t, &data)
	if len(data) != 6 || data["a2_1"].ID != ids[2] {
		t.Fatalf("data = %v", data)
	}
	if got := requests(sample); got[sampleservice.EndpointAssets] != 3 {
		t.Fatalf("upstream requests = %v, want 3 asset lookups for 3 distinct ids", got)
	}
}

func TestPartyAndNodeReferencesCostNothing(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	sample.Service.ResetCounters()
	var data struct {
		Delegations struct {
			Edges []struct {
				Node struct {
					NodeID string
					Party  struct{ ID string }
					Node   struct{ ID string }
				}
			}
		}
	}
	g.query(t, `{ delegations(first: 200) { edges { node { nodeId party { id } node { id } } } } }`, nil).mustData(t, &data)
	if len(data.Delegations.Edges) != 200 {
		t.Fatalf("%d delegations", len(data.Delegations.Edges))
	}
	for _, e := range data.Delegations.Edges {
		if e.Node.Node.ID != e.Node.NodeID || len(e.Node.Party.ID) != 64 {
			t.Fatalf("references not resolved: %+v", e.Node)
		}
	}
	if got := requests(sample); got[sampleservice.EndpointDelegations] != 1 || got[sampleservice.EndpointAssets]+got[sampleservice.EndpointFundingPayments]+got[sampleservice.EndpointTransactions] != 0 {
		t.Fatalf("upstream requests = %v, want one delegations request only", got)
	}
}

func TestConcurrentIdenticalQueriesShareUpstreamCalls(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	// Slow answers keep every call in flight while the others arrive.
	for _, e := range []sampleservice.Endpoint{sampleservice.EndpointAssets, sampleservice.EndpointTransactions, sampleservice.EndpointDelegations} {
		sample.Service.SetFault(e, sampleservice.Fault{Latency: time.Second})
	}
	sample.Service.ResetCounters()
	const q = `{ assets(first: 5) { edges { node { id } } } transactions(first: 10) { edges { node { hash } } } delegations(first: 3) { edges { node { amount } } } }`
	var wg sync.WaitGroup
	bodies := make([]string, 100)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := g.query(t, q, nil)
			if len(resp.Errors) > 0 {
				t.Errorf("query %d: %+v", i, resp.Errors)
			}
			bodies[i] = string(resp.Data)
		}()
	}
	wg.Wait()
	got := requests(sample)
	// Transactions: one request for the page (one extra row included).
	if got[sampleservice.EndpointAssets] != 1 || got[sampleservice.EndpointTransactions] != 1 || got[sampleservice.EndpointDelegations] != 1 {
		t.Fatalf("upstream requests for 100 identical queries = %v, want one per distinct call", got)
	}
	for i := range bodies {
		if bodies[i] != bodies[0] {
			t.Fatalf("query %d got other data", i)
		}
	}
}

func TestMissingReferenceIsNullWithNotFound(t *testing.T) {
	g := batchingGateway(t, nil)
	ds := g.Sample.Service.Dataset()
	pos, ok := ds.Notable["asset.dangling"]
	if !ok {
		t.Fatal("the dataset has no dangling asset reference")
	}
	resp := g.query(t, `query($c: String) { transactions(last: 1, before: $c) { edges { node { block command { ... on BatchProposalSubmission { terms { changes { change {
		... on UpdateAsset { assetId asset { id status } }
		... on NewMarket { changes { instrument { code future { quoteName settlementAsset { id status } } } } }
	} } } } } } } } }`, map[string]any{"c": cursorBefore(ds, pos)})
	if len(resp.Errors) == 0 {
		t.Fatal("no error for a dangling reference")
	}
	// The reference is the asset with its id; its status is null with
	// NOT_FOUND there.
	for _, e := range resp.Errors {
		ref, last := e.Path[len(e.Path)-2], e.Path[len(e.Path)-1]
		if e.code() != "NOT_FOUND" || (ref != "asset" && ref != "settlementAsset") || last != "status" || !strings.Contains(e.Message, "no asset has id") {
			t.Fatalf("error %+v, want NOT_FOUND at the reference's status", e)
		}
	}
	if !strings.Contains(string(resp.Data), `"asset":{"id":"`) {
		t.Fatalf("the dangling reference lost its id: %s", resp.Data)
	}
	var data struct {
		Transactions struct {
			Edges []struct{ Node struct{ Block string } }
		}
	}
	_ = json.Unmarshal(resp.Data, &data)
	if len(data.Transactions.Edges) != 1 || data.Transactions.Edges[0].Node.Block == "" {
		t.Fatalf("the rest of the response is gone: %s", resp.Data)
	}
}

// cursorBefore is the cursor whose backward page of one is the
// transaction at pos.
func cursorBefore(ds *sampleservice.Dataset, pos int) any {
	if pos == 0 {
		return nil
	}
	m := ds.Transactions.Meta(pos - 1)
	return graph.TxCursorAt(m.Block, m.Index)
}

func TestFailingBatchFailsOnlyItsFields(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := batchingGateway(t, sample)
	sample.Service.SetFault(sampleservice.EndpointAssets, sampleservice.Fault{ErrorRate: 1})
	resp := g.query(t, proposalAssetsQuery, map[string]any{"types": []string{"Batch Proposal"}})
	if len(resp.Errors) == 0 {
		t.Fatal("no errors while every asset request fails")
	}
	for _, e := range resp.Errors {
		last := fmt.Sprint(e.Path[len(e.Path)-1])
		if e.code() != "UPSTREAM_ERROR" || !slices.Contains([]string{"settlementAsset", "baseAsset", "quoteAsset", "asset", "assetForMetric"}, last) {
			t.Fatalf("error %+v, want UPSTREAM_ERROR at an asset reference", e)
		}
	}
	var data struct {
		Transactions struct {
			Edges []struct{ Node struct{ Block string } }
		}
	}
	_ = json.Unmarshal(resp.Data, &data)
	if len(data.Transactions.Edges) != 50 {
		t.Fatalf("%d transactions survived, want the whole page of 50", len(data.Transactions.Edges))
	}
}

func TestFreshnessReachesTheClient(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{})
	ds := g.Sample.Service.Dataset()
	resp := g.query(t, `{ assets(first: 1) { edges { node { id } } } }`, nil)
	fresh, _ := resp.Extensions["freshness"].(map[string]any)
	want := time.Unix(0, ds.BlockTime).UTC().Format(time.RFC3339Nano)
	if fresh["blockHeight"] != fmt.Sprint(ds.BlockHeight) || fresh["blockTime"] != want {
		t.Fatalf("extensions.freshness = %v, want height %d time %s", fresh, ds.BlockHeight, want)
	}
}

func TestNestedConnectionsAreBoundedAndShared(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	party := sample.Service.Dataset().Parties[0]
	resp := g.query(t, `query($p: ID!) { fundingPayments(partyId: $p, first: 5) { edges { node { party { delegations(first: 500) { edges { cursor } } } } } } }`, map[string]any{"p": party})
	if len(resp.Errors) == 0 || resp.Errors[0].code() != "BAD_USER_INPUT" || resp.Errors[0].Message != "first must be at most 100 (got 500) in a connection nested under a list; page through larger lists" {
		t.Fatalf("errors = %+v", resp.Errors)
	}
	// The same party on every row: its delegations are fetched once.
	sample.Service.ResetCounters()
	var data struct {
		FundingPayments struct {
			Edges []struct {
				Node struct {
					Party struct {
						Delegations struct{ Edges []struct{ Cursor string } }
					}
				}
			}
		}
	}
	g.query(t, `query($p: ID!) { fundingPayments(partyId: $p, first: 50) { edges { node { party { delegations(first: 5) { edges { cursor } } } } } } }`, map[string]any{"p": party}).mustData(t, &data)
	if len(data.FundingPayments.Edges) != 50 {
		t.Fatalf("%d rows", len(data.FundingPayments.Edges))
	}
	if got := requests(sample); got[sampleservice.EndpointDelegations] != 1 || got[sampleservice.EndpointFundingPayments] != 1 {
		t.Fatalf("upstream requests = %v, want one funding and one delegations request", got)
	}
	// At the root, a party's connection keeps the ordinary maximum.
	resp = g.query(t, `query($p: ID!) { party(id: $p) { delegations(first: 500) { edges { cursor } } } }`, map[string]any{"p": party})
	if len(resp.Errors) != 0 {
		t.Fatalf("errors = %+v", resp.Errors)
	}
}
