package graph_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// connectionPage is the part of a connection the walks read.
type connectionPage struct {
	Edges []struct {
		Cursor string          `json:"cursor"`
		Node   json.RawMessage `json:"node"`
	} `json:"edges"`
	PageInfo struct {
		HasNextPage     bool    `json:"hasNextPage"`
		HasPreviousPage bool    `json:"hasPreviousPage"`
		StartCursor     *string `json:"startCursor"`
		EndCursor       *string `json:"endCursor"`
	} `json:"pageInfo"`
}

// listWalk describes how to walk one list through the gateway.
type listWalk struct {
	// Query selects the connection at data.<Field>; it declares $first,
	// $after, $last, $before and uses them on the connection.
	Query string
	Field string
	// Vars are extra variables (filters).
	Vars map[string]any
	// Key identifies a node.
	Key func(node json.RawMessage) string
	// Visit, when set, sees each node with the errors under it (by path
	// relative to the node), and errors under nodes do not fail the walk.
	Visit func(t *testing.T, key string, node json.RawMessage, errs map[string][]gqlError)
}

// walk pages through the list forwards (or backwards) with pages of size
// and returns the keys in the list's forward order, checking the page info
// at every step.
func (w listWalk) walk(t *testing.T, g *testGateway, backward bool, size int) []string {
	t.Helper()
	var keys []string
	var cursor *string
	for step := 0; ; step++ {
		if step > 10000 {
			t.Fatal("walk did not end")
		}
		vars := map[string]any{}
		for k, v := range w.Vars {
			vars[k] = v
		}
		if backward {
			vars["last"], vars["before"] = size, cursor
		} else {
			vars["first"], vars["after"] = size, cursor
		}
		resp := g.query(t, w.Query, vars)
		var data map[string]connectionPage
		var nodeErrs []map[string][]gqlError
		if w.Visit == nil {
			resp.mustData(t, &data)
		} else {
			nodeErrs = w.pageErrors(t, step, resp, &data)
		}
		page := data[w.Field]
		var pageKeys []string
		for i, e := range page.Edges {
			pageKeys = append(pageKeys, w.Key(e.Node))
			if w.Visit != nil {
				w.Visit(t, pageKeys[i], e.Node, nodeErrs[i])
			}
		}
		info := page.PageInfo
		if n := len(page.Edges); n > 0 {
			if info.StartCursor == nil || *info.StartCursor != page.Edges[0].Cursor || info.EndCursor == nil || *info.EndCursor != page.Edges[n-1].Cursor {
				t.Fatalf("step %d: start/end cursors do not match the edges", step)
			}
		} else if info.StartCursor != nil || info.EndCursor != nil {
			t.Fatalf("step %d: an empty page has cursors", step)
		}
		more, behind := info.HasNextPage, info.HasPreviousPage
		if backward {
			more, behind = info.HasPreviousPage, info.HasNextPage
			keys = append(pageKeys, keys...)
		} else {
			keys = append(keys, pageKeys...)
		}
		if behind != (cursor != nil) {
			t.Fatalf("step %d: page info behind the cursor is %v, want %v", step, behind, cursor != nil)
		}
		if !more {
			return keys
		}
		if len(page.Edges) != size {
			t.Fatalf("step %d: %d edges for a page of %d that claims more", step, len(page.Edges), size)
		}
		if backward {
			cursor = info.StartCursor
		} else {
			cursor = info.EndCursor
		}
	}
}

// pageErrors decodes a page into data and returns the errors under each
// of its nodes, by path relative to the node; any other error fails.
func (w listWalk) pageErrors(t *testing.T, step int, resp gqlResponse, data *map[string]connectionPage) []map[string][]gqlError {
	t.Helper()
	if err := json.Unmarshal(resp.Data, data); err != nil {
		t.Fatalf("step %d: decode data: %v (errors %+v)", step, err, resp.Errors)
	}
	out := make([]map[string][]gqlError, len((*data)[w.Field].Edges))
	for i := range out {
		out[i], resp.Errors = errorsUnder(resp.Errors, []any{w.Field, "edges", i, "node"})
	}
	if len(resp.Errors) > 0 {
		t.Fatalf("step %d: errors outside the nodes: %+v", step, resp.Errors)
	}
	return out
}

