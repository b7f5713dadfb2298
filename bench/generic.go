package main

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"sync"
)

// The direct client's generic decoding (-direct-decode generic, the
// default): the same requests as the typed client (clients.go), each body
// decoded into `any` with encoding/json, as the gateway's client decodes
// the gateway's responses, and as JSON.parse decodes both in a browser.
// "The same client" on both paths: a typed decode of the REST bodies
// against a generic decode of the GraphQL responses would compare two
// clients as well as two paths.

// getAny GETs u and decodes its JSON body into a generic value.
func (c *directClient) getAny(ctx context.Context, u string) (any, error) {
	var v any
	if err := c.get(ctx, u, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// genericTransactions is directTransactions, generic.
type genericTransactions struct {
	Rows    []any
	HasNext bool
	Assets  map[string]any
	Refs    []string
}

func (c *directClient) transactionsAny(ctx context.Context, first int, cmdTypes []string) (*genericTransactions, error) {
	q := url.Values{"first": {strconv.Itoa(first + 1)}}
	if len(cmdTypes) > 0 {
		q["cmdTypes"] = cmdTypes
	}
	v, err := c.getAny(ctx, c.explorer+"/transactions?"+q.Encode())
	if err != nil {
		return nil, err
	}
	rows, _ := at(v, "transactions").([]any)
	out := &genericTransactions{Rows: rows}
	if len(rows) > first {
		out.Rows, out.HasNext = rows[:first], true
	}
	out.Refs = genericAssetRefs(out.Rows)
	if out.Assets, err = c.assetsByIDAny(ctx, out.Refs); err != nil {
		return nil, err
	}
	return out, nil
}

// genericAssetRefs is assetRefs over generic rows: the values of the
// asset reference keys anywhere in the commands (the described kinds
// have them only where assetRefs looks; verify checks the two agree).
func genericAssetRefs(rows []any) []string {
	var ids []string
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "settlementAsset", "baseAsset", "quoteAsset", "assetForMetric", "assetId", "asset":
					if id, ok := x.(string); ok {
						if id != "" && !seen[id] {
							seen[id] = true
							ids = append(ids, id)
						}
						continue
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, r := range rows {
		walk(at(r, "command"))
	}
	return ids
}

// assetsByIDAny is assetsByID, generic.
func (c *directClient) assetsByIDAny(ctx context.Context, ids []string) (map[string]any, error) {
	return findAssets(ctx, c, ids, func(ctx context.Context, u string) (assetPage[any], error) {
		v, err := c.getAny(ctx, u)
		edges, list := at(v, "assets", "edges").([]any)
		if err != nil || !list {
			return assetPage[any]{}, err
		}
		p := assetPage[any]{list: true}
		p.hasNext, _ = at(v, "assets", "pageInfo", "hasNextPage").(bool)
		p.end, _ = at(v, "assets", "pageInfo", "endCursor").(string)
		for _, e := range edges {
			if id, ok := at(e, "node", "id").(string); ok {
				p.ids = append(p.ids, id)
				p.nodes = append(p.nodes, at(e, "node"))
			}
		}
		return p, nil
	})
}

// partyAny is party, generic: the two lists fetched concurrently.
func (c *directClient) partyAny(ctx context.Context, id string, first int) ([2]any, error) {
	var (
		out        [2]any
		fundingErr error
		wg         sync.WaitGroup
	)
	wg.Go(func() {
		q := url.Values{"partyId": {id}, "pagination.first": {strconv.Itoa(first)}}
		out[0], fundingErr = c.getAny(ctx, c.dataNode+"/api/v2/funding-payments?"+q.Encode())
	})
	q := url.Values{"partyId": {id}, "pagination.first": {strconv.Itoa(first)}}
	var err error
	out[1], err = c.getAny(ctx, c.dataNode+"/api/v2/delegations?"+q.Encode())
	wg.Wait()
	return out, errors.Join(err, fundingErr)
}

// sameRefs reports whether the typed and the generic clients found the
// same asset references (so that they make the same requests).
func sameRefs(typed, generic []string) bool {
	a, b := slices.Clone(typed), slices.Clone(generic)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
