package graph

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tradenet/gateway/graph/model"
	"github.com/tradenet/gateway/upstream"
)

// transactionFilter is what a transactions connection is filtered by.
type transactionFilter struct {
	CmdTypes, ExcludeCmdTypes, Parties []string
}

// txCursor is the gateway's transaction cursor: the row's place in the
// chain, which is also the explorer's cursor.
type txCursor struct {
	B uint64 `json:"b"`
	I uint32 `json:"i"`
}

// encode returns the cursor: its JSON ({"b":…,"i":…}) written without
// reflection, in a stack buffer.
func (c txCursor) encode(keys *CursorKeys) string {
	var raw [cursorBuffer]byte
	b := appendCursorHeader(raw[:0], listTransactions)
	b = append(b, `{"b":`...)
	b = strconv.AppendUint(b, c.B, 10)
	b = append(b, `,"i":`...)
	b = strconv.AppendUint(b, uint64(c.I), 10)
	return keys.sealCursor(append(b, '}'))
}

// maxExplorerFollowUps bounds the extra requests made when the explorer
// answers short pages (it skips rows it cannot decode).
const maxExplorerFollowUps = 4

// listTransactions serves Query.transactions and Party.transactions.
func (r *Resolver) listTransactions(ctx context.Context, f transactionFilter, args pageArgs) (*model.TransactionConnection, error) {
	for i := range f.Parties {
		if err := checkID(fmt.Sprintf("parties[%d]", i), "party", &f.Parties[i]); err != nil {
			return nil, err
		}
	}
	for _, list := range []struct {
		arg   string
		types []string
	}{{"cmdTypes", f.CmdTypes}, {"excludeCmdTypes", f.ExcludeCmdTypes}} {
		for i, t := range list.types {
			if t == "" {
				return nil, badInput("%s[%d]: empty command type; use the explorer's type names such as \"Batch Market Instructions\"", list.arg, i)
			}
		}
	}
	req, err := r.pagingFor(ctx).resolve(args)
	if err != nil {
		return nil, err
	}
	var from *upstream.Transaction
	if req.Cursor != "" {
		var c txCursor
		if err := decodeCursor(r.Cursors, req.cursorArg(), req.Cursor, listTransactions, &c); err != nil {
			return nil, err
		}
		from = &upstream.Transaction{Block: upstream.Uint64(c.B), Index: upstream.Int32(c.I)}
	}
	paging := explorerPaging[upstream.Transaction]{
		MaxFollowUps: maxExplorerFollowUps,
		Fetch: func(ctx context.Context, older bool, cursor *upstream.Transaction, n int) ([]upstream.Transaction, error) {
			p := upstream.TransactionsParams{CmdTypes: f.CmdTypes, ExcludeCmdTypes: f.ExcludeCmdTypes, Parties: f.Parties}
			var at *upstream.TxCursor
			if cursor != nil {
				pos := cursor.Position()
				at = &pos
			}
			if older {
				p.Last, p.Before = n, at
			} else {
				p.First, p.After = n, at
			}
			pg, err := r.upstreamFor(ctx).ListTransactions(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("list transactions: %w", err)
			}
			return pg.Transactions, nil
		},
	}
	rows, hasNext, hasPrev, err := paging.page(ctx, req.Backward, from, req.Size)
	if err != nil {
		return nil, err
	}
	prefetchAssets(roundsFor(ctx), rows)
	cursors := make([]string, len(rows))
	conn := &model.TransactionConnection{Edges: make([]model.TransactionEdge, len(rows))}
	for i := range rows {
		pos := rows[i].Position()
		cursors[i] = txCursor{B: pos.Block, I: pos.Index}.encode(r.Cursors)
		conn.Edges[i] = model.TransactionEdge{Cursor: cursors[i], Node: &rows[i]}
	}
	conn.PageInfo = pageInfo(cursors, hasNext, hasPrev)
	return conn, nil
}
