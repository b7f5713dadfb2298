package graph

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/tradenet/gateway/upstream"
)

// delegationEdges is a page of n delegations with data-node cursors as the
// data node writes them.
func delegationEdges(n int) []upstream.Edge[upstream.Delegation] {
	edges := make([]upstream.Edge[upstream.Delegation], n)
	for i := range edges {
		js := fmt.Sprintf(`{"vegaTime":"2024-03-14T04:00:%02d.%03dZ","partyId":"%064x","nodeId":"%064x","epochId":%d}`, i%60, i%1000, i, n-i, i)
		edges[i].Cursor = upstream.Cursor(base64.StdEncoding.EncodeToString([]byte(js)))
	}
	return edges
}

// BenchmarkEncodeDelegationCursors encodes the cursors of a page of 1,000
// delegations, as dataNodePage does.
func BenchmarkEncodeDelegationCursors(b *testing.B) {
	edges := delegationEdges(1000)
	cursors := make([]string, len(edges))
	b.ReportAllocs()
	for b.Loop() {
		encodeCursors(testCursorKeys, edges, cursors, listDelegations)
	}
}

// BenchmarkDecodeDelegationCursor decodes one delegation cursor, as a
// request with after does.
func BenchmarkDecodeDelegationCursor(b *testing.B) {
	edges := delegationEdges(1)
	cursor := dataNodeCursor{C: edges[0].Cursor}.encode(testCursorKeys, listDelegations)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeDataNodeCursor(testCursorKeys, "after", cursor, listDelegations); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSampleCursors encodes a page of 50 cursors of each list, as
// its resolver does, over the sample dataset's rows (one page an
// operation, in turn); pack/… packs the data node's cursors alone.
func BenchmarkSampleCursors(b *testing.B) {
	rows, err := sampleRows()
	if err != nil {
		b.Fatal(err)
	}
	const size = 50
	cursors := make([]string, size)
	dataNode := func(name string, list cursorList, n int, encode func(from, to int)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			from := 0
			for b.Loop() {
				if from+size > n {
					from = 0
				}
				encode(from, from+size)
				from += size
			}
		})
	}
	dataNode("delegations", listDelegations, len(rows.Delegations), func(from, to int) {
		encodeCursors(testCursorKeys, rows.Delegations[from:to], cursors, listDelegations)
	})
	dataNode("assets", listAssets, len(rows.Assets), func(from, to int) {
		encodeCursors(testCursorKeys, rows.Assets[from:to], cursors, listAssets)
	})
	dataNode("funding-payments", listFundingPayments, len(rows.FundingPayments), func(from, to int) {
		for i := from; i < to; i++ {
			cursors[i-from] = fundingCursor{K: keyOfFunding(&rows.FundingPayments[i].Node), H: true, D: i - from}.encode(testCursorKeys)
		}
	})
	dataNode("transactions", listTransactions, len(rows.Transactions), func(from, to int) {
		for i := from; i < to; i++ {
			pos := rows.Transactions[i]
			cursors[i-from] = txCursor{B: pos.Block, I: pos.Index}.encode(testCursorKeys)
		}
	})
	var buf [cursorBuffer]byte
	dataNode("pack/delegations", listDelegations, len(rows.Delegations), func(from, to int) {
		for _, e := range rows.Delegations[from:to] {
			_ = e.Cursor.AppendPack(buf[:0])
		}
	})
	dataNode("pack/assets", listAssets, len(rows.Assets), func(from, to int) {
		for _, e := range rows.Assets[from:to] {
			_ = e.Cursor.AppendPack(buf[:0])
		}
	})
	dataNode("pack/funding-payments", listFundingPayments, len(rows.FundingPayments), func(from, to int) {
		for _, e := range rows.FundingPayments[from:to] {
			_ = e.Cursor.AppendPack(buf[:0])
		}
	})
}

// memoBenchUpstream answers every list with an empty page.
type memoBenchUpstream struct{ Upstream }

func (memoBenchUpstream) ListDelegations(context.Context, upstream.DelegationsParams) (*upstream.DelegationPage, error) {
	return &upstream.DelegationPage{}, nil
}

func (memoBenchUpstream) ListFundingPayments(context.Context, upstream.FundingPaymentsParams) (*upstream.FundingPaymentPage, error) {
	return &upstream.FundingPaymentPage{}, nil
}

func (memoBenchUpstream) ListTransactions(context.Context, upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	return &upstream.TransactionPage{}, nil
}

// BenchmarkRequestMemo makes a request's memoised upstream calls: a
// party page's two (funding payments and delegations of one party) and a
// transaction page's one, each a first call of its request.
func BenchmarkRequestMemo(b *testing.B) {
	ctx := context.Background()
	party := strings.Repeat("3b", 32)
	first := int32(50)
	b.Run("party", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u := newRequestUpstream(memoBenchUpstream{})
			_, _ = u.ListFundingPayments(ctx, upstream.FundingPaymentsParams{PartyID: party, Pagination: upstream.Pagination{First: &first}})
			_, _ = u.ListDelegations(ctx, upstream.DelegationsParams{PartyID: party, Pagination: upstream.Pagination{First: &first}})
		}
	})
	b.Run("transactions", func(b *testing.B) {
		b.ReportAllocs()
		after := upstream.TxCursor{Block: 34514203, Index: 2}
		for b.Loop() {
			u := newRequestUpstream(memoBenchUpstream{})
			_, _ = u.ListTransactions(ctx, upstream.TransactionsParams{First: 51, After: &after, CmdTypes: []string{"Submit Order"}})
		}
	})
}
