package sampleservice

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/upstream"
)

// Ids of the hand-made dataset: 64 lowercase hex characters, the first
// two saying what the id is for.
func fxID(kind string, n int) string { return kind + fmt.Sprintf("%062x", n) }

var (
	partyA  = fxID("aa", 1)
	partyB  = fxID("aa", 2)
	partyC  = fxID("aa", 3) // in no list at all
	market1 = fxID("cc", 1)
	market2 = fxID("cc", 2)
	node1   = fxID("dd", 1)
	node2   = fxID("dd", 2)
	asset1  = fxID("ee", 1)
	asset2  = fxID("ee", 2)
	asset3  = fxID("ee", 3)
	asset4  = fxID("ee", 4)
	asset5  = fxID("ee", 5)
)

// t0 is the time the hand-made rows are placed around.
var t0 = time.Date(2024, 3, 14, 12, 0, 0, 0, time.UTC).UnixNano()

func fixtureAssets() []Asset {
	return []Asset{
		{ID: asset3, Status: "STATUS_ENABLED", Details: AssetDetails{Name: "Tether USD", Symbol: "USDT", Decimals: 6, Quantum: "1000000",
			ERC20: &ERC20{ContractAddress: "0xdac17f958d2ee523a2206206994597c13d831ec7", LifetimeLimit: "18446744073709551615", WithdrawThreshold: "0"}}},
		{ID: asset1, Status: "STATUS_ENABLED", Details: AssetDetails{Name: "Vega", Symbol: "VEGA", Decimals: 18, Quantum: "1",
			BuiltinAsset: &BuiltinAsset{MaxFaucetAmountMint: "10000000000000000000000"}}},
		{ID: asset5, Status: "STATUS_PROPOSED", Details: AssetDetails{Name: "<Test & Co>", Symbol: "T&C"}},
		{ID: asset2, Status: "STATUS_REJECTED", Details: AssetDetails{Name: "Wrapped Ether", Symbol: "WETH", Decimals: 18, Quantum: "500000000000000",
			ERC20: &ERC20{ContractAddress: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", LifetimeLimit: "1", WithdrawThreshold: "2"}}},
		{ID: asset4, Status: "STATUS_PENDING_LISTING", Details: AssetDetails{Name: "USD Coin", Symbol: "USDC", Decimals: 6, Quantum: "1"}},
	}
}

// fixtureFunding: party A has seven payments, two of them at the same
// instant on different markets; party B has two.
func fixtureFunding() []FundingPayment {
	sec := upstream.UnixNanos(time.Second)
	t0 := upstream.UnixNanos(t0)
	return []FundingPayment{
		{PartyID: partyA, MarketID: market1, FundingPeriodSeq: 1, Timestamp: t0 + 1*sec, Amount: "100"},
		{PartyID: partyA, MarketID: market1, FundingPeriodSeq: 2, Timestamp: t0 + 2*sec, Amount: "-5"},
		{PartyID: partyA, MarketID: market2, FundingPeriodSeq: 7, Timestamp: t0 + 3*sec, Amount: "0"},
		{PartyID: partyA, MarketID: market1, FundingPeriodSeq: 3, Timestamp: t0 + 3*sec, Amount: "12"},
		{PartyID: partyA, MarketID: market1, FundingPeriodSeq: 4, Timestamp: t0 + 4*sec, Amount: "13"},
		{PartyID: partyA, MarketID: market2, FundingPeriodSeq: 8, Timestamp: t0 + 5*sec, Amount: "-14"},
		{PartyID: partyA, MarketID: market1, FundingPeriodSeq: 5, Timestamp: t0 + 6*sec + 123456789, Amount: "15"},
		{PartyID: partyB, MarketID: market1, FundingPeriodSeq: 1, Timestamp: t0 + 1*sec, Amount: "-100"},
		{PartyID: partyB, MarketID: market2, FundingPeriodSeq: 7, Timestamp: t0 + 3*sec, Amount: "7"},
	}
}

// fixtureDelegations: epochs 9 and 10 of the same (time, party, node) show
// that epochs sort as numbers.
func fixtureDelegations() []Delegation {
	sec := int64(time.Second)
	d := func(party, node, epoch, amount string, vegaTime int64) Delegation {
		return Delegation{Delegation: upstream.Delegation{Party: party, NodeID: node, EpochSeq: epoch, Amount: amount}, VegaTime: vegaTime}
	}
	return []Delegation{
		d(partyA, node1, "9", "1000", t0+1*sec),
		d(partyA, node1, "10", "1001", t0+1*sec),
		d(partyB, node1, "10", "2000", t0+1*sec),
		d(partyA, node2, "10", "3000", t0+2*sec),
		d(partyB, node2, "11", "4000", t0+3*sec),
		d(partyA, node1, "11", "5000", t0+4*sec),
	}
}

// fixtureTx is one hand-made transaction.
type fixtureTx struct {
	block    uint64
	index    uint32
	typ      string
	sub      string
	receiver string
	// raw, when set, is served instead of the generated JSON.
	raw string
}

// sliceSource is a TransactionSource over a slice.
type sliceSource []fixtureTx

func (s sliceSource) Len() int { return len(s) }

func (s sliceSource) Meta(i int) TxMeta {
	m := TxMeta{Block: s[i].block, Index: s[i].index, Type: s[i].typ, Parties: []string{s[i].sub}}
	if s[i].receiver != "" {
		m.Parties = append(m.Parties, s[i].receiver)
	}
	return m
}

func (s sliceSource) AppendJSON(dst []byte, i int) []byte {
	tx := s[i]
	if tx.raw != "" {
		return append(dst, tx.raw...)
	}
	cmd := `{"nonce":"1","blockHeight":"` + fmt.Sprint(tx.block-1) + `","orderSubmission":{"marketId":"` + market1 + `"}}`
	return fmt.Appendf(dst, `{"block":"%d","index":%d,"hash":"%064X","submitter":"%s","type":%q,"code":0,"cursor":"%d.%d","command":%s}`,
		tx.block, tx.index, tx.block*1000+uint64(tx.index), tx.sub, tx.typ, tx.block, tx.index, cmd)
}

// Transaction types used by the fixture.
const (
	typeBatch    = "Batch Market Instructions"
	typeOrder    = "Submit Order"
	typeTransfer = "Transfer Funds"
	typeVote     = "Vote on Proposal"
)

// fixtureTxs are twelve transactions in blocks 100 to 105, oldest first.
func fixtureTxs() sliceSource {
	return sliceSource{
		{block: 100, index: 0, typ: typeOrder, sub: partyA},
		{block: 100, index: 1, typ: typeBatch, sub: partyB},
		{block: 101, index: 0, typ: typeTransfer, sub: partyA, receiver: partyB},
		{block: 101, index: 1, typ: typeVote, sub: partyB},
		{block: 101, index: 2, typ: typeBatch, sub: partyA},
		{block: 102, index: 0, typ: typeOrder, sub: partyB},
		{block: 103, index: 0, typ: typeBatch, sub: partyA},
		{block: 103, index: 1, typ: typeTransfer, sub: partyB, receiver: partyA},
		{block: 103, index: 2, typ: typeOrder, sub: partyA},
		{block: 104, index: 0, typ: typeVote, sub: partyA},
		{block: 105, index: 0, typ: typeBatch, sub: partyB},
		{block: 105, index: 1, typ: typeOrder, sub: partyA},
	}
}

// fixtureBlockHeight and fixtureBlockTime are the fixture's freshness.
const (
	fixtureBlockHeight = 105
	fixtureBlockTime   = int64(1710417600123456789)
)

func fixtureDataset() *Dataset {
	return &Dataset{
		Assets:          fixtureAssets(),
		FundingPayments: fixtureFunding(),
		Delegations:     fixtureDelegations(),
		Transactions:    fixtureTxs(),
		Parties:         []string{partyA, partyB},
		Markets:         []string{market1, market2},
		Nodes:           []string{node1, node2},
		BlockHeight:     fixtureBlockHeight,
		BlockTime:       fixtureBlockTime,
	}
}

// startFixture serves the hand-made dataset over loopback HTTP with cfg
// (its Data replaced by the fixture unless set).
func startFixture(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Data == nil {
		cfg.Data = fixtureDataset()
	}
	srv, err := Start(cfg, "")
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// fetched is what a test reads back.
type fetched struct {
	status int
	header http.Header
	body   []byte
}

// noGzip is a client that neither asks for nor undoes gzip, so tests see
// exactly what the server sent.
var noGzip = &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}

// get fetches base+path with optional header pairs.
func fetch(t *testing.T, rawURL string, header ...string) fetched {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return fetchReq(t, req)
}

func fetchReq(t *testing.T, req *http.Request) fetched {
	t.Helper()
	resp, body := testutil.RawDo(t, req)
	return fetched{status: resp.StatusCode, header: resp.Header, body: body}
}

// Decoded data-node page, for assertions.
type pageInfoJSON struct {
	HasNextPage     bool   `json:"hasNextPage"`
	HasPreviousPage bool   `json:"hasPreviousPage"`
	StartCursor     string `json:"startCursor"`
	EndCursor       string `json:"endCursor"`
}

type edgeJSON struct {
	Node   json.RawMessage `json:"node"`
	Cursor string          `json:"cursor"`
}

type connectionJSON struct {
	Edges    []edgeJSON   `json:"edges"`
	PageInfo pageInfoJSON `json:"pageInfo"`
}

// decodeConnection reads {"<name>": connection} and fails on anything else.
func decodeConnection(t *testing.T, r fetched, name string) connectionJSON {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	var m map[string]connectionJSON
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	c, ok := m[name]
	if !ok || len(m) != 1 {
		t.Fatalf("body has keys %v, want only %q", mapKeys(m), name)
	}
	if c.Edges == nil {
		t.Fatalf("edges missing or null in %s", r.body)
	}
	return c
}

func mapKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// nodeField extracts one string field of every edge's node.
func nodeField(t *testing.T, c connectionJSON, field string) []string {
	t.Helper()
	out := []string{}
	for _, e := range c.Edges {
		var m map[string]any
		if err := json.Unmarshal(e.Node, &m); err != nil {
			t.Fatalf("node %s: %v", e.Node, err)
		}
		s, _ := m[field].(string)
		out = append(out, s)
	}
	return out
}

// cursorJSON decodes a data-node cursor to its JSON text.
func cursorJSON(t *testing.T, c string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		t.Fatalf("cursor %q is not padded standard base64: %v", c, err)
	}
	return string(b)
}

// errorJSON is a decoded error body; Details is nil when the key is absent.
type errorJSON struct {
	Code    int                `json:"code"`
	Message string             `json:"message"`
	Details *[]errorDetailJSON `json:"details"`
}

type errorDetailJSON struct {
	Type    string `json:"@type"`
	Code    int    `json:"code"`
	Message string `json:"message"`
	Inner   string `json:"inner"`
}

func decodeError(t *testing.T, r fetched) errorJSON {
	t.Helper()
	var e errorJSON
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("decode error body %s: %v", r.body, err)
	}
	return e
}

// qs builds a query string from name/value pairs (repeats allowed).
func qstr(pairs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

func urlEscape(s string) string { return url.QueryEscape(s) }

// assetCursorFor and friends build the cursors the data node gives.
func assetCursorFor(id string) string {
	return base64.StdEncoding.EncodeToString([]byte(`{"id":"` + id + `"}`))
}

func fundingCursorFor(ts int64, market, party string) string {
	return base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"` + time.Unix(0, ts).UTC().Format(time.RFC3339Nano) +
		`","marketID":"` + market + `","partyID":"` + party + `"}`))
}

func delegationCursorFor(ts int64, party, node string, epoch int) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf(`{"vegaTime":"%s","partyId":"%s","nodeId":"%s","epochId":%d}`,
		time.Unix(0, ts).UTC().Format(time.RFC3339Nano), party, node, epoch)))
}

// short names a hex id by its kind and number, for readable diffs.
func shortIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id[:2] + strings.TrimLeft(id[2:], "0")
	}
	return out
}
