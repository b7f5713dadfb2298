package live

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// A subscription started while the explorer fails waits for the chain head
// at most HeadTimeout, then fails with an *upstream.UnavailableError
// wrapping ErrNoHead; it leaves nothing behind (its slot is free, the
// poller stops after Linger), and once the explorer answers again a new
// subscription starts.
func TestSubscribeGivesUpOnTheHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &chain{}
		c.appendBlock(2)
		c.fail(1_000_000)
		f := newTestFeed(c, Config{})
		defer f.Close()
		start := time.Now()
		_, err := f.Subscribe(t.Context(), SubscribeOptions{})
		if waited := time.Since(start); waited != HeadTimeout {
			t.Errorf("Subscribe returned after %s, want HeadTimeout (%s)", waited, HeadTimeout)
		}
		var unavailable *upstream.UnavailableError
		if !errors.Is(err, ErrNoHead) || !errors.As(err, &unavailable) || unavailable.Service != upstream.ServiceExplorer {
			t.Fatalf("Subscribe with the explorer down: %v", err)
		}
		if st := f.Stats(); st.Subscriptions != 0 || st.PollErrors == 0 {
			t.Errorf("stats after the refusal %+v", st)
		}
		time.Sleep(f.feed.cfg.Linger + time.Second)
		if st := f.Stats(); st.State != stateIdle {
			t.Errorf("the poller goes on without subscribers: %+v", st)
		}

		// Several subscriptions waiting together: each gives up at its
		// own HeadTimeout.
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := f.Subscribe(t.Context(), SubscribeOptions{})
				errs <- err
			}()
			time.Sleep(time.Second)
		}
		for range 3 {
			if err := <-errs; !errors.Is(err, ErrNoHead) {
				t.Errorf("Subscribe: %v", err)
			}
		}

		// The explorer is back: a subscription starts at the head, once
		// the poller the refused ones kept lingering has stopped (fake
		// time). Subscribed at once, it waited for that poller's next
		// retry, which after 12 s of failures may come later than
		// HeadTimeout (the backoff's interval is ±50 % at random): it
		// failed about 1 run in 60.
		c.fail(0)
		time.Sleep(f.feed.cfg.Linger + time.Second)
		if st := f.Stats(); st.State != stateIdle {
			t.Errorf("the poller goes on without subscribers: %+v", st)
		}
		s, err := f.Subscribe(t.Context(), SubscribeOptions{})
		if err != nil {
			t.Fatalf("Subscribe after recovery: %v", err)
		}
		head := c.appendBlock(1)
		if got := take(t, s, 1); len(got) != 1 || got[0] != head {
			t.Errorf("after recovery: %v, want %v", got, head)
		}
		s.Close()
	})
}

// Config.HeadTimeout replaces HeadTimeout.
func TestSubscribeGivesUpOnTheHeadAtTheConfiguredTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &chain{}
		c.appendBlock(2)
		c.fail(1_000_000)
		f := newTestFeed(c, Config{HeadTimeout: 3 * time.Second})
		defer f.Close()
		start := time.Now()
		if _, err := f.Subscribe(t.Context(), SubscribeOptions{}); !errors.Is(err, ErrNoHead) {
			t.Fatalf("Subscribe with the explorer down: %v", err)
		}
		if waited := time.Since(start); waited != 3*time.Second {
			t.Errorf("Subscribe returned after %s, want the configured 3s", waited)
		}
	})
}

// A head that arrives before HeadTimeout, after failures, starts the
// subscription (the retries of a transient failure fit in the bound).
// The retries wait Interval, 1.5×, 2.25×, 3.375× Interval, each ±50 % at
// random (the backoff's randomization): four of them at most 12.2 s at
// the default 1 s, past HeadTimeout in about 1 run in 12, so the feed
// polls every half second here (at most 6.1 s).
func TestSubscribeWaitsOutTransientFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &chain{}
		c.appendBlock(2)
		c.fail(4)
		f := newTestFeed(c, Config{Interval: 500 * time.Millisecond})
		defer f.Close()
		start := time.Now()
		s, err := f.Subscribe(t.Context(), SubscribeOptions{})
		if err != nil {
			t.Fatalf("Subscribe: %v", err)
		}
		if waited := time.Since(start); waited >= HeadTimeout || waited == 0 {
			t.Errorf("waited %s", waited)
		}
		s.Close()
	})
}
