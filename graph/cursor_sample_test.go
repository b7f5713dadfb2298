package graph

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"

	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// sampleCursorRows are the rows of the sample dataset's lists that the
// gateway makes cursors of, as the sample data service serves them over
// loopback HTTP: every delegation, asset and funding payment with the data
// node's cursor, and the chain position of every transaction.
type sampleCursorRows struct {
	Delegations     []upstream.Edge[upstream.Delegation]
	Assets          []upstream.Edge[upstream.Asset]
	FundingPayments []upstream.Edge[upstream.FundingPayment]
	Transactions    []upstream.TxCursor
}

// sampleRows fetches sampleCursorRows once for the package's tests and
// benchmarks.
var sampleRows = sync.OnceValues(func() (*sampleCursorRows, error) {
	srv, err := sampleservice.Start(sampleservice.Config{
		Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: 1},
		Defects: sampleservice.DefaultDefects(),
	}, "")
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	client, err := upstream.New(upstream.Config{DataNodeURL: srv.URL, ExplorerURL: srv.URL})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	var rows sampleCursorRows
	size := int32(5000)
	for after := upstream.Cursor(""); ; {
		pg, err := client.ListDelegations(ctx, upstream.DelegationsParams{Pagination: upstream.Pagination{First: &size, After: after}})
		if err != nil {
			return nil, err
		}
		rows.Delegations = append(rows.Delegations, pg.Edges...)
		if !pg.PageInfo.HasNextPage || len(pg.Edges) == 0 {
			break
		}
		after = pg.Edges[len(pg.Edges)-1].Cursor
	}
	for after := upstream.Cursor(""); ; {
		pg, err := client.ListAssets(ctx, upstream.AssetsParams{Pagination: upstream.Pagination{First: &size, After: after}})
		if err != nil {
			return nil, err
		}
		rows.Assets = append(rows.Assets, pg.Edges...)
		if !pg.PageInfo.HasNextPage || len(pg.Edges) == 0 {
			break
		}
		after = pg.Edges[len(pg.Edges)-1].Cursor
	}
	data := srv.Service.Dataset()
	for _, party := range data.Parties {
		// The data node serves a party's funding payments in one page of
		// up to 5000 (its cursors fail: funding.go).
		pg, err := client.ListFundingPayments(ctx, upstream.FundingPaymentsParams{PartyID: party, Pagination: upstream.Pagination{First: &size}})
		if err != nil {
			return nil, err
		}
		rows.FundingPayments = append(rows.FundingPayments, pg.Edges...)
	}
	for i := range data.Transactions.Len() {
		m := data.Transactions.Meta(i)
		rows.Transactions = append(rows.Transactions, upstream.TxCursor{Block: m.Block, Index: m.Index})
	}
	return &rows, nil
})

// sampleCursors are the gateway's cursors of every row of the sample
// dataset's lists, by list, as the resolvers make them: the data-node
// lists' in runs of 50 (a page), funding payments' with the position hint
// of a 50-row page.
func sampleCursors(tb testing.TB) map[string][]string {
	tb.Helper()
	rows, err := sampleRows()
	if err != nil {
		tb.Fatalf("sample rows: %v", err)
	}
	out := map[string][]string{}
	out["delegations"] = encodeSampleRuns(rows.Delegations, listDelegations)
	out["assets"] = encodeSampleRuns(rows.Assets, listAssets)
	// The data node's own funding-payment cursors, which the gateway
	// never sends back, packed as any data-node cursor would be.
	out["funding-payments (data node)"] = encodeSampleRuns(rows.FundingPayments, listFundingPayments)
	for i, e := range rows.FundingPayments {
		c := fundingCursor{K: keyOfFunding(&e.Node), H: i%2 == 0, D: i % 50}
		out["funding-payments"] = append(out["funding-payments"], c.encode(testCursorKeys))
	}
	for _, pos := range rows.Transactions {
		out["transactions"] = append(out["transactions"], txCursor{B: pos.Block, I: pos.Index}.encode(testCursorKeys))
	}
	return out
}

// encodeSampleRuns encodes edges' cursors for list in pages of 50.
func encodeSampleRuns[T any](edges []upstream.Edge[T], list cursorList) []string {
	cursors := make([]string, len(edges))
	for from := 0; from < len(edges); from += 50 {
		to := min(from+50, len(edges))
		encodeCursors(testCursorKeys, edges[from:to], cursors[from:to], list)
	}
	return cursors
}

// sampleCursorDigests are SHA-256 digests of each list's cursors (one a
// line) over the sample dataset (seed 1, scale 1), taken from the
// encoders as they were before their cost was cut: a cursor is a public
// contract, and the same row must give the same cursor, byte for byte.
var sampleCursorDigests = map[string]struct {
	rows   int
	digest string
}{
	"assets":                       {66, "6cd720ad0bed4f1755026ba4b05fa8225a43dfc7640474890f13ae8ff5741ef8"},
	"delegations":                  {5821, "d6a9b9d1f444676a0efaa88486eacc7e3f16a66fe90c91df3588ece93de5a831"},
	"funding-payments":             {2868, "f552925ff94940fa9c5670eece7e95f950a9ddd8ba79303bb2ef52f066513797"},
	"funding-payments (data node)": {2868, "7ce8dd446a018a0962dcbad8cebf5108ccaf7ece1a798cc4336d45cca1830559"},
	"transactions":                 {6000, "4cd563c5bf91b9db27d39ef0d22a55798e2349372862f8a7b5e1f95d6ee9a5dc"},
}

