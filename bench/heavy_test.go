package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// BenchmarkHeaviestQuery measures, with allocations, the CPU paths of the
// heaviest query of the comparison: a page of 50 transactions of the four
// command kinds the schema describes, every field of every command
// selected through union fragments, asset references resolved. No network:
// the upstream is a stub serving the page decoded once, and the handler is
// called in-process.
//
//   - decode: the explorer's JSON body (51 rows: the page and one more, to
//     learn whether more exist) into upstream.Transaction values with
//     encoding/json, as the typed direct client does (the gateway decodes
//     with package upstream's decoder: upstream's
//     BenchmarkDecodeSampleTransactions compares the two);
//   - map, encode, respond: gqlgen's executor alone (the direct executor
//     builds no tree): the request executed to its finished result tree
//     (resolvers, connection building and cursors, loaders, gqlgen's field
//     execution), the tree then dropped; that tree written as JSON; and
//     json.Marshal of the response around the written data, as gqlgen's
//     POST transport does;
//   - handler: the whole handler as the gateway runs it (the direct
//     executor, the POST transport that splices its data), request in,
//     response body out;
//   - handler-gqlgen: the same with gqlgen's executor alone, as before the
//     direct executor.
//
// Each reports allocs/tx, allocations per transaction (per row of the
// page; decode per row decoded).
//
//	go test -run '^$' -bench HeaviestQuery -benchmem ./bench
func BenchmarkHeaviestQuery(b *testing.B) {
	h := newHeavy(b)
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(h.body)))
		count := countAllocs(b)
		for b.Loop() {
			var page struct {
				Transactions []upstream.Transaction `json:"transactions"`
			}
			if err := json.Unmarshal(h.body, &page); err != nil {
				b.Fatal(err)
			}
		}
		count(len(h.rows))
	})
	b.Run("map", func(b *testing.B) {
		h.capture.set(captureDrop)
		count := countAllocs(b)
		for b.Loop() {
			h.serve(b, h.mapHandler)
		}
		count(heavyPageSize)
	})
	b.Run("encode", func(b *testing.B) {
		tree := h.tree(b)
		var buf bytes.Buffer
		count := countAllocs(b)
		for b.Loop() {
			buf.Reset()
			tree.MarshalGQL(&buf)
		}
		count(heavyPageSize)
		b.SetBytes(int64(buf.Len()))
	})
	b.Run("respond", func(b *testing.B) {
		var buf bytes.Buffer
		h.tree(b).MarshalGQL(&buf)
		resp := &graphql.Response{Data: buf.Bytes()}
		b.SetBytes(int64(buf.Len()))
		count := countAllocs(b)
		for b.Loop() {
			if _, err := json.Marshal(resp); err != nil {
				b.Fatal(err)
			}
		}
		count(heavyPageSize)
	})
	b.Run("handler", func(b *testing.B) {
		count := countAllocs(b)
		for b.Loop() {
			h.serve(b, h.handler)
		}
		count(heavyPageSize)
	})
	b.Run("handler-gqlgen", func(b *testing.B) {
		count := countAllocs(b)
		for b.Loop() {
			h.serve(b, h.gqlgenHandler)
		}
		count(heavyPageSize)
	})
}

