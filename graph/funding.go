package graph

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/tradenet/gateway/graph/model"
	"github.com/tradenet/gateway/upstream"
)

// The data node's funding-payment cursors always fail (upstream-wire.md
// §4.1): only a first page, from either end, up to 5000 rows, works. So
// the gateway never sends it a cursor. Its own cursors carry the row's
// sort key, and each page is cut from a window taken from the nearer end
// of the list (keyedPaging). A page neither end reaches is refused.

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
	// position.
	H bool `json:"h"`
	D int  `json:"d"`
}

// encode returns the cursor: its JSON
// ({"k":{"t":…,"m":"…","s":…,"p":"…"},"h":…,"d":…}) written without
// reflection, in a stack buffer.
func (c fundingCursor) encode() string {
	var raw [cursorBuffer]byte
	b := appendCursorHeader(raw[:0], listFundingPayments)
	b = append(b, `{"k":{"t":`...)
	b = strconv.AppendInt(b, c.K.T, 10)
	b = append(b, `,"m":`...)
	b = appendJSONString(b, c.K.M)
	b = append(b, `,"s":`...)
	b = strconv.AppendUint(b, c.K.S, 10)
	b = append(b, `,"p":`...)
	b = appendJSONString(b, c.K.P)
	b = append(b, `},"h":`...)
	b = strconv.AppendBool(b, c.H)
	b = append(b, `,"d":`...)
	b = strconv.AppendInt(b, int64(c.D), 10)
	return sealCursor(append(b, '}'))
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
		var c fundingCursor
		if err := decodeCursor(req.cursorArg(), req.Cursor, listFundingPayments, &c); err != nil {
			return nil, err
		}
		if c.D < 0 {
			return nil, badInput("%s: malformed %s cursor; pass a cursor from edges.cursor or pageInfo", req.cursorArg(), listFundingPayments)
		}
		rows, pos, hasNext, hasPrev, err = paging.from(ctx, keyed[fundingKey]{Key: c.K, Pos: windowPos{Head: c.H, Dist: c.D}}, req.Backward, req.Size)
	}
	if err != nil {
		return nil, err
	}
	cursors := make([]string, len(rows))
	conn := &model.FundingPaymentConnection{Edges: make([]model.FundingPaymentEdge, len(rows))}
	for i := range rows {
		cursors[i] = fundingCursor{K: keyOfFunding(&rows[i]), H: pos[i].Head, D: pos[i].Dist}.encode()
		conn.Edges[i] = model.FundingPaymentEdge{Cursor: cursors[i], Node: &rows[i]}
	}
	conn.PageInfo = pageInfo(cursors, hasNext, hasPrev)
	return conn, nil
}
