package graph

import (
	"encoding/base64"
	"fmt"
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
