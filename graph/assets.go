package graph

import (
	"context"
	"fmt"

	"github.com/tradenet/gateway/graph/model"
	"github.com/tradenet/gateway/upstream"
)

// listAssets serves Query.assets.
func (r *Resolver) listAssets(ctx context.Context, args pageArgs, newestFirst *bool) (*model.AssetConnection, error) {
	edges, info, err := dataNodeConnection(ctx, r, listAssets, args, newestFirst,
		func(p upstream.Pagination) (*upstream.AssetPage, error) {
			pg, err := r.upstreamFor(ctx).ListAssets(ctx, upstream.AssetsParams{Pagination: p})
			if err != nil {
				return nil, fmt.Errorf("list assets: %w", err)
			}
			return pg, nil
		},
		func(cursor string, row *upstream.Asset) model.AssetEdge {
			return model.AssetEdge{Cursor: cursor, Node: row}
		})
	if err != nil {
		return nil, err
	}
	return &model.AssetConnection{Edges: edges, PageInfo: info}, nil
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
