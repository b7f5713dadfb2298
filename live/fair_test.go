package live

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// The clients' fair share of the feed (fair.go): the poller goes before
// the clients' catch-ups in the budget, catch-ups are charged to their
// client and bounded per client, the history serves or refuses resumes
// without explorer requests, and a client holds a bounded share of the
// subscriptions.

// keyBudget records the client key of every wait, and how many waits of
// each key were under way at once, in front of an optional budget.
type keyBudget struct {
	inner upstream.Budget

	mu       sync.Mutex
	keys     []string
	inflight map[string]int
	most     map[string]int
}

func (b *keyBudget) Wait(ctx context.Context) error {
	key := upstream.ClientFrom(ctx)
	b.mu.Lock()
	if b.inflight == nil {
		b.inflight, b.most = map[string]int{}, map[string]int{}
	}
	b.keys = append(b.keys, key)
	b.inflight[key]++
	b.most[key] = max(b.most[key], b.inflight[key])
	b.mu.Unlock()
	var err error
	if b.inner != nil {
		err = b.inner.Wait(ctx)
	}
	b.mu.Lock()
	b.inflight[key]--
	b.mu.Unlock()
	return err
}

func (b *keyBudget) Pause(context.Context, time.Duration, bool) {}

// waits counts the waits of key.
func (b *keyBudget) waits(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, k := range b.keys {
		if k == key {
			n++
		}
	}
	return n
}

func (b *keyBudget) mostAtOnce(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.most[key]
}

// requestsAfter counts the explorer requests after pos (a catch-up's
// first page).
func (c *chain) requestsAfter(pos upstream.TxCursor) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range c.requests {
		if p.After != nil && *p.After == pos {
			n++
		}
	}
	return n
}

// grow grows the chain by blocks of n transactions, each polled, and
// takes them from s; it returns the head before them.
func grow(t *testing.T, c *chain, s *Subscription[upstream.TxCursor], blocks, n int) upstream.TxCursor {
	t.Helper()
	start := c.head()
	for range blocks {
		c.appendBlock(n)
		time.Sleep(time.Second)
	}
	take(t, s, blocks*n)
	return start
}

func TestResumeWithinHistoryMakesNoRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 3)
		budget := &keyBudget{}
		f := openFeed(t, c, Config{MaxBacklog: 20, Budget: budget}) // remembers 40
		live := subscribe(t, f, SubscribeOptions{})
		grow(t, c, live, 8, 4) // 32 remembered
		filter := upstream.TransactionsParams{Parties: []string{"bb02"}}
		ctx := upstream.WithClient(t.Context(), "198.51.100.7")
		for _, from := range []upstream.TxCursor{{Block: 102, Index: 1}, {Block: 101, Index: 0}, {Block: 103, Index: 2}} {
			s, err := f.Subscribe(ctx, SubscribeOptions{After: &from, Filter: filter})
			if err != nil {
				t.Fatalf("resume after %s: %v", from, err)
			}
			want := c.after(from, filter)
			if got := take(t, s, len(want)); !slices.Equal(got, want) {
				t.Errorf("resumed after %s: %v, want %v", from, got, want)
			}
			if n := c.requestsAfter(from); n != 0 {
				t.Errorf("resume after %s within the history: %d explorer requests", from, n)
			}
			// Then live, with no gap and no duplicate.
			c.appendBlock(3)
			time.Sleep(time.Second)
			want = c.after(c.txs[len(c.txs)-4].Position(), filter)
			if got := take(t, s, len(want)); !slices.Equal(got, want) {
				t.Errorf("live after resuming from %s: %v, want %v", from, got, want)
			}
			take(t, live, 3)
			s.Close()
		}
		if n := budget.waits("198.51.100.7"); n != 0 {
			t.Errorf("%d budget waits charged to the client", n)
		}
		if st := f.Stats(); st.CaughtUpFromHistory != 3 || st.History != 40 {
			t.Errorf("stats %+v, want 3 caught up from a full history of 40", st)
		}
	})
}

