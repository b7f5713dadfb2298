package sampleservice

import (
	"encoding/base64"
	"errors"
	"net/url"
	"sort"
	"strconv"
)

// Data-node page sizes (docs/wire.md, Data-node paging).
const (
	defaultPageSize = 1000
	maxPageSize     = 5000
)

// errCursorOverflow is the v0.74 data node's message for a size out of range.
var errCursorOverflow = errors.New("pagination limit must be in range 0-" + strconv.Itoa(maxPageSize))

// query reads request parameters the way grpc-gateway does: a field may be
// named in lowerCamelCase or snake_case, the first value counts, and a
// parameter that is present but empty is still present.
type query url.Values

// lookup returns the first value of the first of names that is present.
func (q query) lookup(names ...string) (string, bool) {
	for _, n := range names {
		if vs, ok := q[n]; ok {
			if len(vs) == 0 {
				return "", true
			}
			return vs[0], true
		}
	}
	return "", false
}

// all returns every value of every one of names (repeated fields).
func (q query) all(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, q[n]...)
	}
	return out
}

// rawPagination is v2.Pagination as grpc-gateway fills it from the query.
type rawPagination struct {
	first, last   *int32
	after, before *string
	newestFirst   *bool
}

// parsePagination reads the five pagination.* parameters. A value that
// does not parse as its field's type is a type mismatch, reported before
// the service sees the request.
func parsePagination(q query) (rawPagination, *apiError) {
	var p rawPagination
	for _, f := range []struct {
		name string
		dst  **int32
	}{{"pagination.first", &p.first}, {"pagination.last", &p.last}} {
		if v, ok := q.lookup(f.name); ok {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return p, typeMismatch(f.name, err)
			}
			n32 := int32(n)
			*f.dst = &n32
		}
	}
	if v, ok := q.lookup("pagination.after"); ok {
		p.after = &v
	}
	if v, ok := q.lookup("pagination.before"); ok {
		p.before = &v
	}
	if v, ok := q.lookup("pagination.newestFirst", "pagination.newest_first"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return p, typeMismatch("pagination.newestFirst", err)
		}
		p.newestFirst = &b
	}
	return p, nil
}

// pagination is a validated data-node page request.
type pagination struct {
	// backward is true for a last/before page: it ends just before the
	// cursor (or at the end of the list).
	backward bool
	limit    int
	// cursor is the decoded cursor (JSON), nil for none; cursorName says
	// which parameter it came from, for error messages.
	cursor      []byte
	cursorName  string
	newestFirst bool
}

// resolve applies the data node's rules: first wins (last and before are
// then ignored), else last wins over after; before and after together are
// an error; a size must be within 1..5000; no size means 1000.
func (p rawPagination) resolve() (pagination, error) {
	out := pagination{limit: defaultPageSize, newestFirst: true}
	if p.newestFirst != nil {
		out.newestFirst = *p.newestFirst
	}
	if p.first == nil && p.last == nil && p.after == nil && p.before == nil {
		return out, nil
	}
	if p.before != nil && p.after != nil {
		return out, errors.New("cannot set both a before and after cursor")
	}
	var cursor *string
	switch {
	case p.first != nil:
		out.limit = int(*p.first)
		cursor, out.cursorName = p.after, "after"
	case p.last != nil:
		out.backward = true
		out.limit = int(*p.last)
		cursor, out.cursorName = p.before, "before"
	case p.after != nil:
		cursor, out.cursorName = p.after, "after"
	default:
		out.backward = true
		cursor, out.cursorName = p.before, "before"
	}
	if out.limit <= 0 || out.limit > maxPageSize {
		return out, errCursorOverflow
	}
	if cursor != nil {
		if *cursor == "" {
			return out, errors.New("failed to decode " + out.cursorName + " cursor: cursor is empty")
		}
		b, err := base64.StdEncoding.DecodeString(*cursor)
		if err != nil {
			return out, errors.New("failed to decode " + out.cursorName + " cursor: failed to decode cursor: " + err.Error())
		}
		out.cursor = b
	}
	return out, nil
}

// cursorError is the error for a cursor that is valid base64 but not the
// JSON object the list expects.
func (p pagination) cursorError(err error) error {
	return errors.New("failed to decode " + p.cursorName + " cursor: parsing cursor: " + err.Error())
}

// page is one page of a list: positions in the list's sorted slice, in
// response order, and exact page info.
type page struct {
	rows             []int32
	hasNext, hasPrev bool
}

// paginate cuts one page out of list, the positions of the matching rows in
// ascending key order. cmp compares a row's key with the cursor's key
// (negative: the row sorts before the cursor in ascending order); it is
// only called when the request has a cursor. Rows are located by key, so a
// cursor whose row no longer exists still positions the page.
func paginate(list []int32, p pagination, cmp func(row int32) int) page {
	n := len(list)
	// Traversal order: descending keys when newest first.
	at := func(i int) int32 {
		if p.newestFirst {
			return list[n-1-i]
		}
		return list[i]
	}
	cmpT := func(i int) int {
		c := cmp(at(i))
		if p.newestFirst {
			return -c
		}
		return c
	}
	hasCursor := p.cursor != nil
	var begin, end int
	var pg page
	if !p.backward {
		if hasCursor {
			begin = sort.Search(n, func(i int) bool { return cmpT(i) > 0 })
		}
		end = min(begin+p.limit, n)
		pg.hasNext = end < n
		pg.hasPrev = hasCursor
	} else {
		end = n
		if hasCursor {
			end = sort.Search(n, func(i int) bool { return cmpT(i) >= 0 })
		}
		begin = max(0, end-p.limit)
		pg.hasPrev = begin > 0
		pg.hasNext = hasCursor
	}
	if begin >= end {
		// The real service returns a zero PageInfo with an empty page.
		return page{rows: []int32{}}
	}
	pg.rows = make([]int32, 0, end-begin)
	for i := begin; i < end; i++ {
		pg.rows = append(pg.rows, at(i))
	}
	return pg
}

// appendConnection renders {"<name>":{"edges":[…],"pageInfo":{…}}} from
// the pre-encoded nodes and cursors of a list.
func appendConnection(dst []byte, name string, pg page, nodes [][]byte, cursors []string) []byte {
	dst = append(dst, `{"`...)
	dst = append(dst, name...)
	dst = append(dst, `":{"edges":[`...)
	for i, r := range pg.rows {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"node":`...)
		dst = append(dst, nodes[r]...)
		dst = append(dst, `,"cursor":"`...)
		dst = append(dst, cursors[r]...)
		dst = append(dst, `"}`...)
	}
	start, end := "", ""
	if len(pg.rows) > 0 {
		start, end = cursors[pg.rows[0]], cursors[pg.rows[len(pg.rows)-1]]
	}
	dst = append(dst, `],"pageInfo":{"hasNextPage":`...)
	dst = strconv.AppendBool(dst, pg.hasNext)
	dst = append(dst, `,"hasPreviousPage":`...)
	dst = strconv.AppendBool(dst, pg.hasPrev)
	dst = append(dst, `,"startCursor":"`...)
	dst = append(dst, start...)
	dst = append(dst, `","endCursor":"`...)
	dst = append(dst, end...)
	dst = append(dst, `"}}}`...)
	return dst
}
