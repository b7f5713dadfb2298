package redisstate

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/internal/ctxwait"
	"github.com/tradenet/gateway/upstream"
)

// Budget is the data node's rate budget shared by every replica: one
// bucket in Redis from which all of them draw, so that together they stay
// inside the data node's limit however many there are, and one pause that
// any replica's 429 or ban sets for all.
//
// The bucket is GCRA (the generic cell rate algorithm, a token bucket kept
// as one number: the theoretical arrival time of the next request, TAT),
// updated by a Lua script on Redis's clock, so replicas' clocks do not
// matter. A request reserves its slot and sleeps until it: one round trip
// per request; one that gives up meanwhile gives its slot back (a second
// round trip). While Redis fails, the budget falls back to a local one
// and reports the failure.
type Budget struct {
	store    *Store
	interval time.Duration // 1/rate
	burst    int
	fallback upstream.Budget

	bucket, pause, ban string
}

var (
	_ upstream.Budget         = (*Budget)(nil)
	_ upstream.BudgetReporter = (*Budget)(nil)
)

// BudgetOptions configures the shared budget.
type BudgetOptions struct {
	// Rate is the requests per second of all replicas together; <= 0
	// means upstream.DefaultBudgetRate.
	Rate float64
	// Burst is the most requests sent at once; <= 0 means
	// upstream.DefaultBudgetBurst.
	Burst int
	// Fallback is used while Redis fails; nil means a local budget of
	// Rate and Burst.
	Fallback upstream.Budget
}

// Budget returns the shared rate budget.
func (s *Store) Budget(opts BudgetOptions) *Budget {
	if opts.Rate <= 0 {
		opts.Rate = upstream.DefaultBudgetRate
	}
	if opts.Burst <= 0 {
		opts.Burst = upstream.DefaultBudgetBurst
	}
	if opts.Fallback == nil {
		opts.Fallback = upstream.NewLocalBudget(opts.Rate, opts.Burst)
	}
	return &Budget{
		store:    s,
		interval: time.Duration(float64(time.Second) / opts.Rate),
		burst:    opts.Burst,
		fallback: opts.Fallback,
		// One hash tag: the scripts touch all three keys, which a Redis
		// Cluster requires to be in one slot.
		bucket: s.key("{budget}", "tat"),
		pause:  s.key("{budget}", "pause"),
		ban:    s.key("{budget}", "ban"),
	}
}

// Times in the scripts are microseconds of Redis's clock (TIME), which
// fit a Lua double exactly.

// reserveScript takes one slot. KEYS: bucket, pause, ban. ARGV: interval
// (µs), burst, the longest acceptable wait (µs, -1 for any). Returns
// {status, µs, banned, slot}: status 0 granted (sleep µs first, until the
// slot, a time in µs), 1 paused for µs (banned 1 for a ban), 2 refused:
// the slot is µs away, past the longest acceptable wait (nothing
// reserved).
var reserveScript = redis.NewScript(`
local ban = redis.call('PTTL', KEYS[3])
if ban > 0 then return {1, ban * 1000, 1, 0} end
local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then return {1, pause * 1000, 0, 0} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local maxwait = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local newtat = tat + interval
local wait = newtat - burst * interval - now
if wait < 0 then wait = 0 end
if maxwait >= 0 and wait > maxwait then return {2, wait, 0, 0} end
redis.call('SET', KEYS[1], string.format('%.0f', newtat), 'PX', math.ceil((newtat - now) / 1000) + 1000)
return {0, wait, 0, now + wait}
`)

// releaseScript gives back a slot reserved by a caller that gave up while
// sleeping until it. KEYS: bucket. ARGV: interval (µs), the slot (µs).
// While the slot is still in the future, the bucket's TAT moves back by
// one interval (never below now): the slots reserved after it keep their
// times, and the next caller gets the last one's time again (the rate
// holds; the burst can exceed by the slots given back while later ones
// were reserved, one per other replica at most under FairBudget, well
// inside the data node's 100). Returns 1 when given back, 0 when the slot
// had come already.
var releaseScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local slot = tonumber(ARGV[2])
if slot <= now then return 0 end
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat <= now then return 0 end
local newtat = tat - interval
if newtat < now then newtat = now end
redis.call('SET', KEYS[1], string.format('%.0f', newtat), 'PX', math.ceil((newtat - now) / 1000) + 1000)
return 1
`)

// pauseScript holds every request back. KEYS: bucket, pause, ban. ARGV:
// the pause (ms), banned (1 or 0), interval (µs), burst. A pause only ever
// lengthens; a 429 also empties the bucket, since the data node's is.
var pauseScript = redis.NewScript(`
local ms = tonumber(ARGV[1])
local function extend(key)
  if redis.call('PTTL', key) < ms then redis.call('SET', key, '1', 'PX', ms) end
