package live

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tradenet/gateway/upstream"
)

// The tests of the positions the feed trusts (attack review, HIGH: one
// out-of-range position froze the feed silently) and of the large block
// a fast reader must survive. Each runs the feed against a hostile
// explorer: the fake chain's answers, rewritten.

// hostile is an explorer that answers from its chain, then lets mangle
// rewrite the page (a copy, newest first as the chain answers).
type hostile struct {
	*chain
	mangleMu sync.Mutex
	mangle   func(p upstream.TransactionsParams, rows []upstream.Transaction) []upstream.Transaction
}

func (h *hostile) set(m func(p upstream.TransactionsParams, rows []upstream.Transaction) []upstream.Transaction) {
	h.mangleMu.Lock()
	h.mangle = m
	h.mangleMu.Unlock()
}

func (h *hostile) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	page, err := h.chain.ListTransactions(ctx, p)
	if err != nil {
		return nil, err
	}
	h.mangleMu.Lock()
	m := h.mangle
	h.mangleMu.Unlock()
	if m != nil {
		page.Transactions = m(p, slices.Clone(page.Transactions))
	}
	return page, nil
}

// appendAt adds a block of n transactions at height block (past the
// chain's head), their hashes marked with salt, and returns the head.
func appendAt(c *chain, block uint64, n int, salt string) upstream.TxCursor {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range n {
		k := len(c.txs)
		c.txs = append(c.txs, upstream.Transaction{
			Block:     upstream.Uint64(block),
			Index:     upstream.Int32(i),
			Hash:      fmt.Sprintf("%s%064X", salt, k),
			Submitter: testParties[k%len(testParties)],
			Type:      testTypes[k%len(testTypes)],
		})
	}
	return c.headLocked()
}

// truncate keeps the chain's transactions up to and including block (an
// explorer reset to an older height) and returns its head.
func truncate(c *chain, block uint64) upstream.TxCursor {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.txs = slices.DeleteFunc(c.txs, func(tx upstream.Transaction) bool { return uint64(tx.Block) > block })
	return c.headLocked()
}

// txAt is a transaction the chain does not hold, at pos.
func txAt(block uint64, index int32) upstream.Transaction {
	return upstream.Transaction{Block: upstream.Uint64(block), Index: upstream.Int32(index), Hash: fmt.Sprintf("LIE%d.%d", block, index), Submitter: "aa01", Type: "Submit Order"}
}

// positions are the positions of txs.
func positions(txs ...upstream.Transaction) []upstream.TxCursor {
	var out []upstream.TxCursor
	for i := range txs {
		out = append(out, txs[i].Position())
	}
	return out
}

// offset puts the test's steps half a poll interval after the feed's
// polls (each at a whole second from its start), so that a check never
// runs at the instant of a poll.
func offset() { time.Sleep(500 * time.Millisecond) }

// quietAfter waits for the feed to settle and reports what s received
// beyond what was taken (nothing, for an exactly-once delivery).
func quietAfter(t *testing.T, s *Subscription[upstream.TxCursor]) {
	t.Helper()
	time.Sleep(3 * time.Second)
	synctest.Wait()
	if extra, open := drain(s); len(extra) > 0 || !open {
		t.Errorf("after all: %v (open %v, err %v)", extra, open, s.Err())
	}
}

// A row at block 9e18 (or at an index no block has), wherever the
// explorer puts it, is refused and counted; the rows at valid positions
// in the same pages are delivered, and the feed goes on.
func TestOutOfRangePositionsAreRefused(t *testing.T) {
	lie := txAt(9_000_000_000_000_000_000, 0)
	huge := txAt(105, 1<<30) // a block's index, beyond any block's size
	for name, tc := range map[string]struct {
		pageSize int
		lies     func(p upstream.TransactionsParams) []upstream.Transaction
	}{
		// The explorer's newest page (its head) holds the row: it is past
		// what any chain reaches.
		"head page": {lies: func(p upstream.TransactionsParams) []upstream.Transaction {
			if p.After == nil {
				return []upstream.Transaction{lie}
			}
			return nil
		}},
		// Only the pages after the feed's position hold it (the head read
		// does not): it is past the explorer's head. Blocks larger than a
		// page make the feed read them.
		"pages after": {pageSize: 4, lies: func(p upstream.TransactionsParams) []upstream.Transaction {
			if p.After != nil {
				return []upstream.Transaction{lie}
			}
			return nil
		}},
		"every page": {pageSize: 4, lies: func(upstream.TransactionsParams) []upstream.Transaction {
			return []upstream.Transaction{lie, huge}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := &hostile{chain: newChain(1, 3)}
				// From the start (the feed's first head read included), newest
				// first as the explorer answers: the lies on top.
				h.set(func(p upstream.TransactionsParams, rows []upstream.Transaction) []upstream.Transaction {
					return append(tc.lies(p), rows...)
				})
				f, s, start := started(t, h, Config{PageSize: tc.pageSize})
				for i := range 12 {
					h.appendBlock(1 + i%6)
					time.Sleep(time.Second)
				}
				expect(t, "delivered", s, h.after(start, upstream.TransactionsParams{}))
				quietAfter(t, s)
				st := f.Stats()
				if st.RefusedPositions == 0 || st.Head != h.head() || st.DeliveredAt != h.head() || st.State != statePolling || st.Lag > 2*time.Second {
					t.Errorf("stats %+v, want refusals, polling at the head %s", st, h.head())
				}
			})
		})
	}
}

