package live

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// With AlwaysPoll the feed polls from New to Close, with or without
// subscribers (one explorer request an interval), and tells
// OnTransactions every transaction of the chain after its start, in runs
// that follow each other with no gap; its state is never idle, and the
// subscribers' coming and going changes none of it.
func TestAlwaysPollPollsWithoutSubscribers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &chain{}
		start := c.appendBlock(2)
		var mu sync.Mutex
		var seen []upstream.TxCursor
		f := newTestFeed(c, Config{Interval: time.Second, Linger: 2 * time.Second, AlwaysPoll: true,
			OnTransactions: func(prev upstream.TxCursor, txs []upstream.Transaction) {
				mu.Lock()
				defer mu.Unlock()
				if n := len(seen); n > 0 && seen[n-1] != prev || n == 0 && prev != start {
					t.Errorf("a run after %s; the last one ended at %v (start %s)", prev, seen, start)
				}
				for i := range txs {
					seen = append(seen, txs[i].Position())
				}
			}})
		defer f.Close()
		time.Sleep(10*time.Second + time.Millisecond)
		if n := c.requestCount(); n != 11 {
			t.Errorf("%d explorer requests in 10 intervals without a subscriber, want 1+10", n)
		}
		if st := f.Stats(); st.State != statePolling || st.Subscriptions != 0 {
			t.Errorf("stats without a subscriber: %+v", st)
		}
		c.appendBlock(3)
		time.Sleep(2 * time.Second)
		s := subscribe(t, f, SubscribeOptions{})
		s.Close()
		c.appendBlock(1)
		time.Sleep(time.Minute)
		if st := f.Stats(); st.State != statePolling {
			t.Errorf("a minute after the last subscriber left: state %s, want polling", st.State)
		}
		mu.Lock()
		if want := c.after(start, upstream.TransactionsParams{}); !slices.Equal(seen, want) {
			t.Errorf("OnTransactions was told %v, want every transaction after the start %v", seen, want)
		}
		mu.Unlock()
		f.Close()
		synctest.Wait()
		closedAt := c.requestCount()
		time.Sleep(time.Hour)
		if n := c.requestCount(); n != closedAt {
			t.Errorf("%d explorer requests after Close", n-closedAt)
		}
	})
}
