package sampleservice

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// startGenerated serves a generated dataset (the default one unless cfg
// says) over loopback HTTP.
func startGenerated(t *testing.T, cfg Config) *Server {
	t.Helper()
	srv, err := Start(cfg, "")
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// pageTxs decodes an explorer page into the fields AppendedTx reports.
func pageTxs(t *testing.T, r fetched) []AppendedTx {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	var page struct {
		Transactions []AppendedTx `json:"transactions"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	if page.Transactions == nil {
		t.Fatalf("transactions missing or null: %s", r.body)
	}
	return page.Transactions
}

// newestFirst returns txs (oldest first) newest first, keeping those ok
// accepts.
func newestFirst(txs []AppendedTx, ok func(AppendedTx) bool) []AppendedTx {
	out := []AppendedTx{}
	for i := len(txs) - 1; i >= 0; i-- {
		if ok == nil || ok(txs[i]) {
			out = append(out, txs[i])
		}
	}
	return out
}

func mustAppend(t *testing.T) func([]AppendedTx, error) []AppendedTx {
	return func(txs []AppendedTx, err error) []AppendedTx {
		t.Helper()
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		return txs
	}
}

// TestAppendedBlocksOverHTTP: appended blocks are at the head of the
// explorer's list, after a cursor, in its filters and lookups, and the
// response cache does not hide them.
func TestAppendedBlocksOverHTTP(t *testing.T) {
	srv := startGenerated(t, Config{Defects: DefaultDefects()})
	svc, list := srv.Service, srv.URL+"/rest/transactions"
	head := pageTxs(t, fetch(t, list+"?first=1"))[0]
	// Cached before the appends: these pages must not be served after.
	if got := pageTxs(t, fetch(t, list+"?after="+head.Cursor)); len(got) != 0 {
		t.Fatalf("after the head: %v, want nothing", got)
	}
	pageTxs(t, fetch(t, list+"?first=30"))

	must := mustAppend(t)
	one := must(svc.AppendBlock())
	five := must(svc.AppendBlockOf(5))
	nine := must(svc.AppendTransactions(9))
	if len(one) < 1 || len(one) > defaultBlockSize || len(five) != 5 || len(nine) != 9 {
		t.Fatalf("appended %d, %d, %d transactions; want 1..4, 5, 9", len(one), len(five), len(nine))
	}
	all := slices.Concat(one, five, nine)

	// Blocks follow the head one height at a time, indexes count from 0.
	block, index := head.Block, uint32(0)
	for _, tx := range all {
		switch {
		case tx.Block == block+1:
			block, index = tx.Block, 0
		case tx.Block != block || tx.Index != index:
			t.Fatalf("%s follows block %d index %d", tx.Cursor, block, index)
		}
		if tx.Cursor != fmt.Sprintf("%d.%d", tx.Block, tx.Index) {
			t.Errorf("cursor %q of %d.%d", tx.Cursor, tx.Block, tx.Index)
		}
		index++
	}
	if five[0].Block != five[4].Block || five[0].Block != one[0].Block+1 {
		t.Errorf("AppendBlockOf(5) made blocks %d..%d after %d", five[0].Block, five[4].Block, one[0].Block)
	}

	check := func(query string, want []AppendedTx) {
		t.Helper()
		if diff := cmp.Diff(want, pageTxs(t, fetch(t, list+query))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", query, diff)
		}
	}
	window := "?after=" + head.Cursor + "&"
	check("?first="+strconv.Itoa(len(all)+1), append(newestFirst(all, nil), head))
	check("?after="+head.Cursor, newestFirst(all, nil))
	check(window+"first=2", newestFirst(all[:2], nil))
	check("?after="+one[len(one)-1].Cursor+"&first=5", newestFirst(five, nil))
	check("?before="+nine[0].Cursor+"&last=5", newestFirst(five, nil))
	if got := pageTxs(t, fetch(t, list+"?first=30")); !cmp.Equal(got[:len(all)+1], append(newestFirst(all, nil), head)) {
		t.Errorf("first=30 (cached before the appends) starts %v", got[:len(all)+1])
	}

	typ, sub := all[len(all)-1].Type, all[len(all)-1].Submitter
	isType := func(tx AppendedTx) bool { return tx.Type == typ }
	bySub := func(tx AppendedTx) bool { return tx.Submitter == sub }
	check(window+"cmdTypes="+url.QueryEscape(typ), newestFirst(all, isType))
	check(window+"excludeCmdTypes="+url.QueryEscape(typ), newestFirst(all, func(tx AppendedTx) bool { return !isType(tx) }))
	check(window+"filters[cmd.type]="+url.QueryEscape(typ), newestFirst(all, isType))
	check(window+"parties="+sub, newestFirst(all, bySub))
	check(window+"filters[tx.submitter]="+sub, newestFirst(all, bySub))
	check("?filters[block.height]="+strconv.FormatUint(five[0].Block, 10), newestFirst(five, nil))

	// The list's bodies are the lookup's, found by either case of hash.
	var page struct {
		Transactions []json.RawMessage `json:"transactions"`
	}
	if err := json.Unmarshal(fetch(t, list+"?after="+head.Cursor).body, &page); err != nil {
		t.Fatal(err)
	}
	for i, tx := range newestFirst(all, nil) {
		for _, hash := range []string{tx.Hash, strings.ToLower(tx.Hash)} {
			r := fetch(t, list+"/"+hash)
			var got struct {
				Transaction json.RawMessage `json:"transaction"`
			}
			if r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil {
				t.Fatalf("lookup %s: status %d, body %s", hash, r.status, r.body)
			}
			if !jsonEqual(t, got.Transaction, page.Transactions[i]) {
				t.Errorf("lookup %s: %s, the list has %s", hash, got.Transaction, page.Transactions[i])
			}
		}
	}

	// The data node reports the new head; its lists do not change.
	r := fetch(t, srv.URL+"/api/v2/assets?pagination.first=1")
	if got, want := r.header.Get("X-Block-Height"), strconv.FormatUint(block, 10); got != want {
		t.Errorf("X-Block-Height %s, want the new head %s", got, want)
	}
	if got := nodeField(t, decodeConnection(t, r, "assets"), "id"); len(got) != 1 {
		t.Errorf("assets page %v", got)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return cmp.Equal(x, y)
}

// TestAppendedTransactionsLookLikeTheDataset: a realistic mix, drawn
// deterministically, from the dataset's submitters and assets, in the same
// wire form.
func TestAppendedTransactionsLookLikeTheDataset(t *testing.T) {
	newSvc := func(seed int64, perBlock int) *Service {
		svc, err := New(Config{Dataset: DatasetOptions{Seed: seed}, Blocks: BlocksConfig{PerBlock: perBlock}})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	svc := newSvc(genSeed, 6)
	d := svc.Dataset()
	base := d.Transactions
	n := base.Len()
	txs := mustAppend(t)(svc.AppendTransactions(3000))
	chain := svc.Transactions()
	if chain.Len() != n+3000 || base.Len() != n {
		t.Fatalf("chain of %d after 3000 appended to %d (dataset now %d)", chain.Len(), n, base.Len())
	}

	submitters, assets := map[string]bool{}, map[string]bool{}
	for i := range n {
		submitters[base.Meta(i).Parties[0]] = true
	}
	for _, a := range d.Assets {
		assets[a.ID] = true
	}
	// Keys every appended transaction shares with the generated ones.
	var first map[string]any
	if err := json.Unmarshal(base.AppendJSON(nil, n-1), &first); err != nil {
		t.Fatal(err)
	}
	types, sizes := map[string]int{}, map[uint64]int{}
	failed := 0
	for k, tx := range txs {
		pos := n + k
		raw := chain.AppendJSON(nil, pos)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("transaction %d: %v", pos, err)
		}
		meta := chain.Meta(pos)
		if m["hash"] != tx.Hash || m["type"] != tx.Type || m["submitter"] != tx.Submitter || m["cursor"] != tx.Cursor ||
			m["block"] != strconv.FormatUint(tx.Block, 10) || meta.Type != tx.Type || meta.Parties[0] != tx.Submitter {
			t.Fatalf("transaction %d: %s disagrees with %+v / %+v", pos, raw, tx, meta)
		}
		for key := range first {
			if _, ok := m[key]; !ok && key != "error" {
				t.Errorf("transaction %d has no %q: %s", pos, key, raw)
			}
		}
		if !submitters[tx.Submitter] {
			t.Errorf("transaction %d: submitter %s submits nothing in the dataset", pos, tx.Submitter)
		}
		genAssetRefs(m, func(path, _, id string) {
			if !assets[id] {
				t.Errorf("transaction %d: %s = %s is not a dataset asset", pos, path, id)
			}
		})
		if m["code"] != 0.0 {
			failed++
		}
		types[tx.Type]++
		sizes[tx.Block]++
	}
	if len(types) < 25 || types["Batch Market Instructions"] < 100 {
		t.Errorf("appended kinds: %v; want most kinds, batches common", types)
	}
	if failed == 0 || failed > 300 {
		t.Errorf("%d of 3000 failed; want a few", failed)
	}
	for block, size := range sizes {
		if size < 1 || size > 6 {
			t.Errorf("block %d holds %d transactions, want 1..6", block, size)
		}
	}

	// Deterministic: the same seed appends the same transactions, another
	// seed others.
	again := newSvc(genSeed, 6)
	if diff := cmp.Diff(txs[:50], mustAppend(t)(again.AppendTransactions(50))); diff != "" {
		t.Errorf("same seed (-first +second):\n%s", diff)
	}
	if raw := again.Transactions().AppendJSON(nil, n+49); !bytes.Equal(raw, chain.AppendJSON(nil, n+49)) {
		t.Errorf("same seed, different body: %s", raw)
	}
	if other := mustAppend(t)(newSvc(genSeed+1, 6).AppendBlock()); other[0].Hash == txs[0].Hash {
		t.Errorf("another seed appended the same transaction %s", other[0].Hash)
	}
}

func TestAppendErrors(t *testing.T) {
	svc, err := New(Config{Dataset: DatasetOptions{Seed: genSeed}})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() ([]AppendedTx, error){
		"AppendBlockOf(0)":        func() ([]AppendedTx, error) { return svc.AppendBlockOf(0) },
		"AppendBlockOf(1001)":     func() ([]AppendedTx, error) { return svc.AppendBlockOf(1001) },
		"AppendTransactions(-1)":  func() ([]AppendedTx, error) { return svc.AppendTransactions(-1) },
		"AppendTransactions(1e6)": func() ([]AppendedTx, error) { return svc.AppendTransactions(1_000_000) },
	} {
		if txs, err := f(); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%s: %v, %v; want an out-of-range error", name, txs, err)
		}
	}
	if n := svc.Transactions().Len(); n != svc.Dataset().Transactions.Len() {
		t.Errorf("refused appends changed the chain to %d", n)
	}

	hand, err := New(Config{Data: fixtureDataset()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hand.AppendBlock(); !errors.Is(err, errNotAppendable) {
		t.Errorf("AppendBlock on a hand-made dataset: %v", err)
	}
	for _, cfg := range []Config{
		{Data: fixtureDataset(), Blocks: BlocksConfig{Interval: time.Second}},
		{Blocks: BlocksConfig{Interval: -time.Second}},
		{Blocks: BlocksConfig{PerBlock: -1}},
		{Blocks: BlocksConfig{PerBlock: maxBlockSize + 1}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New with %+v: no error", cfg.Blocks)
		}
	}
}

// TestAppendWhileReading: readers over HTTP see a consistent chain while
// blocks are appended (run with -race).
func TestAppendWhileReading(t *testing.T) {
	srv := startGenerated(t, Config{Dataset: DatasetOptions{Seed: genSeed}})
	svc, list := srv.Service, srv.URL+"/rest/transactions"
	head := pageTxs(t, fetch(t, list+"?first=1"))[0]

	var mu sync.Mutex
	var appended []AppendedTx
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lastHead, lastCount := head.Cursor, 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				page := pageTxs(t, fetch(t, list+"?first=10"))
				if !slices.IsSortedFunc(page, func(a, b AppendedTx) int { return -compareTxKey(txKeyOf(a), txKeyOf(b)) }) {
					t.Errorf("page not newest first: %v", page)
					return
				}
				if compareTxKey(txKeyOf(page[0]), mustKey(t, lastHead)) < 0 {
					t.Errorf("head went back from %s to %s", lastHead, page[0].Cursor)
					return
				}
				lastHead = page[0].Cursor
				newer := pageTxs(t, fetch(t, list+"?after="+head.Cursor+"&first=100000"))
				if len(newer) < lastCount {
					t.Errorf("%d transactions after the first head, then %d", lastCount, len(newer))
					return
				}
				lastCount = len(newer)
				mu.Lock()
				known := slices.Clone(appended)
				mu.Unlock()
				if len(known) > 0 {
					tx := known[len(known)/2]
					if r := fetch(t, list+"/"+tx.Hash); r.status != http.StatusOK {
						t.Errorf("lookup of appended %s: %d %s", tx.Cursor, r.status, r.body)
						return
					}
				}
			}
		}()
	}
	for range 200 {
		txs := mustAppend(t)(svc.AppendBlock())
		mu.Lock()
		appended = append(appended, txs...)
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
	got := pageTxs(t, fetch(t, list+"?after="+head.Cursor+"&first=100000"))
	if diff := cmp.Diff(newestFirst(appended, nil), got); diff != "" {
		t.Errorf("after the appends (-want +got):\n%s", diff)
	}
}

func txKeyOf(tx AppendedTx) txKey { return txKey{tx.Block, tx.Index} }

func mustKey(t *testing.T, cursor string) txKey {
	k, err := parseTxCursor(cursor)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestBlockProducer runs the producer on synctest's clock: a block every
// interval, none after it stops.
func TestBlockProducer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, err := New(Config{Dataset: DatasetOptions{Seed: genSeed}, Blocks: BlocksConfig{Interval: 2 * time.Second, PerBlock: 3}})
		if err != nil {
			t.Fatal(err)
		}
		type event struct {
			at  time.Duration
			txs []AppendedTx
		}
		events := make(chan event, 100)
		start := time.Now()
		svc.onAppend = func(txs []AppendedTx) { events <- event{time.Since(start), txs} }
		head := svc.Transactions().Meta(svc.Transactions().Len() - 1).Block

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			svc.produceBlocks(ctx, 2*time.Second)
		}()
		time.Sleep(7 * time.Second)
		synctest.Wait()
		cancel()
		<-done
		time.Sleep(time.Minute)
		close(events)
		var got []time.Duration
		for e := range events {
			got = append(got, e.at)
			head++
			if len(e.txs) < 1 || len(e.txs) > 3 || e.txs[0].Block != head {
				t.Errorf("at %s: %d transactions in block %d, want 1..3 in %d", e.at, len(e.txs), e.txs[0].Block, head)
			}
		}
		if want := []time.Duration{2 * time.Second, 4 * time.Second, 6 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("blocks appended at %v, want %v", got, want)
		}
	})
}

// TestServerProducesBlocks: a Server with an interval appends blocks over
// real HTTP, and Close (or Shutdown) stops it without a leak.
func TestServerProducesBlocks(t *testing.T) {
	for _, stop := range []string{"Close", "Shutdown"} {
		t.Run(stop, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			svc, err := New(Config{Dataset: DatasetOptions{Seed: genSeed}, Blocks: BlocksConfig{Interval: 5 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			events := make(chan []AppendedTx, 1000)
			svc.onAppend = func(txs []AppendedTx) {
				select {
				case events <- txs:
				default:
				}
			}
			srv, err := Serve(svc, "")
			if err != nil {
				t.Fatal(err)
			}
			var last AppendedTx
			for range 2 {
				select {
				case txs := <-events:
					last = txs[len(txs)-1]
				case <-time.After(10 * time.Second):
					t.Fatal("no block appended in 10s")
				}
			}
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			resp, err := client.Get(srv.URL + "/rest/transactions?first=1")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if head := pageTxs(t, fetched{status: resp.StatusCode, body: body})[0]; compareTxKey(txKeyOf(head), txKeyOf(last)) < 0 {
				t.Errorf("explorer head %s is older than appended %s", head.Cursor, last.Cursor)
			}
			if stop == "Close" {
				err = srv.Close()
			} else {
				err = srv.Shutdown(context.Background())
			}
			if err != nil {
				t.Fatal(err)
			}
			n := svc.Transactions().Len()
			goleak.VerifyNone(t, goleak.IgnoreCurrent())
			if m := svc.Transactions().Len(); m != n {
				t.Errorf("the chain grew from %d to %d after %s", n, m, stop)
			}
		})
	}
}

// post sends POST url with no body.
func post(t *testing.T, rawURL string) fetched {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fetchReq(t, req)
}

func TestControlRoute(t *testing.T) {
	srv := startGenerated(t, Config{Dataset: DatasetOptions{Seed: genSeed}, Control: true})
	route := srv.URL + controlBlocksPath
	decode := func(r fetched) appendedBlock {
		t.Helper()
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d (%s), want 200 JSON; body %s", r.status, r.header.Get("Content-Type"), r.body)
		}
		var b appendedBlock
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			t.Fatalf("decode %s: %v", r.body, err)
		}
		if !bytes.Contains(r.body, []byte(`"block":"`+strconv.FormatUint(b.Block, 10)+`"`)) {
			t.Errorf("block is not a decimal string: %s", r.body)
		}
		for i, tx := range b.Transactions {
			if tx.Block != b.Block || tx.Index != uint32(i) || tx.Cursor != fmt.Sprintf("%d.%d", b.Block, i) {
				t.Errorf("transaction %d of block %s: %+v", i, r.body, tx)
			}
		}
		return b
	}

	head := pageTxs(t, fetch(t, srv.URL+"/rest/transactions?first=1"))[0]
	b := decode(post(t, route))
	if b.Block != head.Block+1 || len(b.Transactions) < 1 || len(b.Transactions) > defaultBlockSize {
		t.Errorf("appended block %d with %d transactions after head %d", b.Block, len(b.Transactions), head.Block)
	}
	b3 := decode(post(t, route+"?transactions=3"))
	if b3.Block != b.Block+1 || len(b3.Transactions) != 3 {
		t.Errorf("?transactions=3 appended %d to block %d", len(b3.Transactions), b3.Block)
	}
	got := pageTxs(t, fetch(t, srv.URL+"/rest/transactions?after="+head.Cursor))
	if diff := cmp.Diff(newestFirst(slices.Concat(b.Transactions, b3.Transactions), nil), got); diff != "" {
		t.Errorf("explorer after the control appends (-want +got):\n%s", diff)
	}

	for _, q := range []string{"0", "1001", "x", "-2"} {
		r := post(t, route+"?transactions="+q)
		if e := decodeError(t, r); r.status != http.StatusBadRequest || !strings.Contains(e.Message, "transactions must be") {
			t.Errorf("?transactions=%s: %d %s", q, r.status, r.body)
		}
	}
	if r := fetch(t, route); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != http.MethodPost {
		t.Errorf("GET: %d (Allow %q), want 405 Allow POST", r.status, r.header.Get("Allow"))
	}

	t.Run("off by default: 404", func(t *testing.T) {
		off := startGenerated(t, Config{Dataset: DatasetOptions{Seed: genSeed}})
		for _, r := range []fetched{post(t, off.URL+controlBlocksPath), fetch(t, off.URL+controlBlocksPath)} {
			if r.status != http.StatusNotFound {
				t.Errorf("status %d, want 404", r.status)
			}
		}
		if n := off.Service.Transactions().Len(); n != off.Service.Dataset().Transactions.Len() {
			t.Errorf("the chain grew to %d", n)
		}
	})
	t.Run("hand-made dataset: 409", func(t *testing.T) {
		hand := startFixture(t, Config{Control: true})
		r := post(t, hand.URL+controlBlocksPath)
		if e := decodeError(t, r); r.status != http.StatusConflict || !strings.Contains(e.Message, "generated dataset") {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
}

func TestMainCommandBlocks(t *testing.T) {
	var help bytes.Buffer
	if err := run(context.Background(), []string{"-help"}, &help); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"-block-interval", "-block-size", "-control"} {
		if !strings.Contains(help.String(), flag) {
			t.Errorf("help does not mention %s", flag)
		}
	}
	for _, args := range [][]string{{"-block-size", "-1"}, {"-block-size", "1001"}, {"-block-interval", "-1s"}, {"-block-interval", "soon"}} {
		if err := run(context.Background(), append(args, "-listen", "127.0.0.1:0"), io.Discard); err == nil {
			t.Errorf("run %v: no error", args)
		}
	}

	printed, stop := startMain(t, "control: POST ", "-listen", "127.0.0.1:0", "-block-interval", "1h", "-block-size", "2", "-control")
	defer stop()
	control, blocks := "", ""
	for _, line := range printed {
		if rest, ok := strings.CutPrefix(line, "new blocks: "); ok {
			blocks = rest
		}
		if rest, ok := strings.CutPrefix(line, "control: POST "); ok {
			control = rest
		}
	}
	if blocks != "every 1h0m0s, 1 to 2 transactions each" {
		t.Errorf("printed %q", printed)
	}
	r := post(t, control)
	var b appendedBlock
	if err := json.Unmarshal(r.body, &b); r.status != http.StatusOK || err != nil || len(b.Transactions) < 1 || len(b.Transactions) > 2 {
		t.Errorf("POST %s: %d %s", control, r.status, r.body)
	}
}

// startMain runs the standalone command with args until it prints a line
// starting with until, and returns the lines printed so far; stop ends the
// command and checks it returned cleanly.
func startMain(t *testing.T, until string, args ...string) (printed []string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	for lines.Scan() {
		printed = append(printed, lines.Text())
		if strings.HasPrefix(lines.Text(), until) {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	stop = func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("run did not stop")
		}
	}
	if len(printed) == 0 || !strings.HasPrefix(printed[len(printed)-1], until) {
		stop()
		t.Fatalf("run %v printed %q, no line starting %q", args, printed, until)
	}
	return printed, stop
}

// BenchmarkAppendBlock measures an append of one 4-transaction block: its
// cost must not grow with the chain (scale 200: over a million).
func BenchmarkAppendBlock(b *testing.B) {
	for _, scale := range []int{1, 200} {
		b.Run(fmt.Sprintf("scale-%d", scale), func(b *testing.B) {
			svc, err := New(Config{Dataset: DatasetOptions{Scale: scale}})
			if err != nil {
				b.Fatal(err)
			}
			// The first append copies the index's exactly-sized slices once.
			if _, err := svc.AppendBlockOf(4); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := svc.AppendBlockOf(4); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
