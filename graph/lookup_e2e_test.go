package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
)

// validTypeStrings is how the cmdTypes errors list the explorer's type
// strings: the 34 of v0.74 and the 3 older spellings, sorted and quoted.
const validTypeStrings = `"Amend Liquidity Provision Order", "Amend LiquidityProvision Order", "Amend Order", "Apply Referral Code", ` +
	`"Batch Market Instructions", "Batch Proposal", "Cancel Liquidity Provision Order", "Cancel LiquidityProvision Order", ` +
	`"Cancel Order", "Cancel Transfer Funds", "Chain Event", "Create Referral Set", "Delegate", "Ethereum Key Rotate Submission", ` +
	`"Issue Signatures", "Join Team", "Key Rotate Submission", "Liquidity Provision Order", "Node Signature", "Node Vote", ` +
	`"Proposal", "Protocol Upgrade", "Register New Node", "Register new Node", "State Variable Proposal", ` +
	`"Stop Orders Cancellation", "Stop Orders Submission", "Submit Oracle Data", "Submit Order", "Transfer Funds", ` +
	`"Undelegate", "Update Margin Mode", "Update Party Profile", "Update Referral Set", "Validator Heartbeat", ` +
	`"Vote on Proposal", "Withdraw"`

// hashOf is the hash of the dataset's transaction at position pos, as the
// explorer sends it (upper case).
func hashOf(ds *sampleservice.Dataset, pos int) string {
	var tx struct {
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(ds.Transactions.AppendJSON(nil, pos), &tx); err != nil {
		panic(fmt.Sprintf("transaction %d: %v", pos, err))
	}
	return tx.Hash
}

// notableHash is, as a variable, the hash of a Notable transaction, in
// lower case when lower is set.
func notableHash(name string, lower bool) fromDataset {
	return func(ds *sampleservice.Dataset) any {
		h := hashOf(ds, ds.Notable[name])
		if lower {
			h = strings.ToLower(h)
		}
		return h
	}
}

// lookupCases are the golden cases of Query.transaction (TestGolden).
func lookupCases() []goldenCase {
	const query = `query ($h: String!) {
  transaction(hash: $h) {
    ` + txAll + `
  }
}`
	const name = "command.batchMarketInstructions"
	found := func(t *testing.T, r gqlResponse) {
		expectErrorCount(t, r, 0)
		m := notableMeta(t, name)
		expectData(t, r, fmt.Sprint(m.Block), "transaction", "block")
		expectData(t, r, float64(m.Index), "transaction", "index")
		expectData(t, r, "BatchMarketInstructions", "transaction", "command", "__typename")
	}
	return []goldenCase{
		{name: "lookup.byHash", query: query, variables: map[string]any{"h": notableHash(name, false)}, check: found},
		{name: "lookup.byLowerCaseHash", query: query, variables: map[string]any{"h": notableHash(name, true)}, check: found},
		{name: "lookup.unknownHash", query: query, variables: map[string]any{"h": strings.Repeat("0", 64)},
			check: func(t *testing.T, r gqlResponse) {
				expectError(t, r, "transaction", "NOT_FOUND", "no transaction has hash "+strings.Repeat("0", 64))
				expectData(t, r, nil, "transaction")
			}},
		{name: "lookup.malformedHash", query: query, variables: map[string]any{"h": "7F72-6409"},
			check: func(t *testing.T, r gqlResponse) {
				expectError(t, r, "transaction", "BAD_USER_INPUT", `hash: "7F72-6409" is not a transaction hash; hashes are 64 hexadecimal characters`)
			}},
	}
}

// TestTransactionLookupBatch: lookups in one query run concurrently, and
// those of one hash in any letter case are made once; a malformed one
// reaches no upstream.
func TestTransactionLookupBatch(t *testing.T) {
	sample := startSample(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()})
	g := newGateway(t, sample, gatewayOptions{})
	ds := sample.Service.Dataset()
	a, b := hashOf(ds, ds.Notable["command.orderSubmission"]), hashOf(ds, ds.Notable["command.chainEvent"])
	sample.Service.ResetCounters()
	r := g.query(t, `query ($a: String!, $aLower: String!, $b: String!, $unknown: String!, $bad: String!) {
  a: transaction(hash: $a) { hash type }
  aLower: transaction(hash: $aLower) { hash type }
  aAgain: transaction(hash: $a) { block }
  b: transaction(hash: $b) { hash type }
  unknown: transaction(hash: $unknown) { hash }
  bad: transaction(hash: $bad) { hash }
}`, map[string]any{"a": a, "aLower": strings.ToLower(a), "b": b, "unknown": strings.Repeat("ab", 32), "bad": "zz"})
	expectData(t, r, a, "a", "hash")
	expectData(t, r, a, "aLower", "hash")
	expectData(t, r, "Submit Order", "aLower", "type")
	expectData(t, r, b, "b", "hash")
	expectData(t, r, "Chain Event", "b", "type")
	expectError(t, r, "unknown", "NOT_FOUND")
	expectError(t, r, "bad", "BAD_USER_INPUT")
	expectErrorCount(t, r, 2)
	// a (three times, two spellings), b and the unknown hash.
	if n := sample.Service.Requests(sampleservice.EndpointTransaction); n != 3 {
		t.Errorf("%d lookups reached the explorer, want 3 (one per distinct hash)", n)
	}
	if n := sample.Service.Requests(sampleservice.EndpointTransactions); n != 0 {
		t.Errorf("%d list requests, want 0", n)
	}
}

