package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/google/go-cmp/cmp"

	"github.com/tradenet/gateway/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
	// The chain's submitters (lower case, as the explorer stores them) and
	// command types, taken in turn by its transactions.
	testParties = []string{"aa01", "bb02", "cc03"}
	testTypes   = []string{"Submit Order", "Cancel Order", "Transfer Funds", "Vote on Proposal"}
)

// chain is a fake explorer: an in-memory chain with the explorer's paging
// and filters (docs/explorer.md), appendable, counting requests.
type chain struct {
	mu       sync.Mutex
	txs      []upstream.Transaction
	requests []upstream.TransactionsParams
	failures int   // the next failures requests fail
	err      error // with err
	// onList, if set, is called before each request is answered.
	onList func(p upstream.TransactionsParams)
}

var errExplorerDown = errors.New("explorer down")

// appendBlock adds a block of n transactions and returns the chain head.
func (c *chain) appendBlock(n int) upstream.TxCursor {
	c.mu.Lock()
	defer c.mu.Unlock()
	block := upstream.Uint64(100)
	if k := len(c.txs); k > 0 {
		block = c.txs[k-1].Block + 1
	}
	for i := range n {
		k := len(c.txs)
		c.txs = append(c.txs, upstream.Transaction{
			Block:     block,
			Index:     upstream.Int32(i),
			Hash:      fmt.Sprintf("%064X", k),
			Submitter: testParties[k%len(testParties)],
			Type:      testTypes[k%len(testTypes)],
		})
	}
	return c.headLocked()
}

// newChain is a chain of blocks blocks of n transactions each.
func newChain(blocks, n int) *chain {
	c := &chain{}
	for range blocks {
		c.appendBlock(n)
	}
	return c
}

func (c *chain) head() upstream.TxCursor {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.headLocked()
}

func (c *chain) headLocked() upstream.TxCursor {
	if len(c.txs) == 0 {
		return upstream.TxCursor{}
	}
	return c.txs[len(c.txs)-1].Position()
}

func (c *chain) fail(n int) {
	c.mu.Lock()
	c.failures, c.err = n, errExplorerDown
	c.mu.Unlock()
}

func (c *chain) requestCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.requests)
}

// selects is the explorer's filter, written independently of filter.go.
func selects(p upstream.TransactionsParams, tx *upstream.Transaction) bool {
	return (len(p.CmdTypes) == 0 || slices.Contains(p.CmdTypes, tx.Type)) &&
		!slices.Contains(p.ExcludeCmdTypes, tx.Type) &&
		(len(p.Parties) == 0 || slices.Contains(p.Parties, tx.Submitter)) &&
		(p.Submitter == "" || p.Submitter == tx.Submitter) &&
		(p.BlockHeight == nil || *p.BlockHeight == uint64(tx.Block))
}

func (c *chain) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	c.mu.Lock()
	hook := c.onList
	c.mu.Unlock()
	if hook != nil {
		hook(p)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests = append(c.requests, p)
	if c.failures > 0 {
		c.failures--
		return nil, c.err
	}
	size := p.First
	if size == 0 {
		size = 50
	}
	var rows []upstream.Transaction
	if p.After != nil {
		// The oldest size rows newer than After, answered newest first.
		for i := range c.txs {
			if tx := &c.txs[i]; older(*p.After, tx.Position()) && selects(p, tx) && len(rows) < size {
				rows = append(rows, *tx)
			}
		}
		slices.Reverse(rows)
	} else {
		for i := len(c.txs) - 1; i >= 0 && len(rows) < size; i-- {
			if selects(p, &c.txs[i]) {
				rows = append(rows, c.txs[i])
			}
		}
	}
	return &upstream.TransactionPage{Transactions: rows}, nil
}

// after returns the positions of the chain's transactions newer than pos
// that p's filter selects, in chain order.
func (c *chain) after(pos upstream.TxCursor, p upstream.TransactionsParams) []upstream.TxCursor {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []upstream.TxCursor
	for i := range c.txs {
		if tx := &c.txs[i]; older(pos, tx.Position()) && selects(p, tx) {
			out = append(out, tx.Position())
		}
	}
	return out
}

// polls counts the requests for the newest transactions: the head read
// and the polls (unfiltered, no cursor or After alone).
func (c *chain) polls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range c.requests {
		if len(p.CmdTypes)+len(p.ExcludeCmdTypes)+len(p.Parties) == 0 && p.Submitter == "" {
			n++
		}
	}
	return n
}

