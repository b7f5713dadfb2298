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

// bus is an in-memory fleet: members' Run receive every published
// message in order; the lease is wherever the test puts it (leaders may
// hold two members, as during a handover).
type bus struct {
	mu      sync.Mutex
	members []*member
	leaders map[*member]bool
	// deaf members receive nothing; failPublish fails Publish, before
	// sending (lost) or after (sent all the same).
	deaf        map[*member]bool
	failPublish string
}

type member struct {
	bus   *bus
	queue [][]byte
	wake  chan struct{}
	runs  int
}

var _ Coordinator = (*member)(nil)

func newBus() *bus { return &bus{leaders: map[*member]bool{}, deaf: map[*member]bool{}} }

func (b *bus) join() *member {
	return &member{bus: b, wake: make(chan struct{}, 1)}
}

func (b *bus) setLeaders(ms ...*member) {
	b.mu.Lock()
	b.leaders = map[*member]bool{}
	for _, m := range ms {
		b.leaders[m] = true
	}
	b.mu.Unlock()
	b.wakeAll()
}

func (b *bus) setDeaf(m *member, deaf bool) {
	b.mu.Lock()
	b.deaf[m] = deaf
	b.mu.Unlock()
}

func (b *bus) wakeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.members {
		m.signal()
	}
}

func (m *member) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// send queues msg for m's Run, as if published.
func (m *member) send(msg []byte) {
	m.bus.mu.Lock()
	m.queue = append(m.queue, msg)
	m.bus.mu.Unlock()
	m.signal()
}

func (m *member) Run(ctx context.Context, lead func(context.Context), deliver func([]byte)) error {
	b := m.bus
	b.mu.Lock()
	b.members = append(b.members, m)
	m.runs++
	b.mu.Unlock()
	var stopLead context.CancelFunc
	var leading chan struct{}
	for {
		b.mu.Lock()
		queue := m.queue
		m.queue = nil
		leader := b.leaders[m] && ctx.Err() == nil
		b.mu.Unlock()
		for _, msg := range queue {
			deliver(msg)
		}
		if leader && leading == nil {
			lctx, cancel := context.WithCancel(ctx)
			stopLead, leading = cancel, make(chan struct{})
			go func(done chan struct{}) {
				defer close(done)
				lead(lctx)
			}(leading)
		}
		if !leader && leading != nil {
			stopLead()
			<-leading
			leading = nil
		}
		if ctx.Err() != nil && leading == nil {
			b.mu.Lock()
			b.members = slices.DeleteFunc(b.members, func(x *member) bool { return x == m })
			b.mu.Unlock()
			return nil
		}
		select {
		case <-m.wake:
		case <-ctx.Done():
		}
	}
}

var errBusDown = errors.New("bus down")

func (m *member) Publish(ctx context.Context, msg []byte) error {
	b := m.bus
	b.mu.Lock()
	mode := b.failPublish
	var to []*member
	if mode != "lost" {
		for _, x := range b.members {
			if !b.deaf[x] {
				to = append(to, x)
			}
		}
	}
	b.mu.Unlock()
	for _, x := range to {
		x.send(msg)
	}
	if mode != "" {
		return errBusDown
	}
	return nil
}

// replica is one process of a fleet: a feed, its bus membership, and
// view, which records its requests (to the shared chain).
type replica struct {
	view *chain
	m    *member
	feed *Feed[upstream.TxCursor]
}

func newReplica(c *chain, b *bus, cfg Config) *replica {
	r := &replica{view: &chain{}, m: b.join()}
	cfg.Coordinator = r.m
	cfg.Explorer = explorerFunc(func(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
		r.view.mu.Lock()
		r.view.requests = append(r.view.requests, p)
		r.view.mu.Unlock()
		return c.ListTransactions(ctx, p)
	})
	cfg.Interval = time.Second
	cfg.Logger = quiet
	r.feed = New(cfg, position)
	return r
}

type explorerFunc func(context.Context, upstream.TransactionsParams) (*upstream.TransactionPage, error)

func (f explorerFunc) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	return f(ctx, p)
}

