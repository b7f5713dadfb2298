package redisstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/internal/ctxwait"
	"github.com/tradenet/gateway/live"
)

// LiveCoordinator shares one poller of the live transaction feed among
// the replicas (live.Coordinator): a lease in Redis says which replica
// polls, and what it finds reaches every replica over Redis pub/sub.
//
// The lease is one key holding the holder's id, taken with SET NX PX,
// renewed by its holder every Retry (a compare-and-pexpire script) and
// released (compare-and-del) when the holder's Run ends. A holder that
// dies without releasing it loses it when it expires: another replica
// takes it within LeaseTTL+Retry.
//
// While Redis cannot be reached for longer than LeaseTTL, every replica
// polls for itself (Run runs lead without the lease, and Publish fails so
// that the feed delivers what it finds itself); when Redis answers again
// they go back to one lease holder.
type LiveCoordinator struct {
	store   *Store
	ttl     time.Duration
	retry   time.Duration
	id      string
	logger  *slog.Logger
	lease   string
	channel string

	running    atomic.Bool // a Run is in progress
	holding    atomic.Bool // this process holds the lease (and runs lead)
	subscribed atomic.Bool // Run's subscription to the channel is confirmed
}

var _ live.Coordinator = (*LiveCoordinator)(nil)

// LiveOptions configures a LiveCoordinator. Zero fields take the defaults.
type LiveOptions struct {
	// LeaseTTL is how long the lease outlives its holder's last renewal,
	// and how long Redis must fail before every replica polls for itself.
	// Default 3s.
	LeaseTTL time.Duration
	// Retry is how often a replica without the lease tries to take it and
	// the holder renews it; it must be shorter than LeaseTTL. Default
	// LeaseTTL/3.
	Retry time.Duration
	// ID names this process as the lease's holder; it must be unique in
	// the fleet. Default the host name and random hex.
	ID string
	// Logger receives lease changes; default the store's logger.
	Logger *slog.Logger
}

// DefaultLeaseTTL is LiveOptions.LeaseTTL's default.
const DefaultLeaseTTL = 3 * time.Second

// LiveCoordinator returns the coordinator of the live feed's poller.
func (s *Store) LiveCoordinator(opts LiveOptions) *LiveCoordinator {
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Retry <= 0 {
		opts.Retry = opts.LeaseTTL / 3
	}
	if opts.ID == "" {
		opts.ID = randomHolderID()
	}
	if opts.Logger == nil {
		opts.Logger = s.errors.logger
	}
	return &LiveCoordinator{
		store:   s,
		ttl:     opts.LeaseTTL,
		retry:   opts.Retry,
		id:      opts.ID,
		logger:  opts.Logger,
		lease:   s.key("live", "lease"),
		channel: s.key("live", "batches"),
	}
}

func randomHolderID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "gateway"
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return host + "-" + hex.EncodeToString(b)
}

// ID is this process's holder id.
func (c *LiveCoordinator) ID() string { return c.id }

// Holding reports whether this process holds the lease now (and so runs
// lead). It is false while this process polls for itself because Redis
// cannot be reached.
func (c *LiveCoordinator) Holding() bool { return c.holding.Load() }

// Holder returns the id of the lease's holder as Redis has it, "" when no
// one holds it.
func (c *LiveCoordinator) Holder(ctx context.Context) (string, error) {
	id, err := c.store.client.Get(ctx, c.lease).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the live feed's lease: %w", err)
	}
	return id, nil
}

// errNotSubscribed is Publish's error while this process's own
// subscription is down: the message went to the others (if Redis took
// it), but this process's Run will not deliver it.
var errNotSubscribed = errors.New("this process is not subscribed to the live channel")

// Publish sends msg to every replica's Run. It fails when Redis does (or
// does not answer within a round of the lease protocol), and also when this process's own subscription is not up (after publishing
// to the others), so that the caller delivers msg to itself.
func (c *LiveCoordinator) Publish(ctx context.Context, msg []byte) error {
	subscribed := c.subscribed.Load()
	ctx, cancel := c.commandContext(ctx)
	defer cancel()
	if err := c.store.client.Publish(ctx, c.channel, msg).Err(); err != nil {
		if ctx.Err() == nil {
			c.store.errors.report(ctx, "live", err)
		}
		return fmt.Errorf("publish a live batch: %w", err)
	}
	if !subscribed {
		return fmt.Errorf("publish a live batch: %w", errNotSubscribed)
	}
	return nil
}

// renewLeaseScript extends the lease if this process holds it. KEYS:
// lease. ARGV: holder id, TTL (ms). Returns 1 when renewed, 0 otherwise.
var renewLeaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

