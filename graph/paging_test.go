package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// intList is a fake upstream list of distinct ints in ascending traversal
// order that can only serve windows from either end, like the data node's
// funding-payments endpoint.
type intList struct {
	rows    []int
	max     int
	fetches int
}

func (l *intList) fetch(_ context.Context, head bool, size int) (window[int], error) {
	l.fetches++
	if size > l.max {
		return window[int]{}, fmt.Errorf("window %d over the maximum %d", size, l.max)
	}
	n := min(size, len(l.rows))
	if head {
		return window[int]{Rows: slices.Clone(l.rows[:n]), More: n < len(l.rows)}, nil
	}
	return window[int]{Rows: slices.Clone(l.rows[len(l.rows)-n:]), More: n < len(l.rows)}, nil
}

func (l *intList) paging() keyedPaging[int, int] {
	return keyedPaging[int, int]{
		MaxWindow: l.max,
		Fetch:     l.fetch,
		Compare:   func(row, key int) int { return row - key },
		Before:    func(a, b int) bool { return a < b },
		Limit:     "unreachable",
	}
}

// gather adds a page's rows to those a walk has seen, in list order: after
// them walking forward, before them walking backward.
func gather(all, rows []int, backward bool) []int {
	if backward {
		return append(slices.Clone(rows), all...)
	}
	return append(all, rows...)
}

// ahead is a page's info in a walk's direction: more rows ahead of the
// page, and others behind it.
func ahead(backward, hasNext, hasPrev bool) (more, other bool) {
	if backward {
		return hasPrev, hasNext
	}
	return hasNext, hasPrev
}

// walk pages through l in one direction and returns the rows in
// traversal order, checking page info at every step.
func walkKeyed(t *testing.T, l *intList, backward bool, size int) []int {
	t.Helper()
	p := l.paging()
	var all []int
	var cur *keyed[int]
	for step := 0; step < 10000; step++ {
		var (
			rows             []int
			pos              []windowPos
			hasNext, hasPrev bool
			err              error
		)
		if cur == nil {
			rows, pos, hasNext, hasPrev, err = p.first(context.Background(), backward, size)
		} else {
			rows, pos, hasNext, hasPrev, err = p.from(context.Background(), *cur, backward, size)
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if len(rows) != len(pos) {
			t.Fatalf("step %d: %d rows, %d positions", step, len(rows), len(pos))
		}
		all = gather(all, rows, backward)
		more, other := ahead(backward, hasNext, hasPrev)
		if other != (cur != nil) {
			t.Fatalf("step %d: page info behind the cursor = %v, want %v", step, other, cur != nil)
		}
		if len(rows) > size {
			t.Fatalf("step %d: %d rows for a page of %d", step, len(rows), size)
		}
		if !more {
			return all
		}
		if len(rows) < size {
			t.Fatalf("step %d: short page (%d of %d) that claims more", step, len(rows), size)
		}
		edge := len(rows) - 1
		if backward {
			edge = 0
		}
		cur = &keyed[int]{Key: rows[edge], Pos: pos[edge]}
	}
	t.Fatal("walk did not end")
	return nil
}

func TestKeyedPagingWalksEveryRowOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 9, 100} {
		for _, size := range []int{1, 3, 7, 50} {
			for _, backward := range []bool{false, true} {
				t.Run(fmt.Sprintf("rows=%d size=%d backward=%v", n, size, backward), func(t *testing.T) {
					l := &intList{max: 5000}
					for i := range n {
						l.rows = append(l.rows, i*10)
					}
					got := walkKeyed(t, l, backward, size)
					if !slices.Equal(got, l.rows) && !(len(got) == 0 && len(l.rows) == 0) {
						t.Fatalf("walk = %v, want %v", got, l.rows)
					}
				})
			}
		}
	}
}

func TestKeyedPagingUsesBothEnds(t *testing.T) {
	// 30 rows, windows of at most 20: the head reaches rows 0-19 and the
	// tail rows 10-29, so every page is reachable from one end or the other.
	l := &intList{max: 20}
	for i := range 30 {
		l.rows = append(l.rows, i)
	}
	for _, backward := range []bool{false, true} {
		got := walkKeyed(t, l, backward, 4)
		if !slices.Equal(got, l.rows) {
			t.Fatalf("backward=%v: walk = %v, want %v", backward, got, l.rows)
		}
	}
}

func TestKeyedPagingRefusesWhatNeitherEndReaches(t *testing.T) {
	l := &intList{max: 10}
	for i := range 40 {
		l.rows = append(l.rows, i)
	}
	_, _, _, _, err := l.paging().from(context.Background(), keyed[int]{Key: 15, Pos: windowPos{Head: true, Dist: 15}}, false, 3)
	var gwErr *Error
	if !errors.As(err, &gwErr) || gwErr.Code != CodeUpstreamError || gwErr.Message != "unreachable" {
		t.Fatalf("err = %v, want the UPSTREAM_ERROR limit message", err)
	}
}