// Pages in ascending order, shuffled, with every row twice: delivered in
// chain order, each once (the review's case: a block of 31 transactions
// lost 22 when the page came back ascending).
func TestPagesInAnyOrderWithDuplicates(t *testing.T) {
	for name, mangle := range map[string]func(rows []upstream.Transaction, rnd *rand.Rand) []upstream.Transaction{
		"ascending": func(rows []upstream.Transaction, _ *rand.Rand) []upstream.Transaction {
			slices.Reverse(rows)
			return rows
		},
		"shuffled with duplicates": func(rows []upstream.Transaction, rnd *rand.Rand) []upstream.Transaction {
			rows = append(rows, rows...)
			rnd.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
			return rows
		},
	} {
		for _, pageSize := range []int{100, 7} {
			t.Run(fmt.Sprintf("%s/page %d", name, pageSize), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h := &hostile{chain: newChain(1, 31)}
					f, s, start := started(t, h, Config{PageSize: pageSize})
					filtered := subscribe(t, f, SubscribeOptions{Filter: testFilters["combined"]})
					rnd := rand.New(rand.NewPCG(1, 2))
					h.set(func(_ upstream.TransactionsParams, rows []upstream.Transaction) []upstream.Transaction {
						return mangle(rows, rnd)
					})
					for i := range 8 {
						h.appendBlock(31 - 3*i)
						time.Sleep(time.Second)
					}
					expect(t, "delivered", s, h.after(start, upstream.TransactionsParams{}))
					expect(t, "filtered", filtered, h.after(start, testFilters["combined"]))
					quietAfter(t, s)
					if st := f.Stats(); st.RefusedPositions != 0 || st.DeliveredAt != h.head() {
						t.Errorf("stats %+v", st)
					}
				})
			})
		}
	}
}

// An explorer that answers at most 3 rows whatever a page asks (pages
// with gaps behind them): the feed reads on to the explorer's head each
// poll, and stays there; the old feed took a short page for the head and
// fell further behind at every block.
func TestShortPagesAreFollowedToTheHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hostile{chain: newChain(1, 2)}
		f, s, start := started(t, h, Config{})
		offset()
		h.set(func(p upstream.TransactionsParams, rows []upstream.Transaction) []upstream.Transaction {
			if p.After != nil {
				rows = rows[max(0, len(rows)-3):] // the 3 just after After
			}
			return rows[:min(3, len(rows))]
		})
		for range 10 {
			h.appendBlock(5)
			time.Sleep(time.Second)
			if st := f.Stats(); st.DeliveredAt != h.head() {
				t.Errorf("the feed is at %s, the explorer's head at %s", st.DeliveredAt, h.head())
			}
		}
		want := h.after(start, upstream.TransactionsParams{})
		got, _ := drain(s)
		if !slices.Equal(got, want) {
			t.Errorf("delivered (-want +got):\n%s", cmp.Diff(want, got))
		}
	})
}