// sampleRowsDigest is the SHA-256 digest of what the cursors above were
// made of (rowsDigest), so that a change of the sample dataset is told
// from a change of the cursors.
const sampleRowsDigest = "4810b944b410dd7ca7a96bf30b59238008b1e60e24740d540edfa4f8ac3a76c5"

// rowsDigest is the SHA-256 digest of what the gateway makes cursors of:
// the data node's cursors, the funding payments' keys and the
// transactions' positions.
func rowsDigest(rows *sampleCursorRows) string {
	h := sha256.New()
	for _, e := range rows.Delegations {
		fmt.Fprintln(h, e.Cursor)
	}
	for _, e := range rows.Assets {
		fmt.Fprintln(h, e.Cursor)
	}
	for _, e := range rows.FundingPayments {
		fmt.Fprintln(h, e.Cursor, keyOfFunding(&e.Node))
	}
	for _, pos := range rows.Transactions {
		fmt.Fprintln(h, pos)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestSampleCursorsUnchanged: every cursor the gateway makes of the sample
// dataset's rows is the one it made before, byte for byte; its MAC is
// HMAC-SHA256 under the signing key as crypto/hmac computes it; and it
// opens again to its row.
func TestSampleCursorsUnchanged(t *testing.T) {
	all := sampleCursors(t)
	rows, _ := sampleRows()
	if got := rowsDigest(rows); got != sampleRowsDigest {
		t.Fatalf("the sample dataset changed (rows digest %s, want %s): the cursor digests were taken over the old one. "+
			"Take them again, and this digest, with the cursor encoders of a commit whose cursors are known to be right", got, sampleRowsDigest)
	}
	if len(all) != len(sampleCursorDigests) {
		t.Fatalf("%d lists, want %d", len(all), len(sampleCursorDigests))
	}
	for list, cursors := range all {
		h := sha256.New()
		for _, c := range cursors {
			h.Write([]byte(c))
			h.Write([]byte("\n"))
		}
		want := sampleCursorDigests[list]
		if got := hex.EncodeToString(h.Sum(nil)); len(cursors) != want.rows || got != want.digest {
			t.Errorf("%s: %d cursors with digest %s, want %d with digest %s", list, len(cursors), got, want.rows, want.digest)
		}
		for i, c := range cursors {
			signed, err := cursorEncoding.DecodeString(c)
			if err != nil || len(signed) < cursorMACSize {
				t.Fatalf("%s row %d: cursor %q does not decode: %v", list, i, c, err)
			}
			raw, tag := signed[:len(signed)-cursorMACSize], signed[len(signed)-cursorMACSize:]
			if want := referenceMAC(raw); !bytes.Equal(tag, want) {
				t.Fatalf("%s row %d: MAC %x, want %x", list, i, tag, want)
			}
		}
	}
	for i, e := range rows.Delegations {
		if got, err := decodeDataNodeCursor(testCursorKeys, "after", all["delegations"][i], listDelegations); err != nil || got != e.Cursor {
			t.Fatalf("delegation %d: cursor opens to %q, %v; want %q", i, got, err, e.Cursor)
		}
	}
	for i, e := range rows.Assets {
		if got, err := decodeDataNodeCursor(testCursorKeys, "after", all["assets"][i], listAssets); err != nil || got != e.Cursor {
			t.Fatalf("asset %d: cursor opens to %q, %v; want %q", i, got, err, e.Cursor)
		}
	}
	for i, e := range rows.FundingPayments {
		if got, err := decodeFundingCursor(testCursorKeys, "after", all["funding-payments"][i]); err != nil || got.K != keyOfFunding(&e.Node) || got.D != i%50 {
			t.Fatalf("funding payment %d: cursor opens to %+v, %v", i, got, err)
		}
	}
	for i, pos := range rows.Transactions {
		var got txCursor
		if err := decodeCursor(testCursorKeys, "after", all["transactions"][i], listTransactions, &got); err != nil || got != (txCursor{B: pos.Block, I: pos.Index}) {
			t.Fatalf("transaction %d: cursor opens to %+v, %v; want %v", i, got, err, pos)
		}
	}
}

// referenceMAC is the MAC a cursor of raw carries, computed with
// crypto/hmac from the signing key's text, as a check of the pooled one.
func referenceMAC(raw []byte) []byte {
	key := sha256.Sum256([]byte(cursorKeyDomain + CursorKeyForTest))
	m := hmac.New(sha256.New, key[:])
	m.Write(raw)
	return m.Sum(nil)[:cursorMACSize]
}
