package redisstate_test

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/upstream"
)

// Redis is not a way in: whoever can write to Redis (publish on the live
// channel, set the lease) must not control the replicas' feeds. These
// tests play that writer with a client of their own.

const (
	liveChannel = redisstate.DefaultPrefix + "live:batches"
	liveLease   = redisstate.DefaultPrefix + "live:lease"
)

// rawClient is the attacker's connection to the Redis at url.
func rawClient(t *testing.T, url string) *redis.Client { return redistest.Client(t, url) }

// loneReplica starts a Redis of the test's own and one replica on it,
// "a", holding its lease for an hour and trying every retry, which hears
// itself; it returns the Redis's URL, the replica and a raw client.
func loneReplica(t *testing.T, retry time.Duration) (string, *replica, *redis.Client) {
	t.Helper()
	url := startRedis(t)
	r := startReplica(t, newFleet(), open(t, url, "", nil), "a", time.Hour, retry)
	connected(t, r, r)
	return url, r, rawClient(t, url)
}

// intrude is someone who sets the lease to "x", with an expiry, at once
// and every d, doing also what more says, until stop or the end of t.
func intrude(t *testing.T, raw *redis.Client, d time.Duration, more func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			_ = raw.Set(ctx, liveLease, "x", time.Minute).Err()
			if more != nil {
				more(ctx)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

func publishRaw(t *testing.T, c *redis.Client, msg any) {
	t.Helper()
	if err := c.Publish(context.Background(), liveChannel, msg).Err(); err != nil {
		t.Fatal(err)
	}
}

// expectNext fails t unless the next message r delivers is want.
func (r *replica) expectNext(t *testing.T, want string) {
	t.Helper()
	if got := r.receive(t); got != want {
		t.Fatalf("replica %s delivered %.80q, want %q", r.name, got, want)
	}
}

// A message without the fleet's signature is dropped before its payload
// is read: a plain batch, one signed with another key, a genuine one
// altered. Each is counted; the log has one line for them all.
func TestLiveCoordinatorDropsUnsignedAndForeignMessages(t *testing.T) {
	url := startRedis(t)
	f := newFleet()
	var logs [2]testutil.LockedBuffer
	var reps [2]*replica
	for i, name := range []string{"a", "b"} {
		reps[i] = startReplicaWith(t, f, open(t, url, "", nil), redisstate.LiveOptions{
			ID: name, LeaseTTL: time.Hour, Retry: 100 * time.Millisecond, Keys: testKeys,
			Logger: slog.New(slog.NewTextHandler(&logs[i], nil)),
		}, false)
	}
	a, b := reps[0], reps[1]
	connected(t, a, a, b)
	raw := rawClient(t, url)

	forged := `{"prev":"100.0","transactions":[{"block":"101","index":0,"hash":"FORGED"}]}`
	publishRaw(t, raw, forged)
	stranger := open(t, url, "", nil).LiveCoordinator(redisstate.LiveOptions{ID: "stranger", Keys: mustKeys(strings.Repeat("another key ", 4))})
	_ = stranger.Publish(context.Background(), []byte(forged)) // not running: it says it did not hear itself
	signer := open(t, url, "", nil).LiveCoordinator(redisstate.LiveOptions{ID: "signer", Keys: testKeys})
	altered := redisstate.SealForTest(signer, []byte(`{"prev":"100.0","transactions":[]}`), 1, time.Now())
	altered[len(altered)-3] = '9'
	publishRaw(t, raw, altered)
	publishRaw(t, raw, "gwlive1 signer 2 0 00\n"+forged)

	if err := a.c.Publish(context.Background(), []byte("after")); err != nil {
		t.Fatal(err)
	}
	for i, r := range []*replica{a, b} {
		r.expectNext(t, "after")
		if st := r.c.Stats(); st.Unauthentic != 4 || st.BadMessages != 4 || st.Oversized+st.Stale != 0 {
			t.Errorf("replica %s: %+v, want 4 unauthentic messages", r.name, st)
		}
		if n := strings.Count(logs[i].String(), "dropping a message"); n != 1 {
			t.Errorf("replica %s logged %d lines of dropped messages, want 1:\n%s", r.name, n, logs[i].String())
		}
	}
}

// Keys rotate: the first key signs, every key verifies.
func TestLiveCoordinatorAcceptsRotatedKeys(t *testing.T) {
	url := startRedis(t)
	f := newFleet()
	const k1, k2 = "the first key of thirty-two characters", "the second key of thirty-two characters"
	start := func(name, keys string) *replica {
		return startReplicaWith(t, f, open(t, url, "", nil), redisstate.LiveOptions{
			ID: name, LeaseTTL: time.Hour, Retry: 100 * time.Millisecond, Keys: mustKeys(keys), Logger: slog.New(slog.DiscardHandler),
		}, false)
	}
	old := start("old", k1)          // not rotated yet
	both := start("both", k1+","+k2) // signs with k1, accepts k2
	next := start("next", k2+","+k1) // rotated: signs with k2, accepts k1
	connected(t, both, old, both, next)

	// A message of each, then one of both (which all accept): every replica
	// delivers those it can verify, in order.
	for _, r := range []*replica{old, both, next, both} {
		if err := r.c.Publish(context.Background(), []byte("from "+r.name)); err != nil {
			t.Fatal(err)
		}
	}
	for r, want := range map[*replica][]string{
		old:  {"from old", "from both", "from both"}, // next's, signed with k2, is dropped
		both: {"from old", "from both", "from next", "from both"},
		next: {"from old", "from both", "from next", "from both"},
	} {
		for _, w := range want {
			r.expectNext(t, w)
		}
	}
	if st := old.c.Stats(); st.Unauthentic != 1 {
		t.Errorf("old: %+v, want next's message dropped", st)
	}
	for _, r := range []*replica{both, next} {
		if st := r.c.Stats(); st.BadMessages != 0 {
			t.Errorf("%s: %+v", r.name, st)
		}
	}
	if _, err := redisstate.NewBatchKeys(k1 + ",short"); err == nil {
		t.Error("a key of 5 characters was accepted")
	}
}

// A message over MaxMessageBytes is dropped as go-redis hands it over:
// nothing of it is copied, verified or decoded.
func TestLiveCoordinatorDropsOversizedMessagesUnread(t *testing.T) {
	// A Retry (the subscription's read timeout) long enough for the
	// message to be read whole on a loaded machine: a read cut short
	// leaves the connection amid the message, and the session starts
	// again (missing what is published meanwhile).
	_, r, raw := loneReplica(t, 10*time.Second)
	const size = 12 << 20 // under Redis's default pubsub output buffer limit (32 MB)
	big := strings.Repeat("x", size)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	publishRaw(t, raw, big)
	if err := r.c.Publish(context.Background(), []byte("after")); err != nil {
		t.Fatal(err)
	}
	r.expectNext(t, "after")
	runtime.ReadMemStats(&after)
	if st := r.c.Stats(); st.Oversized != 1 || st.BadMessages != 1 {
		t.Fatalf("%+v, want one oversized message", st)
	}
	// go-redis reads the message into one buffer; nothing more is
	// allocated for it.
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MiB while a %d MiB message was received and dropped", allocated>>20, size>>20)
	if allocated > size+size/2 {
		t.Errorf("allocated %d bytes for a message of %d", allocated, size)
	}
	// What Publish would send over the bound is refused, not sent.
	if err := r.c.Publish(context.Background(), []byte(big[:redisstate.DefaultMaxLiveMessage])); err == nil {
		t.Error("Publish sent a message no replica accepts")
	}
}

// An authentic message is delivered once: a replay, and a message sent
// more than MaxClockSkew from this clock, are dropped.
func TestLiveCoordinatorDropsReplayedAndStaleMessages(t *testing.T) {
	url, r, raw := loneReplica(t, 100*time.Millisecond)
	signer := open(t, url, "", nil).LiveCoordinator(redisstate.LiveOptions{ID: "signer", Keys: testKeys})
	now := time.Now()
	one := redisstate.SealForTest(signer, []byte("one"), 5, now)
	for _, msg := range [][]byte{
		one,
		one, // replayed
		redisstate.SealForTest(signer, []byte("earlier"), 4, now),               // an older sequence number
		redisstate.SealForTest(signer, []byte("old"), 6, now.Add(-time.Minute)), // sent a minute ago
		redisstate.SealForTest(signer, []byte("future"), 7, now.Add(time.Minute)),
		redisstate.SealForTest(signer, []byte("two"), 8, now),
	} {
		publishRaw(t, raw, msg)
	}
	r.expectNext(t, "one")
	r.expectNext(t, "two")
	if st := r.c.Stats(); st.Stale != 4 || st.BadMessages != 4 {
		t.Errorf("%+v, want 4 stale messages", st)
	}
}

// A lease that cannot be a live replica's is taken over at once: no
// expiry, another type, a value too long to be a holder id.
func TestLiveCoordinatorTakesOverALeaseNoReplicaHolds(t *testing.T) {
	for name, spoil := range map[string]func(context.Context, *redis.Client) error{
		"no expiry": func(ctx context.Context, c *redis.Client) error { return c.Set(ctx, liveLease, "x", 0).Err() },
		"a hash": func(ctx context.Context, c *redis.Client) error {
			_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Del(ctx, liveLease)
				p.HSet(ctx, liveLease, "x", "y")
				p.PExpire(ctx, liveLease, time.Hour)
				return nil
			})
			return err
		},
		"a long value": func(ctx context.Context, c *redis.Client) error {
			return c.Set(ctx, liveLease, strings.Repeat("x", 10_000), time.Hour).Err()
		},
	} {
		t.Run(name, func(t *testing.T) {
			url := startRedis(t)
			const ttl = time.Second
			f, a, b, leader, _ := startPair(t, url, nil, ttl)
			if err := spoil(context.Background(), rawClient(t, url)); err != nil {
				t.Fatal(err)
			}
			spoiled := time.Now()
			// The holder stops, and a replica (it, or the other, maybe
			// before it stopped) takes the lease over.
			var took time.Duration
			for lost := false; !lost || took == 0; {
				e := f.next(t, "the holder loses the lease and a replica takes it over", func(leadEvent) bool { return true })
				switch {
				case e.replica == leader.name && !e.leading:
					lost = true
				case e.leading:
					took = time.Since(spoiled)
				}
			}
			t.Logf("taken over %v after the lease was spoiled (TTL %v)", took.Round(time.Millisecond), ttl)
			if took > 3*ttl {
				t.Errorf("taken over after %v, want within about the TTL (%v)", took, ttl)
			}
			holder := a.holder(t)
			if holder != "a" && holder != "b" {
				t.Fatalf("Holder = %.40q", holder)
			}
			if pttl := rawClient(t, url).PTTL(context.Background(), liveLease).Val(); pttl <= 0 || pttl > ttl {
				t.Errorf("the lease's PTTL is %v, want at most %v", pttl, ttl)
			}
			if n := a.c.Stats().Takeovers + b.c.Stats().Takeovers; n != 1 {
				t.Errorf("%d takeovers", n)
			}
		})
	}
}

