package redisstate

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/internal/ctxwait"
	"github.com/tradenet/gateway/internal/keytext"
	"github.com/tradenet/gateway/live"
)

// LiveCoordinator shares one poller of the live transaction feed among
// the replicas (live.Coordinator): a lease in Redis says which replica
// polls, and what it finds reaches every replica over Redis pub/sub.
//
// The lease is one key holding the holder's id, taken with SET PX when it
// is free, renewed by its holder every Retry (a compare-and-pexpire
// script) and released (compare-and-del) when the holder's Run ends. A
// holder that dies without releasing it loses it when it expires: another
// replica takes it within LeaseTTL+Retry.
//
// Redis is not a way in: whoever can write to it must not control the
// replicas' feeds. So:
//
//   - every message is signed: an envelope carrying the sender's id, a
//     sequence number, the time it was sent and an HMAC-SHA256 under the
//     fleet's BatchKeys of the channel's name, those fields and the
//     payload. A message no key verifies is dropped before anything reads
//     its payload; so is one sent more than MaxClockSkew from this
//     process's clock, and one whose sequence number is not above the
//     last heard from its sender (a replay);
//   - a message over MaxMessageBytes is dropped before it is copied,
//     verified or decoded (go-redis has already read it into memory: that
//     one buffer is what it costs; Redis's client-output-buffer-limit
//     for pubsub and proto-max-bulk-len bound it on the server);
//   - a lease that cannot be a live replica's is taken over at the next
//     round (a delete-if-unchanged then SET, one script): one without an
//     expiry, one of another type, one too long to be a holder id, one
//     naming this replica while it does not poll, and one whose holder
//     has published nothing (no batch, no heartbeat: the feed publishes
//     one at every poll) for SilentAfter since this replica could have
//     heard it, unless this replica has dropped messages within that
//     time (then the holder may be one signing with another key, and
//     taking its lease would only move the silence around);
//   - a replica that hears no authentic message from another for
//     SilentAfter polls for itself, delivering its batches to itself
//     alone, until it hears one again or takes the lease.
//
// Dropped messages and takeovers are counted (Stats) and logged, the
// drops at most once a minute.
//
// While Redis cannot be reached for longer than LeaseTTL, every replica
// polls for itself (Run runs lead without the lease, and Publish fails so
// that the feed delivers what it finds itself); when Redis answers again
// they go back to one lease holder.
type LiveCoordinator struct {
	store      *Store
	ttl        time.Duration
	retry      time.Duration
	silence    time.Duration
	maxMessage int
	keys       *BatchKeys
	id         string
	logger     *slog.Logger
	lease      string
	channel    string

	running    atomic.Bool // a Run is in progress
	holding    atomic.Bool // this process holds the lease (and runs lead)
	subscribed atomic.Bool // Run's subscription to the channel is confirmed
	// loopback is the Run whose deliver Publish hands messages to, while
	// this replica polls for a fleet it does not hear; nil otherwise.
	loopback atomic.Pointer[leaseRun]

	// pubMu orders Publish calls: their sequence numbers reach Redis in
	// order.
	pubMu sync.Mutex
	seq   uint64

	oversized, unauthentic, stale, takeovers atomic.Uint64
	dropLog                                  struct {
		sync.Mutex
		at      time.Time
		dropped uint64 // since the last line
	}
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
	// SilentAfter is how long a holder may publish nothing before another
	// replica takes the lease over, and how long a replica may hear no
	// other before it polls for itself; it must exceed the time between
	// the holder's polls (the feed's interval, plus a poll's duration).
	// Default LeaseTTL.
	SilentAfter time.Duration
	// Keys sign this process's messages and verify the others': every
	// replica needs the same (NewBatchKeys). Nil: a random key of this
	// process, whose messages no other replica accepts (nor it theirs).
	Keys *BatchKeys
	// MaxMessageBytes bounds a message on the channel; a larger one is
	// dropped unread. Default DefaultMaxLiveMessage.
	MaxMessageBytes int
	// ID names this process as the lease's holder and as a message's
	// sender; it must be unique in the fleet, at most 200 bytes, without
	// spaces. Default the host name and random hex.
	ID string
	// Logger receives lease changes; default the store's logger.
	Logger *slog.Logger
}