// positions is the test feed's prepare: a transaction's position.
func position(tx *upstream.Transaction) upstream.TxCursor { return tx.Position() }

// newTestFeed is a feed on e (the fake chain, or an explorer built on
// it), polling every second unless cfg says otherwise.
func newTestFeed(e Explorer, cfg Config) *Feed[upstream.TxCursor] {
	cfg.Explorer = e
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	cfg.Logger = quiet
	return New(cfg, position)
}

// openFeed is newTestFeed, closed when t ends.
func openFeed(t *testing.T, e Explorer, cfg Config) *Feed[upstream.TxCursor] {
	f := newTestFeed(e, cfg)
	t.Cleanup(f.Close)
	return f
}

// testExplorer is the fake chain, or an explorer built on it.
type testExplorer interface {
	Explorer
	head() upstream.TxCursor
}

// started starts a test feed on e with cfg, closed when t ends, with one
// unfiltered subscription; it returns them and the chain's head then,
// after which the subscription receives every transaction.
func started(t *testing.T, e testExplorer, cfg Config) (*Feed[upstream.TxCursor], *Subscription[upstream.TxCursor], upstream.TxCursor) {
	t.Helper()
	f := openFeed(t, e, cfg)
	return f, subscribe(t, f, SubscribeOptions{}), e.head()
}

// fastAndSlow starts a test feed on c with Buffer buffer and two
// subscriptions from the head, returned as start: fast, which a goroutine
// reads until it has taken n transactions, then sent on fastGot; and
// slow, which nothing reads.
func fastAndSlow(t *testing.T, c *chain, buffer, n int) (f *Feed[upstream.TxCursor], fast, slow *Subscription[upstream.TxCursor], fastGot <-chan []upstream.TxCursor, start upstream.TxCursor) {
	t.Helper()
	f = openFeed(t, c, Config{Buffer: buffer})
	fast, slow = subscribe(t, f, SubscribeOptions{}), subscribe(t, f, SubscribeOptions{})
	got := make(chan []upstream.TxCursor)
	go func() { got <- take(t, fast, n) }()
	return f, fast, slow, got, c.head()
}

// expect takes len(want) transactions from s and reports, as what, how
// they differ from want.
func expect(t *testing.T, what string, s *Subscription[upstream.TxCursor], want []upstream.TxCursor) {
	t.Helper()
	if got := take(t, s, len(want)); !slices.Equal(got, want) {
		t.Errorf("%s (-want +got):\n%s", what, cmp.Diff(want, got))
	}
}

func subscribe(t *testing.T, f *Feed[upstream.TxCursor], opts SubscribeOptions) *Subscription[upstream.TxCursor] {
	t.Helper()
	s, err := f.Subscribe(t.Context(), opts)
	if err != nil {
		t.Fatalf("Subscribe(%+v): %v", opts, err)
	}
	return s
}

// take receives n transactions; it fails the test (without stopping it:
// it may run in another goroutine) after a generous deadline.
func take(t *testing.T, s *Subscription[upstream.TxCursor], n int) []upstream.TxCursor {
	t.Helper()
	var got []upstream.TxCursor
	deadline := time.After(5 * time.Minute)
	for len(got) < n {
		select {
		case pos, ok := <-s.C():
			if !ok {
				t.Errorf("subscription ended (%v) after %d of %d transactions: %v", s.Err(), len(got), n, got)
				return got
			}
			got = append(got, pos)
		case <-deadline:
			t.Errorf("received %d of %d transactions: %v", len(got), n, got)
			return got
		}
	}
	return got
}

// drain receives what is waiting, without blocking.
func drain(s *Subscription[upstream.TxCursor]) (got []upstream.TxCursor, open bool) {
	for {
		select {
		case pos, ok := <-s.C():
			if !ok {
				return got, false
			}
			got = append(got, pos)
		default:
			return got, true
		}
	}
}

// closed waits for the subscription's channel to close after the rest of
// what it holds, and returns that rest.
func closed(t *testing.T, s *Subscription[upstream.TxCursor]) []upstream.TxCursor {
	t.Helper()
	var got []upstream.TxCursor
	deadline := time.After(5 * time.Minute)
	for {
		select {
		case pos, ok := <-s.C():
			if !ok {
				return got
			}
			got = append(got, pos)
		case <-deadline:
			t.Errorf("subscription still open")
			return got
		}
	}
}

func cursor(block uint64, index uint32) *upstream.TxCursor {
	return &upstream.TxCursor{Block: block, Index: index}
}
