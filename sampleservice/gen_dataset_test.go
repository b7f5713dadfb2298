package sampleservice

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// genSeed is the seed of the dataset the generator tests examine.
const genSeed = 1

var (
	genOnce    sync.Once
	genDefault *Dataset
	genDecoded []map[string]any
	genRaw     [][]byte
)

// genDataset returns the default dataset and every transaction decoded
// generically, built once for all generator tests.
func genDataset(t *testing.T) (*Dataset, []map[string]any) {
	t.Helper()
	genOnce.Do(func() {
		d, err := Generate(DatasetOptions{Seed: genSeed})
		if err != nil {
			panic(err)
		}
		genDefault = d
		n := d.Transactions.Len()
		genDecoded = make([]map[string]any, n)
		genRaw = make([][]byte, n)
		for i := range n {
			raw := d.Transactions.AppendJSON(nil, i)
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				panic("transaction " + strconv.Itoa(i) + ": " + err.Error())
			}
			genDecoded[i], genRaw[i] = m, raw
		}
	})
	return genDefault, genDecoded
}

var (
	genHex64Lower = regexp.MustCompile(`^[0-9a-f]{64}$`)
	genHex64Upper = regexp.MustCompile(`^[0-9A-F]{64}$`)
)

func TestGenerateDeterministic(t *testing.T) {
	a, err := Generate(DatasetOptions{Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(DatasetOptions{Seed: 42, Scale: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		x, y any
	}{
		{"assets", a.Assets, b.Assets},
		{"funding payments", a.FundingPayments, b.FundingPayments},
		{"delegations", a.Delegations, b.Delegations},
		{"parties", a.Parties, b.Parties},
		{"markets", a.Markets, b.Markets},
		{"nodes", a.Nodes, b.Nodes},
		{"notable", a.Notable, b.Notable},
		{"block height", a.BlockHeight, b.BlockHeight},
		{"block time", a.BlockTime, b.BlockTime},
	} {
		if !reflect.DeepEqual(f.x, f.y) {
			t.Errorf("%s differ between two Generate calls with the same options", f.name)
		}
	}
	if a.Transactions.Len() != b.Transactions.Len() {
		t.Fatalf("Len %d != %d", a.Transactions.Len(), b.Transactions.Len())
	}
	for i := range a.Transactions.Len() {
		if !reflect.DeepEqual(a.Transactions.Meta(i), b.Transactions.Meta(i)) {
			t.Fatalf("Meta(%d) differs", i)
		}
		x, y := a.Transactions.AppendJSON(nil, i), b.Transactions.AppendJSON([]byte("prefix"), i)
		if !bytes.Equal(x, y[len("prefix"):]) || !bytes.HasPrefix(y, []byte("prefix")) {
			t.Fatalf("AppendJSON(%d) differs between datasets or does not append", i)
		}
		if z := a.Transactions.AppendJSON(nil, i); !bytes.Equal(x, z) {
			t.Fatalf("AppendJSON(%d) differs between calls", i)
		}
	}

	// Another seed gives other data.
	c, err := Generate(DatasetOptions{Seed: 43})
	if err != nil {
		t.Fatal(err)
	}
	if c.Assets[0].ID == a.Assets[0].ID || bytes.Equal(c.Transactions.AppendJSON(nil, 0), a.Transactions.AppendJSON(nil, 0)) {
		t.Error("seeds 42 and 43 gave the same data")
	}
	// Scale <= 0 means 1.
	z, err := Generate(DatasetOptions{Seed: 42, Scale: -3})
	if err != nil {
		t.Fatal(err)
	}
	if z.Transactions.Len() != a.Transactions.Len() {
		t.Errorf("Scale -3 gave %d transactions, Scale 1 %d", z.Transactions.Len(), a.Transactions.Len())
	}
}

// TestAppendJSONConcurrent generates transactions from many goroutines in
// random orders and compares them with a sequential run.
func TestAppendJSONConcurrent(t *testing.T) {
	d, _ := genDataset(t)
	src := d.Transactions
	n := src.Len()
	want := make([][]byte, n)
	for i := range n {
		want[i] = src.AppendJSON(nil, i)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			var buf []byte
			for _, i := range r.Perm(n)[:n/2] {
				buf = src.AppendJSON(buf[:0], i)
				if !bytes.Equal(buf, want[i]) {
					errs <- "transaction " + strconv.Itoa(i) + " differs when generated concurrently"
					return
				}
				_ = src.Meta(i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestGeneratedAssets(t *testing.T) {
	d, _ := genDataset(t)
	if len(d.Assets) < 60 {
		t.Errorf("%d assets, want at least 60", len(d.Assets))
	}
	statuses := map[string]int{}
	sources := map[string]int{}
	ids := map[string]bool{}
	var nonASCII, emptySymbol bool
	for _, a := range d.Assets {
		if !genHex64Lower.MatchString(a.ID) {
			t.Errorf("asset id %q is not 64 lowercase hex digits", a.ID)
		}
		if ids[a.ID] {
			t.Errorf("duplicate asset id %s", a.ID)
		}
		ids[a.ID] = true
		statuses[string(a.Status)]++
		switch {
		case a.Details.BuiltinAsset != nil && a.Details.ERC20 != nil:
			t.Errorf("asset %s has two sources", a.ID)
		case a.Details.BuiltinAsset != nil:
			sources["builtin"]++
		case a.Details.ERC20 != nil:
			sources["erc20"]++
			if !regexp.MustCompile(`^0x[0-9a-f]{40}$`).MatchString(a.Details.ERC20.ContractAddress) {
				t.Errorf("asset %s: contract address %q", a.ID, a.Details.ERC20.ContractAddress)
			}
		default:
			sources["none"]++
		}
		if a.Details.Decimals > 18 {
			t.Errorf("asset %s: %d decimals", a.ID, a.Details.Decimals)
		}
		if _, err := strconv.ParseUint(a.Details.Quantum, 10, 64); err != nil && len(a.Details.Quantum) < 20 {
			t.Errorf("asset %s: quantum %q", a.ID, a.Details.Quantum)
		}
		for _, r := range a.Details.Name {
			if r > 127 {
				nonASCII = true
			}
		}
		if a.Details.Symbol == "" {
			emptySymbol = true
		}
	}
	for _, s := range enumAssetStatus {
		if statuses[s] == 0 {
			t.Errorf("no asset has status %s", s)
		}
	}
	for _, s := range []string{"builtin", "erc20", "none"} {
		if sources[s] == 0 {
			t.Errorf("no asset with source %s", s)
		}
	}
	if !nonASCII {
		t.Error("no asset has a non-ASCII name")
	}
	if !emptySymbol {
		t.Error("no asset has an empty symbol")
	}

	// The wire form: decimals a string, the missing source omitted.
	raw, err := json.Marshal(d.Assets[len(d.Assets)-3])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"decimals":"`)) || bytes.Contains(raw, []byte("erc20")) || bytes.Contains(raw, []byte("builtinAsset")) {
		t.Errorf("asset without a source encodes as %s", raw)
	}
}

func TestGeneratedFundingPayments(t *testing.T) {
	d, _ := genDataset(t)
	if len(d.Parties) < numFundingParties || len(d.Markets) < 4 {
		t.Fatalf("%d parties, %d markets", len(d.Parties), len(d.Markets))
	}
	type key struct {
		ts     int64
		market string
		period uint64
		party  string
	}
	seen := map[key]bool{}
	perParty := map[string]int{}
	marketsOf := map[string]map[string]bool{}
	gains, losses := map[string]int{}, map[string]int{}
	marketsAt := map[int64]map[string]bool{}
	perps := map[string]bool{}
	for _, m := range d.Markets {
		perps[m] = true
	}
	for _, p := range d.FundingPayments {
		ts := int64(p.Timestamp)
		k := key{ts, p.MarketID, uint64(p.FundingPeriodSeq), p.PartyID}
		if seen[k] {
			t.Fatalf("duplicate funding payment key %+v", k)
		}
		seen[k] = true
		if !perps[p.MarketID] {
			t.Fatalf("funding payment on market %s, not one of Dataset.Markets", p.MarketID)
		}
		if !genHex64Lower.MatchString(p.PartyID) {
			t.Fatalf("party id %q", p.PartyID)
		}
		amount, err := strconv.ParseInt(p.Amount, 10, 64)
		if err != nil {
			t.Fatalf("amount %q: %v", p.Amount, err)
		}
		perParty[p.PartyID]++
		if marketsOf[p.PartyID] == nil {
			marketsOf[p.PartyID] = map[string]bool{}
		}
		marketsOf[p.PartyID][p.MarketID] = true
		if amount > 0 {
			gains[p.PartyID]++
		} else if amount < 0 {
			losses[p.PartyID]++
		}
		if marketsAt[ts] == nil {
			marketsAt[ts] = map[string]bool{}
		}
		marketsAt[ts][p.MarketID] = true
		if ts >= d.BlockTime {
			t.Fatalf("funding payment at %d, after the block time %d", p.Timestamp, d.BlockTime)
		}
	}
	for _, party := range d.Parties[:numFundingParties] {
		if perParty[party] < 300 || len(marketsOf[party]) < 4 || gains[party] == 0 || losses[party] == 0 {
			t.Errorf("party %s: %d payments on %d markets, %d gains, %d losses; want >= 300 on >= 4, both signs",
				party, perParty[party], len(marketsOf[party]), gains[party], losses[party])
		}
	}
	shared := 0
	for _, ms := range marketsAt {
		if len(ms) > 1 {
			shared++
		}
	}
	if shared < 10 {
		t.Errorf("only %d timestamps are shared across markets", shared)
	}
}

func TestGeneratedDelegations(t *testing.T) {
	d, _ := genDataset(t)
	if len(d.Delegations) < 3000 {
		t.Errorf("%d delegations, want at least 3000", len(d.Delegations))
	}
	nodes := map[string]bool{}
	for _, n := range d.Nodes {
		nodes[n] = true
	}
	type key struct{ party, node, epoch string }
	seen := map[key]bool{}
	usedNodes, epochs := map[string]bool{}, map[string]bool{}
	timeOf := map[int64]int64{}
	tied := map[int64]int{}
	for _, dl := range d.Delegations {
		k := key{dl.Party, dl.NodeID, dl.EpochSeq}
		if seen[k] {
			t.Fatalf("duplicate delegation %+v", k)
		}
		seen[k] = true
		if !nodes[dl.NodeID] {
			t.Fatalf("delegation to unknown node %s", dl.NodeID)
		}
		epoch, err := strconv.ParseInt(dl.EpochSeq, 10, 64)
		if err != nil {
			t.Fatalf("epoch %q", dl.EpochSeq)
		}
		if prev, ok := timeOf[epoch]; ok && prev != dl.VegaTime {
			t.Fatalf("epoch %d has two vega times", epoch)
		}
		timeOf[epoch] = dl.VegaTime
		tied[dl.VegaTime]++
		if _, err := strconv.ParseUint(dl.Amount, 10, 64); err != nil && !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(dl.Amount) {
			t.Fatalf("amount %q", dl.Amount)
		}
		usedNodes[dl.NodeID], epochs[dl.EpochSeq] = true, true
	}
	if len(usedNodes) < 12 || len(epochs) < 30 {
		t.Errorf("%d nodes, %d epochs; want >= 12 and >= 30", len(usedNodes), len(epochs))
	}
	// Later epochs have later times.
	es := make([]int64, 0, len(timeOf))
	for e := range timeOf {
		es = append(es, e)
	}
	slices.Sort(es)
	for i := 1; i < len(es); i++ {
		if timeOf[es[i]] <= timeOf[es[i-1]] {
			t.Fatalf("epoch %d is not later than epoch %d", es[i], es[i-1])
		}
	}
	if len(tied) == len(d.Delegations) {
		t.Error("no delegations share a vega time")
	}
}

func TestGeneratedTransactionLayout(t *testing.T) {
	d, txs := genDataset(t)
	src := d.Transactions
	if src.Len() < 5000 {
		t.Fatalf("%d transactions, want at least 5000", src.Len())
	}
	var prev TxMeta
	multi := 0
	for i := range src.Len() {
		m := src.Meta(i)
		tx := txs[i]
		if i > 0 {
			switch {
			case m.Block == prev.Block && m.Index != prev.Index+1:
				t.Fatalf("position %d: index %d after %d in block %d", i, m.Index, prev.Index, m.Block)
			case m.Block < prev.Block:
				t.Fatalf("position %d: block %d after %d", i, m.Block, prev.Block)
			case m.Block > prev.Block && m.Index != 0:
				t.Fatalf("position %d: block %d starts at index %d", i, m.Block, m.Index)
			case m.Block == prev.Block && m.Index == 1:
				multi++
			}
		}
		prev = m
		if tx["block"] != strconv.FormatUint(m.Block, 10) || tx["index"] != json.Number(strconv.Itoa(int(m.Index))) || tx["type"] != m.Type {
			t.Fatalf("position %d: JSON block/index/type %v/%v/%v, Meta %+v", i, tx["block"], tx["index"], tx["type"], m)
		}
		if tx["cursor"] != strconv.FormatUint(m.Block, 10)+"."+strconv.Itoa(int(m.Index)) {
			t.Fatalf("position %d: cursor %v", i, tx["cursor"])
		}
		if len(m.Parties) == 0 || m.Parties[0] != tx["submitter"] {
			t.Fatalf("position %d: Meta parties %v, submitter %v", i, m.Parties, tx["submitter"])
		}
		created, err := time.Parse(time.RFC3339, tx["createdAt"].(string))
		if err != nil || !strings.HasSuffix(tx["createdAt"].(string), "Z") {
			t.Fatalf("position %d: createdAt %v", i, tx["createdAt"])
		}
		bt := genDefault.Transactions.(*txSource).g.blockTime(m.Block)
		if created.Unix() != bt/1e9 {
			t.Fatalf("position %d: createdAt %v, block time %d", i, created, bt)
		}
	}
	if multi < 500 {
		t.Errorf("only %d blocks hold several transactions", multi)
	}
	last := src.Meta(src.Len() - 1)
	if d.BlockHeight < last.Block || d.BlockTime/1e9 < genDefault.Transactions.(*txSource).g.blockTime(last.Block)/1e9 {
		t.Errorf("BlockHeight %d / BlockTime %d older than the last transaction (block %d)", d.BlockHeight, d.BlockTime, last.Block)
	}
}

// TestHashMatchesTheTransaction checks the lookup index's shortcut: Hash(i)
// is the hash transaction i's JSON carries, for drawn and notable rows.
func TestHashMatchesTheTransaction(t *testing.T) {
	src := newTxSource(newGenerator(1), 6000)
	for i := 0; i < src.Len(); i += 7 {
		var tx struct{ Hash string }
		if err := json.Unmarshal(src.AppendJSON(nil, i), &tx); err != nil {
			t.Fatal(err)
		}
		if got := src.Hash(i); got != tx.Hash {
			t.Fatalf("Hash(%d) = %s, the transaction's is %s", i, got, tx.Hash)
		}
	}
}
