package live

import (
	"errors"
	"math"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// sampleExplorer starts the sample data service over loopback and returns
// a client of its explorer (idle connections closed at the end).
func sampleExplorer(t testing.TB) (*upstream.Client, *sampleservice.Server) {
	t.Helper()
	srv, err := sampleservice.Start(sampleservice.Config{}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	c, err := upstream.New(upstream.Config{DataNodeURL: srv.URL, ExplorerURL: srv.URL + "/rest", HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// allTransactions reads the sample chain, oldest first.
func allTransactions(t testing.TB, c *upstream.Client) []upstream.Transaction {
	t.Helper()
	var all []upstream.Transaction
	p := upstream.TransactionsParams{Last: 1000} // the oldest, then pages after them
	for {
		page, err := c.ListTransactions(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Transactions) == 0 {
			return all
		}
		// As the feed reads them: every command decoded whole.
		rows, err := decodeCommands(page.Transactions)
		if err != nil {
			t.Fatal(err)
		}
		slices.Reverse(rows)
		all = append(all, rows...)
		p = upstream.TransactionsParams{First: 1000, After: ptr(all[len(all)-1].Position())}
	}
}

// sameDecoded is reflect.DeepEqual, except that a Float64 NaN equals a
// NaN (upstream's equal_test.go does the same).
func sameDecoded(a, b any) bool {
	return cmp.Equal(a, b,
		cmp.Exporter(func(reflect.Type) bool { return true }),
		cmp.Comparer(func(x, y upstream.Float64) bool {
			return math.Float64bits(float64(x)) == math.Float64bits(float64(y))
		}))
}

func TestBatchRoundTripsEverySampleTransaction(t *testing.T) {
	c, _ := sampleExplorer(t)
	all := allTransactions(t, c)
	if len(all) < 5000 {
		t.Fatalf("read %d transactions", len(all))
	}
	for start := 0; start < len(all); start += 500 {
		b := Batch{Transactions: all[start:min(start+500, len(all))]}
		if start > 0 {
			b.Prev = all[start-1].Position()
		}
		msg, err := EncodeBatch(b)
		if err != nil {
			t.Fatalf("encode from %d: %v", start, err)
		}
		got, err := DecodeBatch(msg)
		if err != nil {
			t.Fatalf("decode from %d: %v", start, err)
		}
		if !sameDecoded(b, got) {
			for i := range b.Transactions {
				if !sameDecoded(b.Transactions[i], got.Transactions[i]) {
					t.Fatalf("transaction %s changed: %s", b.Transactions[i].Position(), cmp.Diff(b.Transactions[i], got.Transactions[i], cmp.Exporter(func(reflect.Type) bool { return true })))
				}
			}
			t.Fatalf("batch from %d changed", start)
		}
	}
	// A heartbeat.
	msg, err := EncodeBatch(Batch{Prev: upstream.TxCursor{Block: 7, Index: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeBatch(msg); err != nil || got.Prev != (upstream.TxCursor{Block: 7, Index: 3}) || len(got.Transactions) != 0 {
		t.Errorf("heartbeat: %+v, %v", got, err)
	}
}

func TestDecodeBatchRefusesBadMessages(t *testing.T) {
	for _, msg := range []string{
		"", "null", "[]", "{", `{"prev":3}`, `{"prev":"3"}`, `{"prev":"a.b"}`, `{"transactions":[]}`,
		`{"prev":"5.0","transactions":[{"block":"5","index":0}]}`,                                 // not after prev
		`{"prev":"5.0","transactions":[{"block":"6","index":1},{"block":"6","index":0}]}`,         // out of order
		`{"prev":"5.0","transactions":[{"block":"6","index":-1}]}`,                                // negative index
		`{"prev":"5.0","transactions":[{"block":"6","index":0,"command":{"orderSubmission":7}}]}`, // bad command
	} {
		if b, err := DecodeBatch([]byte(msg)); err == nil {
			t.Errorf("DecodeBatch(%q) = %+v, want an error", msg, b)
		}
	}
}

func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`{"prev":"5.0","transactions":[{"block":"6","index":0,"command":{"nonce":"1","orderSubmission":{"marketId":"ab"}}}]}`))
	f.Add([]byte(`{"prev":"0.0","transactions":[]}`))
	f.Add([]byte(`{"prev":"1.1","transactions":[{"block":"2","index":0,"command":{"batchProposalSubmission":{"terms":{"changes":[{"newMarket":{}}]}}}}]}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		b, err := DecodeBatch(msg)
		if err != nil {
			return
		}
		// Not required to decode again: upstream.Command does not
		// round-trip a member named "" (testdata/fuzz), which no explorer
		// sends; real transactions do (TestBatchRoundTrips…).
		if _, err := EncodeBatch(b); err != nil {
			t.Fatalf("a decoded batch does not encode: %v", err)
		}
	})
}

// TestResumeOverSampleService resumes from the middle of the sample chain
// over loopback HTTP: what the subscription delivers is what the explorer
// lists after the cursor with the same filter.
func TestResumeOverSampleService(t *testing.T) {
	c, srv := sampleExplorer(t)
	page, err := c.ListTransactions(t.Context(), upstream.TransactionsParams{First: 1000})
	if err != nil {
		t.Fatal(err)
	}
	all := page.Transactions
	slices.Reverse(all)
	party := all[len(all)/2].Submitter
	filters := map[string]upstream.TransactionsParams{
		"all":     {},
		"party":   {Parties: []string{party}},
		"types":   {CmdTypes: []string{all[len(all)-1].Type, all[len(all)-2].Type}},
		"exclude": {ExcludeCmdTypes: []string{all[len(all)-3].Type}},
	}
	f := New(Config{Explorer: c, PageSize: 50, MaxBacklog: 5000, Logger: quiet}, position)
	defer f.Close()
	for name, filter := range filters {
		from := all[len(all)-700].Position()
		var want []upstream.TxCursor
		for i := range all {
			if older(from, all[i].Position()) && selects(filter, &all[i]) {
				want = append(want, all[i].Position())
			}
		}
		before := srv.Service.Requests(sampleservice.EndpointTransactions)
		s, err := f.Subscribe(t.Context(), SubscribeOptions{Filter: filter, After: &from})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := take(t, s, len(want)); !slices.Equal(got, want) {
			t.Errorf("%s: %d transactions, want %d", name, len(got), len(want))
		}
		if extra, open := drain(s); len(extra) > 0 || !open {
			t.Errorf("%s: more: %v", name, extra)
		}
		// Pages of 50 until the head (some shorter: the explorer skips rows
		// it cannot decode), and the head read the first time.
		if n := srv.Service.Requests(sampleservice.EndpointTransactions) - before; n > int64(len(want)/50*3/2+3) {
			t.Errorf("%s: %d requests for %d transactions", name, n, len(want))
		}
		s.Close()
	}
	// From the start of the chain (over 5,000 transactions): refused.
	_, err = f.Subscribe(t.Context(), SubscribeOptions{After: &upstream.TxCursor{}})
	if be, ok := errors.AsType[*BacklogError](err); !ok || be.Max != 5000 {
		t.Errorf("resumed from the start: %v", err)
	}
}

// The feed's transactions carry their commands decoded whole, for every
// subscription whatever it reads (decodeCommands), though the client
// decodes a page's commands only as they are read.
func TestFeedDeliversWholeCommands(t *testing.T) {
	c, _ := sampleExplorer(t)
	page, err := c.ListTransactions(t.Context(), upstream.TransactionsParams{First: 20})
	if err != nil {
		t.Fatal(err)
	}
	if page.Transactions[0].LazyCommand == (upstream.TxCommand{}) {
		t.Fatal("the client's page holds no lazy command")
	}
	type delivered struct {
		pos   upstream.TxCursor
		whole bool
	}
	f := New(Config{Explorer: c, PageSize: 50, MaxBacklog: 5000, Logger: quiet}, func(tx *upstream.Transaction) delivered {
		return delivered{tx.Position(), tx.LazyCommand == (upstream.TxCommand{}) && tx.Command.Kind != nil}
	})
	defer f.Close()
	from := page.Transactions[len(page.Transactions)-1].Position()
	s, err := f.Subscribe(t.Context(), SubscribeOptions{After: &from})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range len(page.Transactions) - 1 {
		select {
		case d, ok := <-s.C():
			if !ok {
				t.Fatalf("subscription ended: %v", s.Err())
			}
			if !d.whole {
				t.Fatalf("transaction %s delivered without its command decoded whole", d.pos)
			}
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		}
	}
}
