package sampleservice

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimitConfig is the data node's per-client-IP rate limit
// (docs/wire.md, Rate limit and ban). The explorer has none.
type RateLimitConfig struct {
	// Enabled turns the limit on; it is off by default so that tests and
	// benchmarks measure the gateway, not the budget.
	Enabled bool
	// Rate is the sustained rate in requests per second; 0 means 20.
	Rate float64
	// Burst is the bucket size; 0 means 100.
	Burst int
	// BanAfter is the number of consecutive 429s, with no allowed request
	// between them, after which the client is banned; 0 means 10.
	BanAfter int
	// BanDuration is how long a ban lasts; 0 means 10 minutes.
	BanDuration time.Duration
}

func (c RateLimitConfig) withDefaults() RateLimitConfig {
	if c.Rate <= 0 {
		c.Rate = 20
	}
	if c.Burst <= 0 {
		c.Burst = 100
	}
	if c.BanAfter <= 0 {
		c.BanAfter = 10
	}
	if c.BanDuration <= 0 {
		c.BanDuration = 10 * time.Minute
	}
	return c
}

// rateLimiter is a token bucket per client IP plus the ban rule.
//
// The ban rule: a client whose request finds its bucket empty gets a 429
// and a strike; an allowed request clears its strikes. On the BanAfter-th
// consecutive strike the client is banned for BanDuration, and every
// request it makes meanwhile gets a 403 (spending no tokens) with
// Ratelimit-Retry-After saying how many seconds remain. The real data node
// counts strikes with a second token bucket of the same rate and burst
// (its "naughty step"), so a client hammering at full speed is banned after
// about Burst 429s; the consecutive count is the same idea made
// deterministic for tests.
type rateLimiter struct {
	cfg RateLimitConfig

	mu        sync.Mutex
	clients   map[string]*rateClient
	lastPrune time.Time
}

type rateClient struct {
	bucket      *rate.Limiter
	strikes     int
	bannedUntil time.Time
	lastSeen    time.Time
}

func newRateLimiter(cfg RateLimitConfig) *rateLimiter {
	return &rateLimiter{cfg: cfg.withDefaults(), clients: map[string]*rateClient{}}
}

// verdict is the limiter's decision on one request.
type verdict int

const (
	allowed verdict = iota
	limited
	banned
)

// decision is a verdict with what the response headers report.
type decision struct {
	verdict   verdict
	remaining int
	// retryAfter is the time left of a ban.
	retryAfter time.Duration
	// newBan is true when this request triggered a ban.
	newBan bool
}

// check takes one request from ip's bucket.
func (l *rateLimiter) check(ip string, now time.Time) decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune(now)
	c := l.clients[ip]
	if c == nil {
		c = &rateClient{bucket: rate.NewLimiter(rate.Limit(l.cfg.Rate), l.cfg.Burst)}
		l.clients[ip] = c
	}
	c.lastSeen = now
	if now.Before(c.bannedUntil) {
		return decision{verdict: banned, retryAfter: c.bannedUntil.Sub(now)}
	}
	if c.bucket.AllowN(now, 1) {
		c.strikes = 0
		return decision{verdict: allowed, remaining: int(math.Max(0, math.Floor(c.bucket.TokensAt(now))))}
	}
	c.strikes++
	d := decision{verdict: limited}
	if c.strikes >= l.cfg.BanAfter {
		c.strikes = 0
		c.bannedUntil = now.Add(l.cfg.BanDuration)
		d.newBan = true
	}
	return d
}

// prune forgets idle clients now and then so that the map stays small.
func (l *rateLimiter) prune(now time.Time) {
	if now.Sub(l.lastPrune) < time.Minute {
		return
	}
	l.lastPrune = now
	// A client idle this long has a full bucket again and no strikes
	// that matter.
	idle := time.Duration(float64(l.cfg.Burst)/l.cfg.Rate*float64(time.Second)) + time.Minute
	for ip, c := range l.clients {
		if now.Sub(c.lastSeen) > idle && !now.Before(c.bannedUntil) {
			delete(l.clients, ip)
		}
	}
}

// setHeaders writes the rate-limit headers every limited response carries.
func (l *rateLimiter) setHeaders(h http.Header, d decision) {
	h.Set("Ratelimit-Limit", strconv.Itoa(int(math.Round(l.cfg.Rate))))
	h.Set("Ratelimit-Remaining", strconv.Itoa(d.remaining))
	h.Set("Ratelimit-Reset", "1")
	if d.verdict == banned {
		h.Set("Ratelimit-Retry-After", strconv.FormatInt(int64(math.Ceil(d.retryAfter.Seconds())), 10))
	}
}

// clientIP is the host part of the request's remote address.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Rate-limit responses (docs/wire.md, Rate limit and ban).
var (
	errRateLimited = plainError(http.StatusTooManyRequests, grpcResourceExhausted, "api request rate limit exceeded")
	errBanned      = &apiError{status: http.StatusForbidden, body: banBody{
		Code: grpcPermissionDenied, Message: "temporarily banned for continuing to request while rate limited",
	}}
)