// releaseLeaseScript deletes the lease if this process holds it. KEYS:
// lease. ARGV: holder id. Returns 1 when released, 0 otherwise.
var releaseLeaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// Run takes part in the fleet until ctx ends (live.Coordinator): it
// subscribes to the channel, then contends for the lease every Retry and
// runs lead while it holds it, or while Redis has failed for longer than
// LeaseTTL. Its only errors are for options it cannot work with and for a
// second Run of the same coordinator at once.
func (c *LiveCoordinator) Run(ctx context.Context, lead func(ctx context.Context), deliver func(msg []byte)) error {
	if c.retry >= c.ttl || c.ttl < time.Millisecond {
		return fmt.Errorf("live coordinator: the lease's Retry (%v) must be shorter than its TTL (%v), which must be at least 1ms", c.retry, c.ttl)
	}
	if lead == nil || deliver == nil {
		return errors.New("live coordinator: Run needs lead and deliver")
	}
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("live coordinator: Run is already running")
	}
	defer c.running.Store(false)

	r := &leaseRun{c: c, lead: lead, wake: make(chan struct{}, 1)}
	var receiver sync.WaitGroup
	receiver.Go(func() { r.receive(ctx, deliver) })
	r.contend(ctx)
	r.stopLead()
	r.release(ctx)
	receiver.Wait()
	return nil
}

// leaseRun is the state of one Run.
type leaseRun struct {
	c    *LiveCoordinator
	lead func(ctx context.Context)
	// wake is signalled when the subscription is confirmed, so that the
	// lease is contended for at once.
	wake chan struct{}

	// Touched by contend's goroutine only.
	cancelLead context.CancelFunc
	leadDone   chan struct{} // nil while lead is not running
	local      bool          // lead runs without the lease (Redis failing)
	renewedAt  time.Time     // the holder's last successful renewal
	held       bool          // this Run took the lease at some point

	mu sync.Mutex
	// leaseErrSince and subErrSince are when the lease's commands and the
	// subscription started failing; zero while they work.
	leaseErrSince, subErrSince time.Time
}

// receive keeps the subscription to the channel up until ctx ends and
// calls deliver with each message, in order, from this one goroutine.
func (r *leaseRun) receive(ctx context.Context, deliver func([]byte)) {
	c := r.c
	retry := backoff.NewExponentialBackOff()
	retry.InitialInterval = min(50*time.Millisecond, c.retry)
	retry.MaxInterval = c.retry
	for ctx.Err() == nil {
		// Until the subscription is confirmed this replica cannot hear
		// the holder: that counts as failing (a dial to an unreachable
		// Redis can take longer than the lease's TTL to fail).
		r.failing(&r.subErrSince)
		err := r.session(ctx, deliver, retry.Reset)
		c.subscribed.Store(false)
		if ctx.Err() != nil {
			return
		}
		c.store.errors.report(ctx, "live", err)
		_ = ctxwait.Sleep(ctx, retry.NextBackOff())
	}
}

// session is one connection's subscription: it returns the error that
// ended it. A connection that answers neither a message nor a ping for
// two Retry periods counts as broken.
func (r *leaseRun) session(ctx context.Context, deliver func([]byte), confirmed func()) error {
	c := r.c
	ps := c.store.client.Subscribe(ctx, c.channel)
	defer ps.Close()
	// A blocked read ends when ps closes, not when ctx ends.
	defer context.AfterFunc(ctx, func() { _ = ps.Close() })()
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, c.retry)
		var netErr interface{ Timeout() bool }
		switch {
		case err != nil && errors.As(err, &netErr) && netErr.Timeout() && ctx.Err() == nil:
			if pinged {
				return fmt.Errorf("the live channel's connection did not answer a ping: %w", err)
			}
			if err := ps.Ping(ctx); err != nil {
				return fmt.Errorf("ping the live channel's connection: %w", err)
			}
			pinged = true
			continue
		case err != nil:
			return fmt.Errorf("receive from the live channel: %w", err)
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" && m.Channel == c.channel {
				r.recovered(&r.subErrSince)
				c.subscribed.Store(true)
				confirmed()
				select {
				case r.wake <- struct{}{}:
				default:
				}
			}
		case *redis.Message:
			deliver([]byte(m.Payload))
		}
	}
}

func (r *leaseRun) failing(since *time.Time) {
	r.mu.Lock()
	if since.IsZero() {
		*since = time.Now()
	}
	r.mu.Unlock()
}

func (r *leaseRun) recovered(since *time.Time) {
	r.mu.Lock()
	*since = time.Time{}
	r.mu.Unlock()
}

// unreachable reports whether Redis has failed, for the lease's commands
// or the subscription, for longer than the lease's TTL.
func (r *leaseRun) unreachable() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, since := range []time.Time{r.leaseErrSince, r.subErrSince} {
		if !since.IsZero() && time.Since(since) >= r.c.ttl {
			return true
		}
	}
	return false
}

