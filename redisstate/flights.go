package redisstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/internal/ctxwait"
	"github.com/tradenet/gateway/upstream"
)

// Flights across the replicas (upstream.SharedFlights; the why is in
// upstream's fleet.go): one replica of the fleet fetches an answer, the
// others asking it meanwhile wait for it instead of queueing requests of
// their own for the fleet's rate budget.
//
// A claim is a key, {prefix}upstream-flight:<hash of the request>,
// holding the claimant's token (this process's id and a sequence
// number), taken with SET PX when it is free. It is a lease: the
// claimant renews it every flightTick, so it lasts as long as the fetch,
// however long that queues, and a replica that dies holding it loses it
// within flightLease. When its fetch is over (the answer stored in the
// shared tier, or a failure), the claimant deletes the claim if it is
// still its own and publishes the claim's key on {prefix}upstream-flights,
// in one script.
//
// Each process subscribes to that channel once (its hub, started by the
// first claim, stopped by Store.Close) and hands each key heard to its
// own waiters of it. A waiter is registered before it tries the claim,
// and only while the subscription is confirmed: Redis runs commands one
// at a time, so a release that comes after the claim was found held is
// heard. What could still be missed is caught three ways: the
// subscription breaking wakes every waiter (they cannot hear any more);
// every flightTick, the hub checks the claims its waiters wait on (one
// round trip for all of them) and wakes the waiters of those gone
// without news (a release that failed, an expired claim); and the caller
// bounds the wait by its deadline. A woken waiter reads the shared tier,
// and fetches for itself when no answer is there.
//
// Redis is not a way in here either: notices carry no answer (the waiter
// reads the signed entry, UpstreamCache), so a forged one only wakes
// waiters early, and they fetch for themselves. A claim that no replica
// can have taken (one without expiry, or one longer than a lease) is
// taken over. Someone who can write to Redis can still make requests
// wait by holding claims, as they could by spending the fleet's rate
// budget: up to the requests' deadlines, never with a wrong answer.

const (
	// flightLease is how long a claim outlives its claimant's last
	// renewal.
	flightLease = 2 * time.Second
	// flightTick is how often the hub renews this process's claims and
	// checks those its waiters wait on; only while there are some.
	flightTick = 500 * time.Millisecond
	// flightPing is how long the subscription may stay silent before the
	// hub pings it; a connection that answers no ping within another
	// flightPing is broken.
	flightPing = 5 * time.Second
	// maxFlightNotice bounds a notice (a claim's key); a longer one is no
	// replica's and is ignored.
	maxFlightNotice = 256
)

// flightHub is a Store's side of the fleet's flights: its subscription,
// its waiters and its claims.
type flightHub struct {
	s       *Store
	channel string
	id      string
	seq     atomic.Uint64
	// tried is closed once the first subscription was confirmed or
	// failed: until then a claim waits for it (once per process, one
	// round trip), so that the first waiters can be told.
	tried     chan struct{}
	triedOnce sync.Once

	mu         sync.Mutex
	subscribed bool
	waits      map[string]map[*flightWait]struct{} // by claim key
	held       map[string]string                   // this process's claims: key → token
}

// flights is the store's hub, started at the first call.
func (s *Store) flights() *flightHub {
	s.hubOnce.Do(func() {
		h := &flightHub{s: s, channel: s.key("upstream-flights"), id: randomHolderID(),
			tried: make(chan struct{}), waits: map[string]map[*flightWait]struct{}{}, held: map[string]string{}}
		if !s.goBackground(h.receive) || !s.goBackground(h.tend) {
			h.triedOnce.Do(func() { close(h.tried) })
		}
		s.hub.Store(h)
	})
	return s.hub.Load()
}

var errStoreClosed = errors.New("the Redis store is closed")

// claimFlightScript takes a claim that is free, or that no replica can
// have taken (no expiry, or longer than a lease). KEYS: the claim. ARGV:
// token, lease (ms). Returns 1 when taken, 0 when another holds it.
var claimFlightScript = redis.NewScript(`
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 or ttl == -1 or ttl > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`)