// Blocks without transactions leave gaps in the heights: a gap within
// maxBlockJump is delivered at once, a larger one once the time since
// the feed's position allows it (a quiet chain is never refused); a row
// just past the bound is refused, and the feed goes on below it.
func TestGapsWithinTheBoundAndPastIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hostile{chain: newChain(1, 3)}
		f, s, start := started(t, h, Config{})
		offset()
		next := func(gap uint64) upstream.TxCursor { return appendAt(h.chain, h.head().Block+gap, 2, "") }

		next(maxBlockJump - 10) // at once: within the jump
		time.Sleep(2 * time.Second)
		time.Sleep(time.Hour) // a quiet hour: 360,000 blocks more allowed
		next(300_000)
		time.Sleep(2 * time.Second)
		want := h.after(start, upstream.TransactionsParams{})
		if got, _ := drain(s); !slices.Equal(got, want) {
			t.Fatalf("legitimate gaps: delivered %v, want %v", got, want)
		}
		if st := f.Stats(); st.RefusedPositions != 0 {
			t.Fatalf("legitimate gaps refused: %+v", st)
		}

		// A row past the bound (maxBlockJump and 100 blocks a second past
		// the feed's position, plus a margin), in every page.
		reached := time.Now()
		bound := func() uint64 {
			return h.head().Block + maxBlockJump + uint64(time.Since(reached).Seconds()*maxBlockRate)
		}
		lie := txAt(bound()+1000, 0)
		h.set(func(_ upstream.TransactionsParams, rows []upstream.Transaction) []upstream.Transaction {
			return append([]upstream.Transaction{lie}, rows...)
		})
		before := h.head()
		for range 5 {
			next(1)
			time.Sleep(time.Second)
		}
		if lie.Block < upstream.Uint64(bound()) {
			t.Fatalf("the test waited too long: the lie at %d is within the bound %d now", lie.Block, bound())
		}
		want = h.after(before, upstream.TransactionsParams{})
		if got, _ := drain(s); !slices.Equal(got, want) {
			t.Errorf("past the bound: delivered %v, want %v", got, want)
		}
		if st := f.Stats(); st.RefusedPositions < 5 || st.DeliveredAt != h.head() || st.Head != h.head() {
			t.Errorf("stats %+v", st)
		}
	})
}

// An explorer behind the feed's position. Rolled back to an older
// snapshot of the same chain for a while: the lag grows at once, the
// feed moves back after reanchorAfter, and when the explorer returns
// every transaction is delivered once (none twice, none lost).
func TestExplorerRolledBackThenReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hostile{chain: newChain(20, 2)}
		f, s, start := started(t, h, Config{})
		offset()
		h.appendBlock(3)
		time.Sleep(2 * time.Second)
		// The explorer serves the chain as it was 10 blocks ago, while
		// the chain goes on.
		snapshot := upstream.TxCursor{Block: h.head().Block - 10, Index: 1}
		h.set(func(_ upstream.TransactionsParams, rows []upstream.Transaction) []upstream.Transaction {
			return slices.DeleteFunc(rows, func(tx upstream.Transaction) bool { return older(snapshot, tx.Position()) })
		})
		for i := range 10 {
			h.appendBlock(2)
			time.Sleep(time.Second)
			if i == 3 {
				if st := f.Stats(); st.Lag < 3*time.Second || st.Head != snapshot || st.Reanchors != 0 || st.State != statePolling {
					t.Errorf("explorer behind for 4s: %+v, want lag ≥ 3s, head %s", st, snapshot)
				}
			}
		}
		if st := f.Stats(); st.Reanchors != 1 || st.DeliveredAt != snapshot {
			t.Errorf("explorer behind for 10s: %+v, want one re-anchor at %s", st, snapshot)
		}
		h.set(nil)
		h.appendBlock(1)
		time.Sleep(2 * time.Second)
		expect(t, "delivered", s, h.after(start, upstream.TransactionsParams{}))
		quietAfter(t, s)
		if st := f.Stats(); st.Lag > 2*time.Second || st.Reanchors != 1 || st.DeliveredAt != h.head() {
			t.Errorf("after the explorer returned: %+v", st)
		}
	})
}

// An explorer reset to an older height that then goes on with other
// transactions (a reindex, a chain restarted): the feed moves back to it
// and delivers the new transactions, those at heights it had delivered
// before included.
func TestExplorerResetWithNewTransactions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hostile{chain: newChain(10, 2)}
		f, s, start := started(t, h, Config{})
		for range 10 {
			h.appendBlock(2)
		}
		time.Sleep(2 * time.Second)
		old := h.after(start, upstream.TransactionsParams{})
		if got := take(t, s, len(old)); !slices.Equal(got, old) {
			t.Fatalf("before the reset: %v, want %v", got, old)
		}
		reset := truncate(h.chain, start.Block+3)
		for range 12 {
			appendAt(h.chain, h.head().Block+1, 2, "NEW")
			time.Sleep(time.Second)
		}
		want := h.after(reset, upstream.TransactionsParams{})
		expect(t, "after the reset", s, want)
		quietAfter(t, s)
		if st := f.Stats(); st.Reanchors != 1 || st.DeliveredAt != h.head() || s.Err() != nil {
			t.Errorf("stats %+v, err %v", st, s.Err())
		}
	})
}

