package redisstate_test

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// deadline bounds every wait for an event: generous, for a loaded machine.
const deadline = 15 * time.Second

// checkLeaks fails t if goroutines started during it outlive it (checked
// after every other cleanup: the stores closed, Redis stopped).
func checkLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// startRedis starts a Redis of t's own and checks that no goroutine
// started during t outlives it (checkLeaks).
func startRedis(t *testing.T) string {
	t.Helper()
	checkLeaks(t)
	return redistest.Start(t)
}

// fleet records which replicas run lead: events in the order they happen,
// and the most that ran at once.
type fleet struct {
	events            chan leadEvent
	active, maxActive atomic.Int32
}

type leadEvent struct {
	replica string
	leading bool // started (true) or returned (false)
}

func newFleet() *fleet { return &fleet{events: make(chan leadEvent, 1000)} }

// lead is replica name's poller: while it runs it publishes a heartbeat
// through c every `every` (as the feed does at every poll), none if
// every is 0.
func (f *fleet) lead(name string, c *redisstate.LiveCoordinator, every time.Duration) func(context.Context) {
	return func(ctx context.Context) {
		n := f.active.Add(1)
		for m := f.maxActive.Load(); n > m && !f.maxActive.CompareAndSwap(m, n); m = f.maxActive.Load() {
		}
		f.events <- leadEvent{name, true}
		if every > 0 {
			tick := time.NewTicker(every)
			for ctx.Err() == nil {
				_ = c.Publish(ctx, []byte(heartbeat+name))
				select {
				case <-tick.C:
				case <-ctx.Done():
				}
			}
			tick.Stop()
		}
		<-ctx.Done()
		f.active.Add(-1)
		f.events <- leadEvent{name, false}
	}
}

// heartbeat starts the leads' heartbeats, which replicas do not record.
const heartbeat = "heartbeat "

// testKeys is the fleet's key in these tests.
var testKeys = mustKeys("test live batch key of thirty-two characters or more")

func mustKeys(setting string) *redisstate.BatchKeys {
	k, err := redisstate.NewBatchKeys(setting)
	if err != nil {
		panic(err)
	}
	return k
}