end
extend(KEYS[2])
if ARGV[2] == '1' then extend(KEYS[3]) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local full = now + burst * interval
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat < full then
  redis.call('SET', KEYS[1], string.format('%.0f', full), 'PX', math.ceil((full - now) / 1000) + 1000)
end
return 1
`)

// stateScript reads the budget. KEYS: bucket, pause, ban. ARGV: interval
// (µs), burst. Returns {tokens × 1000, pause µs, banned}.
var stateScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local tokens = burst - (tat - now) / interval
local ban = redis.call('PTTL', KEYS[3])
local pause = redis.call('PTTL', KEYS[2])
local banned = 0
if ban > 0 then banned = 1; if ban > pause then pause = ban end end
if pause < 0 then pause = 0 end
return {math.floor(tokens * 1000), pause * 1000, banned}
`)

func (b *Budget) keys() []string { return []string{b.bucket, b.pause, b.ban} }

// Wait blocks until one request may be sent, drawing from the shared
// bucket. While banned it refuses at once; while paused it waits, or
// refuses at once when the pause outlasts ctx's deadline; a slot further
// away than the deadline is refused without being taken.
func (b *Budget) Wait(ctx context.Context) error {
	for {
		maxWait := int64(-1)
		if deadline, ok := ctx.Deadline(); ok {
			maxWait = max(time.Until(deadline).Microseconds(), 0)
		}
		res, err := reserveScript.Run(ctx, b.store.client, b.keys(), b.interval.Microseconds(), b.burst, maxWait).Int64Slice()
		if err == nil && len(res) != 4 {
			err = fmt.Errorf("budget script answered %v", res)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			b.store.errors.report(ctx, "budget", err)
			return b.fallback.Wait(ctx)
		}
		wait := time.Duration(res[1]) * time.Microsecond
		switch res[0] {
		case 0:
			if wait <= 0 {
				return nil
			}
			if err := ctxwait.Sleep(ctx, wait); err != nil {
				b.release(ctx, res[3])
				return err
			}
			return nil
		case 1:
			if res[2] == 1 {
				return &upstream.BudgetError{RetryAfter: wait, Banned: true}
			}
			if ctxwait.Outlasts(ctx, time.Now(), wait) {
				return &upstream.BudgetError{RetryAfter: wait}
			}
			if err := ctxwait.Sleep(ctx, wait); err != nil {
				return err
			}
		default:
			return &upstream.BudgetError{RetryAfter: wait}
		}
	}
}

// release gives back the slot (µs of Redis's clock) of a caller that gave
// up before it came, so that it is not lost to every replica.
func (b *Budget) release(ctx context.Context, slot int64) {
	// The caller's context has ended; the release must still reach Redis.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := releaseScript.Run(ctx, b.store.client, []string{b.bucket}, b.interval.Microseconds(), slot).Err(); err != nil {
		b.store.errors.report(ctx, "budget", err)
	}
}

// Pause holds every replica's requests back for d (1s when d <= 0): after
// a 429 (banned false), which also empties the shared bucket, or a ban
// (banned true), during which requests are refused at once. The fallback
// budget is paused too, so that a Redis failure during a ban does not
// let requests through.
func (b *Budget) Pause(ctx context.Context, d time.Duration, banned bool) {
	b.fallback.Pause(ctx, d, banned)
	if d <= 0 {
		d = time.Second
	}
	ms := int64(math.Ceil(float64(d) / float64(time.Millisecond)))
	flag := "0"
	if banned {
		flag = "1"
	}
	// A pause must reach Redis even when the request that met the 429
	// is cancelled.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := pauseScript.Run(ctx, b.store.client, b.keys(), ms, flag, b.interval.Microseconds(), b.burst).Err(); err != nil {
		b.store.errors.report(ctx, "budget", err)
	}
}

// State reads the shared budget: tokens left (negative while requests
// wait for slots reserved ahead), the pause left, and whether it is a ban.
func (b *Budget) State(ctx context.Context) (upstream.BudgetState, error) {
	res, err := stateScript.Run(ctx, b.store.client, b.keys(), b.interval.Microseconds(), b.burst).Int64Slice()
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("budget script answered %v", res)
	}
	if err != nil {
		return upstream.BudgetState{}, fmt.Errorf("read the shared rate budget: %w", err)
	}
	return upstream.BudgetState{
		Tokens:    float64(res[0]) / 1000,
		PausedFor: time.Duration(res[1]) * time.Microsecond,
		Banned:    res[2] == 1,
	}, nil
}