// TestHeaviestQueryPaths runs each path of BenchmarkHeaviestQuery once, so
// that the benchmark cannot rot, and checks that the paths measure what
// they claim: the tree the map path builds, written by the encode path,
// is the data the whole handler responds with.
func TestHeaviestQueryPaths(t *testing.T) {
	h := newHeavy(t)
	if len(h.rows) != heavyPageSize+1 {
		t.Fatalf("decoded %d transactions, want %d", len(h.rows), heavyPageSize+1)
	}
	var resp struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(h.serve(t, h.handler), &resp); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	h.tree(t).MarshalGQL(&buf)
	var want, got any
	if err := json.Unmarshal(resp.Data, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"transactions":`+buf.String()+`}`), &got); err != nil {
		t.Fatalf("the encoded tree is not JSON: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the encoded tree differs from the handler's data:\n%.300s\n%.300s", buf.String(), resp.Data)
	}
	if edges := length(got, "transactions", "edges"); edges != heavyPageSize {
		t.Errorf("%d edges, want %d", edges, heavyPageSize)
	}
	var dropped struct {
		Data map[string]any `json:"data"`
	}
	h.capture.set(captureDrop)
	if err := json.Unmarshal(h.serve(t, h.mapHandler), &dropped); err != nil || dropped.Data["transactions"] != nil {
		t.Errorf("the map path wrote its tree: %v %v", dropped, err)
	}
}

// heavyPageSize is the heaviest query's page size.
const heavyPageSize = 50

// heavyLoaders has a short loader wait: the wait is idle time, and a
// benchmark of CPU paths should not sleep 2ms per operation. The asset
// cache is off, as in the comparison.
var heavyLoaders = graph.LoaderConfig{Wait: 20 * time.Microsecond, FewAssets: graph.DefaultLoaderConfig.FewAssets, AssetCacheSize: 0, AssetCacheTTL: time.Minute}

// heavy is the heaviest query with its data, decoded once, and handlers
// over a stub upstream serving it.
type heavy struct {
	body    []byte
	rows    []upstream.Transaction
	request []byte
	// handler is the gateway's handler; mapHandler the same with the
	// capturing extension.
	handler, mapHandler http.Handler
	// gqlgenHandler is the handler with gqlgen's executor alone (the map
	// and encode paths are gqlgen's: the direct executor has no tree).
	gqlgenHandler http.Handler
	capture       *captureTree
}

func newHeavy(b testing.TB) *heavy {
	b.Helper()
	sample, err := sampleservice.Start(sampleservice.Config{Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: 1}}, "")
	if err != nil {
		b.Fatal(err)
	}
	defer sample.Close()
	q := transactionsQuery(heavyPageSize)
	h := &heavy{
		body:    httpGet(b, sample.URL+"/rest/transactions?"+url.Values{"first": {fmt.Sprint(heavyPageSize + 1)}, "cmdTypes": describedKinds}.Encode()),
		capture: &captureTree{},
	}
	var page struct {
		Transactions []upstream.Transaction `json:"transactions"`
	}
	if err := json.Unmarshal(h.body, &page); err != nil {
		b.Fatal(err)
	}
	h.rows = page.Transactions
	var assets struct {
		Assets upstream.AssetPage `json:"assets"`
	}
	if err := json.Unmarshal(httpGet(b, sample.URL+"/api/v2/assets?pagination.first=5000"), &assets); err != nil {
		b.Fatal(err)
	}
	stub := &pageUpstream{transactions: h.rows, assets: &assets.Assets}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	// One key for the three, whose responses (cursors included) are compared.
	keys := graph.RandomCursorKeys()
	h.handler = transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{Upstream: stub, Loaders: heavyLoaders, Logger: logger, CursorKeys: keys}), transport.Config{})
	h.gqlgenHandler = transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{Upstream: stub, Loaders: heavyLoaders, Logger: logger, CursorKeys: keys, GqlgenExecutor: true}), transport.Config{})
	h.mapHandler = transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream:   stub,
		Loaders:    heavyLoaders,
		Logger:     logger,
		CursorKeys: keys,
		Extensions: []graphql.HandlerExtension{h.capture},
	}), transport.Config{})
	if h.request, err = json.Marshal(gqlRequest{Query: q.doc, Variables: q.vars}); err != nil {
		b.Fatal(err)
	}
	// The page must come back whole: no GraphQL error, not even the data
	// errors the harness tolerates elsewhere.
	if body := h.serve(b, h.handler); bytes.Contains(body, []byte(`"errors"`)) {
		b.Fatalf("the heaviest query has errors: %.500s", body)
	}
	return h
}

// serve POSTs the query to handler and returns the response body.
func (h *heavy) serve(b testing.TB, handler http.Handler) []byte {
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(h.request))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %.300s", rec.Code, rec.Body.Bytes())
	}
	return rec.Body.Bytes()
}

// tree executes the query once and returns its finished result tree.
func (h *heavy) tree(b testing.TB) graphql.Marshaler {
	h.capture.set(captureKeep)
	h.serve(b, h.mapHandler)
	tree := h.capture.take()
	if tree == nil {
		b.Fatal("no result tree captured")
	}
	return tree
}

const (
	captureDrop = iota // build the tree, write null instead
	captureKeep        // build the tree, keep it, write null instead
)

// captureTree is a gqlgen extension that lets the root field's resolver
// build its result tree, then keeps it aside (or drops it) and has null
// written in its place: the map path without the encode path.
type captureTree struct {
	mu   sync.Mutex
	mode int
	tree graphql.Marshaler
}

var _ graphql.RootFieldInterceptor = (*captureTree)(nil)

func (c *captureTree) ExtensionName() string                   { return "CaptureTree" }
func (c *captureTree) Validate(graphql.ExecutableSchema) error { return nil }

func (c *captureTree) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	tree := next(ctx)
	c.mu.Lock()
	if c.mode == captureKeep {
		c.tree = tree
	}
	c.mu.Unlock()
	return graphql.Null
}

func (c *captureTree) set(mode int) {
	c.mu.Lock()
	c.mode, c.tree = mode, nil
	c.mu.Unlock()
}

func (c *captureTree) take() graphql.Marshaler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tree
}

// countAllocs starts counting heap allocations; the function it returns
// reports them as allocs/tx over txs transactions per operation (and
// -benchmem's allocs/op as well).
func countAllocs(b *testing.B) func(txs int) {
	b.ReportAllocs()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	return func(txs int) {
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N)/float64(txs), "allocs/tx")
	}
}

func httpGet(b testing.TB, u string) []byte {
	b.Helper()
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return body
}

// pageUpstream serves one decoded transaction page and the assets.
type pageUpstream struct {
	transactions []upstream.Transaction
	assets       *upstream.AssetPage
}

var _ graph.Upstream = (*pageUpstream)(nil)

func (u *pageUpstream) ListAssets(context.Context, upstream.AssetsParams) (*upstream.AssetPage, error) {
	return u.assets, nil
}

func (u *pageUpstream) GetAsset(_ context.Context, id string) (*upstream.Asset, *upstream.Freshness, error) {
	for i := range u.assets.Edges {
		if u.assets.Edges[i].Node.ID == id {
			return &u.assets.Edges[i].Node, &upstream.Freshness{}, nil
		}
	}
	return nil, nil, fmt.Errorf("asset %s: %w", id, upstream.ErrNotFound)
}

func (u *pageUpstream) ListFundingPayments(context.Context, upstream.FundingPaymentsParams) (*upstream.FundingPaymentPage, error) {
	return &upstream.FundingPaymentPage{}, nil
}

func (u *pageUpstream) ListDelegations(context.Context, upstream.DelegationsParams) (*upstream.DelegationPage, error) {
	return &upstream.DelegationPage{}, nil
}

func (u *pageUpstream) ListTransactions(_ context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	if p.First != heavyPageSize+1 || p.After != nil {
		return nil, fmt.Errorf("the stub serves the first page of %d only, asked %+v", heavyPageSize+1, p)
	}
	return &upstream.TransactionPage{Transactions: u.transactions}, nil
}

func (u *pageUpstream) GetTransaction(_ context.Context, hash string) (*upstream.Transaction, error) {
	return nil, fmt.Errorf("the stub serves no lookup (%s): %w", hash, upstream.ErrNotFound)
}
