package graph

import (
	"context"
	"unsafe"

	"github.com/tradenet/gateway/graph/model"
	"github.com/tradenet/gateway/upstream"
)

// pageInfo builds Relay page info from a page's cursors.
func pageInfo(cursors []string, hasNext, hasPrev bool) *model.PageInfo {
	info := &model.PageInfo{HasNextPage: hasNext, HasPreviousPage: hasPrev}
	if len(cursors) > 0 {
		info.StartCursor = &cursors[0]
		info.EndCursor = &cursors[len(cursors)-1]
	}
	return info
}

// dataNodeConnection serves a data node list (assets, delegations) as a
// connection's edges and page info: args resolved into the data node's
// paging for list, the page fetched, its freshness recorded, and each row
// made an edge with its cursor.
func dataNodeConnection[T, E any](ctx context.Context, r *Resolver, list cursorList, args pageArgs, newestFirst *bool,
	fetch func(upstream.Pagination) (*upstream.Page[T], error), edge func(cursor string, row *T) E,
) ([]E, *model.PageInfo, error) {
	req, err := r.pagingFor(ctx).resolve(args)
	if err != nil {
		return nil, nil, err
	}
	p, err := dataNodePagination(r.Cursors, req, list, newestFirst)
	if err != nil {
		return nil, nil, err
	}
	pg, err := fetch(p)
	if err != nil {
		return nil, nil, err
	}
	recordFreshness(ctx, pg.Freshness)
	// The cursors, when the operation reads them (cursoruse.go): else
	// the edges' are empty and the page info's null.
	rows := dataNodePage(r.Cursors, req, list, pg, readsCursors(ctx, list))
	edges := make([]E, len(rows.Rows))
	for i, row := range rows.Rows {
		cursor := ""
		if rows.Cursors != nil {
			cursor = rows.Cursors[i]
		}
		edges[i] = edge(cursor, row)
	}
	return edges, pageInfo(rows.Cursors, rows.HasNextPage, rows.HasPreviousPage), nil
}

// dataNodeCursor wraps a data-node cursor: those work (except on funding
// payments), so the gateway passes them through, bound to their list.
type dataNodeCursor struct {
	C upstream.Cursor `json:"c"`
}

// encode returns the cursor for list: the upstream cursor packed in
// binary, signed, built in a stack buffer.
func (c dataNodeCursor) encode(keys *CursorKeys, list cursorList) string {
	var buf [(cursorBuffer + cursorMACSize) * 4 / 3]byte
	return string(c.appendEncoded(buf[:0], keys, list))
}

// appendEncoded appends the cursor encode returns to dst.
func (c dataNodeCursor) appendEncoded(dst []byte, keys *CursorKeys, list cursorList) []byte {
	s := keys.signer()
	dst = c.appendSealed(dst, s, list)
	s.put()
	return dst
}

// appendSealed appends the cursor encode returns to dst, signed with s:
// the raw form is packed straight into the state's buffer.
func (c dataNodeCursor) appendSealed(dst []byte, s *macState, list cursorList) []byte {
	s.msg = c.C.AppendPack(appendCursorHeader(s.msg[:0], list))
	return s.appendSealed(dst)
}

// decodeDataNodeCursor reads a data-node list's cursor.
func decodeDataNodeCursor(keys *CursorKeys, arg, cursor string, list cursorList) (upstream.Cursor, error) {
	body, err := openCursor(keys, arg, cursor, list)
	if err != nil {
		return "", err
	}
	c, err := upstream.UnpackCursor(body)
	if err != nil || c == "" {
		return "", malformedCursor(arg, list)
	}
	return c, nil
}

// dataNodePagination turns a page request into the data node's paging
// parameters. A page of 0 rows asks for one, to learn whether rows exist.
func dataNodePagination(keys *CursorKeys, req pageRequest, list cursorList, newestFirst *bool) (upstream.Pagination, error) {
	p := upstream.Pagination{NewestFirst: newestFirst}
	if req.Cursor != "" {
		c, err := decodeDataNodeCursor(keys, req.cursorArg(), req.Cursor, list)
		if err != nil {
			return p, err
		}
		if req.Backward {
			p.Before = c
		} else {
			p.After = c
		}
	}
	size := int32(max(req.Size, 1))
	if req.Backward {
		p.Last = &size
	} else {
		p.First = &size
	}
	return p, nil
}

