package graph

import (
	"context"

	"github.com/tradenet/gateway/upstream"
)

// Upstream is what the resolvers need from the data service;
// *upstream.Client satisfies it.
type Upstream interface {
	ListAssets(ctx context.Context, p upstream.AssetsParams) (*upstream.AssetPage, error)
	GetAsset(ctx context.Context, id string) (*upstream.Asset, *upstream.Freshness, error)
	ListFundingPayments(ctx context.Context, p upstream.FundingPaymentsParams) (*upstream.FundingPaymentPage, error)
	ListDelegations(ctx context.Context, p upstream.DelegationsParams) (*upstream.DelegationPage, error)
	ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error)
	GetTransaction(ctx context.Context, hash string) (*upstream.Transaction, error)
}

var _ Upstream = (*upstream.Client)(nil)

// Resolver is the root resolver: it holds the dependencies of every
// resolver. Per-request state (loaders, freshness) travels in the context.
type Resolver struct {
	Upstream Upstream
	Paging   PagingConfig
	// Cursors sign the cursors the resolvers issue and verify those
	// clients send back.
	Cursors *CursorKeys
	// Live feeds Subscription.transactions; nil disables it.
	Live *LiveFeed
}
