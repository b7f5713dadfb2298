package graph

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/tradenet/gateway/graph/model"
	"github.com/tradenet/gateway/upstream"
)

// The data node's funding-payment cursors always fail (docs/wire.md, Known
// defects, 1): only a first page, from either end, up to 5000 rows, works.
// So the gateway never sends it a cursor. Its own cursors carry the row's
// sort key, and each page is cut from a window taken from the nearer end of
// the list (keyedPaging). A page neither end reaches is refused.

// maxFundingWindow is the largest page the data node serves.
const maxFundingWindow = 5000

// fundingKey is a funding payment's place in the data node's order:
// timestamp, market, funding period, party.
type fundingKey struct {
	T int64  `json:"t"`
	M string `json:"m"`
	S uint64 `json:"s"`
	P string `json:"p"`
}

func keyOfFunding(f *upstream.FundingPayment) fundingKey {
	return fundingKey{T: int64(f.Timestamp), M: f.MarketID, S: uint64(f.FundingPeriodSeq), P: f.PartyID}
}

// compareAscending orders keys oldest first.
func (k fundingKey) compareAscending(o fundingKey) int {
	if c := cmp.Compare(k.T, o.T); c != 0 {
		return c
	}
	if c := cmp.Compare(k.M, o.M); c != 0 {
		return c
	}
	if c := cmp.Compare(k.S, o.S); c != 0 {
		return c
	}
	return cmp.Compare(k.P, o.P)
}

// fundingCursor is the gateway's funding-payment cursor.
type fundingCursor struct {
	K fundingKey `json:"k"`
	// H and D say where the row was seen: D rows from the head (H) or the
	// tail; a hint for the size of the next window, never trusted for
	// position. The gateway only issues 0 <= D < maxFundingWindow (a row's
	// place in one window); decoding refuses anything else.
	H bool `json:"h"`
	D int  `json:"d"`
}