// releaseFlightScript deletes the claim if it is still the token's, and
// tells every replica that its flight is over. KEYS: the claim. ARGV:
// token, channel.
var releaseFlightScript = redis.NewScript(`
if redis.call('TYPE', KEYS[1])['ok'] == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
redis.call('PUBLISH', ARGV[2], KEYS[1])
return 1
`)

// tendFlightsScript renews this process's claims and reports which of
// the claims it waits on are gone. KEYS: its claims, then those it waits
// on. ARGV: lease (ms), the number of its claims, their tokens. Returns
// the positions (from 1) among the waited claims of those gone.
var tendFlightsScript = redis.NewScript(`
local held = tonumber(ARGV[2])
for i = 1, held do
  local k = KEYS[i]
  if redis.call('TYPE', k)['ok'] == 'string' and redis.call('GET', k) == ARGV[2 + i] then
    redis.call('PEXPIRE', k, ARGV[1])
  end
end
local gone = {}
for i = held + 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then gone[#gone + 1] = i - held end
end
return gone
`)

// Claim claims the fetch of key (upstream.SharedFlights).
func (c *UpstreamCache) Claim(ctx context.Context, key string) (upstream.SharedFlight, error) {
	return c.store.flights().claim(ctx, key)
}

var _ upstream.SharedFlights = (*UpstreamCache)(nil)

func (h *flightHub) claim(ctx context.Context, key string) (upstream.SharedFlight, error) {
	if h.s.background.Err() != nil {
		return nil, errStoreClosed
	}
	select {
	case <-h.tried:
	case <-ctx.Done():
	}
	full := h.s.key(key)
	w := &flightWait{h: h, key: full, landed: make(chan struct{})}
	h.mu.Lock()
	heard := h.subscribed
	if heard {
		ws := h.waits[full]
		if ws == nil {
			ws = map[*flightWait]struct{}{}
			h.waits[full] = ws
		}
		ws[w] = struct{}{}
	}
	h.mu.Unlock()
	token := h.id + "-" + strconv.FormatUint(h.seq.Add(1), 36)
	taken, err := claimFlightScript.Run(ctx, h.s.client, []string{full}, token, flightLease.Milliseconds()).Int()
	if err != nil {
		h.leave(w)
		h.s.errors.report(ctx, "upstream_cache", err)
		return nil, fmt.Errorf("claim an upstream flight: %w", err)
	}
	if taken == 1 {
		h.leave(w)
		h.mu.Lock()
		h.held[full] = token
		h.mu.Unlock()
		return &ownFlight{h: h, key: full, token: token}, nil
	}
	if !heard {
		return nil, nil
	}
	h.mu.Lock()
	w.confirmed = true
	h.mu.Unlock()
	return w, nil
}

// ownFlight is this process's claim.
type ownFlight struct {
	h          *flightHub
	key, token string
}

func (*ownFlight) Mine() bool              { return true }
func (*ownFlight) Landed() <-chan struct{} { return nil }
func (f *ownFlight) Done(ctx context.Context) error {
	h := f.h
	h.mu.Lock()
	if h.held[f.key] == f.token {
		delete(h.held, f.key)
	}
	h.mu.Unlock()
	if err := releaseFlightScript.Run(ctx, h.s.client, []string{f.key}, f.token, h.channel).Err(); err != nil {
		h.s.errors.report(ctx, "upstream_cache", err)
		return fmt.Errorf("release an upstream flight: %w", err)
	}
	return nil
}

// flightWait is a waiter for another replica's claim.
type flightWait struct {
	h      *flightHub
	key    string
	landed chan struct{} // closed, under h.mu, as it leaves h.waits
	// confirmed: the claim was found held after w was registered (under
	// h.mu); only then may its absence wake w.
	confirmed bool
}

func (*flightWait) Mine() bool                { return false }
func (w *flightWait) Landed() <-chan struct{} { return w.landed }
func (w *flightWait) Done(context.Context) error {
	w.h.leave(w)
	return nil
}

