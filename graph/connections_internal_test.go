package graph

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/tradenet/gateway/upstream"
)

// TestEncodeCursorsInHalves: a large page's cursors, encoded in two
// halves at once, are each the cursor its edge encodes to alone, for pages
// on both sides of the threshold (run with -race).
func TestEncodeCursorsInHalves(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, parallelCursors - 1, parallelCursors, parallelCursors + 1, 1001} {
		edges := make([]upstream.Edge[upstream.Delegation], n)
		for i := range edges {
			js := fmt.Sprintf(`{"vegaTime":"2024-03-14T04:00:%02d.%03dZ","partyId":"%064x","nodeId":"%064x","epochId":%d}`, i%60, i%1000, i, n-i, i)
			edges[i].Cursor = upstream.Cursor(base64.StdEncoding.EncodeToString([]byte(js)))
		}
		cursors := make([]string, n)
		encodeCursors(testCursorKeys, edges, cursors, listDelegations)
		for i := range edges {
			if want := (dataNodeCursor{C: edges[i].Cursor}).encode(testCursorKeys, listDelegations); cursors[i] != want {
				t.Fatalf("page of %d, row %d: %q, want %q", n, i, cursors[i], want)
			}
		}
	}
}

// TestEncodeCursorsAllocatesPerRunNotPerRow: a page's cursors are slices
// of one string per run (two runs for a large page), not a string each.
func TestEncodeCursorsAllocatesPerRunNotPerRow(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts of the pooled cursor MACs are not meaningful under the race detector")
	}
	const n = 1000
	edges := make([]upstream.Edge[upstream.Delegation], n)
	for i := range edges {
		js := fmt.Sprintf(`{"vegaTime":"2024-03-14T04:00:%02d.%03dZ","partyId":"%064x","nodeId":"%064x","epochId":%d}`, i%60, i%1000, i, n-i, i)
		edges[i].Cursor = upstream.Cursor(base64.StdEncoding.EncodeToString([]byte(js)))
	}
	cursors := make([]string, n)
	allocs := testing.AllocsPerRun(20, func() { encodeCursors(testCursorKeys, edges, cursors, listDelegations) })
	// Each of the two runs: its buffer, its ends, its string; and the
	// helper goroutine with its channel.
	if allocs > 12 {
		t.Errorf("%.0f allocations to encode %d cursors, want at most 12", allocs, n)
	}
}