// dupHashSource serves a dataset's transactions with two of them given
// the same hash.
type dupHashSource struct {
	sampleservice.TransactionSource
	at     [2]int
	hashes [2]string
	shared string
}

func (s dupHashSource) AppendJSON(dst []byte, i int) []byte {
	start := len(dst)
	dst = s.TransactionSource.AppendJSON(dst, i)
	for k, p := range s.at {
		if p == i {
			out := bytes.Replace(dst[start:], []byte(`"hash":"`+s.hashes[k]+`"`), []byte(`"hash":"`+s.shared+`"`), 1)
			dst = append(dst[:start], out...)
		}
	}
	return dst
}

func TestTransactionLookupOfADuplicateHash(t *testing.T) {
	base := startSample(t, sampleservice.Config{})
	ds := *base.Service.Dataset()
	src := dupHashSource{TransactionSource: ds.Transactions, at: [2]int{10, 20}, shared: strings.Repeat("C", 64)}
	src.hashes = [2]string{hashOf(&ds, 10), hashOf(&ds, 20)}
	ds.Transactions = src
	g := newGateway(t, startSample(t, sampleservice.Config{Data: &ds}), gatewayOptions{})
	r := g.query(t, `query ($h: String!) { transaction(hash: $h) { hash } }`, map[string]any{"h": strings.Repeat("c", 64)})
	expectError(t, r, "transaction", "UPSTREAM_ERROR", "holds more than one transaction with hash "+strings.Repeat("C", 64))
	expectData(t, r, nil, "transaction")
}

// txRow is a transaction's place, as the tests compare lists.
type txRow struct {
	Block string `json:"block"`
	Index int    `json:"index"`
}

// walkTransactions pages through a transactions list with the given
// arguments (a GraphQL argument list without paging), forward or
// backward, pageSize rows at a time, and returns the rows in list order
// (newest first) whichever way it walked.
func walkTransactions(t *testing.T, g *testGateway, field, args string, vars map[string]any, pageSize int, backward bool) []txRow {
	t.Helper()
	dir, cursorArg, next := "first", "after", "endCursor"
	if backward {
		dir, cursorArg, next = "last", "before", "startCursor"
	}
	var params []string
	for k := range vars {
		params = append(params, "$"+k+": "+map[string]string{"b": "Uint64", "s": "ID", "types": "[TransactionType!]", "cmd": "[String!]", "p": "ID!"}[k])
	}
	params = append(params, "$c: String")
	list := fmt.Sprintf("transactions(%s, %s: %d, %s: $c) { edges { node { block index } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }", args, dir, pageSize, cursorArg)
	if field != "" {
		list = field + " { " + list + " }"
	}
	query := fmt.Sprintf("query (%s) { %s }", strings.Join(params, ", "), list)
	var out []txRow
	var cursor any
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("more than 1000 pages")
		}
		v := map[string]any{"c": cursor}
		for k, x := range vars {
			v[k] = x
		}
		var data map[string]json.RawMessage
		g.query(t, query, v).mustData(t, &data)
		raw := data["transactions"]
		if field != "" {
			var inner map[string]json.RawMessage
			if err := json.Unmarshal(data[field[:strings.IndexByte(field+"(", '(')]], &inner); err != nil {
				t.Fatal(err)
			}
			raw = inner["transactions"]
		}
		var conn struct {
			Edges []struct {
				Node txRow `json:"node"`
			} `json:"edges"`
			PageInfo map[string]any `json:"pageInfo"`
		}
		if err := json.Unmarshal(raw, &conn); err != nil {
			t.Fatal(err)
		}
		var rows []txRow
		for _, e := range conn.Edges {
			rows = append(rows, e.Node)
		}
		if backward {
			out = append(rows, out...)
		} else {
			out = append(out, rows...)
		}
		more := conn.PageInfo["hasNextPage"] == true
		if backward {
			more = conn.PageInfo["hasPreviousPage"] == true
		}
		if !more {
			return out
		}
		cursor = conn.PageInfo[next]
	}
}