// fleetRun appends blocks for a while, one a second.
func fleetRun(c *chain, blocks int) {
	for i := range blocks {
		c.appendBlock(1 + i%3)
		time.Sleep(time.Second)
	}
}

func TestCoordinatedOnePollerAndHandover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 3)
		b := newBus()
		a, z := newReplica(c, b, Config{PageSize: 4}), newReplica(c, b, Config{PageSize: 4})
		defer a.feed.Close()
		defer z.feed.Close()
		b.setLeaders(a.m)
		start := c.head()
		filter := upstream.TransactionsParams{ExcludeCmdTypes: []string{"Cancel Order"}}
		subs := []*Subscription[upstream.TxCursor]{
			subscribe(t, a.feed, SubscribeOptions{}), subscribe(t, a.feed, SubscribeOptions{Filter: filter}),
			subscribe(t, z.feed, SubscribeOptions{}), subscribe(t, z.feed, SubscribeOptions{Filter: filter}),
		}
		filters := []upstream.TransactionsParams{{}, filter, {}, filter}
		collected := make([][]upstream.TxCursor, len(subs))
		var wg sync.WaitGroup
		fleetRun(c, 10)
		if n := z.view.requestCount(); n != 1 {
			t.Errorf("the follower made %d requests, want its head read only", n)
		}
		synctest.Wait()
		if st := z.feed.Stats(); st.State != stateFollowing || st.Polls != 1 || st.DeliveredAt != a.feed.Stats().DeliveredAt || st.DeliveredAt.Block < 108 {
			t.Errorf("follower %+v", st)
		}
		if st := a.feed.Stats(); st.State != statePolling {
			t.Errorf("leader %+v", st)
		}
		// A handover with both polling for a while, then the other alone.
		b.setLeaders(a.m, z.m)
		fleetRun(c, 5)
		b.setLeaders(z.m)
		fleetRun(c, 5)
		aRequests := a.view.requestCount()
		fleetRun(c, 5)
		if n := a.view.requestCount(); n != aRequests {
			t.Errorf("the old leader made %d requests after the handover", n-aRequests)
		}
		if st := a.feed.Stats(); st.State != stateFollowing {
			t.Errorf("old leader %+v", st)
		}
		for i, s := range subs {
			wg.Go(func() {
				collected[i] = take(t, s, len(c.after(start, filters[i])))
			})
		}
		wg.Wait()
		for i := range subs {
			if want := c.after(start, filters[i]); !slices.Equal(collected[i], want) {
				t.Errorf("subscription %d: %v\nwant %v", i, collected[i], want)
			}
		}
		synctest.Wait()
		for i, s := range subs {
			if extra, _ := drain(s); len(extra) > 0 {
				t.Errorf("subscription %d: duplicates %v", i, extra)
			}
		}
	})
}

// fleet starts two replicas with a leads; subs on both, at the head,
// which it returns as start.
func fleet(t *testing.T, c *chain, cfg Config) (b *bus, a, z *replica, sa, sz *Subscription[upstream.TxCursor], start upstream.TxCursor) {
	b = newBus()
	a, z = newReplica(c, b, cfg), newReplica(c, b, cfg)
	t.Cleanup(a.feed.Close)
	t.Cleanup(z.feed.Close)
	b.setLeaders(a.m)
	return b, a, z, subscribe(t, a.feed, SubscribeOptions{}), subscribe(t, z.feed, SubscribeOptions{}), c.head()
}

// fleetDelivered checks that the leader's and the follower's
// subscriptions received every transaction of c after start, in order,
// and that the follower, once the fleet is quiet, holds nothing more.
func fleetDelivered(t *testing.T, c *chain, start upstream.TxCursor, sa, sz *Subscription[upstream.TxCursor]) {
	t.Helper()
	want := c.after(start, upstream.TransactionsParams{})
	expect(t, "leader", sa, want)
	expect(t, "follower", sz, want)
	synctest.Wait()
	if extra, open := drain(sz); len(extra) > 0 || !open {
		t.Errorf("follower: more %v (open %v, %v)", extra, open, sz.Err())
	}
}