// A position within the bound but no transaction's (the explorer's head
// for two polls, then gone) is delivered; the feed, ahead of the
// explorer, moves back to the newest real position it delivered and
// delivers what the chain brought meanwhile: nothing is lost.
func TestPlausibleLieIsRecoveredFrom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hostile{chain: newChain(1, 2)}
		f, s, start := started(t, h, Config{})
		offset()
		h.appendBlock(2)
		time.Sleep(2 * time.Second)
		var mu sync.Mutex
		var real, lie upstream.TxCursor // the chain's head when the lie came, the lie
		polls := 0
		h.set(func(p upstream.TransactionsParams, rows []upstream.Transaction) []upstream.Transaction {
			mu.Lock()
			defer mu.Unlock()
			if p.After != nil || polls == 2 {
				return rows
			}
			if polls++; polls == 1 {
				real = rows[0].Position()
				lie = upstream.TxCursor{Block: real.Block + 50}
			}
			return append([]upstream.Transaction{txAt(lie.Block, 0)}, rows...)
		})
		for range 15 {
			h.appendBlock(2)
			time.Sleep(time.Second)
		}
		mu.Lock()
		atLie, lieAt := real, lie
		mu.Unlock()
		// In delivery order: the real chain up to the lie's poll, the lie,
		// then the rest of the real chain.
		all := h.after(start, upstream.TransactionsParams{})
		k := slices.Index(all, atLie) + 1
		want := slices.Concat(all[:k], []upstream.TxCursor{lieAt}, all[k:])
		expect(t, "delivered", s, want)
		quietAfter(t, s)
		if st := f.Stats(); st.Reanchors != 1 || st.DeliveredAt != h.head() || st.Lag > 2*time.Second {
			t.Errorf("stats %+v", st)
		}
	})
}

// The explorer answers, but the feed cannot reach its head (its pages
// after the feed's position come back empty): the lag grows, the state
// turns stalled at StallAfter, with no poll error; when the explorer
// answers again the feed catches up and the lag falls.
func TestLagGrowsWhileTheFeedIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hostile{chain: newChain(1, 2)}
		f, s, start := started(t, h, Config{})
		offset()
		h.set(func(p upstream.TransactionsParams, rows []upstream.Transaction) []upstream.Transaction {
			if p.After != nil {
				return nil
			}
			return rows[:min(1, len(rows))] // an explorer that caps pages at 1
		})
		for i := range 40 {
			h.appendBlock(2)
			time.Sleep(time.Second)
			st := f.Stats()
			switch i {
			case 20:
				if st.Lag < 19*time.Second || st.State != statePolling || st.DeliveredAt != start || st.Head != h.head() {
					t.Errorf("stuck for 20s: %+v", st)
				}
			case 35:
				if st.Lag < 30*time.Second || st.State != stateStalled || st.StallAfter != 30*time.Second || st.PollErrors != 0 {
					t.Errorf("stuck for 35s: %+v, want stalled", st)
				}
			}
		}
		h.set(nil)
		time.Sleep(2 * time.Second)
		expect(t, "delivered", s, h.after(start, upstream.TransactionsParams{}))
		if st := f.Stats(); st.State != statePolling || st.Lag > 2*time.Second || st.DeliveredAt != h.head() {
			t.Errorf("recovered: %+v", st)
		}
	})
}

// A block of 1,000 transactions in one poll, Buffer 256: a reader that
// takes what it is sent as it comes receives all of them, twice over; one
// that does not read is dropped, with what its buffer held.
func TestLargeBlockDoesNotDropAFastReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 1)
		f, fast, slow, fastGot, start := fastAndSlow(t, c, 256, 2000)
		c.appendBlock(1000)
		time.Sleep(5 * time.Second)
		c.appendBlock(1000)
		want := c.after(start, upstream.TransactionsParams{})
		if got := <-fastGot; !slices.Equal(got, want) {
			t.Errorf("fast reader: %d of %d (err %v)", len(got), len(want), fast.Err())
		}
		if got := closed(t, slow); !slices.Equal(got, want[:256]) || !errors.Is(slow.Err(), ErrTooSlow) {
			t.Errorf("reader that does not read: %d, err %v", len(got), slow.Err())
		}
		if st := f.Stats(); st.DroppedSlow != 1 || st.Subscriptions != 1 || fast.Err() != nil || st.Delivered != 2000+256 {
			t.Errorf("stats %+v, fast err %v", st, fast.Err())
		}
	})
}

