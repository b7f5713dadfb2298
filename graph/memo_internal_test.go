package graph

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// countingUpstream counts the calls that reach the sample data service.
type countingUpstream struct {
	Upstream
	mu    sync.Mutex
	calls int
}

func (c *countingUpstream) count() {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
}

func (c *countingUpstream) ListAssets(ctx context.Context, p upstream.AssetsParams) (*upstream.AssetPage, error) {
	c.count()
	return c.Upstream.ListAssets(ctx, p)
}

func (c *countingUpstream) ListDelegations(ctx context.Context, p upstream.DelegationsParams) (*upstream.DelegationPage, error) {
	c.count()
	return c.Upstream.ListDelegations(ctx, p)
}

func (c *countingUpstream) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	c.count()
	return c.Upstream.ListTransactions(ctx, p)
}

func (c *countingUpstream) GetTransaction(ctx context.Context, hash string) (*upstream.Transaction, error) {
	c.count()
	return c.Upstream.GetTransaction(ctx, hash)
}

// TestRequestMemoKeys: a request's identical upstream calls are made once
// and share their answer (a transaction's hash in any letter case
// included); calls whose params differ in any way (a nil list and an
// empty one, no page size and one, another method with params that
// write alike) each reach the upstream.
func TestRequestMemoKeys(t *testing.T) {
	srv, err := sampleservice.Start(sampleservice.Config{Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: 1}}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	client, err := upstream.New(upstream.Config{DataNodeURL: srv.URL, ExplorerURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	counter := &countingUpstream{Upstream: client}
	u := newRequestUpstream(counter)
	want := 0
	wantCalls := func(what string, n int) {
		t.Helper()
		want += n
		if counter.calls != want {
			t.Fatalf("%s: %d upstream calls in all, want %d", what, counter.calls, want)
		}
	}
	two, three := int32(2), int32(3)
	party := srv.Service.Dataset().Parties[0]
	d1, err := u.ListDelegations(ctx, upstream.DelegationsParams{PartyID: party, Pagination: upstream.Pagination{First: &two}})
	if err != nil || len(d1.Edges) == 0 {
		t.Fatalf("delegations: %v, %v", d1, err)
	}
	d2, _ := u.ListDelegations(ctx, upstream.DelegationsParams{PartyID: party, Pagination: upstream.Pagination{First: &two}})
	if d2 != d1 {
		t.Fatal("the same delegations asked twice: two answers")
	}
	wantCalls("the same delegations twice", 1)
	_, _ = u.ListDelegations(ctx, upstream.DelegationsParams{PartyID: party, Pagination: upstream.Pagination{First: &three}})
	_, _ = u.ListDelegations(ctx, upstream.DelegationsParams{NodeID: party, Pagination: upstream.Pagination{First: &two}})
	wantCalls("delegations of another size, of a node", 2)
	_, _ = u.ListAssets(ctx, upstream.AssetsParams{})
	_, _ = u.ListDelegations(ctx, upstream.DelegationsParams{})
	wantCalls("assets and delegations with params that write alike", 2)

	tx1, _ := u.ListTransactions(ctx, upstream.TransactionsParams{First: 2})
	tx2, _ := u.ListTransactions(ctx, upstream.TransactionsParams{First: 2})
	if tx1 == nil || tx1 != tx2 {
		t.Fatal("the same transactions asked twice: two answers")
	}
	wantCalls("the same transactions twice", 1)
	_, _ = u.ListTransactions(ctx, upstream.TransactionsParams{First: 2, CmdTypes: []string{}})
	_, _ = u.ListTransactions(ctx, upstream.TransactionsParams{First: 2, Parties: []string{}})
	_, _ = u.ListTransactions(ctx, upstream.TransactionsParams{First: 2, Before: &upstream.TxCursor{}})
	wantCalls("transactions with an empty list, another empty list, a zero position", 3)

	hash := tx1.Transactions[0].Hash
	if _, err := u.GetTransaction(ctx, string(hash)); err != nil {
		t.Fatal(err)
	}
	_, _ = u.GetTransaction(ctx, strings.ToLower(string(hash)))
	wantCalls("one transaction in two letter cases", 1)
}