// A holder that publishes nothing (no batch, no heartbeat) for SilentAfter
// is replaced: a replica whose poller does not publish, and a lease set
// by someone else with an expiry and renewed.
func TestLiveCoordinatorReplacesASilentHolder(t *testing.T) {
	url := startRedis(t)
	f := newFleet()
	const ttl = 600 * time.Millisecond
	mute := startReplicaWith(t, f, open(t, url, "", nil), redisstate.LiveOptions{ID: "mute", LeaseTTL: ttl, Keys: testKeys}, false)
	f.next(t, "mute leads", started("mute"))
	b := startReplica(t, f, open(t, url, "", nil), "b", ttl, 0)
	f.next(t, "b takes the lease over", started("b"))
	f.next(t, "mute stops", stopped("mute"))
	if got := b.holder(t); got != "b" || mute.c.Holding() {
		t.Fatalf("Holder %q, mute.Holding %v", got, mute.c.Holding())
	}
	if st := b.c.Stats(); st.Takeovers != 1 {
		t.Errorf("b: %+v, want one takeover", st)
	}

	// Someone sets the lease, with an expiry, and keeps it set.
	intrude(t, rawClient(t, url), ttl/2, nil)
	f.next(t, "b loses the lease", stopped("b"))
	e := f.next(t, "a replica takes it over", started(""))
	t.Logf("%s took the lease over", e.replica)
}

