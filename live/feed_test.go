package live

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tradenet/gateway/upstream"
)

// Filters of the tests: each with the explorer's semantics; the feed
// compares public keys in any letter case.
var testFilters = map[string]upstream.TransactionsParams{
	"all":         {},
	"cmdTypes":    {CmdTypes: []string{"Submit Order", "Transfer Funds"}},
	"exclude":     {ExcludeCmdTypes: []string{"Submit Order"}},
	"parties":     {Parties: []string{"aa01", "cc03"}},
	"submitter":   {Submitter: "bb02"},
	"combined":    {CmdTypes: []string{"Cancel Order", "Transfer Funds"}, Parties: []string{"aa01", "bb02"}},
	"block":       {BlockHeight: ptr(uint64(110))},
	"nothing":     {CmdTypes: []string{"No Such Type"}},
	"upper-party": {Parties: []string{"AA01"}},
}

func ptr[T any](v T) *T { return &v }

// lower is a filter with its keys in lower case, as the explorer matches.
func lower(p upstream.TransactionsParams) upstream.TransactionsParams {
	if slices.Equal(p.Parties, []string{"AA01"}) {
		p.Parties = []string{"aa01"}
	}
	return p
}

func TestExactlyOnceInChainOrderWithFilters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(5, 3)
		var prepared atomic.Int64
		f := New(Config{Explorer: c, Interval: time.Second, PageSize: 4, Logger: quiet}, func(tx *upstream.Transaction) upstream.TxCursor {
			prepared.Add(1)
			return tx.Position()
		})
		defer f.Close()
		subs := map[string]*Subscription[upstream.TxCursor]{}
		for name, p := range testFilters {
			subs[name] = subscribe(t, f, SubscribeOptions{Filter: p})
		}
		start := c.head()
		if got := f.Stats().DeliveredAt; got != start {
			t.Fatalf("subscribed at %s, want the chain head %s", got, start)
		}
		// Blocks of various sizes, some larger than a page, arrive between
		// and during polls.
		for i := range 20 {
			c.appendBlock(1 + i%7)
			time.Sleep(700 * time.Millisecond)
		}
		for name, s := range subs {
			want := c.after(start, lower(testFilters[name]))
			got := take(t, s, len(want))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: delivered (-want +got):\n%s", name, diff)
			}
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		for name, s := range subs {
			if extra, open := drain(s); len(extra) > 0 || !open {
				t.Errorf("%s: after all: %v (open %v, err %v)", name, extra, open, s.Err())
			}
		}
		all := len(c.after(start, upstream.TransactionsParams{}))
		if got := prepared.Load(); got != int64(all) {
			t.Errorf("prepared %d times for %d transactions", got, all)
		}
		st := f.Stats()
		if st.State != statePolling || st.Head != c.head() || st.DeliveredAt != c.head() || st.Subscriptions != len(subs) {
			t.Errorf("stats %+v, want polling at %s with %d subscriptions", st, c.head(), len(subs))
		}
	})
}

func TestResumeWhileBlocksArrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(30, 3)
		f := openFeed(t, c, Config{PageSize: 5})
		// A first subscriber starts the feed at the head.
		first := subscribe(t, f, SubscribeOptions{})
		start := c.head()
		resume := upstream.TxCursor{Block: 110, Index: 1}
		filter := upstream.TransactionsParams{ExcludeCmdTypes: []string{"Cancel Order"}}
		// While the resuming subscription reads its backlog, new blocks
		// arrive and the feed delivers them.
		var once sync.Once
		c.mu.Lock()
		c.onList = func(p upstream.TransactionsParams) {
			if p.After == nil || *p.After != resume {
				return
			}
			once.Do(func() {
				c.appendBlock(4)
				time.Sleep(2 * time.Second)
				c.appendBlock(2)
				time.Sleep(2 * time.Second)
				if got := f.Stats().DeliveredAt; got != c.head() {
					t.Errorf("the feed is at %s during the catch-up, want %s", got, c.head())
				}
			})
		}
		c.mu.Unlock()
		s := subscribe(t, f, SubscribeOptions{Filter: filter, After: &resume})
		c.appendBlock(3)
		want := c.after(resume, filter)
		expect(t, "resumed", s, want)
		if got, want := take(t, first, len(c.after(start, upstream.TransactionsParams{}))), c.after(start, upstream.TransactionsParams{}); !slices.Equal(got, want) {
			t.Errorf("live: %v\nwant %v", got, want)
		}
		synctest.Wait()
		if extra, _ := drain(s); len(extra) > 0 {
			t.Errorf("resumed subscription got more: %v", extra)
		}
		if st := f.Stats(); st.Delivered != uint64(len(want)+len(c.after(start, upstream.TransactionsParams{}))) {
			t.Errorf("Delivered %d", st.Delivered)
		}
	})
}

func TestResumeFromCursorAheadOfFeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 3)
		f := openFeed(t, c, Config{})
		// A cursor the feed has not reached yet (another replica is
		// ahead): nothing up to it is delivered.
		ahead := upstream.TxCursor{Block: 101, Index: 1}
		s := subscribe(t, f, SubscribeOptions{After: &ahead})
		c.appendBlock(3)
		c.appendBlock(1)
		want := c.after(ahead, upstream.TransactionsParams{})
		expect(t, "resumed ahead", s, want)
		if n := c.requestCount(); n > 3 {
			t.Errorf("%d requests: a cursor ahead needs no catch-up", n)
		}
	})
}

func TestBacklogRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(10, 4)
		f := openFeed(t, c, Config{MaxBacklog: 7, PageSize: 3})
		from := upstream.TxCursor{Block: 100, Index: 3}
		filter := upstream.TransactionsParams{Parties: []string{"aa01"}}
		_, err := f.Subscribe(t.Context(), SubscribeOptions{After: &from, Filter: filter})
		be, ok := errors.AsType[*BacklogError](err)
		if !ok || be.After != from || be.Max != 7 {
			t.Fatalf("Subscribe: %v, want a BacklogError after %s max 7", err, from)
		}
		// Exactly 7 matching: accepted.
		all := c.after(upstream.TxCursor{}, filter)
		from = all[len(all)-8]
		s := subscribe(t, f, SubscribeOptions{After: &from, Filter: filter})
		if got := take(t, s, 7); !slices.Equal(got, all[len(all)-7:]) {
			t.Errorf("got %v, want %v", got, all[len(all)-7:])
		}
		if st := f.Stats(); st.BacklogRefused != 1 || st.Subscriptions != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestSlowSubscriberDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 1)
		f, fast, slow, fastGot, start := fastAndSlow(t, c, 4, 10)
		for range 5 {
			c.appendBlock(2)
			time.Sleep(time.Second)
		}
		want := c.after(start, upstream.TransactionsParams{})
		if got := <-fastGot; !slices.Equal(got, want) {
			t.Errorf("fast: %v, want %v", got, want)
		}
		// The slow one gets what its buffer held, then the end.
		if got := closed(t, slow); !slices.Equal(got, want[:4]) {
			t.Errorf("slow: %v, want %v", got, want[:4])
		}
		if !errors.Is(slow.Err(), ErrTooSlow) || fast.Err() != nil {
			t.Errorf("errors: slow %v, fast %v", slow.Err(), fast.Err())
		}
		if st := f.Stats(); st.DroppedSlow != 1 || st.Subscriptions != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestPollsDoNotGrowWithSubscribers(t *testing.T) {
	polls := func(n int) (int, uint64) {
		var requests int
		var stat uint64
		synctest.Test(t, func(t *testing.T) {
			c := newChain(1, 2)
			f := openFeed(t, c, Config{})
			var subs []*Subscription[upstream.TxCursor]
			for i := range n {
				filter := testFilters[[]string{"all", "parties", "cmdTypes", "submitter"}[i%4]]
				subs = append(subs, subscribe(t, f, SubscribeOptions{Filter: filter}))
			}
			for range 30 {
				c.appendBlock(3)
				time.Sleep(time.Second)
			}
			synctest.Wait()
			for _, s := range subs {
				drain(s)
			}
			requests, stat = c.requestCount(), f.Stats().Polls
		})
		return requests, stat
	}
	one, oneStat := polls(1)
	hundred, hundredStat := polls(100)
	if one != hundred || oneStat != hundredStat || one < 30 {
		t.Errorf("explorer requests: 1 subscriber %d (Polls %d), 100 subscribers %d (Polls %d)", one, oneStat, hundred, hundredStat)
	}
}

func TestPollsOnDemandAndLingers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		f := openFeed(t, c, Config{Interval: time.Second, Linger: 5 * time.Second})
		time.Sleep(time.Minute)
		if n := c.requestCount(); n != 0 || f.Stats().State != stateIdle {
			t.Fatalf("%d requests, state %s before any subscription", n, f.Stats().State)
		}
		ctx, cancel := context.WithCancel(t.Context())
		s, err := f.Subscribe(ctx, SubscribeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := c.requestCount(); n != 1 {
			t.Errorf("%d requests to subscribe, want the head read", n)
		}
		time.Sleep(10*time.Second + time.Millisecond)
		if n := c.requestCount(); n != 11 {
			t.Errorf("%d requests after 10 intervals, want 1+10", n)
		}
		cancel() // the subscription ends with its context
		if got := closed(t, s); len(got) != 0 || s.Err() != nil {
			t.Errorf("ended with %v, %v", got, s.Err())
		}
		time.Sleep(3 * time.Second)
		if st := f.Stats(); st.Subscriptions != 0 || st.State != statePolling {
			t.Errorf("lingering: %+v", st)
		}
		// A subscriber during the linger keeps the same run: no new head read.
		before := c.requestCount()
		s2 := subscribe(t, f, SubscribeOptions{})
		if n := c.requestCount(); n != before {
			t.Errorf("%d requests to subscribe during the linger", n-before)
		}
		time.Sleep(10 * time.Second)
		s2.Close()
		if got := closed(t, s2); len(got) != 0 || s2.Err() != nil {
			t.Errorf("closed with %v, %v", got, s2.Err())
		}
		time.Sleep(5*time.Second + time.Millisecond)
		synctest.Wait()
		stopped := c.requestCount()
		time.Sleep(time.Hour)
		if n := c.requestCount(); n != stopped {
			t.Errorf("%d requests while idle", n-stopped)
		}
		if st := f.Stats(); st.State != stateIdle || st.Lag != 0 {
			t.Errorf("idle stats %+v", st)
		}
		// And it starts again.
		restart := c.appendBlock(1)
		s3 := subscribe(t, f, SubscribeOptions{})
		c.appendBlock(2)
		if got, want := take(t, s3, 2), c.after(restart, upstream.TransactionsParams{}); !slices.Equal(got, want) {
			t.Errorf("after a restart: %v, want %v", got, want)
		}
	})
}

