package graph

import (
	"context"
	"fmt"
	"slices"
	"sort"
)

// PagingConfig sets the page sizes of every connection.
type PagingConfig struct {
	// DefaultSize is the page size when neither first nor last is given.
	DefaultSize int
	// MaxSize is the largest first or last accepted.
	MaxSize int
	// NestedMaxSize is the largest page of a connection nested under a
	// list (a party's delegations on every row of a page): each row costs
	// an upstream call.
	NestedMaxSize int

	nested bool
}

// DefaultPaging is the documented default: pages of 50, at most 1000, and
// at most 100 in connections nested under a list.
var DefaultPaging = PagingConfig{DefaultSize: 50, MaxSize: 1000, NestedMaxSize: 100}

// pageArgs are a connection's Relay arguments as the client gave them.
type pageArgs struct {
	First, Last   *int
	After, Before *string
}

// pageRequest is a validated page request: a direction, a size and the
// cursor to start from (still encoded; each list decodes its own payload).
type pageRequest struct {
	// Backward is true for last/before: the page ends just before Cursor
	// (or at the end of the list).
	Backward bool
	// Size is the number of rows asked for; 0 is allowed (page info only).
	Size int
	// Cursor is the after (forward) or before (backward) cursor, "" for none.
	Cursor string
}

// cursorArg names the argument the request's cursor came from.
func (r pageRequest) cursorArg() string {
	if r.Backward {
		return "before"
	}
	return "after"
}

// resolve validates Relay arguments. Forward paging takes first/after,
// backward paging last/before; mixing the two directions is refused with a
// message that says what to send instead, since the upstream cannot serve
// a window bounded on both sides.
func (c PagingConfig) resolve(a pageArgs) (pageRequest, error) {
	if a.First != nil && a.Last != nil {
		return pageRequest{}, badInput("pass either first (page forwards) or last (page backwards), not both")
	}
	if a.After != nil && a.Before != nil {
		return pageRequest{}, badInput("pass either after (with first) or before (with last), not both")
	}
	if a.First != nil && a.Before != nil {
		return pageRequest{}, badInput("first pages forwards and goes with after; to page backwards from before, use last")
	}
	if a.Last != nil && a.After != nil {
		return pageRequest{}, badInput("last pages backwards and goes with before; to page forwards from after, use first")
	}
	req := pageRequest{Size: c.DefaultSize}
	switch {
	case a.First != nil:
		if err := c.checkSize("first", *a.First); err != nil {
			return pageRequest{}, err
		}
		req.Size = *a.First
	case a.Last != nil:
		if err := c.checkSize("last", *a.Last); err != nil {
			return pageRequest{}, err
		}
		req.Size, req.Backward = *a.Last, true
	case a.Before != nil:
		req.Backward = true
	}
	switch {
	case a.After != nil:
		req.Cursor = *a.After
		if req.Cursor == "" {
			return pageRequest{}, badInput("after: empty cursor; omit after to start at the beginning")
		}
	case a.Before != nil:
		req.Cursor = *a.Before
		if req.Cursor == "" {
			return pageRequest{}, badInput("before: empty cursor; omit before to start at the end")
		}
	}
	return req, nil
}

func (c PagingConfig) checkSize(arg string, n int) error {
	if n < 0 {
		return badInput("%s must not be negative (got %d)", arg, n)
	}
	if n > c.MaxSize && c.nested {
		return badInput("%s must be at most %d (got %d) in a connection nested under a list; page through larger lists", arg, c.MaxSize, n)
	}
	if n > c.MaxSize {
		return badInput("%s must be at most %d (got %d); page through larger lists", arg, c.MaxSize, n)
	}
	return nil
}

// page is one page of rows with exact page info, before it becomes a
// GraphQL connection.
type page[T any] struct {
	Rows            []T
	Cursors         []string
	HasNextPage     bool
	HasPreviousPage bool
}

// window is a run of rows taken from one end of a list, in the list's
// traversal order: from the head (the first rows) or the tail (the last).
type window[T any] struct {
	Rows []T
	// More says whether rows exist beyond the window's open end (after it
	// for a head window, before it for a tail window).
	More bool
}

// windowFetcher fetches the first (head) or last (tail) size rows of a list.
type windowFetcher[T any] func(ctx context.Context, head bool, size int) (window[T], error)

// positioned is a row with where it was found, for the next cursor.
type windowPos struct {
	// Head is true when Dist counts from the list's head, false from its tail.
	Head bool
	Dist int
}