func TestResumeProvedTooOldRefusedWithoutRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 3)
		f := openFeed(t, c, Config{MaxBacklog: 5}) // remembers 10
		live := subscribe(t, f, SubscribeOptions{})
		grow(t, c, live, 4, 4)
		for _, from := range []upstream.TxCursor{{Block: 100, Index: 0}, {Block: 101, Index: 1}, {Block: 102, Index: 1}} {
			_, err := f.Subscribe(upstream.WithClient(t.Context(), "flood"), SubscribeOptions{After: &from})
			if be, ok := errors.AsType[*BacklogError](err); !ok || be.After != from || be.Max != 5 {
				t.Fatalf("resume after %s: %v, want a BacklogError max 5", from, err)
			}
			if n := c.requestsAfter(from); n != 0 {
				t.Errorf("resume after %s refused after %d explorer requests, want none", from, n)
			}
		}
		if st := f.Stats(); st.HistoryRefused != 3 || st.BacklogRefused != 3 || st.Subscriptions != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestResumeOlderThanHistoryReadsOnlyWhatPrecedesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(10, 4)
		budget := &keyBudget{}
		f := openFeed(t, c, Config{MaxBacklog: 10, PageSize: 2, Budget: budget}) // remembers 20
		live := subscribe(t, f, SubscribeOptions{})
		grow(t, c, live, 6, 4) // 20 remembered of 24
		filter := upstream.TransactionsParams{Submitter: "aa01"}
		from := upstream.TxCursor{Block: 108, Index: 1}
		// The history starts after the newest of the first 28.
		historyFrom := c.txs[len(c.txs)-21].Position()
		var after []upstream.TxCursor
		c.mu.Lock()
		c.onList = func(p upstream.TransactionsParams) {
			if p.Submitter != "" {
				after = append(after, *p.After)
			}
		}
		c.mu.Unlock()
		for _, client := range []string{"198.51.100.7", ""} {
			after = nil
			s, err := f.Subscribe(upstream.WithClient(t.Context(), client), SubscribeOptions{After: &from, Filter: filter})
			if err != nil {
				t.Fatal(err)
			}
			want := c.after(from, filter)
			expect(t, "resumed", s, want)
			for _, p := range after {
				if older(historyFrom, p) {
					t.Errorf("the catch-up read after %s, which the history holds (from %s)", p, historyFrom)
				}
			}
			if len(after) == 0 {
				t.Error("no catch-up request")
			}
			s.Close()
		}
		if n := budget.waits("198.51.100.7"); n == 0 {
			t.Error("the catch-up was not charged to its client")
		}
		if n := budget.waits("live-subscription-1"); n == 0 {
			t.Errorf("the catch-up without a client key was not charged to a key of its own: %v", budget.keys)
		}
	})
}

func TestPollerGoesBeforeAFloodOfCatchUps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(100, 10)
		// 10 requests a second, as FairBudget shares it in the gateway.
		budget := &keyBudget{inner: upstream.NewFairBudget(upstream.NewLocalBudget(10, 1), 10)}
		f := openFeed(t, c, Config{Interval: 500 * time.Millisecond, MaxBacklog: 1000, PageSize: 5, History: 1, Budget: budget})
		honest, err := f.Subscribe(upstream.WithClient(t.Context(), "192.0.2.1"), SubscribeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The flood: two clients resuming 50 times each from an old
		// cursor, each catch-up 100 pages.
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		for _, client := range []string{"flood-1", "flood-2"} {
			for range 50 {
				wg.Go(func() {
					s, err := f.Subscribe(upstream.WithClient(ctx, client), SubscribeOptions{After: cursor(150, 0)})
					if err == nil {
						s.Close()
					}
				})
			}
		}
		time.Sleep(3 * time.Second)
		var worst time.Duration
		for range 10 {
			c.appendBlock(1)
			at := time.Now()
			take(t, honest, 1)
			worst = max(worst, time.Since(at))
			time.Sleep(time.Duration(137) * time.Millisecond)
		}
		// A poll every 500ms, then at most the turn under way and its own
		// (100ms each).
		if worst > 700*time.Millisecond {
			t.Errorf("delivery took up to %v while the flood caught up, want at most 700ms", worst)
		}
		for _, client := range []string{"flood-1", "flood-2"} {
			if n := budget.mostAtOnce(client); n != 2 {
				t.Errorf("%s had %d catch-ups reading at once, want 2 (MaxCatchUpsPerClient)", client, n)
			}
		}
		if n := budget.waits("live-feed"); n == 0 {
			t.Error("no poll was charged to the feed")
		}
		cancel()
		wg.Wait()
	})
}

func TestSubscriptionsPerClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 3)
		f := openFeed(t, c, Config{MaxSubscriptions: 30}) // 3 a client
		a := upstream.WithClient(t.Context(), "198.51.100.7")
		var subs []*Subscription[upstream.TxCursor]
		for range 3 {
			s, err := f.Subscribe(a, SubscribeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, s)
		}
		_, err := f.Subscribe(a, SubscribeOptions{After: cursor(100, 0)})
		if ce, ok := errors.AsType[*ClientLimitError](err); !ok || ce.Max != 3 || ce.Client != "198.51.100.7" {
			t.Fatalf("4th Subscribe of the client: %v, want a ClientLimitError max 3", err)
		}
		// Another client, and subscriptions without a client key, are
		// not held back.
		for _, ctx := range []context.Context{upstream.WithClient(t.Context(), "198.51.100.8"), t.Context(), t.Context(), t.Context(), t.Context()} {
			if _, err := f.Subscribe(ctx, SubscribeOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// One ends (a refused resume, a failed one, a closed one): its
		// slot is free.
		subs[0].Close()
		s, err := f.Subscribe(a, SubscribeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cancelled, cancel := context.WithCancel(a)
		cancel()
		if _, err := f.Subscribe(cancelled, SubscribeOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		s.Close()
		if _, err := f.Subscribe(a, SubscribeOptions{}); err != nil {
			t.Fatalf("after closing one: %v", err)
		}
		if st := f.Stats(); st.RefusedClient != 1 || st.Refused != 0 || st.Subscriptions != 3+5 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestCatchUpsOfAClientWaitTheirTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(20, 5)
		f := openFeed(t, c, Config{PageSize: 10, MaxCatchUpsPerClient: 1})
		subscribe(t, f, SubscribeOptions{})
		// Each catch-up request takes a second.
		var order []string
		c.mu.Lock()
		c.onList = func(p upstream.TransactionsParams) {
			if p.Submitter != "" {
				c.mu.Lock()
				order = append(order, p.Submitter)
				c.mu.Unlock()
				time.Sleep(time.Second)
			}
		}
		c.mu.Unlock()
		a := upstream.WithClient(t.Context(), "198.51.100.7")
		resume := func(ctx context.Context, submitter string) func() error {
			done := make(chan error, 1)
			go func() {
				s, err := f.Subscribe(ctx, SubscribeOptions{After: cursor(105, 0), Filter: upstream.TransactionsParams{Submitter: submitter}})
				if err == nil {
					want := c.after(*cursor(105, 0), upstream.TransactionsParams{Submitter: submitter})
					if got := take(t, s, len(want)); !slices.Equal(got, want) {
						t.Errorf("%s: %v, want %v", submitter, got, want)
					}
				}
				done <- err
			}()
			synctest.Wait()
			return func() error { return <-done }
		}
		first := resume(a, "aa01")
		gaveUp, cancel := context.WithCancel(a)
		second := resume(gaveUp, "cc03")
		third := resume(a, "bb02")
		other := resume(upstream.WithClient(t.Context(), "198.51.100.8"), "cc03")
		cancel()
		if err := second(); !errors.Is(err, context.Canceled) {
			t.Fatalf("a waiting catch-up whose ctx ended: %v", err)
		}
		for _, wait := range []func() error{first, third, other} {
			if err := wait(); err != nil {
				t.Fatal(err)
			}
		}
		// The client's catch-ups one after the other (the one that gave
		// up read nothing); the other client's beside them.
		c.mu.Lock()
		got := slices.DeleteFunc(slices.Clone(order), func(s string) bool { return s == "cc03" })
		c.mu.Unlock()
		if i := slices.Index(got, "bb02"); i < 0 || slices.Contains(got[i:], "aa01") {
			t.Errorf("the client's catch-up requests %v: its second started before its first ended", got)
		}
		// The other client's: one catch-up (pages of 10, and the empty
		// one after them); the one that gave up, of the same filter, read
		// nothing.
		pages := (len(c.after(*cursor(105, 0), upstream.TransactionsParams{Submitter: "cc03"}))+9)/10 + 1
		if n := len(slices.DeleteFunc(slices.Clone(order), func(s string) bool { return s != "cc03" })); n != pages {
			t.Errorf("%d requests of cc03's filter, want %d (one catch-up)", n, pages)
		}
	})
}

func TestHistoryHasNoHoles(t *testing.T) {
	var h history[int]
	tx := func(block uint64, index int32) *upstream.Transaction {
		return &upstream.Transaction{Block: upstream.Uint64(block), Index: upstream.Int32(index)}
	}
	h.add(3, upstream.TxCursor{Block: 1}, tx(2, 0))
	h.add(3, upstream.TxCursor{Block: 2}, tx(2, 1))
	h.add(3, upstream.TxCursor{Block: 2, Index: 1}, tx(3, 0))
	h.add(3, upstream.TxCursor{Block: 3}, tx(3, 1)) // evicts 2.0
	if h.n != 3 || h.from != (upstream.TxCursor{Block: 2}) || h.newest != (upstream.TxCursor{Block: 3, Index: 1}) {
		t.Fatalf("history (%s, %s] of %d", h.from, h.newest, h.n)
	}
	// A jump (a gap the feed could not fill, a restart at a newer head):
	// the history starts again from the position jumped to.
	h.add(3, upstream.TxCursor{Block: 9}, tx(9, 1))
	if h.n != 1 || h.from != (upstream.TxCursor{Block: 9}) || h.newest != (upstream.TxCursor{Block: 9, Index: 1}) {
		t.Fatalf("after a jump: history (%s, %s] of %d", h.from, h.newest, h.n)
	}
	var all filter
	if n := h.count(&all, upstream.TxCursor{}, 10); n != 1 {
		t.Fatalf("count %d", n)
	}
}

func TestUpstreamCallsPerClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 3)
		f := openFeed(t, c, Config{MaxCallsPerClient: 10})
		a := upstream.WithClient(t.Context(), "198.51.100.7")
		first, err := f.Subscribe(a, SubscribeOptions{Calls: 6})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Subscribe(a, SubscribeOptions{Calls: 4}); err != nil {
			t.Fatal(err)
		}
		_, err = f.Subscribe(a, SubscribeOptions{Calls: 1})
		if ce, ok := errors.AsType[*ClientCallsError](err); !ok || ce.Held != 10 || ce.Calls != 1 || ce.Max != 10 || ce.Client != "198.51.100.7" {
			t.Fatalf("a subscription past the client's calls: %v, want a ClientCallsError 10+1 > 10", err)
		}
		// Subscriptions that make no request per event are not held back
		// by it, nor are other clients.
		if _, err := f.Subscribe(a, SubscribeOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Subscribe(upstream.WithClient(t.Context(), "198.51.100.8"), SubscribeOptions{Calls: 10}); err != nil {
			t.Fatal(err)
		}
		// The calls of a subscription that ends are given back.
		first.Close()
		if _, err := f.Subscribe(a, SubscribeOptions{Calls: 6}); err != nil {
			t.Fatalf("after closing one: %v", err)
		}
		if st := f.Stats(); st.RefusedCalls != 1 || st.RefusedClient != 0 || st.Subscriptions != 4 {
			t.Errorf("stats %+v", st)
		}
	})
}