// checkWalks walks a list both ways at several sizes and compares the
// keys with want.
func checkWalks(t *testing.T, g *testGateway, w listWalk, want []string, sizes ...int) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("the dataset has no rows for this walk")
	}
	for _, size := range sizes {
		for _, backward := range []bool{false, true} {
			t.Run(fmt.Sprintf("size=%d backward=%v", size, backward), func(t *testing.T) {
				got := w.walk(t, g, backward, size)
				if !slices.Equal(got, want) {
					t.Fatalf("walked %d rows, want %d; first difference at %d", len(got), len(want), firstDifference(got, want))
				}
			})
		}
	}
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func field(node json.RawMessage, names ...string) string {
	var m map[string]any
	if err := json.Unmarshal(node, &m); err != nil {
		return "?"
	}
	parts := make([]string, len(names))
	for i, n := range names {
		var v any = m
		for _, p := range strings.Split(n, ".") {
			v = v.(map[string]any)[p]
		}
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, "|")
}

func nanoTime(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

const pagingVars = `$first: Int, $after: String, $last: Int, $before: String`

func TestWalkAssets(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{})
	ds := g.Sample.Service.Dataset()
	var want []string
	for _, a := range ds.Assets {
		want = append(want, a.ID)
	}
	slices.Sort(want)
	slices.Reverse(want) // by id, descending: the data node's default order
	w := listWalk{
		Query: `query(` + pagingVars + `) { assets(first: $first, after: $after, last: $last, before: $before) {
			edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
		Field: "assets",
		Key:   func(n json.RawMessage) string { return field(n, "id") },
	}
	checkWalks(t, g, w, want, 1, 7, 1000)

	t.Run("oldest first", func(t *testing.T) {
		w := w
		w.Query = strings.Replace(w.Query, "before: $before)", "before: $before, newestFirst: false)", 1)
		asc := slices.Clone(want)
		slices.Reverse(asc)
		checkWalks(t, g, w, asc, 10)
	})
}

func TestWalkDelegations(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{})
	ds := g.Sample.Service.Dataset()
	rows := slices.Clone(ds.Delegations)
	// The data node's order: time, party, node, epoch, all descending.
	slices.SortFunc(rows, func(a, b sampleservice.Delegation) int {
		return -cmp.Or(cmp.Compare(a.VegaTime, b.VegaTime), cmp.Compare(a.Party, b.Party), cmp.Compare(a.NodeID, b.NodeID), compareEpochs(a.EpochSeq, b.EpochSeq))
	})
	key := func(d sampleservice.Delegation) string {
		return d.Party + "|" + d.NodeID + "|" + d.EpochSeq + "|" + d.Amount
	}
	var all []string
	for _, d := range rows {
		all = append(all, key(d))
	}
	w := listWalk{
		Query: `query(` + pagingVars + `, $party: ID, $node: ID, $epoch: ID) { delegations(partyId: $party, nodeId: $node, epochId: $epoch, first: $first, after: $after, last: $last, before: $before) {
			edges { cursor node { party { id } nodeId epochSeq amount } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
		Field: "delegations",
		Key:   func(n json.RawMessage) string { return field(n, "party.id", "nodeId", "epochSeq", "amount") },
	}
	checkWalks(t, g, w, all, 100, 1000)

	t.Run("one node", func(t *testing.T) {
		node := ds.Nodes[0]
		var want []string
		for _, d := range rows {
			if d.NodeID == node {
				want = append(want, key(d))
			}
		}
		w := w
		w.Vars = map[string]any{"node": node}
		checkWalks(t, g, w, want, 3, 50)
	})
}

func compareEpochs(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
}

// fundingOrder sorts payments in the data node's default order.
func fundingOrder(rows []sampleservice.FundingPayment) {
	slices.SortFunc(rows, func(a, b sampleservice.FundingPayment) int {
		return -cmp.Or(cmp.Compare(a.Timestamp, b.Timestamp), cmp.Compare(a.MarketID, b.MarketID), cmp.Compare(a.FundingPeriodSeq, b.FundingPeriodSeq), cmp.Compare(a.PartyID, b.PartyID))
	})
}

func fundingKey(f sampleservice.FundingPayment) string {
	return fmt.Sprintf("%s|%s|%d|%s", f.MarketID, nanoTime(int64(f.Timestamp)), f.FundingPeriodSeq, f.Amount)
}

var fundingWalk = listWalk{
	Query: `query(` + pagingVars + `, $party: ID!, $market: ID) { fundingPayments(partyId: $party, marketId: $market, first: $first, after: $after, last: $last, before: $before) {
		edges { cursor node { marketId timestamp fundingPeriodSeq amount partyId } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
	Field: "fundingPayments",
	Key:   func(n json.RawMessage) string { return field(n, "marketId", "timestamp", "fundingPeriodSeq", "amount") },
}

func TestWalkFundingPaymentsDespiteBrokenCursors(t *testing.T) {
	t.Parallel() // CPU: a sample of its own for each defect setting
	// Pages of one row are four fifths of its time: under -short the
	// walks start at pages of 7.
	sizes := []int{1, 7, 50, 1000}
	if testing.Short() {
		sizes = sizes[1:]
	}
	for _, defect := range []bool{true, false} {
		t.Run(fmt.Sprintf("defect=%v", defect), func(t *testing.T) {
			defects := sampleservice.DefaultDefects()
			defects.FundingCursors = defect
			sample := startSample(t, sampleservice.Config{Defects: defects})
			g := newGateway(t, sample, gatewayOptions{})
			ds := sample.Service.Dataset()
			party := ds.Parties[0]
			var rows []sampleservice.FundingPayment
			for _, f := range ds.FundingPayments {
				if f.PartyID == party {
					rows = append(rows, f)
				}
			}
			fundingOrder(rows)
			var want []string
			for _, f := range rows {
				want = append(want, fundingKey(f))
			}
			w := fundingWalk
			w.Vars = map[string]any{"party": party}
			checkWalks(t, g, w, want, sizes...)

			market := rows[0].MarketID
			var inMarket []string
			for _, f := range rows {
				if f.MarketID == market {
					inMarket = append(inMarket, fundingKey(f))
				}
			}
			w.Vars = map[string]any{"party": party, "market": market}
			checkWalks(t, g, w, inMarket, 9)
		})
	}
}

// emptyTransactions is a TransactionSource with no transactions.
type emptyTransactions struct{}

func (emptyTransactions) Len() int                            { return 0 }
func (emptyTransactions) Meta(int) sampleservice.TxMeta       { return sampleservice.TxMeta{} }
func (emptyTransactions) AppendJSON(dst []byte, _ int) []byte { return dst }

func TestFundingPaymentsBeyondTheUpstreamsReachAreRefused(t *testing.T) {
	// 10,050 payments of one party: the data node serves the first and the
	// last 5000 only, so rows 5000-5049 cannot be reached.
	party := strings.Repeat("ab", 32)
	market := strings.Repeat("cd", 32)
	data := &sampleservice.Dataset{Transactions: emptyTransactions{}, Parties: []string{party}, Markets: []string{market}, BlockHeight: 10, BlockTime: 1}
	for i := range 10050 {
		data.FundingPayments = append(data.FundingPayments, sampleservice.FundingPayment{
			PartyID: party, MarketID: market, FundingPeriodSeq: upstream.Uint64(i), Timestamp: upstream.UnixNanos(1_700_000_000_000_000_000 + i*1000), Amount: fmt.Sprint(i),
		})
	}
	g := newGateway(t, startSample(t, sampleservice.Config{Data: data, Defects: sampleservice.DefaultDefects()}), gatewayOptions{})
	var cursor *string
	for page := 0; page < 5; page++ {
		resp := g.query(t, fundingWalk.Query, map[string]any{"party": party, "first": 1000, "after": cursor})
		var got map[string]connectionPage
		resp.mustData(t, &got)
		if n := len(got["fundingPayments"].Edges); n != 1000 {
			t.Fatalf("page %d: %d rows", page, n)
		}
		cursor = got["fundingPayments"].PageInfo.EndCursor
	}
	resp := g.query(t, fundingWalk.Query, map[string]any{"party": party, "first": 1000, "after": cursor})
	if len(resp.Errors) != 1 || resp.Errors[0].code() != "UPSTREAM_ERROR" || !strings.Contains(resp.Errors[0].Message, "first and last 5000 rows") {
		t.Fatalf("errors = %+v, want one UPSTREAM_ERROR explaining the limit", resp.Errors)
	}
	// The tail stays reachable: the last page, backwards from the end.
	resp = g.query(t, fundingWalk.Query, map[string]any{"party": party, "last": 1000})
	var got map[string]connectionPage
	resp.mustData(t, &got)
	if n := len(got["fundingPayments"].Edges); n != 1000 || !got["fundingPayments"].PageInfo.HasPreviousPage {
		t.Fatalf("last page: %d rows, hasPreviousPage %v", n, got["fundingPayments"].PageInfo.HasPreviousPage)
	}
}

func TestWalkTransactions(t *testing.T) {
	t.Parallel() // CPU: a sample of its own, whose requests it counts
	g := newGateway(t, startSample(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}), gatewayOptions{})
	ds := g.Sample.Service.Dataset()
	src := ds.Transactions
	var all []string
	for i := src.Len() - 1; i >= 0; i-- { // newest first
		m := src.Meta(i)
		all = append(all, fmt.Sprintf("%d|%d", m.Block, m.Index))
	}
	w := listWalk{
		Query: `query(` + pagingVars + `, $types: [String!], $parties: [ID!]) { transactions(cmdTypes: $types, parties: $parties, first: $first, after: $after, last: $last, before: $before) {
			edges { cursor node { block index } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
		Field: "transactions",
		Key:   func(n json.RawMessage) string { return field(n, "block", "index") },
	}
	checkWalks(t, g, w, all, 50, 1000)

	t.Run("one block", func(t *testing.T) {
		// The block with the most transactions: walked both ways, and its
		// page costs one explorer request, since a page that reaches the
		// block's first transaction needs no follow-up to end.
		counts := map[uint64]int{}
		var block uint64
		for i := range src.Len() {
			m := src.Meta(i)
			if counts[m.Block]++; counts[m.Block] > counts[block] {
				block = m.Block
			}
		}
		var want []string
		for i := src.Len() - 1; i >= 0; i-- {
			if m := src.Meta(i); m.Block == block {
				want = append(want, fmt.Sprintf("%d|%d", m.Block, m.Index))
			}
		}
		if len(want) < 3 {
			t.Fatalf("the busiest block has %d transactions; the walk needs a few", len(want))
		}
		w := listWalk{
			Query: `query(` + pagingVars + `, $block: Uint64) { transactions(block: $block, first: $first, after: $after, last: $last, before: $before) {
				edges { cursor node { block index } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
			Field: "transactions",
			Vars:  map[string]any{"block": strconv.FormatUint(block, 10)},
			Key:   w.Key,
		}
		checkWalks(t, g, w, want, 1, 2, 50)

		before := g.Sample.Service.Requests(sampleservice.EndpointTransactions)
		w.Vars["first"] = 50
		var data map[string]connectionPage
		g.query(t, w.Query, w.Vars).mustData(t, &data)
		page := data["transactions"]
		if n := g.Sample.Service.Requests(sampleservice.EndpointTransactions) - before; n != 1 || len(page.Edges) != len(want) || page.PageInfo.HasNextPage {
			t.Fatalf("a page of the whole block: %d explorer requests, %d rows, hasNextPage %v; want 1 request, %d rows, no next page", n, len(page.Edges), page.PageInfo.HasNextPage, len(want))
		}
	})

	t.Run("filtered", func(t *testing.T) {
		party := ds.Parties[1]
		var want []string
		for i := src.Len() - 1; i >= 0; i-- {
			m := src.Meta(i)
			if m.Type == "Batch Market Instructions" && slices.Contains(m.Parties, party) {
				want = append(want, fmt.Sprintf("%d|%d", m.Block, m.Index))
			}
		}
		w := w
		w.Vars = map[string]any{"types": []string{"Batch Market Instructions"}, "parties": []string{party}}
		checkWalks(t, g, w, want, 1, 13)
	})
}

// TestWalkTransactionsEveryField walks the whole default dataset (every
// command and change kind, mixed) forwards and backwards with every field
// of the schema selected (fullSelection): the rows come in the dataset's
// order with exact page info, and each equals its wire record (compareTx).
// Under -short it walks forwards only (every row still compared; the
// backward walk is paging, which TestWalkTransactions checks both ways).
func TestWalkTransactionsEveryField(t *testing.T) {
	t.Parallel() // CPU: reads the shared sample, counts none of its requests
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Limits: fullSelectionLimits}})
	ds := g.Sample.Service.Dataset()
	src := ds.Transactions
	checker := newWireChecker(t, ds)
	var all []string
	positions := map[string]int{}
	for i := src.Len() - 1; i >= 0; i-- { // newest first
		m := src.Meta(i)
		k := fmt.Sprintf("%d|%d", m.Block, m.Index)
		all = append(all, k)
		positions[k] = i
	}
	differing := 0
	w := listWalk{
		Query: `query(` + pagingVars + `) { transactions(first: $first, after: $after, last: $last, before: $before) {
			edges { cursor node ` + checker.sel.String() + ` } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
		Field: "transactions",
		Key:   func(n json.RawMessage) string { return field(n, "block", "index") },
		Visit: func(t *testing.T, key string, node json.RawMessage, errs map[string][]gqlError) {
			pos, ok := positions[key]
			if !ok {
				t.Fatalf("row %s is not in the dataset", key)
			}
			var v any
			if err := decodeNumbers(node, &v); err != nil {
				t.Fatal(err)
			}
			res := checker.compareTx(v, src.AppendJSON(nil, pos), errs)
			if len(res.problems) == 0 {
				return
			}
			t.Errorf("row %s (position %d) differs from its wire record:\n%s", key, pos, strings.Join(res.problems, "\n"))
			if differing++; differing >= 20 {
				t.Fatal("20 rows differ; stopping")
			}
		},
	}
	if testing.Short() {
		if got := w.walk(t, g, false, 1000); !slices.Equal(got, all) {
			t.Fatalf("walked %d rows, want %d; first difference at %d", len(got), len(all), firstDifference(got, all))
		}
		return
	}
	checkWalks(t, g, w, all, 1000)
}