// A replica that hears no other for SilentAfter polls for itself, its
// batches delivered to itself alone, until it hears one again. While it
// receives messages it cannot verify it does not take a silent holder's
// lease (its holder may sign with another key): someone who can write to
// Redis can make replicas poll for themselves, not stop their feeds.
func TestLiveCoordinatorPollsForItselfWhileItHearsNoOne(t *testing.T) {
	url := startRedis(t)
	f := newFleet()
	const ttl = 600 * time.Millisecond
	b := startReplica(t, f, open(t, url, "", nil), "b", ttl, 0)
	f.next(t, "b leads", started("b"))
	connected(t, b, b)

	// Someone takes the lease and sends garbage on the channel.
	raw := rawClient(t, url)
	stopIntruder := intrude(t, raw, ttl/6, func(ctx context.Context) { _ = raw.Publish(ctx, liveChannel, "garbage").Err() })
	f.next(t, "b loses the lease", stopped("b"))
	f.next(t, "b polls for itself", started("b"))
	if b.c.Holding() || b.holder(t) != "x" || b.c.Stats().Takeovers != 0 {
		t.Fatalf("b.Holding %v, holder %q, %+v", b.c.Holding(), b.holder(t), b.c.Stats())
	}
	// What b's poller publishes reaches b alone.
	watcher := raw.Subscribe(context.Background(), liveChannel)
	defer watcher.Close()
	if _, err := watcher.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.c.Publish(context.Background(), []byte("local")); err != nil {
		t.Fatal(err)
	}
	b.expectNext(t, "local")
	publishRaw(t, raw, "sentinel")
	for m := range watcher.Channel() {
		if m.Payload == "sentinel" {
			break
		}
		if m.Payload != "garbage" {
			t.Fatalf("the channel carried %.60q while b polls for itself", m.Payload)
		}
	}

	// A replica takes the lease (it names a, which takes it over): b hears
	// a's heartbeats and stops polling.
	a := startReplica(t, f, open(t, url, "", nil), "a", ttl, 0)
	stopIntruder()
	if err := raw.Set(context.Background(), liveLease, "a", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	f.next(t, "a leads", started("a"))
	f.next(t, "b stops polling for itself", stopped("b"))
	if !a.c.Holding() || b.c.Holding() || f.active.Load() != 1 {
		t.Fatalf("a.Holding %v, b.Holding %v, %d polling", a.c.Holding(), b.c.Holding(), f.active.Load())
	}
	connected(t, a, a, b)
}

// The feeds of two replicas deliver only what the explorer has: a forged
// batch (unsigned, or signed with another key) with a transaction at the
// next position, and signed batches reaching past the explorer's head,
// are refused; the real transactions follow, each once.
func TestLiveFeedsRefuseForgedBatches(t *testing.T) {
	url := startRedis(t)
	chain := sampleChain(t, 40, 10)
	seen := func(tx *upstream.Transaction) string { return tx.Position().String() + " " + tx.Hash }
	procs := startProcesses(t, url, chain, seen, "a", "b")
	chain.reveal(t, 5, seen, procs...)

	head, next := chain.tail[chain.shown.Load()-1].Position(), chain.tail[chain.shown.Load()].Position()
	fake := func(pos upstream.TxCursor) upstream.Transaction {
		return upstream.Transaction{Block: upstream.Uint64(pos.Block), Index: upstream.Int32(pos.Index), Hash: "FORGED", Submitter: "aa", Type: "Submit Order"}
	}
	encode := func(b live.Batch) []byte {
		msg, err := live.EncodeBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	atNext := encode(live.Batch{Prev: head, Transactions: []upstream.Transaction{fake(next)}})
	publishRaw(t, rawClient(t, url), atNext)
	stranger := open(t, url, "", nil).LiveCoordinator(redisstate.LiveOptions{ID: "stranger", Keys: mustKeys(strings.Repeat("another key ", 4))})
	_ = stranger.Publish(context.Background(), atNext)
	// Signed with the fleet's key (a replica's key leaked, or a replica
	// gone wrong), past the head: checked against the explorer.
	insider := open(t, url, "", nil).LiveCoordinator(redisstate.LiveOptions{ID: "insider", Keys: testKeys})
	far := upstream.TxCursor{Block: head.Block + 1_000_000}
	_ = insider.Publish(context.Background(), encode(live.Batch{Prev: head, Transactions: []upstream.Transaction{fake(far)}}))
	_ = insider.Publish(context.Background(), encode(live.Batch{Prev: upstream.TxCursor{Block: head.Block + 500}}))

	chain.reveal(t, 10, seen, procs...)
	for _, p := range procs {
		if st := p.coord.Stats(); st.Unauthentic != 2 {
			t.Errorf("%s's coordinator: %+v, want 2 unauthentic messages", p.name, st)
		}
		if st := p.feed.Stats(); st.BadMessages != 2 || st.DroppedGap != 0 {
			t.Errorf("%s's feed: %+v, want 2 refused batches", p.name, st)
		}
	}
	// Nothing else waits.
	for _, p := range procs {
		select {
		case got := <-p.sub.C():
			t.Errorf("%s received %s", p.name, got)
		default:
		}
	}
}