func TestCloseEndsSubscriptionsCleanly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 3)
		f := newTestFeed(c, Config{})
		var subs []*Subscription[upstream.TxCursor]
		for range 10 {
			subs = append(subs, subscribe(t, f, SubscribeOptions{}))
		}
		c.appendBlock(2)
		time.Sleep(1500 * time.Millisecond)
		f.Close()
		for _, s := range subs {
			if got := closed(t, s); len(got) != 2 || s.Err() != nil {
				t.Errorf("after Close: %v, %v", got, s.Err())
			}
		}
		if _, err := f.Subscribe(t.Context(), SubscribeOptions{}); !errors.Is(err, ErrClosed) {
			t.Errorf("Subscribe after Close: %v", err)
		}
		f.Close()
		if st := f.Stats(); st.Subscriptions != 0 || st.State != stateIdle {
			t.Errorf("stats %+v", st)
		}
		subs[0].Close() // after the end: nothing
	})
}

func TestCloseConcurrentWithSubscribe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 3)
		f := newTestFeed(c, Config{})
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				s, err := f.Subscribe(t.Context(), SubscribeOptions{After: cursor(100, 0)})
				switch {
				case errors.Is(err, ErrClosed):
				case err != nil:
					t.Errorf("Subscribe: %v", err)
				default:
					closed(t, s)
					if s.Err() != nil {
						t.Errorf("ended with %v", s.Err())
					}
				}
			})
		}
		f.Close()
		wg.Wait()
	})
}

func TestSubscriptionLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &chain{}
		f := openFeed(t, c, Config{MaxSubscriptions: 3})
		var subs []*Subscription[upstream.TxCursor]
		for range 3 {
			subs = append(subs, subscribe(t, f, SubscribeOptions{}))
		}
		if _, err := f.Subscribe(t.Context(), SubscribeOptions{}); !errors.Is(err, ErrTooManySubscriptions) {
			t.Fatalf("4th Subscribe: %v", err)
		}
		subs[1].Close()
		subscribe(t, f, SubscribeOptions{})
		if st := f.Stats(); st.Refused != 1 || st.Subscriptions != 3 || st.Head != (upstream.TxCursor{}) {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestFailingExplorer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		c.fail(3) // the head read fails, and is retried
		f, s, start := started(t, c, Config{})
		c.fail(6)
		c.appendBlock(3)
		time.Sleep(5 * time.Second)
		if st := f.Stats(); st.State != stateBackoff || st.PollErrors < 6 || st.Subscriptions != 1 {
			t.Errorf("while failing: %+v", st)
		}
		if st := f.Stats(); st.Lag < 5*time.Second {
			t.Errorf("lag %s while failing", st.Lag)
		}
		want := c.after(start, upstream.TransactionsParams{})
		expect(t, "after recovery", s, want)
		time.Sleep(2 * time.Second)
		if st := f.Stats(); st.State != statePolling || st.PollErrors != 9 || st.Lag > time.Second {
			t.Errorf("recovered: %+v", st)
		}
	})
}

func TestSubscribeWaitsForHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		c.fail(1000)
		f := newTestFeed(c, Config{})
		// A deadline before HeadTimeout ends the wait (subscribe_test.go:
		// without one, HeadTimeout does).
		ctx, cancel := context.WithTimeout(t.Context(), HeadTimeout/2)
		defer cancel()
		if _, err := f.Subscribe(ctx, SubscribeOptions{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Subscribe with the explorer down: %v", err)
		}
		if st := f.Stats(); st.Subscriptions != 0 || st.State != stateBackoff {
			t.Errorf("stats %+v", st)
		}
		done := make(chan error)
		go func() {
			_, err := f.Subscribe(t.Context(), SubscribeOptions{})
			done <- err
		}()
		time.Sleep(HeadTimeout / 2)
		f.Close()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("Subscribe during Close: %v", err)
		}
	})
}

func TestSubscribeWithEndedContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := openFeed(t, &chain{}, Config{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := f.Subscribe(ctx, SubscribeOptions{}); !errors.Is(err, context.Canceled) {
			t.Errorf("Subscribe: %v", err)
		}
	})
}