// keyedPaging pages a list whose upstream can only serve its first or last
// rows (no working cursors), by finding the cursor's key in a window taken
// from one end. The funding-payments endpoint is such a list (docs/wire.md,
// Known defects, 1). Rows are located by comparing keys in traversal order,
// never by offset, so rows added meanwhile cannot cause gaps or duplicates;
// a window that does not reach the cursor is widened, then taken from the
// other end, and only when neither end reaches does the request fail, with
// a clear error.
type keyedPaging[T any, K any] struct {
	// MaxWindow is the largest window the upstream serves.
	MaxWindow int
	// Fetch takes windows.
	Fetch windowFetcher[T]
	// Compare orders a row against a key in traversal order.
	Compare func(row T, key K) int
	// Before orders two rows: true when a comes strictly before b.
	Before func(a, b T) bool
	// Limit explains the failure when neither end reaches the cursor.
	Limit string
}

// keyed is a decoded cursor: the row's key and where it was last seen.
type keyed[K any] struct {
	Key K
	Pos windowPos
}

// first serves a page without a cursor: straight from one end.
func (p keyedPaging[T, K]) first(ctx context.Context, backward bool, size int) (rows []T, pos []windowPos, hasNext, hasPrev bool, err error) {
	w, err := p.fetch(ctx, !backward, max(size, 1))
	if err != nil {
		return nil, nil, false, false, err
	}
	rows = w.Rows
	if len(rows) > size {
		if backward {
			rows = rows[len(rows)-size:]
		} else {
			rows = rows[:size]
		}
	}
	more := w.More || len(w.Rows) > size
	if backward {
		return rows, positions(len(rows), false), false, more, nil
	}
	return rows, positions(len(rows), true), more, false, nil
}

// positions numbers n rows from the head, or from the tail.
func positions(n int, head bool) []windowPos {
	pos := make([]windowPos, n)
	for i := range pos {
		if head {
			pos[i] = windowPos{Head: true, Dist: i}
		} else {
			pos[i] = windowPos{Head: false, Dist: n - 1 - i}
		}
	}
	return pos
}

// fetch takes a window and checks that it is in the order the comparator
// expects: a page cut from rows in another order would be silently wrong.
func (p keyedPaging[T, K]) fetch(ctx context.Context, head bool, size int) (window[T], error) {
	w, err := p.Fetch(ctx, head, min(size, p.MaxWindow))
	if err != nil {
		return w, err
	}
	for i := 1; i < len(w.Rows); i++ {
		if !p.Before(w.Rows[i-1], w.Rows[i]) {
			return w, &Error{Code: CodeUpstreamError, Message: "the data node returned rows out of their documented order; the gateway cannot page them safely"}
		}
	}
	return w, nil
}

// from serves the page of size rows after (or, backward, before) the
// cursor c.
func (p keyedPaging[T, K]) from(ctx context.Context, c keyed[K], backward bool, size int) (rows []T, pos []windowPos, hasNext, hasPrev bool, err error) {
	// Plan: the end the cursor was seen from, sized to reach it; that end
	// at full size; the other end at full size.
	near := nearWindow(c.Pos.Dist, size, p.MaxWindow)
	plans := []struct {
		head bool
		size int
	}{{c.Pos.Head, near}, {c.Pos.Head, p.MaxWindow}, {!c.Pos.Head, p.MaxWindow}}
	tried := map[[2]int]bool{}
	for _, plan := range plans {
		n := min(plan.size, p.MaxWindow)
		key := [2]int{boolInt(plan.head), n}
		if tried[key] {
			continue
		}
		tried[key] = true
		w, err := p.fetch(ctx, plan.head, n)
		if err != nil {
			return nil, nil, false, false, err
		}
		var ok bool
		if backward {
			rows, pos, hasNext, hasPrev, ok = p.cutBefore(w, plan.head, c.Key, size)
		} else {
			rows, pos, hasNext, hasPrev, ok = p.cutAfter(w, plan.head, c.Key, size)
		}
		if ok {
			return rows, pos, hasNext, hasPrev, nil
		}
		if !w.More {
			break // the window was the whole list; cut* always succeeds then
		}
	}
	return nil, nil, false, false, &Error{Code: CodeUpstreamError, Message: p.Limit}
}

// nearWindow is the size of the window from the end a cursor was seen
// from that reaches past it: its distance, the page and two rows of
// margin, at most limit. Saturating: a distance or size however large (a
// cursor's hint is not to be trusted) gives limit, never an overflow.
func nearWindow(dist, size, limit int) int {
	if dist < 0 || size < 0 || dist >= limit || size >= limit-dist-2 {
		return limit
	}
	return dist + size + 2
}

// cutAfter takes the size rows following key from w, if w holds them all.
func (p keyedPaging[T, K]) cutAfter(w window[T], head bool, key K, size int) (rows []T, pos []windowPos, hasNext, hasPrev, ok bool) {
	at := sort.Search(len(w.Rows), func(i int) bool { return p.Compare(w.Rows[i], key) > 0 })
	end := at + size
	switch {
	case head && end <= len(w.Rows):
		hasNext = end < len(w.Rows) || w.More
	case head && !w.More:
		end, hasNext = len(w.Rows), false
	case head:
		return nil, nil, false, false, false
	case at > 0 || !w.More: // a tail window reaching back to the key holds everything after it
		hasNext = end < len(w.Rows)
		end = min(end, len(w.Rows))
	default:
		return nil, nil, false, false, false
	}
	return w.Rows[at:end], windowPositions(len(w.Rows), head, at, end), hasNext, true, true
}