// dataNodePage turns a data-node page into a page of the gateway's rows,
// with their cursors when withCursors is set (else Cursors is nil).
// The data node's page info is exact (docs/wire.md, Data-node paging).
func dataNodePage[T any](keys *CursorKeys, req pageRequest, list cursorList, pg *upstream.Page[T], withCursors bool) page[*T] {
	out := page[*T]{HasNextPage: pg.PageInfo.HasNextPage, HasPreviousPage: pg.PageInfo.HasPreviousPage}
	// Behind a cursor there is at least the cursor's row. The data node
	// says so, except on an empty page; say so always, as the other
	// lists do.
	if req.Cursor != "" {
		if req.Backward {
			out.HasNextPage = true
		} else {
			out.HasPreviousPage = true
		}
	}
	if req.Size == 0 {
		if req.Backward {
			out.HasPreviousPage = len(pg.Edges) > 0
		} else {
			out.HasNextPage = len(pg.Edges) > 0
		}
		return out
	}
	out.Rows = make([]*T, len(pg.Edges))
	for i := range pg.Edges {
		out.Rows[i] = &pg.Edges[i].Node
	}
	if withCursors {
		out.Cursors = pageCursors(keys, list, pg)
	}
	return out
}

// pageCursors are the cursors of pg's edges for list. They are the same
// for every request holding the same upstream answer, so they are made
// once for the requests that share it in flight (upstream's Page.Derive):
// a page that 16 identical requests wait for together is signed once, not
// 16 times. They are shared: read only.
func pageCursors[T any](keys *CursorKeys, list cursorList, pg *upstream.Page[T]) []string {
	made, _ := pg.Derive(pageCursorsKey{keys: keys, list: list}, func() any {
		cursors := make([]string, len(pg.Edges))
		encodeCursors(keys, pg.Edges, cursors, list)
		return cursors
	}).([]string)
	if made == nil && len(pg.Edges) > 0 { // its maker panicked in another request
		made = make([]string, len(pg.Edges))
		encodeCursors(keys, pg.Edges, made, list)
	}
	return made
}

// pageCursorsKey names a page's cursors among what is derived from it:
// they depend on the signing keys and the list besides the page.
type pageCursorsKey struct {
	keys *CursorKeys
	list cursorList
}

// encodeCursors encodes the edges' cursors into cursors. A large page's
// are encoded in two halves at once (about half a microsecond a row with
// the MAC: 0.4 ms for a page of 1,000, on the request's path while nothing
// else runs); a panic in the helper goroutine leaves its half to this one,
// where the resolver's recovery turns it into an error.
func encodeCursors[T any](keys *CursorKeys, edges []upstream.Edge[T], cursors []string, list cursorList) {
	encode := func(from, to int) { encodeCursorRun(keys, edges[from:to], cursors[from:to], list) }
	if len(edges) < parallelCursors {
		encode(0, len(edges))
		return
	}
	half := len(edges) / 2
	done := make(chan bool, 1)
	go func() {
		defer func() { done <- recover() == nil }()
		encode(half, len(edges))
	}()
	encode(0, half)
	if !<-done {
		encode(half, len(edges))
	}
}

// encodeCursorRun encodes a run of edges' cursors into cursors. They are
// written one after another into one buffer, which becomes a string
// without a copy, and each cursor is a slice of it: two allocations for
// the run rather than one a row (a thousand for a page of 1,000
// delegations), and the same bytes. One signing state serves the run.
func encodeCursorRun[T any](keys *CursorKeys, edges []upstream.Edge[T], cursors []string, list cursorList) {
	if len(edges) < 8 { // below this, the run's own allocations cost more
		for i := range edges {
			cursors[i] = dataNodeCursor{C: edges[i].Cursor}.encode(keys, list)
		}
		return
	}
	s := keys.signer()
	var scratch [(cursorBuffer + cursorMACSize) * 4 / 3]byte
	first := dataNodeCursor{C: edges[0].Cursor}.appendSealed(scratch[:0], s, list)
	// Cursors of a list are about the same length: room for all, and an
	// eighth more.
	all := append(make([]byte, 0, len(first)*len(edges)*9/8), first...)
	ends := make([]int, len(edges))
	ends[0] = len(all)
	for i := 1; i < len(edges); i++ {
		all = dataNodeCursor{C: edges[i].Cursor}.appendSealed(all, s, list)
		ends[i] = len(all)
	}
	s.put()
	// all is never written again: its bytes can be the string's.
	text, start := unsafe.String(unsafe.SliceData(all), len(all)), 0
	for i, end := range ends {
		cursors[i] = text[start:end]
		start = end
	}
}

// parallelCursors is the smallest page whose cursors are encoded in two
// halves: below it, starting a goroutine costs more than it saves.
const parallelCursors = 256
