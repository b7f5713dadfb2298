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
	edges, info, err := dataNodeConnection(ctx, r, listDelegations, args, newestFirst,
		func(p upstream.Pagination) (*upstream.DelegationPage, error) {
			pg, err := r.upstreamFor(ctx).ListDelegations(ctx, upstream.DelegationsParams{
				PartyID: deref(f.PartyID), NodeID: deref(f.NodeID), EpochID: deref(f.EpochID), Pagination: p,
			})
			if err != nil {
				return nil, fmt.Errorf("list delegations: %w", err)
			}
			return pg, nil
		},
		func(cursor string, row *upstream.Delegation) model.DelegationEdge {
			return model.DelegationEdge{Cursor: cursor, Node: row}
		})
	if err != nil {
		return nil, err
	}
	return &model.DelegationConnection{Edges: edges, PageInfo: info}, nil
}
