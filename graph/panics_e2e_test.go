package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// panicky is an Upstream that panics in the methods switched on, and
// otherwise asks the real client.
type panicky struct {
	graph.Upstream
	listAssets, getAsset, listDelegations bool
}

var _ graph.Upstream = panicky{}

func (p panicky) ListAssets(ctx context.Context, params upstream.AssetsParams) (*upstream.AssetPage, error) {
	if p.listAssets {
		panic("boom in ListAssets")
	}
	return p.Upstream.ListAssets(ctx, params)
}

func (p panicky) GetAsset(ctx context.Context, id string) (*upstream.Asset, *upstream.Freshness, error) {
	if p.getAsset {
		panic(fmt.Sprintf("boom in GetAsset(%s)", id))
	}
	return p.Upstream.GetAsset(ctx, id)
}

func (p panicky) ListDelegations(ctx context.Context, params upstream.DelegationsParams) (*upstream.DelegationPage, error) {
	if p.listDelegations {
		var m map[string]int
		m["nil map"]++ // a runtime error, not just a panic value
	}
	return p.Upstream.ListDelegations(ctx, params)
}

func TestPanicsBecomeInternalErrorsAndTheProcessKeepsServing(t *testing.T) {
	sample, err := sharedSample()
	if err != nil {
		t.Fatal(err)
	}
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL})
	if err != nil {
		t.Fatal(err)
	}
	// Asset ids to look up: a page's first two.
	var page struct {
		Assets struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	healthy := newGatewayURL(t, sample.URL)
	healthy.query(t, `{ assets(first: 5) { edges { node { id } } } }`, nil).mustData(t, &page)
	var ids []string
	for _, e := range page.Assets.Edges {
		ids = append(ids, e.Node.ID)
	}
	five := map[string]any{}
	for i, id := range ids {
		five[fmt.Sprintf("v%d", i)] = id
	}

	logs := &testutil.LockedBuffer{}
	up := panicky{Upstream: client, listAssets: true, getAsset: true, listDelegations: true}
	h := transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream: up,
		Logger:   slog.New(slog.NewTextHandler(logs, nil)),
		Loaders:  graph.LoaderConfig{Wait: graph.DefaultLoaderConfig.Wait, FewAssets: 4, AssetCacheSize: 0, AssetCacheTTL: graph.DefaultLoaderConfig.AssetCacheTTL},
	}), transport.Config{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	g := &testGateway{URL: srv.URL}

	cases := []struct {
		name, query string
		vars        map[string]any
		failing     []string // root fields that must fail INTERNAL
		healthy     string   // a root field that must resolve
		logged      string
	}{
		{"resolver", `{ assets(first: 2) { edges { node { id } } } transactions(first: 2) { edges { node { hash } } } }`, nil,
			[]string{"assets"}, "transactions", "boom in ListAssets"},
		{"runtime error in a resolver", `{ delegations(first: 2) { edges { node { amount } } } transactions(first: 1) { edges { node { hash } } } }`, nil,
			[]string{"delegations"}, "transactions", "assignment to entry in nil map"},
		{"loader (one by one, on goroutines of its own)", `query($a: ID!, $b: ID!) { a: asset(id: $a) { id } b: asset(id: $b) { id } transactions(first: 1) { edges { node { hash } } } }`,
			map[string]any{"a": ids[0], "b": ids[1]}, []string{"a", "b"}, "transactions", "boom in GetAsset"},
		{"loader batch function (a listing of all assets)", `query($v0: ID!, $v1: ID!, $v2: ID!, $v3: ID!, $v4: ID!) {
			a0: asset(id: $v0) { id } a1: asset(id: $v1) { id } a2: asset(id: $v2) { id } a3: asset(id: $v3) { id } a4: asset(id: $v4) { id }
			transactions(first: 1) { edges { node { hash } } } }`,
			five, []string{"a0", "a1", "a2", "a3", "a4"}, "transactions", "panic in loader batch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := g.query(t, tc.query, tc.vars)
			if len(resp.Errors) != len(tc.failing) {
				t.Fatalf("errors %+v, want one per field of %v", resp.Errors, tc.failing)
			}
			for _, e := range resp.Errors {
				if e.code() != "INTERNAL" || e.Message != "internal error" {
					t.Fatalf("error %+v, want INTERNAL \"internal error\"", e)
				}
				if strings.Contains(fmt.Sprint(e.Extensions), "boom") {
					t.Fatalf("internals leak to the client: %+v", e)
				}
			}
			var data map[string]json.RawMessage
			_ = json.Unmarshal(resp.Data, &data)
			if !strings.Contains(string(data[tc.healthy]), `"edges":[{`) {
				t.Fatalf("%s did not resolve: %s", tc.healthy, resp.Data)
			}
			for _, f := range tc.failing {
				if string(data[f]) != "null" {
					t.Fatalf("%s = %s, want null", f, data[f])
				}
			}
			out := logs.String()
			if !strings.Contains(out, tc.logged) || !strings.Contains(out, "goroutine ") || !strings.Contains(out, ".go:") {
				t.Fatalf("the panic is not logged with its stack:\n%s", out)
			}
		})
	}
	// The process still serves.
	resp, err := http.Get(srv.URL + "?query=" + url.QueryEscape(`{ transactions(first: 1) { edges { node { hash } } } }`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the panics: %v %v", resp, err)
	}
	resp.Body.Close()
}