// expectedRows are the dataset's transactions that keep returns true for,
// newest first.
func expectedRows(ds *sampleservice.Dataset, keep func(m sampleservice.TxMeta) bool) []txRow {
	var out []txRow
	for i := ds.Transactions.Len() - 1; i >= 0; i-- {
		if m := ds.Transactions.Meta(i); keep(m) {
			out = append(out, txRow{Block: fmt.Sprint(m.Block), Index: int(m.Index)})
		}
	}
	return out
}

func TestTransactionsOfABlock(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{})
	ds := g.Sample.Service.Dataset()
	// The block with the most transactions (a burst).
	count := map[uint64]int{}
	var block uint64
	for i := range ds.Transactions.Len() {
		m := ds.Transactions.Meta(i)
		count[m.Block]++
		if count[m.Block] > count[block] {
			block = m.Block
		}
	}
	want := expectedRows(ds, func(m sampleservice.TxMeta) bool { return m.Block == block })
	if len(want) < 5 {
		t.Fatalf("the largest block has %d transactions; the test wants several pages", len(want))
	}
	vars := map[string]any{"b": fmt.Sprint(block)}
	for _, backward := range []bool{false, true} {
		got := walkTransactions(t, g, "", "block: $b", vars, 2, backward)
		if !slices.Equal(got, want) {
			t.Errorf("block %d, backward %v: got %v\nwant %v", block, backward, got, want)
		}
	}
	// A block without transactions, and the block filter with a type.
	empty := walkTransactions(t, g, "", "block: $b", map[string]any{"b": "1"}, 10, false)
	if len(empty) != 0 {
		t.Errorf("block 1: %v, want none", empty)
	}
}

func TestTransactionsOfASubmitter(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{})
	ds := g.Sample.Service.Dataset()
	sub := ds.Transactions.Meta(ds.Notable["command.orderSubmission"]).Parties[0]
	orders := func(m sampleservice.TxMeta) bool {
		return m.Parties[0] == sub && (m.Type == "Submit Order" || m.Type == "Cancel Order")
	}
	want := expectedRows(ds, orders)
	if len(want) < 3 {
		t.Fatalf("the submitter has %d order transactions; the test wants several pages", len(want))
	}
	upper := strings.ToUpper(sub)
	for _, tc := range []struct {
		name, field, args string
		vars              map[string]any
		want              []txRow
	}{
		{"submitter and types", "", "submitter: $s, types: $types", map[string]any{"s": upper, "types": []string{"SUBMIT_ORDER", "CANCEL_ORDER"}}, want},
		{"parties and cmdTypes", "", "parties: [$p], cmdTypes: $cmd", map[string]any{"p": sub, "cmd": []string{"Submit Order", "Cancel Order"}}, want},
		{"a party's transactions with types and cmdTypes", "party(id: $p)", "types: $types, cmdTypes: $cmd", map[string]any{"p": sub, "types": []string{"CANCEL_ORDER"}, "cmd": []string{"Submit Order"}}, want},
		{"submitter alone", "", "submitter: $s", map[string]any{"s": sub}, expectedRows(ds, func(m sampleservice.TxMeta) bool { return m.Parties[0] == sub })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, backward := range []bool{false, true} {
				got := walkTransactions(t, g, tc.field, tc.args, tc.vars, 7, backward)
				if !slices.Equal(got, tc.want) {
					t.Errorf("backward %v: got %d rows %v\nwant %d rows %v", backward, len(got), got, len(tc.want), tc.want)
				}
			}
		})
	}
}