// A fleet's batch claiming a position past any chain's (a message in
// Redis from a broken or hostile replica) is refused by every process,
// counted; the follower keeps delivering the leader's batches.
func TestFleetBatchAtImplausiblePositionIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		_, _, z, sa, sz, start := fleet(t, c, Config{})
		fleetRun(c, 2)
		head := c.head()
		for _, b := range []Batch{
			{Prev: head, Transactions: []upstream.Transaction{txAt(9e18, 0)}},
			{Prev: upstream.TxCursor{Block: 9e18}},
		} {
			msg, err := EncodeBatch(b)
			if err != nil {
				t.Fatal(err)
			}
			z.m.send(msg)
		}
		fleetRun(c, 4)
		fleetDelivered(t, c, start, sa, sz)
		if st := z.feed.Stats(); st.RefusedPositions != 2 || st.DroppedGap != 0 || st.DeliveredAt != c.head() || st.Head != c.head() {
			t.Errorf("follower %+v", st)
		}
	})
}

// A follower that accepted a plausible position the fleet's poller never
// reached (a stray batch) sees the fleet's batches stay behind it, moves
// back to the newest real position it delivered after reanchorAfter, and
// fills what it skipped from the explorer.
func TestFollowerMovesBackToTheFleet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		_, _, z, _, sz, start := fleet(t, c, Config{})
		fleetRun(c, 2)
		synctest.Wait()
		real := c.head()
		lie := txAt(uint64(real.Block)+40, 0)
		msg, err := EncodeBatch(Batch{Prev: real, Transactions: []upstream.Transaction{lie}})
		if err != nil {
			t.Fatal(err)
		}
		z.m.send(msg)
		fleetRun(c, 12)
		all := c.after(start, upstream.TransactionsParams{})
		k := slices.Index(all, real) + 1
		want := slices.Concat(all[:k], []upstream.TxCursor{lie.Position()}, all[k:])
		if got := take(t, sz, len(want)); !slices.Equal(got, want) {
			t.Errorf("follower (-want +got):\n%s", cmp.Diff(want, got))
		}
		synctest.Wait()
		if st := z.feed.Stats(); st.Reanchors != 1 || st.DeliveredAt != c.head() || st.DroppedGap != 0 {
			t.Errorf("follower %+v", st)
		}
	})
}

// appendSpread adds n transactions, each in a block of its own spread
// blocks past the one before (a chain growing far faster than any
// network, as test harnesses make them), and returns the head.
func appendSpread(c *chain, n int, spread uint64) upstream.TxCursor {
	for range n {
		appendAt(c, c.head().Block+spread, 1, "")
	}
	return c.head()
}

// A chain growing 30,000 blocks a second (300 transactions, 100 blocks
// apart): every step is within maxBlockJump, so the feed follows at any
// speed, refusing nothing.
func TestFastChainIsFollowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		f, s, start := started(t, c, Config{MaxBacklog: 5000})
		got := make(chan []upstream.TxCursor)
		go func() { got <- take(t, s, 3000) }()
		offset()
		for range 10 {
			appendSpread(c, 300, 100)
			time.Sleep(time.Second)
		}
		want := c.after(start, upstream.TransactionsParams{})
		if got := <-got; !slices.Equal(got, want) {
			t.Errorf("delivered %d of %d", len(got), len(want))
		}
		if st := f.Stats(); st.RefusedPositions != 0 || st.DeliveredAt != c.head() || st.Head != c.head() || st.Lag > time.Second {
			t.Errorf("stats %+v", st)
		}
	})
}

// A follower that missed the fleet's batches while the chain grew past
// its ceiling (20,000 blocks a second) reads the explorer's head to check
// the next batch, takes it, and fills what it missed.
func TestFollowerChecksAFarBatchAgainstTheExplorer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		b, _, z, _, sz, start := fleet(t, c, Config{MaxBacklog: 500})
		fast := func(seconds int) {
			for range seconds {
				appendSpread(c, 20, 1000)
				time.Sleep(time.Second)
			}
		}
		fast(2)
		b.setDeaf(z.m, true)
		fast(3) // 60,000 blocks the follower does not hear of
		b.setDeaf(z.m, false)
		fast(2)
		want := c.after(start, upstream.TransactionsParams{})
		if got := take(t, sz, len(want)); !slices.Equal(got, want) {
			t.Errorf("follower: delivered %d of %d", len(got), len(want))
		}
		if st := z.feed.Stats(); st.RefusedPositions != 0 || st.DroppedGap != 0 || st.DeliveredAt != c.head() {
			t.Errorf("follower %+v", st)
		}
	})
}
