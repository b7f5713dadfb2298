package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

// Flights across the replicas. Within a process, identical requests in
// flight share one upstream request (flights, coalesce.go); replicas do
// not see one another's flights, and while the rate budget is spent a
// request queues for seconds: two replicas asking the same URL at the
// same moment would queue two requests and spend two of the fleet's
// tokens where one process spends one. The shared tier's answer comes
// too late to help: a data-node answer is served for MaxAge (1 s) after
// it was requested, and the second replica's request is usually still
// queued then.
//
// So a flight whose answer the replicas would share claims its fetch in
// the shared tier first (SharedFlights.Claim). The replica holding the
// claim fetches as it would alone, stores the answer in the shared tier,
// then gives the claim up and tells the waiting replicas (SharedFlight.Done).
// A replica that finds the claim held does not queue a request of its
// own: it waits for that news, then serves the answer from the shared
// tier (counted as CacheFleetHit). When no answer it may serve is there
// (the claimant failed or gave up, its answer is an error or not kept,
// or the claimant went away and its claim expired), it fetches for
// itself, claiming the fetch if nobody holds it, and never waits twice.
//
// Only answers the replicas share at all take part: the cache is on, the
// shared tier is there and coalesces, the request reads the cache (never
// WithoutCache: the live feed's poller never waits for another replica),
// and its answer may be kept (a data-node answer is kept only with a
// MaxAge). The shared tier failing never fails a request: the flight
// fetches for itself, as without it, and the tier is skipped for its
// backoff like any failure of it (sharedFailed).

// SharedFlights is what a SharedCache may also do: coalesce identical
// requests across the replicas (redisstate.UpstreamCache does, through
// Redis).
type SharedFlights interface {
	// Claim claims the fetch of key (a name fleetKey gives) for this
	// process. It returns this process's claim (Mine), or the claim of
	// the replica fetching key, to wait for; nil when another replica
	// holds the claim but this process could not hear it land (the
	// caller fetches for itself). The claim lasts while this process is
	// alive, until Done: a replica that dies holding one loses it
	// within moments, and its waiters fetch for themselves.
	Claim(ctx context.Context, key string) (SharedFlight, error)
}

// SharedFlight is a claim on the fetch of one key: this process's or
// another replica's.
type SharedFlight interface {
	// Mine reports whether the claim is this process's: it fetches,
	// stores the answer in the shared tier, then calls Done.
	Mine() bool
	// Landed, of another replica's claim, is closed when that replica is
	// done (its answer, if it has one to share, is in the shared tier),
	// when its claim is gone (it expired), or when this process may have
	// missed the news (its connection to the replicas broke).
	Landed() <-chan struct{}
	// Done gives this process's claim up and tells the replicas waiting
	// for it; of another replica's claim, it stops waiting. It is called
	// once.
	Done(ctx context.Context) error
}

// fleetMaxWait bounds a wait for another replica's fetch when the flight
// has no deadline (the gateway's requests all have one): no longer than
// a request with REQUEST_TIMEOUT's default would wait.
const fleetMaxWait = 30 * time.Second

// fleetKey names target's flight in the shared tier: its hash, as the
// tier names its entries (sharedKeys).
func fleetKey(target string) string {
	sum := sha256.Sum256([]byte(target))
	return "upstream-flight:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// fleetFlights is the shared tier's coalescing, when a flight of r's may
// use it: nil otherwise.
func (c *Cache) fleetFlights(r route) SharedFlights {
	if c == nil || c.shared == nil {
		return nil
	}
	// Every data-node answer is recent (dataNodeAnswer): kept only with a
	// MaxAge. An explorer answer may be kept whatever its kind turns out.
	if r.service == ServiceDataNode && !c.keeps(CacheRecent) {
		return nil
	}
	f, _ := c.shared.(SharedFlights)
	return f
}

// claim claims target's fetch: nil when the shared tier is skipped, fails
// (the flight fetches for itself) or could not hear the claimant land.
func (c *Cache) claim(ctx context.Context, flights SharedFlights, target string) SharedFlight {
	if !c.sharedUp(time.Now()) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	defer cancel()
	f, err := flights.Claim(ctx, fleetKey(target))
	if err != nil {
		c.sharedFailed()
		return nil
	}
	c.sharedWorked()
	return f
}

// land gives this process's claim f up, once its fetch is over and its
// answer (if any) stored: the waiting replicas read it, or fetch for
// themselves.
func (c *Cache) land(ctx context.Context, f SharedFlight) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	defer cancel()
	if err := f.Done(ctx); err != nil {
		// The waiters learn that the claim is gone when it expires.
		c.sharedFailed()
	}
}

// fetchForFleet is fetch for a flight that missed both tiers of the
// cache: with a shared tier that coalesces, one replica of the fleet
// fetches target and the others wait for its answer (see above).
func fetchForFleet[B any, PB interface {
	*B
	listBody
}](ctx context.Context, c *Client, r route, target string, judge func(*B, uint64) judgement) (flightResult, error) {
	flights := c.cache.fleetFlights(r)
	if flights == nil {
		return fetch[B, PB](ctx, c, r, target, judge)
	}
	f := c.cache.claim(ctx, flights, target)
	if f != nil && !f.Mine() {
		res, ok, err := awaitFleet[B, PB](ctx, c, r, target, f)
		if ok || err != nil {
			return res, err
		}
		// No answer to serve: fetch for itself, holding the claim if
		// nobody does, so that replicas asking from now on wait for
		// this fetch; never wait again.
		if f = c.cache.claim(ctx, flights, target); f != nil && !f.Mine() {
			_ = f.Done(ctx)
			f = nil
		}
	}
	if f != nil {
		defer c.cache.land(ctx, f)
	}
	return fetch[B, PB](ctx, c, r, target, judge)
}

// awaitFleet waits for another replica's claim f to land and serves its
// answer from the shared tier: ok false when there is none to serve, an
// error when the flight ended first (its callers gave up, its deadline
// passed).
func awaitFleet[B any, PB interface {
	*B
	listBody
}](ctx context.Context, c *Client, r route, target string, f SharedFlight) (flightResult, bool, error) {
	wait := time.NewTimer(fleetMaxWait)
	defer wait.Stop()
	select {
	case <-f.Landed():
	case <-wait.C:
	case <-ctx.Done():
		_ = f.Done(ctx)
		return flightResult{}, false, ctx.Err()
	}
	_ = f.Done(ctx)
	res, ok := sharedAnswer[B, PB](ctx, c, r, target)
	res.fleet = ok
	return res, ok, nil
}