func TestCoordinatedEchoAndLostPublish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		b, a, z, sa, sz, start := fleet(t, c, Config{})
		fleetRun(c, 3)
		// Publish fails after the message went out: the leader delivers
		// the batch itself, then receives its echo.
		b.mu.Lock()
		b.failPublish = "sent"
		b.mu.Unlock()
		fleetRun(c, 3)
		// Publish fails and the message is lost: the leader delivers it;
		// the follower fills the gap from the explorer at the next batch.
		b.mu.Lock()
		b.failPublish = "lost"
		b.mu.Unlock()
		fleetRun(c, 3)
		zRequests := z.view.requestCount()
		b.mu.Lock()
		b.failPublish = ""
		b.mu.Unlock()
		fleetRun(c, 3)
		want := c.after(start, upstream.TransactionsParams{})
		expect(t, "leader", sa, want)
		expect(t, "follower", sz, want)
		synctest.Wait()
		for name, s := range map[string]*Subscription[upstream.TxCursor]{"leader": sa, "follower": sz} {
			if extra, open := drain(s); len(extra) > 0 || !open {
				t.Errorf("%s: duplicates %v (open %v)", name, extra, open)
			}
		}
		if n := z.view.requestCount(); n <= zRequests {
			t.Errorf("the follower filled no gap")
		}
		if st := z.feed.Stats(); st.DroppedGap != 0 {
			t.Errorf("follower %+v", st)
		}
		if st := a.feed.Stats(); st.Delivered != uint64(len(want)) {
			t.Errorf("leader delivered %d, want %d", st.Delivered, len(want))
		}
	})
}

func TestCoordinatedGapFill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		b, _, z, sa, sz, start := fleet(t, c, Config{PageSize: 3, MaxBacklog: 20})
		b.setDeaf(z.m, true)
		fleetRun(c, 5) // 10 transactions the follower does not hear of
		b.setDeaf(z.m, false)
		fleetRun(c, 3)
		want := c.after(start, upstream.TransactionsParams{})
		expect(t, "leader", sa, want)
		expect(t, "follower", sz, want)
		if st := z.feed.Stats(); st.DroppedGap != 0 || st.Subscriptions != 1 {
			t.Errorf("follower %+v", st)
		}
	})
}

func TestCoordinatedGapTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		b, _, z, sa, sz, start := fleet(t, c, Config{MaxBacklog: 5})
		b.setDeaf(z.m, true)
		fleetRun(c, 6)
		deafEnd := c.head()
		b.setDeaf(z.m, false)
		fleetRun(c, 1)
		if got := closed(t, sz); len(got) != 0 || !errors.Is(sz.Err(), ErrGap) {
			t.Errorf("follower's subscription: %v, %v", got, sz.Err())
		}
		if st := z.feed.Stats(); st.DroppedGap != 1 || st.Subscriptions != 0 {
			t.Errorf("follower %+v", st)
		}
		// The follower goes on from the batch; a client resubscribing from
		// its cursor is told the backlog is too long, one from later gets
		// everything.
		if _, err := z.feed.Subscribe(t.Context(), SubscribeOptions{After: &start}); err == nil {
			t.Errorf("resubscribed past the backlog")
		}
		again := subscribe(t, z.feed, SubscribeOptions{After: &deafEnd})
		fleetRun(c, 2)
		want := c.after(deafEnd, upstream.TransactionsParams{})
		expect(t, "resubscribed", again, want)
		want = c.after(start, upstream.TransactionsParams{})
		expect(t, "leader", sa, want)
	})
}

func TestCoordinatedBadMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		_, _, z, _, sz, start := fleet(t, c, Config{})
		for _, msg := range []string{"", "null", "{", `{"prev":"1.2.3"}`, `{"transactions":[]}`, `{"prev":"100.1","transactions":[{"block":"100","index":0}]}`, "\x00\xff"} {
			z.m.send([]byte(msg))
		}
		fleetRun(c, 3)
		want := c.after(start, upstream.TransactionsParams{})
		if got := take(t, sz, len(want)); !slices.Equal(got, want) {
			t.Errorf("%v\nwant %v", got, want)
		}
		if n := z.feed.feed.badMessages.Load(); n != 7 {
			t.Errorf("%d bad messages counted, want 7", n)
		}
	})
}