func TestTransactionTypeErrors(t *testing.T) {
	sample := startSample(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()})
	g := newGateway(t, sample, gatewayOptions{})
	for _, tc := range []struct{ name, query, want string }{
		{"misspelt cmdTypes", `{ transactions(cmdTypes: ["Submit order"]) { edges { cursor } } }`,
			`cmdTypes[0]: "Submit order" is not a transaction type (did you mean "Submit Order"?); use ` + "`types`" + ` (enum TransactionType) or one of the explorer's type strings, matched exactly: ` + validTypeStrings},
		{"unknown excludeCmdTypes", `{ transactions(excludeCmdTypes: ["Chain Event", "Announce Node"]) { edges { cursor } } }`,
			`excludeCmdTypes[1]: "Announce Node" is not a transaction type; use ` + "`types`" + ` (enum TransactionType) or one of the explorer's type strings, matched exactly: ` + validTypeStrings},
		{"a party's misspelt cmdTypes", `{ party(id: "` + strings.Repeat("a", 64) + `") { transactions(cmdTypes: ["SubmitOrder"]) { edges { cursor } } } }`,
			`cmdTypes[0]: "SubmitOrder" is not a transaction type (did you mean "Submit Order"?); use ` + "`types`" + ` (enum TransactionType) or one of the explorer's type strings, matched exactly: ` + validTypeStrings},
		// Two valid spellings fold alike: the hint is the current one, every time.
		{"a case-folded old spelling", `{ transactions(cmdTypes: ["register new  node"]) { edges { cursor } } }`,
			`cmdTypes[0]: "register new  node" is not a transaction type (did you mean "Register New Node"?); use ` + "`types`" + ` (enum TransactionType) or one of the explorer's type strings, matched exactly: ` + validTypeStrings},
		{"malformed submitter", `{ transactions(submitter: "me") { edges { cursor } } }`,
			`submitter: "me" is not a party id; party ids are 64 hexadecimal characters`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sample.Service.ResetCounters()
			r := g.query(t, tc.query, nil)
			if len(r.Errors) != 1 || r.Errors[0].code() != "BAD_USER_INPUT" || r.Errors[0].Message != tc.want {
				t.Errorf("errors = %+v\nwant one BAD_USER_INPUT %q", r.Errors, tc.want)
			}
			if n := sample.Service.Requests(sampleservice.EndpointTransactions); n != 0 {
				t.Errorf("%d requests reached the explorer", n)
			}
		})
	}
	// An unknown enum value is GraphQL's own validation error.
	r := g.query(t, `{ transactions(types: [SUBMIT_ORDERS]) { edges { cursor } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].code() != "BAD_USER_INPUT" {
		t.Errorf("errors = %+v, want one BAD_USER_INPUT", r.Errors)
	}
	// The older spellings history carries are valid.
	r = g.query(t, `{ transactions(cmdTypes: ["Register new Node", "Amend LiquidityProvision Order"], first: 1) { edges { cursor } } }`, nil)
	expectErrorCount(t, r, 0)
}

// TestAssetReferenceIDNeedsNoLookup: an asset reference whose selection is
// its id alone answers the wire id without asking the data node, under
// both executors, for a dangling reference too; selecting more looks the
// asset up and gives the id with null, NOT_FOUND fields.
func TestAssetReferenceIDNeedsNoLookup(t *testing.T) {
	const idOnly = `query ($c: String) {
  transactions(last: 1, before: $c) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change {
    ... on NewMarket { changes { instrument { future { settlementAsset { id } } } } }
    ... on NewSpotMarket { changes { instrument { spot { baseAsset { ...AssetID } quoteAsset { __typename id } } } } }
    ... on NewTransfer { changes { asset { id } recurring { dispatchStrategy { assetForMetric { id } } } } }
    ... on UpdateAsset { assetId asset { ... on Asset { id } } }
  } } } } } } } }
}
fragment AssetID on Asset { id __typename }`
	const more = `query ($c: String) {
  transactions(last: 1, before: $c) { edges { node { command { ... on BatchProposalSubmission { terms { changes { change {
    ... on UpdateAsset { assetId asset { id details { symbol } } }
  } } } } } } } }
}`
	for _, gqlgenOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("gqlgen executor %v", gqlgenOnly), func(t *testing.T) {
			sample := startSample(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()})
			g := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{GqlgenExecutor: gqlgenOnly}})
			vars := map[string]any{"c": txCursorOf(t, sample.Service.Dataset(), "asset.dangling")}
			r := g.query(t, idOnly, vars)
			expectErrorCount(t, r, 0)
			changes := txNode("transactions", "command", "terms", "changes")
			missing := dataAt(t, r, append(changes, 3, "change", "assetId")...).(string)
			for _, at := range [][]any{
				{0, "change", "changes", "instrument", "future", "settlementAsset", "id"},
				{1, "change", "changes", "instrument", "spot", "baseAsset", "id"},
				{2, "change", "changes", "asset", "id"},
				{2, "change", "changes", "recurring", "dispatchStrategy", "assetForMetric", "id"},
				{3, "change", "asset", "id"},
			} {
				expectData(t, r, missing, append(changes, at...)...)
			}
			expectData(t, r, "Asset", append(changes, 1, "change", "changes", "instrument", "spot", "quoteAsset", "__typename")...)
			if n := sample.Service.Requests(sampleservice.EndpointAssets); n != 0 {
				t.Errorf("%d asset requests for ids alone, want 0", n)
			}

			r = g.query(t, more, vars)
			expectData(t, r, missing, append(changes, 3, "change", "asset", "id")...)
			expectData(t, r, nil, append(changes, 3, "change", "asset", "details")...)
			expectError(t, r, "transactions.edges[0].node.command.terms.changes[3].change.asset.details", "NOT_FOUND", missing)
			expectErrorCount(t, r, 1)
			if n := sample.Service.Requests(sampleservice.EndpointAssets); n == 0 {
				t.Error("no asset request when details are selected")
			}
		})
	}
}
