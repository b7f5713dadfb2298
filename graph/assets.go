package graph

import (
	"context"
	"fmt"

	"github.com/tradenet/gateway/graph/model"
	"github.com/tradenet/gateway/upstream"
)

// listAssets serves Query.assets.
func (r *Resolver) listAssets(ctx context.Context, args pageArgs, newestFirst *bool) (*model.AssetConnection, error) {
	req, err := r.pagingFor(ctx).resolve(args)
	if err != nil {
		return nil, err
	}
	p, err := dataNodePagination(r.Cursors, req, listAssets, newestFirst)
	if err != nil {
		return nil, err
	}
	pg, err := r.upstreamFor(ctx).ListAssets(ctx, upstream.AssetsParams{Pagination: p})
	if err != nil {
		return nil, fmt.Errorf("list assets: %w", err)
	}
	recordFreshness(ctx, pg.Freshness)
	rows := dataNodePage(r.Cursors, req, listAssets, pg)
	conn := &model.AssetConnection{Edges: make([]model.AssetEdge, len(rows.Rows)), PageInfo: pageInfo(rows.Cursors, rows.HasNextPage, rows.HasPreviousPage)}
	for i, row := range rows.Rows {
		conn.Edges[i] = model.AssetEdge{Cursor: rows.Cursors[i], Node: row}
	}
	return conn, nil
}

// asset serves Query.asset: null with NOT_FOUND when the id is unknown.
func (r *Resolver) asset(ctx context.Context, id string) (*upstream.Asset, error) {
	return lookupAsset(ctx, id)
}

// node serves Query.node: assets are the only Node kind; an unknown id is
// null without an error, as Relay expects.
func (r *Resolver) node(ctx context.Context, id string) (model.Node, error) {
	a, err := lookupAsset(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return a, nil
}