// leave takes w out of the waiters, if it is still there.
func (h *flightHub) leave(w *flightWait) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ws := h.waits[w.key]; ws != nil {
		delete(ws, w)
		if len(ws) == 0 {
			delete(h.waits, w.key)
		}
	}
}

// wake wakes the waiters of key (h.mu held).
func (h *flightHub) wakeLocked(key string) {
	for w := range h.waits[key] {
		close(w.landed)
	}
	delete(h.waits, key)
}

// waiting is the number of waiters that found the claim held.
func (h *flightHub) waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ws := range h.waits {
		for w := range ws {
			if w.confirmed {
				n++
			}
		}
	}
	return n
}

// receive keeps the subscription up until ctx ends.
func (h *flightHub) receive(ctx context.Context) {
	retry := backoff.NewExponentialBackOff()
	retry.InitialInterval = 50 * time.Millisecond
	retry.MaxInterval = flightMaxRetry
	for {
		err := h.session(ctx, retry.Reset)
		h.mu.Lock()
		// Whatever was published meanwhile is not heard: every waiter
		// is woken, and none registers until the next subscription.
		h.subscribed = false
		for key := range h.waits {
			h.wakeLocked(key)
		}
		h.mu.Unlock()
		h.triedOnce.Do(func() { close(h.tried) })
		if ctx.Err() != nil {
			return
		}
		h.s.errors.report(ctx, "upstream_cache", err)
		if ctxwait.Sleep(ctx, retry.NextBackOff()) != nil {
			return
		}
	}
}

// flightMaxRetry is the longest the hub waits before it subscribes again
// after a failure.
const flightMaxRetry = 5 * time.Second

// session is one subscription: it returns the error that ended it.
func (h *flightHub) session(ctx context.Context, confirmed func()) error {
	return listen(ctx, h.s.client, h.channel, "upstream flights' channel", flightPing, func() {
		h.mu.Lock()
		h.subscribed = true
		h.mu.Unlock()
		h.triedOnce.Do(func() { close(h.tried) })
		confirmed()
	}, func(payload string) {
		if len(payload) <= maxFlightNotice {
			h.mu.Lock()
			h.wakeLocked(payload)
			h.mu.Unlock()
		}
	})
}

// tend renews this process's claims and wakes the waiters of claims gone
// without news, every flightTick, until ctx ends.
func (h *flightHub) tend(ctx context.Context) {
	ctxwait.Every(ctx, flightTick, func() { h.tendOnce(ctx) })
}

func (h *flightHub) tendOnce(ctx context.Context) {
	h.mu.Lock()
	keys := make([]string, 0, len(h.held)+len(h.waits))
	args := make([]any, 2, 2+len(h.held))
	args[0], args[1] = flightLease.Milliseconds(), len(h.held)
	for key, token := range h.held {
		keys = append(keys, key)
		args = append(args, token)
	}
	// The waiters confirmed now: a claim gone later wakes them.
	var watched [][]*flightWait
	for key, ws := range h.waits {
		var confirmed []*flightWait
		for w := range ws {
			if w.confirmed {
				confirmed = append(confirmed, w)
			}
		}
		if len(confirmed) > 0 {
			keys = append(keys, key)
			watched = append(watched, confirmed)
		}
	}
	h.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, flightTick)
	defer cancel()
	gone, err := tendFlightsScript.Run(ctx, h.s.client, keys, args...).Int64Slice()
	if err != nil {
		if h.s.background.Err() == nil {
			h.s.errors.report(ctx, "upstream_cache", err)
		}
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, i := range gone {
		if i < 1 || int(i) > len(watched) {
			continue
		}
		for _, w := range watched[i-1] {
			ws := h.waits[w.key]
			if _, ok := ws[w]; ok {
				delete(ws, w)
				close(w.landed)
				if len(ws) == 0 {
					delete(h.waits, w.key)
				}
			}
		}
	}
}