// DefaultLeaseTTL is LiveOptions.LeaseTTL's default.
const DefaultLeaseTTL = 3 * time.Second

// DefaultMaxLiveMessage is LiveOptions.MaxMessageBytes's default: the
// largest batch the feed encodes, and the envelope.
const DefaultMaxLiveMessage = live.MaxBatchBytes + maxEnvelopeHeader

// MaxClockSkew is how far from this process's clock the sending time of
// a message may be: the replicas' clocks must agree within it (NTP does).
// An older message is dropped as a possible replay, and its sender's
// sequence numbers need to be remembered only that long.
const MaxClockSkew = 30 * time.Second

// LiveCoordinator returns the coordinator of the live feed's poller.
func (s *Store) LiveCoordinator(opts LiveOptions) *LiveCoordinator {
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Retry <= 0 {
		opts.Retry = opts.LeaseTTL / 3
	}
	if opts.SilentAfter <= 0 {
		opts.SilentAfter = opts.LeaseTTL
	}
	if opts.Keys == nil {
		opts.Keys = RandomBatchKeys()
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxLiveMessage
	}
	if opts.ID == "" {
		opts.ID = randomHolderID()
	}
	if opts.Logger == nil {
		opts.Logger = s.errors.logger
	}
	return &LiveCoordinator{
		store:      s,
		ttl:        opts.LeaseTTL,
		retry:      opts.Retry,
		silence:    opts.SilentAfter,
		maxMessage: opts.MaxMessageBytes,
		keys:       opts.Keys,
		id:         opts.ID,
		logger:     opts.Logger,
		lease:      s.key("live", "lease"),
		channel:    s.key("live", "batches"),
		// Sequence numbers start at the time: a process restarted with
		// the same ID goes on above its predecessor's.
		seq: uint64(time.Now().UnixNano()),
	}
}