func TestKeyedPagingSurvivesInsertions(t *testing.T) {
	// Rows inserted at the head after the first page shift every offset;
	// paging by key still continues right after the cursor.
	l := &intList{max: 5000}
	for i := range 20 {
		l.rows = append(l.rows, 100+i)
	}
	p := l.paging()
	rows, pos, _, _, err := p.first(context.Background(), false, 5)
	if err != nil {
		t.Fatal(err)
	}
	l.rows = append([]int{1, 2, 3, 4, 5, 6, 7, 8}, l.rows...)
	next, _, hasNext, hasPrev, err := p.from(context.Background(), keyed[int]{Key: rows[4], Pos: pos[4]}, false, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{105, 106, 107, 108, 109}; !slices.Equal(next, want) || !hasNext || !hasPrev {
		t.Fatalf("page after 104 = %v next=%v prev=%v, want %v true true", next, hasNext, hasPrev, want)
	}
}

func TestKeyedPagingRejectsUnorderedUpstream(t *testing.T) {
	l := &intList{max: 5000, rows: []int{1, 3, 2}}
	_, _, _, _, err := l.paging().first(context.Background(), false, 3)
	var gwErr *Error
	if !errors.As(err, &gwErr) || gwErr.Code != CodeUpstreamError {
		t.Fatalf("err = %v, want UPSTREAM_ERROR", err)
	}
}

// txList is a fake explorer over rows 0..n-1, newest = highest; skip
// drops rows the way the explorer drops transactions it cannot decode.
type txList struct {
	n        int
	skip     map[int]bool
	requests int
}

func (l *txList) fetch(_ context.Context, older bool, cursor *int, n int) ([]int, error) {
	l.requests++
	var out []int
	if older {
		// last=n alone: the n oldest; last=n&before=c: the n just below
		// c; newest first either way.
		lo, top := 0, min(n, l.n)
		if cursor != nil {
			lo, top = max(0, *cursor-n), *cursor
		}
		for i := top - 1; i >= lo; i-- {
			if !l.skip[i] {
				out = append(out, i)
			}
		}
		return out, nil
	}
	// first=n [after=c]: the n newest, or the n just above c; newest first.
	lo, hi := l.n-n, l.n
	if cursor != nil {
		lo, hi = *cursor+1, min(l.n, *cursor+1+n)
	}
	for i := hi - 1; i >= max(lo, 0); i-- {
		if !l.skip[i] {
			out = append(out, i)
		}
	}
	return out, nil
}

// oldestInt is explorerPaging.Oldest for a txList: row 0 is its first.
func oldestInt(row *int) bool { return *row == 0 }

func walkExplorer(t *testing.T, l *txList, backward, knowsOldest bool, size int) []int {
	t.Helper()
	p := explorerPaging[int]{Fetch: l.fetch, MaxFollowUps: 100}
	if knowsOldest {
		p.Oldest = oldestInt
	}
	var all []int
	var cur *int
	for step := 0; step < 10000; step++ {
		rows, hasNext, hasPrev, err := p.page(context.Background(), backward, cur, size)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(rows); i++ {
			if rows[i] >= rows[i-1] {
				t.Fatalf("page not newest first: %v", rows)
			}
		}
		all = gather(all, rows, backward)
		more, other := ahead(backward, hasNext, hasPrev)
		if other != (cur != nil) {
			t.Fatalf("step %d: page info behind the cursor = %v", step, other)
		}
		if !more {
			return all
		}
		if len(rows) != size {
			t.Fatalf("step %d: %d rows for a page of %d that claims more", step, len(rows), size)
		}
		edge := rows[len(rows)-1]
		if backward {
			edge = rows[0]
		}
		cur = &edge
	}
	t.Fatal("walk did not end")
	return nil
}

func TestExplorerPagingWalksEveryRowOnce(t *testing.T) {
	for _, n := range []int{0, 1, 5, 64} {
		for _, size := range []int{1, 4, 50} {
			for _, backward := range []bool{false, true} {
				for _, c := range []struct{ skipping, knowsOldest bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
					skipping := c.skipping
					t.Run(fmt.Sprintf("n=%d size=%d backward=%v skip=%v oldest=%v", n, size, backward, skipping, c.knowsOldest), func(t *testing.T) {
						l := &txList{n: n, skip: map[int]bool{}}
						if skipping {
							for i := 0; i < n; i += 3 {
								l.skip[i] = true
							}
						}
						var want []int
						for i := n - 1; i >= 0; i-- {
							if !l.skip[i] {
								want = append(want, i)
							}
						}
						got := walkExplorer(t, l, backward, c.knowsOldest, size)
						if !slices.Equal(got, want) {
							t.Fatalf("walk = %v, want %v", got, want)
						}
					})
				}
			}
		}
	}
}

func TestExplorerPagingOneRequestPerFullPage(t *testing.T) {
	l := &txList{n: 500}
	p := explorerPaging[int]{Fetch: l.fetch, MaxFollowUps: 5}
	c := 300
	rows, hasNext, hasPrev, err := p.page(context.Background(), false, &c, 50)
	if err != nil {
		t.Fatal(err)
	}
	if l.requests != 1 || len(rows) != 50 || rows[0] != 299 || !hasNext || !hasPrev {
		t.Fatalf("requests=%d rows=%d first=%d next=%v prev=%v", l.requests, len(rows), rows[0], hasNext, hasPrev)
	}
}

// A short answer that ends at the list's oldest possible row (a block's
// first transaction) is the end of the list: no follow-up request. When
// that row was skipped upstream the follow-up is still made.
func TestExplorerPagingStopsAtTheOldestRow(t *testing.T) {
	for _, c := range []struct {
		name     string
		skip     map[int]bool
		oldest   func(*int) bool
		want     []int
		requests int
	}{
		{"oldest row known", nil, oldestInt, []int{3, 2, 1, 0}, 1},
		{"without Oldest", nil, nil, []int{3, 2, 1, 0}, 2},
		{"oldest row skipped upstream", map[int]bool{0: true}, oldestInt, []int{3, 2, 1}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &txList{n: 4, skip: c.skip}
			p := explorerPaging[int]{Fetch: l.fetch, MaxFollowUps: 5, Oldest: c.oldest}
			rows, hasNext, hasPrev, err := p.page(context.Background(), false, nil, 50)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rows, c.want) || hasNext || hasPrev || l.requests != c.requests {
				t.Fatalf("rows %v next=%v prev=%v after %d requests; want %v, no more, %d requests", rows, hasNext, hasPrev, l.requests, c.want, c.requests)
			}
		})
	}
	// A full page that reaches row 0 with one row to spare still says
	// there is no next page, in one request.
	l := &txList{n: 4}
	p := explorerPaging[int]{Fetch: l.fetch, MaxFollowUps: 5, Oldest: oldestInt}
	rows, hasNext, _, err := p.page(context.Background(), false, nil, 4)
	if err != nil || !slices.Equal(rows, []int{3, 2, 1, 0}) || hasNext || l.requests != 1 {
		t.Fatalf("page of 4 over 4 rows: %v next=%v err=%v after %d requests", rows, hasNext, err, l.requests)
	}
}