// cutBefore takes the size rows preceding key from w, if w holds them all.
func (p keyedPaging[T, K]) cutBefore(w window[T], head bool, key K, size int) (rows []T, pos []windowPos, hasNext, hasPrev, ok bool) {
	at := sort.Search(len(w.Rows), func(i int) bool { return p.Compare(w.Rows[i], key) >= 0 })
	start := at - size
	switch {
	case !head && start >= 0:
		hasPrev = start > 0 || w.More
	case !head && !w.More:
		start, hasPrev = 0, false
	case !head:
		return nil, nil, false, false, false
	case at < len(w.Rows) || !w.More: // a head window reaching past the key holds everything before it
		hasPrev = start > 0
		start = max(start, 0)
	default:
		return nil, nil, false, false, false
	}
	return w.Rows[start:at], windowPositions(len(w.Rows), head, start, at), true, hasPrev, true
}

// windowPositions gives rows [from, to) of a window of n rows their
// positions from the window's end.
func windowPositions(n int, head bool, from, to int) []windowPos {
	pos := make([]windowPos, 0, to-from)
	for i := from; i < to; i++ {
		if head {
			pos = append(pos, windowPos{Head: true, Dist: i})
		} else {
			pos = append(pos, windowPos{Head: false, Dist: n - 1 - i})
		}
	}
	return pos
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// explorerPaging maps Relay paging onto the block explorer's rules
// (docs/explorer.md): results always come newest first; first=N alone
// gives the N newest, last=N alone the N oldest, before=C (with last) the
// rows just older than C, after=C (with first) the rows just newer. The
// explorer has no page info, so one extra row is asked for; and since it
// skips rows it cannot decode, a short answer is not taken as the end of
// the list until a follow-up request for explorerFollowUpRows more comes
// back empty.
type explorerPaging[T any] struct {
	// Fetch asks the explorer: older=true is last/before (rows older than
	// the cursor, or the oldest), older=false is first/after.
	Fetch func(ctx context.Context, older bool, cursor *T, n int) ([]T, error)
	// MaxFollowUps bounds the follow-up requests for short answers.
	MaxFollowUps int
	// Oldest, when set, reports that no row of the list can be older than
	// row (the first transaction of a block, in a list of that block
	// alone): a short answer ending there is the end of the list, with no
	// follow-up to confirm it.
	Oldest func(row *T) bool
}

// explorerFollowUpRows is the least a follow-up request asks for: the end
// of the list is assumed only when that many rows past the last one seen
// all fail to decode upstream or do not exist.
const explorerFollowUpRows = 100

// page serves a Relay page. Forward pages walk from the newest row (or
// from the cursor) towards older rows; backward pages walk from the oldest
// row (or from the cursor) towards newer ones and keep the rows nearest
// their start.
func (e explorerPaging[T]) page(ctx context.Context, backward bool, cursor *T, size int) (rows []T, hasNext, hasPrev bool, err error) {
	want := size + 1
	walkOlder := !backward
	// Without a cursor the first request starts at an end of the list:
	// first=N alone gives the newest rows, last=N alone the oldest.
	older := walkOlder
	if cursor == nil {
		older = backward
	}
	var got []T
	from := cursor
	for round := 0; len(got) < want; round++ {
		if round > e.MaxFollowUps {
			return nil, false, false, &Error{Code: CodeUpstreamError, Message: fmt.Sprintf(
				"the block explorer kept answering short pages (it skips transactions it cannot decode): %d of %d rows after %d requests", len(got), want, round)}
		}
		n := want - len(got)
		if round > 0 {
			// A follow-up asks for plenty: only an empty answer to it
			// is taken as the end of the list.
			n = max(n, explorerFollowUpRows)
		}
		batch, err := e.Fetch(ctx, older, from, n)
		if err != nil {
			return nil, false, false, err
		}
		if len(batch) == 0 {
			break
		}
		// Rows come newest first: older rows continue the run at its end,
		// newer rows at its start.
		// Batches may be shared with other requests (coalesced calls):
		// copy, never append into them.
		if walkOlder {
			got = append(got, batch...)
			from = &got[len(got)-1]
			if e.Oldest != nil && e.Oldest(from) {
				break
			}
		} else {
			got = append(slices.Clone(batch), got...)
			from = &got[0]
		}
		older = walkOlder
	}
	more := len(got) > size
	if more {
		if walkOlder {
			got = got[:size]
		} else {
			got = got[len(got)-size:]
		}
	}
	if backward {
		return got, cursor != nil, more, nil
	}
	return got, more, cursor != nil, nil
}
