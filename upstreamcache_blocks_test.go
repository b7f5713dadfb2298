package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/sampleservice"
)

// A party's page (an explorer list filtered by submitter) survives a
// block that holds none of the party's transactions: the gateway's live
// feed, polling with no subscriber while the cache is on, tells the cache
// every transaction of the block, and the pages of the parties it does
// not touch are served again without an explorer request, equal to what
// the explorer answers. A party the block touches has its page fetched
// again, with the new transaction.
func TestAPartysPageIsServedFromTheCacheAfterABlockWithoutIt(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	g := startOpsGateway(t, u.args("-cursor-key", cursorKeyA, "-upstream-cache-head-ttl", "1m", "-live-poll-interval", "50ms")...)
	ref := startOpsGateway(t, u.args("-cursor-key", cursorKeyA, "-upstream-cache-bytes", "0")...)
	const partyQuery = `query Party($id: ID!) { party(id: $id) { transactions(first: 10) { edges { cursor node { hash block type } } } } }`
	page := func(base, id string) []any {
		t.Helper()
		r := postGraphQL(t, base, query(partyQuery, map[string]any{"id": id}), nil)
		if len(r.Errors) > 0 {
			t.Fatalf("Party %s: %+v", id, r.Errors)
		}
		return r.Data["party"].(map[string]any)["transactions"].(map[string]any)["edges"].([]any)
	}
	// The feed polls with no subscriber: it has read the head.
	awaitHeadRead(t, g.URL)
	delivered := func() float64 { return sumMetric(scrape(t, g.URL), "gateway_live_delivered_block", nil) }
	deadline := time.Now().Add(10 * time.Second)
	parties := u.Sample.Dataset().Parties
	for _, id := range parties {
		page(g.URL, id)
	}
	added, err := u.Sample.AppendBlockOf(6)
	if err != nil {
		t.Fatal(err)
	}
	touched := map[string]string{} // party: its newest transaction of the block
	for _, tx := range added {
		touched[strings.ToLower(tx.Submitter)] = tx.Hash
	}
	for delivered() < float64(added[0].Block) {
		if time.Now().After(deadline) {
			t.Fatal("the live feed did not see the new block within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Counted by the gateway's cache (the poller's own requests, which
	// never read the cache, are not among them).
	misses := func() float64 {
		return sumMetric(scrape(t, g.URL), "gateway_upstream_cache_misses_total", map[string]string{"endpoint": "transactions"})
	}
	kept := 0
	for _, id := range parties {
		before := misses()
		got := page(g.URL, id)
		requests := misses() - before
		if want := page(ref.URL, id); !reflect.DeepEqual(got, want) {
			t.Fatalf("party %s after the block: the gateway's page differs from the explorer's", id)
		}
		hash, ok := touched[id]
		switch {
		case ok && (requests != 1 || edgeHash(got[0]) != hash):
			t.Fatalf("party %s, in the block: %v explorer requests, newest %s; want 1 and its new transaction %s", id, requests, edgeHash(got[0]), hash)
		case !ok && requests != 0:
			t.Fatalf("party %s, not in the block: %v explorer requests, want its page from the cache", id, requests)
		case !ok:
			kept++
		}
	}
	if kept == 0 || len(touched) == 0 {
		t.Fatalf("%d parties kept, %d in the block: the test needs both", kept, len(touched))
	}
	if n := sumMetric(scrape(t, g.URL), "gateway_upstream_cache_kept_total", map[string]string{"endpoint": "transactions"}); n < float64(kept) {
		t.Fatalf("gateway_upstream_cache_kept_total %v, want at least the %d pages kept", n, kept)
	}
	// The newest page follows the block.
	if got := edgeHash(newestEdges(t, g.URL)[0]); got != added[len(added)-1].Hash {
		t.Fatalf("the newest page starts at %s, want the block's %s", got, added[len(added)-1].Hash)
	}
}

// awaitHeadRead waits until the gateway at base has read the explorer's
// head: with the upstream cache on, its live feed does so at the start,
// subscribers or not.
func awaitHeadRead(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for sumMetric(scrape(t, base), "gateway_live_delivered_block", nil) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the live feed did not read the explorer's head within 10s, with no subscriber")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