// encode returns the cursor: the key and the position hint in binary
// (varints; the market and party ids, 64 lowercase hex characters on the
// real network, as their 32 bytes): 143 characters with the MAC, where
// JSON took 290 without it.
func (c fundingCursor) encode(keys *CursorKeys) string {
	var raw [cursorBuffer]byte
	b := appendCursorHeader(raw[:0], listFundingPayments)
	b = binary.AppendVarint(b, c.K.T)
	b = appendPackedID(b, c.K.M)
	b = binary.AppendUvarint(b, c.K.S)
	b = appendPackedID(b, c.K.P)
	if c.H {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendVarint(b, int64(c.D))
	return keys.sealCursor(b)
}

// appendPackedID appends an id: 'x' and its 32 bytes when it is 64
// lowercase hex characters, else 's', its length and its bytes.
func appendPackedID(b []byte, id string) []byte {
	if isLowerHex64(id) {
		b = append(b, 'x')
		out, _ := hex.AppendDecode(b, []byte(id))
		return out
	}
	b = append(b, 's')
	b = binary.AppendUvarint(b, uint64(len(id)))
	return append(b, id...)
}

// decodeFundingCursor reads a funding-payment cursor.
func decodeFundingCursor(keys *CursorKeys, arg, cursor string) (fundingCursor, error) {
	body, err := openCursor(keys, arg, cursor, listFundingPayments)
	if err != nil {
		return fundingCursor{}, err
	}
	c, ok := unpackFundingCursor(body)
	if !ok {
		return fundingCursor{}, malformedCursor(arg, listFundingPayments)
	}
	return c, nil
}

// unpackFundingCursor reverses the binary payload of encode, refusing
// anything else (trailing bytes included).
func unpackFundingCursor(b []byte) (c fundingCursor, ok bool) {
	var n int
	if c.K.T, n = binary.Varint(b); n <= 0 {
		return c, false
	}
	b = b[n:]
	if c.K.M, b, ok = unpackID(b); !ok {
		return c, false
	}
	if c.K.S, n = binary.Uvarint(b); n <= 0 {
		return c, false
	}
	b = b[n:]
	if c.K.P, b, ok = unpackID(b); !ok || len(b) < 1 || b[0] > 1 {
		return c, false
	}
	c.H = b[0] == 1
	// D beyond any window is refused: next windows are sized from it.
	d, n := binary.Varint(b[1:])
	if n <= 0 || len(b) != 1+n || d < 0 || d >= maxFundingWindow {
		return c, false
	}
	c.D = int(d)
	return c, true
}

func unpackID(b []byte) (string, []byte, bool) {
	if len(b) == 0 {
		return "", nil, false
	}
	switch b[0] {
	case 'x':
		if len(b) < 33 {
			return "", nil, false
		}
		return hex.EncodeToString(b[1:33]), b[33:], true
	case 's':
		l, n := binary.Uvarint(b[1:])
		if n <= 0 || l > uint64(len(b)-1-n) {
			return "", nil, false
		}
		rest := b[1+n:]
		return string(rest[:l]), rest[l:], true
	}
	return "", nil, false
}

// fundingFilter is what a funding-payments connection is filtered by.
type fundingFilter struct {
	PartyID  string
	MarketID *string
}

// listFundingPayments serves Query.fundingPayments and Party.fundingPayments.
func (r *Resolver) listFundingPayments(ctx context.Context, f fundingFilter, args pageArgs, newestFirst *bool) (*model.FundingPaymentConnection, error) {
	if err := checkID("partyId", "party", &f.PartyID); err != nil {
		return nil, err
	}
	if err := checkID("marketId", "market", f.MarketID); err != nil {
		return nil, err
	}
	req, err := r.pagingFor(ctx).resolve(args)
	if err != nil {
		return nil, err
	}
	descending := newestFirst == nil || *newestFirst
	paging := keyedPaging[upstream.FundingPayment, fundingKey]{
		MaxWindow: maxFundingWindow,
		Fetch: func(ctx context.Context, head bool, size int) (window[upstream.FundingPayment], error) {
			n := int32(size)
			p := upstream.Pagination{NewestFirst: &descending}
			if head {
				p.First = &n
			} else {
				p.Last = &n
			}
			pg, err := r.upstreamFor(ctx).ListFundingPayments(ctx, upstream.FundingPaymentsParams{PartyID: f.PartyID, MarketID: deref(f.MarketID), Pagination: p})
			if err != nil {
				return window[upstream.FundingPayment]{}, fmt.Errorf("list funding payments of %s: %w", f.PartyID, err)
			}
			recordFreshness(ctx, pg.Freshness)
			w := window[upstream.FundingPayment]{Rows: make([]upstream.FundingPayment, len(pg.Edges))}
			for i := range pg.Edges {
				w.Rows[i] = pg.Edges[i].Node
			}
			if head {
				w.More = pg.PageInfo.HasNextPage
			} else {
				w.More = pg.PageInfo.HasPreviousPage
			}
			return w, nil
		},
		Compare: func(row upstream.FundingPayment, key fundingKey) int {
			c := keyOfFunding(&row).compareAscending(key)
			if descending {
				return -c
			}
			return c
		},
		Before: func(a, b upstream.FundingPayment) bool {
			c := keyOfFunding(&a).compareAscending(keyOfFunding(&b))
			if descending {
				return c > 0
			}
			return c < 0
		},
		Limit: fmt.Sprintf("the data node cannot page funding payments past the first and last %d rows of a list "+
			"(its funding-payment cursors are broken upstream); narrow the list with marketId, or page from the other end", maxFundingWindow),
	}
	var (
		rows             []upstream.FundingPayment
		pos              []windowPos
		hasNext, hasPrev bool
	)
	if req.Cursor == "" {
		rows, pos, hasNext, hasPrev, err = paging.first(ctx, req.Backward, req.Size)
	} else {
		c, cerr := decodeFundingCursor(r.Cursors, req.cursorArg(), req.Cursor)
		if cerr != nil {
			return nil, cerr
		}
		rows, pos, hasNext, hasPrev, err = paging.from(ctx, keyed[fundingKey]{Key: c.K, Pos: windowPos{Head: c.H, Dist: c.D}}, req.Backward, req.Size)
	}
	if err != nil {
		return nil, err
	}
	conn := &model.FundingPaymentConnection{Edges: make([]model.FundingPaymentEdge, len(rows))}
	for i := range rows {
		conn.Edges[i].Node = &rows[i]
	}
	// The cursors, when the operation reads them (cursoruse.go).
	var cursors []string
	if readsCursors(ctx, listFundingPayments) {
		cursors = make([]string, len(rows))
		for i := range rows {
			cursors[i] = fundingCursor{K: keyOfFunding(&rows[i]), H: pos[i].Head, D: pos[i].Dist}.encode(r.Cursors)
			conn.Edges[i].Cursor = cursors[i]
		}
	}
	conn.PageInfo = pageInfo(cursors, hasNext, hasPrev)
	return conn, nil
}