func randomHolderID() string {
	host, err := os.Hostname()
	if err != nil || host == "" || strings.ContainsAny(host, " \t\r\n") || len(host) > 100 {
		host = "gateway"
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return host + "-" + hex.EncodeToString(b)
}

// LiveStats are a LiveCoordinator's figures.
type LiveStats struct {
	// BadMessages counts the messages dropped: Oversized + Unauthentic +
	// Stale.
	BadMessages uint64
	// Oversized counts messages over MaxMessageBytes; Unauthentic those
	// without a valid envelope or whose MAC no key verifies; Stale
	// authentic ones sent more than MaxClockSkew from this clock or
	// replayed.
	Oversized, Unauthentic, Stale uint64
	// Takeovers counts leases this replica took over from a holder that
	// could not be a live replica's or had gone silent.
	Takeovers uint64
}

// Stats returns the coordinator's figures.
func (c *LiveCoordinator) Stats() LiveStats {
	s := LiveStats{Oversized: c.oversized.Load(), Unauthentic: c.unauthentic.Load(), Stale: c.stale.Load(), Takeovers: c.takeovers.Load()}
	s.BadMessages = s.Oversized + s.Unauthentic + s.Stale
	return s
}

// ID is this process's holder id.
func (c *LiveCoordinator) ID() string { return c.id }

// Holding reports whether this process holds the lease now (and so runs
// lead). It is false while this process polls for itself because Redis
// cannot be reached or because it hears no other replica.
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

// BatchKeys sign the live feed's messages between replicas and verify
// them: the first key signs, every key verifies, so that a key can be
// rotated (give every replica new,old, then new alone). A BatchKeys is
// safe for concurrent use.
type BatchKeys struct {
	keys [][]byte
}

// MinBatchKeyLength is the shortest key text NewBatchKeys accepts (32
// characters: `openssl rand -hex 32` gives 64).
const MinBatchKeyLength = 32

// batchKeyLabel: the MAC key made from a key text is HMAC-SHA256 keyed
// with the text, of this label. The cursors' MAC key made from the same
// text (graph.NewCursorKeys) is SHA-256 of another label and the text:
// the two are unrelated, so that CURSOR_KEY's text can serve for both.
const batchKeyLabel = "tradenet-gateway live batch key v1"

// NewBatchKeys reads a key setting: one key text, or several separated by
// commas (the first signs), each at least MinBatchKeyLength characters.
// The gateway passes LIVE_BATCH_KEY, or CURSOR_KEY when that is unset.
// Errors never quote a key.
func NewBatchKeys(setting string) (*BatchKeys, error) {
	texts, err := keytext.Split(setting, "key", MinBatchKeyLength)
	if err != nil {
		return nil, err
	}
	var k BatchKeys
	for _, text := range texts {
		mac := hmac.New(sha256.New, []byte(text))
		mac.Write([]byte(batchKeyLabel))
		k.keys = append(k.keys, mac.Sum(nil))
	}
	return &k, nil
}

// RandomBatchKeys returns a key of this process's own: no other process
// accepts its messages.
func RandomBatchKeys() *BatchKeys {
	key := make([]byte, sha256.Size)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return &BatchKeys{keys: [][]byte{key}}
}

// The envelope of a message on the live channel: one header line, then
// the payload as the feed gave it:
//
//	gwlive1 <sender id> <sequence> <unix ms> <hex HMAC-SHA256>\n<payload>
//
// The MAC is of the channel's name, "\n", the header line up to the space
// before the MAC, "\n" and the payload: the exact bytes sent, on this
// channel (another REDIS_PREFIX's channel does not accept them).
const (
	envelopeVersion = "gwlive1"
	// maxEnvelopeHeader bounds the header line.
	maxEnvelopeHeader = 512
	// maxHolderID bounds a holder id (LiveOptions.ID).
	maxHolderID = 200
)

// mac is the MAC of a message under key.
func (c *LiveCoordinator) mac(key []byte, header, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(c.channel))
	m.Write([]byte{'\n'})
	m.Write(header)
	m.Write([]byte{'\n'})
	m.Write(payload)
	return m.Sum(nil)
}

// seal wraps msg in a signed envelope. c.pubMu is held.
func (c *LiveCoordinator) seal(msg []byte) []byte {
	c.seq++
	return c.sealAt(msg, c.seq, time.Now())
}

// sealAt wraps msg in an envelope of sequence number seq, sent at sent.
func (c *LiveCoordinator) sealAt(msg []byte, seq uint64, sent time.Time) []byte {
	header := fmt.Appendf(make([]byte, 0, 128), "%s %s %d %d", envelopeVersion, c.id, seq, sent.UnixMilli())
	mac := c.mac(c.keys.keys[0], header, msg)
	out := make([]byte, 0, len(header)+2+hex.EncodedLen(len(mac))+len(msg))
	out = append(out, header...)
	out = append(out, ' ')
	out = hex.AppendEncode(out, mac)
	out = append(out, '\n')
	return append(out, msg...)
}

// envelope is an authentic message, opened.
type envelope struct {
	sender  string
	seq     uint64
	sent    time.Time
	payload []byte
}

// errUnauthentic is open's error for a message that is not one of the
// fleet's.
var errUnauthentic = errors.New("not an authentic live message")