// contend runs the lease protocol until ctx ends: a step every Retry, and
// at once when the subscription is confirmed or lead returns.
func (r *leaseRun) contend(ctx context.Context) {
	tick := time.NewTicker(r.c.retry)
	defer tick.Stop()
	for {
		r.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-r.wake:
		case <-r.leadDone:
			if ctx.Err() != nil {
				return
			}
			// lead returned before its context ended: give the lease up
			// so that a working poller can take it, and wait a round
			// before contending again.
			r.c.logger.WarnContext(ctx, "live feed: the poller stopped on its own; giving up the lease", "holder", r.c.id)
			r.stopLead()
			r.releaseLease(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}
}

// step is one round of the lease protocol.
func (r *leaseRun) step(ctx context.Context) {
	c := r.c
	subscribed := c.subscribed.Load()
	if r.leadDone == nil {
		// Only a replica that will hear the holder contends; while the
		// subscription is down, only its failure can make this one poll.
		if subscribed {
			taken, err := r.take(ctx)
			switch {
			case err != nil:
				r.commandFailed(ctx, err)
			case taken:
				r.recovered(&r.leaseErrSince)
				r.startLead(ctx)
				c.logger.InfoContext(ctx, "live feed: this replica holds the polling lease", "holder", c.id)
				return
			default:
				r.recovered(&r.leaseErrSince)
			}
		}
		if r.unreachable() {
			r.local = true
			r.startLead(ctx)
			c.logger.WarnContext(ctx, "live feed: Redis is unreachable; this replica polls for itself until it answers again", "holder", c.id)
		}
		return
	}

	if r.local && !subscribed {
		return // polling locally until Redis answers the subscription too
	}
	// Renew the lease if it is still ours, else take it if it is free.
	ours, err := r.renew(ctx)
	if err == nil && !ours {
		ours, err = r.take(ctx)
	}
	switch {
	case err != nil:
		r.commandFailed(ctx, err)
		if !r.local && time.Since(r.renewedAt) >= c.ttl {
			// The lease has expired: keep polling, without it, until
			// Redis answers again.
			r.local = true
			c.holding.Store(false)
			c.logger.WarnContext(ctx, "live feed: Redis is unreachable; this replica polls for itself until it answers again", "holder", c.id)
		}
	case ours:
		r.recovered(&r.leaseErrSince)
		r.renewedAt = time.Now()
		if r.local {
			r.local = false
			c.logger.InfoContext(ctx, "live feed: Redis answers again; this replica holds the polling lease", "holder", c.id)
		}
		c.holding.Store(true)
	default:
		r.recovered(&r.leaseErrSince)
		if r.local {
			c.logger.InfoContext(ctx, "live feed: Redis answers again; another replica holds the polling lease", "holder", c.id)
		} else {
			c.logger.WarnContext(ctx, "live feed: this replica lost the polling lease", "holder", c.id)
		}
		r.stopLead()
	}
}

func (r *leaseRun) commandFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return // the command was cut short by Run's end
	}
	r.failing(&r.leaseErrSince)
	r.c.store.errors.report(ctx, "live", err)
}

// commandContext bounds one command to a round of the lease protocol, so
// that an unreachable Redis (whose dials the client retries) does not hold
// the rounds, or the poller's Publish, back.
func (c *LiveCoordinator) commandContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, max(c.retry, 200*time.Millisecond))
}

// take takes the lease if no one holds it.
func (r *leaseRun) take(ctx context.Context) (bool, error) {
	ctx, cancel := r.c.commandContext(ctx)
	defer cancel()
	ok, err := r.c.store.client.SetNX(ctx, r.c.lease, r.c.id, r.c.ttl).Result()
	if err != nil {
		return false, fmt.Errorf("take the live feed's lease: %w", err)
	}
	if ok {
		r.held = true
		r.renewedAt = time.Now()
	}
	return ok, nil
}

// renew extends the lease if this process holds it.
func (r *leaseRun) renew(ctx context.Context) (bool, error) {
	ctx, cancel := r.c.commandContext(ctx)
	defer cancel()
	n, err := renewLeaseScript.Run(ctx, r.c.store.client, []string{r.c.lease}, r.c.id, r.c.ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("renew the live feed's lease: %w", err)
	}
	return n == 1, nil
}

func (r *leaseRun) startLead(ctx context.Context) {
	leadCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	r.cancelLead, r.leadDone = cancel, done
	r.c.holding.Store(!r.local)
	go func() {
		defer close(done)
		r.lead(leadCtx)
	}()
}

// stopLead ends lead's context and waits for it to return.
func (r *leaseRun) stopLead() {
	r.c.holding.Store(false)
	if r.leadDone == nil {
		return
	}
	r.cancelLead()
	<-r.leadDone
	r.cancelLead, r.leadDone, r.local = nil, nil, false
}

// release gives the lease up at Run's end (its context has ended, but the
// release must still reach Redis).
func (r *leaseRun) release(ctx context.Context) {
	if !r.held {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	r.releaseLease(ctx)
}

func (r *leaseRun) releaseLease(ctx context.Context) {
	if err := releaseLeaseScript.Run(ctx, r.c.store.client, []string{r.c.lease}, r.c.id).Err(); err != nil {
		if ctx.Err() == nil {
			r.c.store.errors.report(ctx, "live", err)
		}
		return
	}
	r.held = false
}