func TestPagingArguments(t *testing.T) {
	n := func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	cases := []struct {
		name string
		args pageArgs
		want pageRequest
		err  string
	}{
		{"defaults", pageArgs{}, pageRequest{Size: 50}, ""},
		{"first", pageArgs{First: n(10)}, pageRequest{Size: 10}, ""},
		{"first zero", pageArgs{First: n(0)}, pageRequest{Size: 0}, ""},
		{"last before", pageArgs{Last: n(5), Before: s("c")}, pageRequest{Size: 5, Backward: true, Cursor: "c"}, ""},
		{"before alone pages backwards", pageArgs{Before: s("c")}, pageRequest{Size: 50, Backward: true, Cursor: "c"}, ""},
		{"negative first", pageArgs{First: n(-1)}, pageRequest{}, "first must not be negative (got -1)"},
		{"negative last", pageArgs{Last: n(-3)}, pageRequest{}, "last must not be negative (got -3)"},
		{"over max", pageArgs{First: n(1001)}, pageRequest{}, "first must be at most 1000 (got 1001); page through larger lists"},
		{"first and last", pageArgs{First: n(1), Last: n(1)}, pageRequest{}, "pass either first (page forwards) or last (page backwards), not both"},
		{"after and before", pageArgs{After: s("a"), Before: s("b")}, pageRequest{}, "pass either after (with first) or before (with last), not both"},
		{"first with before", pageArgs{First: n(1), Before: s("b")}, pageRequest{}, "first pages forwards and goes with after; to page backwards from before, use last"},
		{"last with after", pageArgs{Last: n(1), After: s("a")}, pageRequest{}, "last pages backwards and goes with before; to page forwards from after, use first"},
		{"empty after", pageArgs{After: s("")}, pageRequest{}, "after: empty cursor; omit after to start at the beginning"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DefaultPaging.resolve(tc.args)
			if tc.err != "" {
				var gwErr *Error
				if !errors.As(err, &gwErr) || gwErr.Code != CodeBadUserInput || gwErr.Message != tc.err {
					t.Fatalf("err = %v, want BAD_USER_INPUT %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("resolve = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestCursorsAreBoundToTheirList(t *testing.T) {
	type payload struct{ ID string }
	c := encodeCursor(testCursorKeys, listAssets, payload{ID: "x"})
	var got payload
	if err := decodeCursor(testCursorKeys, "after", c, listAssets, &got); err != nil || got.ID != "x" {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	for name, tc := range map[string]struct {
		cursor, want string
	}{
		"foreign list": {c, "after: this cursor belongs to the assets list, not to delegations; cursors only page the list that issued them"},
		"not base64":   {"%%%", "after: not a cursor issued by this gateway; pass a cursor from edges.cursor or pageInfo"},
		"upstream raw": {"34514203.2", "after: not a cursor issued by this gateway; pass a cursor from edges.cursor or pageInfo"},
	} {
		t.Run(name, func(t *testing.T) {
			err := decodeCursor(testCursorKeys, "after", tc.cursor, listDelegations, &got)
			var gwErr *Error
			if !errors.As(err, &gwErr) || gwErr.Code != CodeBadUserInput || gwErr.Message != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