// open checks msg's envelope and MAC: nothing in it is read before the
// MAC is verified but the header's layout.
func (c *LiveCoordinator) open(msg []byte) (envelope, error) {
	nl := bytes.IndexByte(msg[:min(len(msg), maxEnvelopeHeader)], '\n')
	if nl < 0 {
		return envelope{}, fmt.Errorf("%w: no envelope", errUnauthentic)
	}
	line, payload := msg[:nl], msg[nl+1:]
	sp := bytes.LastIndexByte(line, ' ')
	if sp < 0 || !bytes.HasPrefix(line, []byte(envelopeVersion+" ")) {
		return envelope{}, fmt.Errorf("%w: no envelope", errUnauthentic)
	}
	header := line[:sp]
	given, err := hex.DecodeString(string(line[sp+1:]))
	if err != nil || len(given) != sha256.Size {
		return envelope{}, fmt.Errorf("%w: no MAC", errUnauthentic)
	}
	verified := false
	for _, key := range c.keys.keys {
		if hmac.Equal(c.mac(key, header, payload), given) {
			verified = true
			break
		}
	}
	if !verified {
		return envelope{}, fmt.Errorf("%w: no key verifies its MAC (another LIVE_BATCH_KEY, or forged)", errUnauthentic)
	}
	// Signed by the fleet: its fields are the fleet's own.
	f := strings.Split(string(header), " ")
	if len(f) != 4 {
		return envelope{}, fmt.Errorf("%w: a header of %d fields", errUnauthentic, len(f))
	}
	seq, err1 := strconv.ParseUint(f[2], 10, 64)
	ms, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || f[1] == "" {
		return envelope{}, fmt.Errorf("%w: a malformed header", errUnauthentic)
	}
	return envelope{sender: f[1], seq: seq, sent: time.UnixMilli(ms), payload: payload}, nil
}

// errNotSubscribed is Publish's error while this process's own
// subscription is down: the message went to the others (if Redis took
// it), but this process's Run will not deliver it.
var errNotSubscribed = errors.New("this process is not subscribed to the live channel")

