package graph

import (
	"context"
	"fmt"

	"github.com/tradenet/gateway/graph/model"
	"github.com/tradenet/gateway/upstream"
)

// delegationFilter is what a delegations connection is filtered by.
type delegationFilter struct {
	PartyID, NodeID, EpochID *string
}

// listDelegations serves Query.delegations, Party.delegations and
// ValidatorNode.delegations. Without epochId the data node returns every
// epoch (docs/wire.md, Data-node paging), and so does this list.
func (r *Resolver) listDelegations(ctx context.Context, f delegationFilter, args pageArgs, newestFirst *bool) (*model.DelegationConnection, error) {
	if err := checkID("partyId", "party", f.PartyID); err != nil {
		return nil, err
	}
	if err := checkID("nodeId", "node", f.NodeID); err != nil {
		return nil, err
	}
	if err := checkEpoch("epochId", f.EpochID); err != nil {
		return nil, err
	}
	req, err := r.pagingFor(ctx).resolve(args)
	if err != nil {
		return nil, err
	}
	p, err := dataNodePagination(r.Cursors, req, listDelegations, newestFirst)
	if err != nil {
		return nil, err
	}
	pg, err := r.upstreamFor(ctx).ListDelegations(ctx, upstream.DelegationsParams{
		PartyID: deref(f.PartyID), NodeID: deref(f.NodeID), EpochID: deref(f.EpochID), Pagination: p,
	})
	if err != nil {
		return nil, fmt.Errorf("list delegations: %w", err)
	}
	recordFreshness(ctx, pg.Freshness)
	rows := dataNodePage(r.Cursors, req, listDelegations, pg)
	conn := &model.DelegationConnection{Edges: make([]model.DelegationEdge, len(rows.Rows)), PageInfo: pageInfo(rows.Cursors, rows.HasNextPage, rows.HasPreviousPage)}
	for i, row := range rows.Rows {
		conn.Edges[i] = model.DelegationEdge{Cursor: rows.Cursors[i], Node: row}
	}
	return conn, nil
}