// next returns the next lead event that matches want, failing t after
// the deadline.
func (f *fleet) next(t *testing.T, what string, want func(leadEvent) bool) leadEvent {
	t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case e := <-f.events:
			if want(e) {
				return e
			}
		case <-timeout:
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

func started(name string) func(leadEvent) bool {
	return func(e leadEvent) bool { return e.leading && (name == "" || e.replica == name) }
}

func stopped(name string) func(leadEvent) bool {
	return func(e leadEvent) bool { return !e.leading && e.replica == name }
}

// replica is one gateway process's coordinator, running.
type replica struct {
	name  string
	store *redisstate.Store
	c     *redisstate.LiveCoordinator
	got   chan string // messages delivered, in order, heartbeats aside
	stop  func() error
}

// startReplica runs a coordinator named name (its holder id) with the
// lease's TTL and Retry, the test key, and a lead that sends heartbeats.
func startReplica(t *testing.T, f *fleet, store *redisstate.Store, name string, ttl, retry time.Duration) *replica {
	t.Helper()
	return startReplicaWith(t, f, store, redisstate.LiveOptions{ID: name, LeaseTTL: ttl, Retry: retry, Keys: testKeys}, true)
}

// startReplicaWith runs a coordinator of opts (opts.ID names it); its
// lead sends heartbeats every quarter of the lease's TTL if heartbeats.
func startReplicaWith(t *testing.T, f *fleet, store *redisstate.Store, opts redisstate.LiveOptions, heartbeats bool) *replica {
	t.Helper()
	name := opts.ID
	r := &replica{name: name, store: store, got: make(chan string, 10000)}
	r.c = store.LiveCoordinator(opts)
	every := time.Duration(0)
	if heartbeats {
		every = cmp.Or(opts.LeaseTTL, redisstate.DefaultLeaseTTL) / 4
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- r.c.Run(ctx, f.lead(name, r.c, every), func(msg []byte) {
			if !strings.HasPrefix(string(msg), heartbeat) {
				r.got <- string(msg)
			}
		})
	}()
	var once sync.Once
	var err error
	r.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(deadline):
				err = fmt.Errorf("replica %s: Run did not return after its context ended", name)
			}
		})
		return err
	}
	t.Cleanup(func() {
		if err := r.stop(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// receive returns the next message r delivers, failing t after the
// deadline.
func (r *replica) receive(t *testing.T) string {
	t.Helper()
	select {
	case m := <-r.got:
		return m
	case <-time.After(deadline):
		t.Fatalf("replica %s received nothing", r.name)
		return ""
	}
}

// connected publishes probes from `from` until every replica delivers
// one: then all of them are subscribed, and their queues hold nothing
// older than the last probe.
func connected(t *testing.T, from *replica, all ...*replica) {
	t.Helper()
	timeout := time.After(deadline)
	for i := 0; ; i++ {
		probe := "probe-" + strconv.Itoa(i)
		_ = from.c.Publish(context.Background(), []byte(probe))
		retry := time.After(100 * time.Millisecond)
		received := 0
		for _, r := range all {
			if !r.await(t, probe, retry, timeout) {
				break
			}
			received++
		}
		if received == len(all) {
			return
		}
	}
}

// await reads r's messages until msg (true) or until retry fires (false).
func (r *replica) await(t *testing.T, msg string, retry, timeout <-chan time.Time) bool {
	t.Helper()
	for {
		select {
		case m := <-r.got:
			if m == msg {
				return true
			}
		case <-retry:
			return false
		case <-timeout:
			t.Fatalf("replica %s did not receive the probes", r.name)
		}
	}
}

func (r *replica) holder(t *testing.T) string {
	t.Helper()
	id, err := r.c.Holder(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// startPair starts replicas a and b (lease TTL ttl, default Retry) on the
// Redis at url, waits until one leads and both are subscribed, and
// returns them, the leader and the follower.
func startPair(t *testing.T, url string, onError func(string, error), ttl time.Duration) (f *fleet, a, b, leader, follower *replica) {
	t.Helper()
	f = newFleet()
	a = startReplica(t, f, open(t, url, "", onError), "a", ttl, 0)
	b = startReplica(t, f, open(t, url, "", onError), "b", ttl, 0)
	leader, follower = a, b
	if f.next(t, "a replica leads", started("")).replica == "b" {
		leader, follower = b, a
	}
	connected(t, leader, a, b)
	return f, a, b, leader, follower
}

func TestLiveCoordinatorOneReplicaPollsAndEveryReplicaReceives(t *testing.T) {
	url := startRedis(t)
	f, a, b, leader, follower := startPair(t, url, nil, 600*time.Millisecond)
	if !leader.c.Holding() || follower.c.Holding() {
		t.Fatalf("Holding: leader %v, follower %v", leader.c.Holding(), follower.c.Holding())
	}
	if got := leader.holder(t); got != leader.name {
		t.Fatalf("Holder = %q, want %q", got, leader.name)
	}

	// Messages from either replica reach both, in the order published.
	var want []string
	for i := range 200 {
		from := leader
		if i%10 == 9 {
			from = follower
		}
		msg := fmt.Sprintf("batch %d from %s", i, from.name)
		want = append(want, msg)
		if err := from.c.Publish(context.Background(), []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []*replica{a, b} {
		for i, w := range want {
			if got := r.receive(t); got != w {
				t.Fatalf("replica %s: message %d is %q, want %q", r.name, i, got, w)
			}
		}
	}
	if n := f.maxActive.Load(); n != 1 {
		t.Fatalf("%d replicas polled at once", n)
	}
	// A second Run of one coordinator is refused, not run beside the first.
	if err := a.c.Run(context.Background(), func(context.Context) {}, func([]byte) {}); err == nil {
		t.Fatal("a second Run of one coordinator was accepted")
	}
}

// When the holder's Run ends, it releases the lease and the other replica
// takes it at its next try (without waiting for the lease to expire: its
// TTL is an hour).
func TestLiveCoordinatorLeaseMovesWhenItsHolderStops(t *testing.T) {
	url := startRedis(t)
	f := newFleet()
	a := startReplica(t, f, open(t, url, "", nil), "a", time.Hour, 100*time.Millisecond)
	if e := f.next(t, "a leads", started("")); e.replica != "a" {
		t.Fatalf("%s leads", e.replica)
	}
	b := startReplica(t, f, open(t, url, "", nil), "b", time.Hour, 100*time.Millisecond)
	connected(t, a, a, b)

	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	// Run returned after lead did: a's stop event is already queued, and
	// the lease is released.
	f.next(t, "a stops leading", stopped("a"))
	if got := b.holder(t); got == "a" {
		t.Fatal("the lease still names a after its Run returned")
	}
	f.next(t, "b leads", started("b"))
	if got := b.holder(t); got != "b" || !b.c.Holding() || a.c.Holding() {
		t.Fatalf("Holder = %q, b.Holding %v, a.Holding %v", got, b.c.Holding(), a.c.Holding())
	}
	if n := f.maxActive.Load(); n != 1 {
		t.Fatalf("%d replicas polled at once", n)
	}
}

// A holder that dies without releasing the lease (its connection closed:
// it can neither renew nor release) loses it when it expires.
func TestLiveCoordinatorLeaseIsTakenOverFromADeadHolder(t *testing.T) {
	url := startRedis(t)
	f := newFleet()
	const ttl = 300 * time.Millisecond
	a := startReplica(t, f, open(t, url, "", nil), "a", ttl, 0)
	if e := f.next(t, "a leads", started("")); e.replica != "a" {
		t.Fatalf("%s leads", e.replica)
	}
	b := startReplica(t, f, open(t, url, "", nil), "b", ttl, 0)
	connected(t, a, a, b)

	died := time.Now()
	_ = a.store.Close()
	f.next(t, "b takes the lease over", started("b"))
	t.Logf("taken over %v after the holder died (TTL %v, Retry %v)", time.Since(died).Round(time.Millisecond), ttl, ttl/3)
	if got := b.holder(t); got != "b" || !b.c.Holding() {
		t.Fatalf("Holder = %q, b.Holding %v", got, b.c.Holding())
	}
	// b's batches reach b.
	connected(t, b, b)
}

// redisServer is a redis-server that a test can kill and start again on
// the same port.
type redisServer struct {
	t    *testing.T
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

func startRedisServer(t *testing.T) *redisServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	s := &redisServer{t: t, port: port, dir: t.TempDir()}
	s.start()
	t.Cleanup(s.kill)
	return s
}

func (s *redisServer) url() string { return "redis://127.0.0.1:" + strconv.Itoa(s.port) + "/0" }

// start runs redis-server and returns once it says it accepts
// connections.
func (s *redisServer) start() {
	s.t.Helper()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--daemonize", "no", "--loglevel", "notice")
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("redis-server (scripts/install-redis.sh installs it): %v", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	ready := make(chan struct{})
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.Contains(sc.Text(), "Ready to accept connections") {
				close(ready)
				signalled = true
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case <-ready:
	case <-s.done:
		s.t.Fatal("redis-server exited before accepting connections")
	case <-time.After(deadline):
		s.kill()
		s.t.Fatal("redis-server did not start")
	}
}

func (s *redisServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// While Redis is down every replica polls for itself, and Publish fails
// (the feed then delivers locally); when it is back, one replica holds
// the lease again and the others stop polling.
func TestLiveCoordinatorPollsLocallyWhileRedisIsDown(t *testing.T) {
	checkLeaks(t)
	server := startRedisServer(t)
	var reported atomic.Int64
	onError := func(use string, _ error) {
		if use == "live" {
			reported.Add(1)
		}
	}
	f, a, b, _, follower := startPair(t, server.url(), onError, 300*time.Millisecond)

	server.kill()
	t.Logf("Redis killed")
	// The holder keeps its poller; the follower starts its own.
	f.next(t, "the follower polls for itself", started(follower.name))
	if n := f.active.Load(); n != 2 {
		t.Fatalf("%d replicas poll while Redis is down, want 2", n)
	}
	for _, r := range []*replica{a, b} {
		if err := r.c.Publish(context.Background(), []byte("lost")); err == nil {
			t.Fatalf("replica %s published without Redis", r.name)
		}
	}
	if reported.Load() == 0 {
		t.Fatal("no Redis failure was reported for use \"live\"")
	}

	// Redis comes back, empty: one replica takes the lease, the other
	// stops polling.
	server.start()
	t.Logf("Redis started again")
	loser, winner := a, b
	if f.next(t, "one replica stops polling", func(e leadEvent) bool { return !e.leading }).replica == "b" {
		loser, winner = b, a
	}
	if got := winner.holder(t); got != winner.name {
		t.Fatalf("Holder = %q, want %q", got, winner.name)
	}
	if loser.c.Holding() {
		t.Fatalf("%s holds the lease after stopping its poller", loser.name)
	}
	if n := f.active.Load(); n != 1 {
		t.Fatalf("%d replicas poll after Redis returned, want 1", n)
	}
	connected(t, winner, a, b)
}

func TestLiveCoordinatorRefusesBadOptions(t *testing.T) {
	store := open(t, startRedis(t), "", nil)
	lead, deliver := func(context.Context) {}, func([]byte) {}
	for _, opts := range []redisstate.LiveOptions{
		{LeaseTTL: time.Second, Retry: time.Second},
		{LeaseTTL: time.Second, Retry: 2 * time.Second},
		{LeaseTTL: time.Microsecond, Retry: time.Nanosecond},
	} {
		if err := store.LiveCoordinator(opts).Run(context.Background(), lead, deliver); err == nil {
			t.Errorf("Run with %+v succeeded", opts)
		}
	}
	c := store.LiveCoordinator(redisstate.LiveOptions{})
	if err := c.Run(context.Background(), nil, deliver); err == nil {
		t.Error("Run without lead succeeded")
	}
	for _, id := range []string{"a b", "a\nb", strings.Repeat("x", 201)} {
		if err := store.LiveCoordinator(redisstate.LiveOptions{ID: id}).Run(context.Background(), lead, deliver); err == nil {
			t.Errorf("Run with the holder id %.20q succeeded", id)
		}
	}
	if id, err := c.Holder(context.Background()); err != nil || id != "" {
		t.Errorf("Holder of a free lease = %q, %v", id, err)
	}
	if c.ID() == "" || c.ID() == store.LiveCoordinator(redisstate.LiveOptions{}).ID() {
		t.Errorf("default holder ids are not unique: %q", c.ID())
	}
}

// growingChain is the sample data service's explorer with its newest
// transactions hidden until the test reveals them: new blocks arriving.
type growingChain struct {
	client *upstream.Client
	tail   []upstream.Transaction // the newest transactions, oldest first
	shown  atomic.Int64           // how many of tail are visible
}

// hiddenFrom is the position of the first hidden transaction, nil when
// all are shown.
func (g *growingChain) hiddenFrom() *upstream.TxCursor {
	if n := int(g.shown.Load()); n < len(g.tail) {
		p := g.tail[n].Position()
		return &p
	}
	return nil
}

func (g *growingChain) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	hidden := g.hiddenFrom()
	if hidden != nil && p.After == nil && p.Before == nil && p.Last == 0 {
		// The N newest visible: the N immediately older than the first
		// hidden one.
		p.First, p.Last, p.Before = 0, p.First, hidden
	}
	page, err := g.client.ListTransactions(ctx, p)
	if err != nil || hidden == nil {
		return page, err
	}
	page.Transactions = slices.DeleteFunc(page.Transactions, func(tx upstream.Transaction) bool {
		pos := tx.Position()
		return pos.Block > hidden.Block || pos.Block == hidden.Block && pos.Index >= hidden.Index
	})
	return page, nil
}

// countedExplorer counts one process's explorer requests.
type countedExplorer struct {
	live.Explorer
	requests atomic.Int64
}

func (c *countedExplorer) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	c.requests.Add(1)
	return c.Explorer.ListTransactions(ctx, p)
}

// sampleChain starts the sample data service and returns its n newest
// transactions as a growingChain, the first shown of them shown.
func sampleChain(t *testing.T, n, shown int) *growingChain {
	t.Helper()
	sample, err := sampleservice.Start(sampleservice.Config{}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sample.Close() })
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL + "/rest", HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := client.ListTransactions(context.Background(), upstream.TransactionsParams{First: n})
	if err != nil {
		t.Fatal(err)
	}
	tail := slices.Clone(page.Transactions)
	slices.Reverse(tail)
	chain := &growingChain{client: client, tail: tail}
	chain.shown.Store(int64(shown))
	return chain
}

// liveProcess is one process's live feed over the shared Redis, with
// its explorer's requests counted and one subscription.
type liveProcess struct {
	name     string
	explorer *countedExplorer
	coord    *redisstate.LiveCoordinator
	feed     *live.Feed[string]
	sub      *live.Subscription[string]
}

// startProcesses starts a process of each name on url's Redis, polling
// chain every 20ms, its feed preparing each transaction with seen; the
// feeds are closed when t ends.
func startProcesses(t *testing.T, url string, chain *growingChain, seen func(*upstream.Transaction) string, names ...string) []*liveProcess {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	var procs []*liveProcess
	for _, name := range names {
		p := &liveProcess{name: name, explorer: &countedExplorer{Explorer: chain}}
		p.coord = open(t, url, "", nil).LiveCoordinator(redisstate.LiveOptions{ID: name, Keys: testKeys, Logger: quiet})
		p.feed = live.New(live.Config{Explorer: p.explorer, Interval: 20 * time.Millisecond, Coordinator: p.coord, Logger: quiet}, seen)
		t.Cleanup(p.feed.Close)
		var err error
		if p.sub, err = p.feed.Subscribe(context.Background(), live.SubscribeOptions{}); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	return procs
}

// reveal shows the next n transactions and checks that the subscription
// of each of procs receives them (as seen prepares them), in order.
func (g *growingChain) reveal(t *testing.T, n int, seen func(*upstream.Transaction) string, procs ...*liveProcess) {
	t.Helper()
	from := int(g.shown.Add(int64(n))) - n
	for _, p := range procs {
		for i := range g.tail[from : from+n] {
			want := seen(&g.tail[from+i])
			select {
			case got, ok := <-p.sub.C():
				if !ok {
					t.Fatalf("%s: the subscription ended: %v", p.name, p.sub.Err())
				}
				if got != want {
					t.Fatalf("%s received %s, want %s", p.name, got, want)
				}
			case <-time.After(deadline):
				t.Fatalf("%s did not receive %s", p.name, want)
			}
		}
	}
}

// Two processes' live feeds sharing one Redis make one poller between
// them: both receive every new transaction, in chain order, once, and
// only the lease holder reads the explorer after the chain head; when it
// stops, the other polls.
func TestLiveFeedsOfTwoReplicasShareOnePoller(t *testing.T) {
	url := startRedis(t)
	chain := sampleChain(t, 60, 20)
	seen := func(tx *upstream.Transaction) string { return tx.Position().String() }
	procs := startProcesses(t, url, chain, seen, "a", "b")
	reveal := func(n int, procs ...*liveProcess) {
		t.Helper()
		chain.reveal(t, n, seen, procs...)
	}
	reveal(10, procs...)
	reveal(10, procs...)

	leader, follower := procs[0], procs[1]
	if !leader.coord.Holding() {
		leader, follower = follower, leader
	}
	if !leader.coord.Holding() || follower.coord.Holding() {
		t.Fatalf("Holding: a %v, b %v; want exactly one", procs[0].coord.Holding(), procs[1].coord.Holding())
	}
	// The follower read the chain head, and nothing since.
	if n := follower.explorer.requests.Load(); n != 1 {
		t.Fatalf("the follower made %d explorer requests, want 1 (the head)", n)
	}
	if n := leader.explorer.requests.Load(); n < 3 {
		t.Fatalf("the leader made %d explorer requests", n)
	}
	if st := follower.feed.Stats(); st.State != "following" || st.Polls != 1 {
		t.Fatalf("follower's stats: %+v", st)
	}

	// The leader's process stops: the follower takes the lease and polls.
	leader.feed.Close()
	reveal(10, follower)
	if !follower.coord.Holding() || follower.explorer.requests.Load() < 2 {
		t.Fatalf("after the hand-over: Holding %v, %d requests", follower.coord.Holding(), follower.explorer.requests.Load())
	}
}