// Publish signs msg and sends it to every replica's Run. It fails when
// Redis does (or does not answer within a round of the lease protocol),
// when the signed message would be over MaxMessageBytes (no replica would
// accept it), and also when this process's own subscription is not up
// (after publishing to the others), so that the caller delivers msg to
// itself. While this replica polls for a fleet it does not hear, msg goes
// to this process's Run alone.
func (c *LiveCoordinator) Publish(ctx context.Context, msg []byte) error {
	if r := c.loopback.Load(); r != nil {
		r.deliverOne(msg)
		return nil
	}
	subscribed := c.subscribed.Load()
	c.pubMu.Lock()
	defer c.pubMu.Unlock()
	sealed := c.seal(msg)
	if len(sealed) > c.maxMessage {
		return fmt.Errorf("publish a live batch: %d bytes signed, more than the %d a replica accepts", len(sealed), c.maxMessage)
	}
	ctx, cancel := c.commandContext(ctx)
	defer cancel()
	if err := c.store.client.Publish(ctx, c.channel, sealed).Err(); err != nil {
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

// takeLeaseScript takes the lease if no one holds it, else describes it.
// KEYS: lease. ARGV: holder id, TTL (ms), the longest holder id. Returns
// {taken (0/1), the key's type, its PTTL, the value's SHA-1 (its type for
// another type than a string), the value ("" when longer than a holder
// id)}.
var takeLeaseScript = redis.NewScript(`
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1, kind, -2, '', ''}
end
local pttl = redis.call('PTTL', KEYS[1])
if kind ~= 'string' then
  return {0, kind, pttl, kind, ''}
end
local v = redis.call('GET', KEYS[1])
local holder = v
if #v > tonumber(ARGV[3]) then holder = '' end
return {0, kind, pttl, redis.sha1hex(v), holder}
`)

// takeOverLeaseScript replaces the lease if it is still what this process
// judged (its digest as takeLeaseScript gives it), or free. KEYS: lease.
// ARGV: digest, holder id, TTL (ms). Returns 1 when taken, 0 otherwise.
var takeOverLeaseScript = redis.NewScript(`
local kind = redis.call('TYPE', KEYS[1])['ok']
local digest = kind
if kind == 'string' then digest = redis.sha1hex(redis.call('GET', KEYS[1])) end
if kind ~= 'none' and digest ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

// renewLeaseScript extends the lease if this process holds it. KEYS:
// lease. ARGV: holder id, TTL (ms). Returns 1 when renewed, 0 otherwise.
var renewLeaseScript = redis.NewScript(`
if redis.call('TYPE', KEYS[1])['ok'] == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

// releaseLeaseScript deletes the lease if this process holds it. KEYS:
// lease. ARGV: holder id. Returns 1 when released, 0 otherwise.
var releaseLeaseScript = redis.NewScript(`
if redis.call('TYPE', KEYS[1])['ok'] == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// Run takes part in the fleet until ctx ends (live.Coordinator): it
// subscribes to the channel, then contends for the lease every Retry and
// runs lead while it holds it, while Redis has failed for longer than
// LeaseTTL, or while it hears no other replica (LiveCoordinator). Its
// only errors are for options it cannot work with and for a second Run of
// the same coordinator at once.
func (c *LiveCoordinator) Run(ctx context.Context, lead func(ctx context.Context), deliver func(msg []byte)) error {
	if c.retry >= c.ttl || c.ttl < time.Millisecond {
		return fmt.Errorf("live coordinator: the lease's Retry (%v) must be shorter than its TTL (%v), which must be at least 1ms", c.retry, c.ttl)
	}
	if c.id == "" || len(c.id) > maxHolderID || strings.ContainsAny(c.id, " \t\r\n") {
		return fmt.Errorf("live coordinator: the holder id %q must be 1 to %d bytes without spaces", c.id, maxHolderID)
	}
	if lead == nil || deliver == nil {
		return errors.New("live coordinator: Run needs lead and deliver")
	}
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("live coordinator: Run is already running")
	}
	defer c.running.Store(false)

	r := &leaseRun{c: c, lead: lead, deliver: deliver, wake: make(chan struct{}, 1),
		modeSince: time.Now(), senders: map[string]senderState{}}
	var receiver sync.WaitGroup
	receiver.Go(func() { r.receive(ctx) })
	r.contend(ctx)
	r.stopLead()
	r.release(ctx)
	receiver.Wait()
	return nil
}

// leadMode is why lead runs, if it does.
type leadMode int

const (
	following   leadMode = iota // lead does not run
	leasing                     // this replica holds the lease
	unreachable                 // Redis has failed: every replica polls for itself
	unheard                     // no other replica heard: this one polls for itself
)

// leaseRun is the state of one Run.
type leaseRun struct {
	c       *LiveCoordinator
	lead    func(ctx context.Context)
	deliver func([]byte)
	// wake is signalled when the subscription is confirmed, so that the
	// lease is contended for at once.
	wake chan struct{}
	// deliverMu makes deliver's calls one at a time: the receiver's and
	// Publish's loopback (mode unheard).
	deliverMu sync.Mutex

	// Touched by contend's goroutine only.
	cancelLead context.CancelFunc
	leadDone   chan struct{} // nil while lead is not running
	mode       leadMode
	modeSince  time.Time // when mode was entered
	renewedAt  time.Time // the holder's last successful renewal
	held       bool      // this Run took the lease at some point
	// watched is the digest of the lease as another replica last held it,
	// watchedSince since when (its holder's silence counts from then).
	watched      string
	watchedSince time.Time

	mu sync.Mutex
	// leaseErrSince and subErrSince are when the lease's commands and the
	// subscription started failing; zero while they work.
	leaseErrSince, subErrSince time.Time
	// subscribedSince is when the current subscription was confirmed
	// (zero while it is down): this replica hears the fleet since then.
	subscribedSince time.Time
	// senders are the fleet's senders heard within twice MaxClockSkew:
	// their last sequence number, and when; heardOther is when an
	// authentic message of another replica last came, droppedAt when a
	// message was last dropped.
	senders               map[string]senderState
	heardOther, droppedAt time.Time
}

type senderState struct {
	seq uint64
	at  time.Time
}

// receive keeps the subscription to the channel up until ctx ends and
// delivers each message, in order, from this one goroutine.
func (r *leaseRun) receive(ctx context.Context) {
	c := r.c
	retry := backoff.NewExponentialBackOff()
	retry.InitialInterval = min(50*time.Millisecond, c.retry)
	retry.MaxInterval = c.retry
	for ctx.Err() == nil {
		// Until the subscription is confirmed this replica cannot hear
		// the holder: that counts as failing (a dial to an unreachable
		// Redis can take longer than the lease's TTL to fail).
		r.failing(&r.subErrSince)
		err := r.session(ctx, retry.Reset)
		c.subscribed.Store(false)
		r.mu.Lock()
		r.subscribedSince = time.Time{}
		r.mu.Unlock()
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
func (r *leaseRun) session(ctx context.Context, confirmed func()) error {
	c := r.c
	return listen(ctx, c.store.client, c.channel, "live channel", c.retry, func() {
		r.recovered(&r.subErrSince)
		r.mu.Lock()
		r.subscribedSince = time.Now()
		r.mu.Unlock()
		c.subscribed.Store(true)
		confirmed()
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}, r.handle)
}

// handle checks a message from the channel and delivers its payload, or
// drops it.
func (r *leaseRun) handle(payload string) {
	c := r.c
	// go-redis has read the message already; nothing more of it is
	// copied or read when it is too large.
	if len(payload) > c.maxMessage {
		r.drop(&c.oversized, fmt.Errorf("%d bytes, more than %d", len(payload), c.maxMessage), len(payload))
		return
	}
	env, err := c.open([]byte(payload))
	if err != nil {
		r.drop(&c.unauthentic, err, len(payload))
		return
	}
	now := time.Now()
	if skew := now.Sub(env.sent); skew > MaxClockSkew || skew < -MaxClockSkew {
		r.drop(&c.stale, fmt.Errorf("sent by %s at %s, %v from this clock (replicas' clocks must agree within %v)", env.sender, env.sent.Format(time.RFC3339Nano), skew.Round(time.Millisecond), MaxClockSkew), len(payload))
		return
	}
	r.mu.Lock()
	last, known := r.senders[env.sender]
	fresh := !known || env.seq > last.seq
	if fresh {
		if !known && len(r.senders) >= 16 {
			for id, s := range r.senders {
				if now.Sub(s.at) > 2*MaxClockSkew {
					delete(r.senders, id)
				}
			}
		}
		r.senders[env.sender] = senderState{seq: env.seq, at: now}
		if env.sender != c.id {
			r.heardOther = now
		}
	}
	r.mu.Unlock()
	if !fresh {
		r.drop(&c.stale, fmt.Errorf("replayed: %s's message %d after its %d", env.sender, env.seq, last.seq), len(payload))
		return
	}
	r.deliverOne(env.payload)
}

// deliverOne hands a payload to the feed, one call at a time.
func (r *leaseRun) deliverOne(payload []byte) {
	r.deliverMu.Lock()
	defer r.deliverMu.Unlock()
	r.deliver(payload)
}

// dropLogEvery is how often at most a dropped message is logged.
const dropLogEvery = time.Minute

// drop counts a message dropped for err under counter, and logs it unless
// a drop was logged less than a minute ago.
func (r *leaseRun) drop(counter *atomic.Uint64, err error, size int) {
	c := r.c
	counter.Add(1)
	now := time.Now()
	r.mu.Lock()
	r.droppedAt = now
	r.mu.Unlock()
	c.dropLog.Lock()
	c.dropLog.dropped++
	quiet := !c.dropLog.at.IsZero() && now.Sub(c.dropLog.at) < dropLogEvery
	dropped := c.dropLog.dropped
	if !quiet {
		c.dropLog.at, c.dropLog.dropped = now, 0
	}
	c.dropLog.Unlock()
	if !quiet {
		c.logger.Warn("live feed: dropping a message on the live channel (logged at most once a minute)",
			"channel", c.channel, "err", err, "bytes", size, "dropped_since_last_line", dropped, "dropped_total", c.Stats().BadMessages)
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

// unheardFor is how long this replica, subscribed, has heard no other
// since it stopped polling (0 while it is not subscribed).
func (r *leaseRun) unheardFor() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subscribedSince.IsZero() {
		return 0
	}
	return time.Since(latest(r.heardOther, r.subscribedSince, r.modeSince))
}

func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
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
	switch r.mode {
	case following:
		// Only a replica that will hear the holder contends; while the
		// subscription is down, only its failure can make this one poll.
		if subscribed {
			taken, err := r.contendOnce(ctx)
			switch {
			case err != nil:
				r.commandFailed(ctx, err)
			case taken:
				r.recovered(&r.leaseErrSince)
				r.startLead(ctx, leasing)
				c.logger.InfoContext(ctx, "live feed: this replica holds the polling lease", "holder", c.id)
				return
			default:
				r.recovered(&r.leaseErrSince)
			}
		}
		if r.unreachable() {
			r.startLead(ctx, unreachable)
			c.logger.WarnContext(ctx, "live feed: Redis is unreachable; this replica polls for itself until it answers again", "holder", c.id)
			return
		}
		if quiet := r.unheardFor(); subscribed && quiet > c.silence {
			r.startLead(ctx, unheard)
			c.logger.WarnContext(ctx, "live feed: no other replica heard; this replica polls for itself until it hears one again",
				"holder", c.id, "unheard_for", quiet.Round(time.Millisecond))
		}
		return

	case unheard:
		if !subscribed {
			return // polling on: nothing can be heard now
		}
		taken, err := r.contendOnce(ctx)
		if err != nil {
			r.commandFailed(ctx, err)
			return
		}
		r.recovered(&r.leaseErrSince)
		r.mu.Lock()
		heard := r.heardOther.After(r.modeSince)
		r.mu.Unlock()
		switch {
		case taken:
			r.setMode(leasing)
			c.logger.InfoContext(ctx, "live feed: this replica holds the polling lease", "holder", c.id)
		case heard:
			r.stopLead()
			c.logger.InfoContext(ctx, "live feed: another replica heard again; this replica stops polling for itself", "holder", c.id)
		}
		return
	}

	if r.mode == unreachable && !subscribed {
		return // polling locally until Redis answers the subscription too
	}
	// Renew the lease if it is still ours, else take it if it is free.
	ours, err := r.renew(ctx)
	if err == nil && !ours {
		ours, _, err = r.take(ctx)
	}
	switch {
	case err != nil:
		r.commandFailed(ctx, err)
		if r.mode == leasing && time.Since(r.renewedAt) >= c.ttl {
			// The lease has expired: keep polling, without it, until
			// Redis answers again.
			r.setMode(unreachable)
			c.logger.WarnContext(ctx, "live feed: Redis is unreachable; this replica polls for itself until it answers again", "holder", c.id)
		}
	case ours:
		r.recovered(&r.leaseErrSince)
		r.renewedAt = time.Now()
		if r.mode == unreachable {
			r.setMode(leasing)
			c.logger.InfoContext(ctx, "live feed: Redis answers again; this replica holds the polling lease", "holder", c.id)
		}
	default:
		r.recovered(&r.leaseErrSince)
		if r.mode == unreachable {
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

// leaseInfo describes a lease someone holds (takeLeaseScript).
type leaseInfo struct {
	kind   string        // the key's type
	pttl   time.Duration // -1ms: no expiry
	digest string        // what takeOverLeaseScript compares
	holder string        // the holder id, "" when too long to be one
}

// take takes the lease if no one holds it; otherwise it says who does.
func (r *leaseRun) take(ctx context.Context) (bool, leaseInfo, error) {
	ctx, cancel := r.c.commandContext(ctx)
	defer cancel()
	res, err := takeLeaseScript.Run(ctx, r.c.store.client, []string{r.c.lease}, r.c.id, r.c.ttl.Milliseconds(), maxHolderID).Slice()
	if err != nil {
		return false, leaseInfo{}, fmt.Errorf("take the live feed's lease: %w", err)
	}
	var info leaseInfo
	var taken, pttl int64
	ok := len(res) == 5
	if ok {
		taken, ok = res[0].(int64)
	}
	if ok {
		info.kind, ok = res[1].(string)
	}
	if ok {
		pttl, ok = res[2].(int64)
		info.pttl = time.Duration(pttl) * time.Millisecond
	}
	if ok {
		info.digest, ok = res[3].(string)
	}
	if ok {
		info.holder, ok = res[4].(string)
	}
	if !ok {
		return false, leaseInfo{}, fmt.Errorf("take the live feed's lease: unexpected answer %v", res)
	}
	if taken == 1 {
		r.tookLease()
		return true, info, nil
	}
	return false, info, nil
}

func (r *leaseRun) tookLease() {
	r.held = true
	r.renewedAt = time.Now()
}

// contendOnce takes the lease if it is free, or takes it over if it
// cannot be a live replica's (judge).
func (r *leaseRun) contendOnce(ctx context.Context) (bool, error) {
	taken, info, err := r.take(ctx)
	if err != nil || taken {
		return taken, err
	}
	why := r.judge(info)
	if why == "" {
		return false, nil
	}
	cctx, cancel := r.c.commandContext(ctx)
	defer cancel()
	n, err := takeOverLeaseScript.Run(cctx, r.c.store.client, []string{r.c.lease}, info.digest, r.c.id, r.c.ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("take the live feed's lease over: %w", err)
	}
	if n != 1 {
		return false, nil // it changed meanwhile: judged again next round
	}
	r.tookLease()
	r.c.takeovers.Add(1)
	r.c.logger.WarnContext(ctx, "live feed: took the polling lease over", "holder", r.c.id, "from", info.holder, "why", why)
	return true, nil
}

// judge says why the lease, held by someone, cannot be a live replica's
// ("" when it can be).
func (r *leaseRun) judge(l leaseInfo) string {
	c := r.c
	switch {
	case l.kind != "string":
		return "the lease key holds a " + l.kind
	case l.pttl == -time.Millisecond:
		return "the lease has no expiry"
	case l.holder == "":
		return "the lease is too long to name a replica"
	case l.holder == c.id:
		return "the lease names this replica, which does not poll under it"
	}
	now := time.Now()
	if l.digest != r.watched {
		r.watched, r.watchedSince = l.digest, now
	}
	r.mu.Lock()
	since := latest(r.watchedSince, r.subscribedSince, r.senders[l.holder].at)
	dropping := !r.droppedAt.IsZero() && now.Sub(r.droppedAt) < c.silence
	r.mu.Unlock()
	if silent := now.Sub(since); silent > c.silence && !dropping {
		return fmt.Sprintf("its holder has published nothing for %v", silent.Round(time.Millisecond))
	}
	return ""
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

// setMode changes why lead runs, while it runs.
func (r *leaseRun) setMode(m leadMode) {
	r.mode = m
	r.mu.Lock()
	r.modeSince = time.Now()
	r.mu.Unlock()
	r.c.holding.Store(m == leasing)
	if m == unheard {
		r.c.loopback.Store(r)
	} else {
		r.c.loopback.Store(nil)
	}
}

func (r *leaseRun) startLead(ctx context.Context, m leadMode) {
	leadCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	r.cancelLead, r.leadDone = cancel, done
	r.setMode(m)
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
	r.cancelLead, r.leadDone = nil, nil
	r.setMode(following)
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
