package upstream

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The cache of upstream answers (Config.Cache): decoded answers kept in
// this process under their normalised request (the target URL), bounded in
// bytes, and, with a SharedCache (redisstate's, in Redis), shared by every
// replica. Every answer has a kind (CacheKind, chosen per route from what
// it holds: kinds.go), which says how long it stays true:
//
//   - CacheImmutable (committed history): kept until evicted;
//   - CacheUntilNextBlock (what reaches the explorer's head): kept while
//     the explorer's head is the block it was fetched at; when the live
//     feed's poller (or any fresh newest page) shows a new block, this
//     process drops them at once and no replica reads them again (they are
//     keyed by that block). A filtered explorer list that none of the new
//     block's transactions matches is kept instead, in this process, when
//     the live feed tells the cache every one of them (transactions,
//     Client.ObserveTransactions). Without a poller confirming the head,
//     an entry is served for HeadTTL after it was fetched, kept, or after
//     the head was last confirmed, whichever is later;
//   - CacheRecent (data-node answers): served for at most MaxAge after it
//     was requested, then fetched again, once for every caller waiting
//     (coalescing; with a shared tier, once for the whole fleet:
//     fleet.go);
//   - CacheNone (errors): never kept.
//
// A cached answer keeps its own freshness (block height and time) and
// FetchedAt: whatever is built from it reports how old it is.
//
// Requests whose context says WithoutCache (the live feed's poller, the
// readiness probe) never read the cache: they are how the gateway learns
// that the chain moved. Their answers are stored like any other.

// Defaults of CacheConfig, and the settings' defaults.
const (
	DefaultCacheBytes   = 64 << 20
	DefaultCacheMaxAge  = time.Second
	DefaultCacheHeadTTL = time.Second
)

// Lifetimes of entries in the shared tier. Immutable entries live long
// there (the shared store's own eviction bounds its memory); entries of
// the explorer's newest answers are keyed by the head block they are
// true at, so a stale one is never read: their lifetime only frees them.
const (
	sharedImmutableTTL      = 24 * time.Hour
	sharedUntilNextBlockTTL = 10 * time.Second
	// sharedTimeout bounds each call to the shared tier: a slow store
	// costs a request at most this much before it is skipped.
	sharedTimeout = 250 * time.Millisecond
	// sharedBackoff is how long the shared tier is skipped after it
	// failed (requests go on with this process's cache and the
	// upstream), doubling while it keeps failing, up to
	// sharedMaxBackoff. Then one request tries it again (the others
	// still skip it); its success brings the tier back for all.
	sharedBackoff    = time.Second
	sharedMaxBackoff = 30 * time.Second
)

// MaxSharedCacheValue bounds a value the cache writes to its shared tier
// (a page of a thousand transactions is about 2 MiB): a larger answer
// stays in this process, rather than fail a write the store refuses
// (Redis's proto-max-bulk-len, 8 MiB in deploy/k8s) and make the tier
// skipped.
const MaxSharedCacheValue = 4 << 20

// CacheConfig configures a Cache.
type CacheConfig struct {
	// MaxBytes bounds the answers kept in this process: each counts twice
	// its body's length (decoded answers measure 1.3 to 1.6 times their
	// JSON) plus its key. 0 or less disables the cache.
	MaxBytes int64
	// MaxAge is the oldest a data-node answer is served (CacheRecent),
	// counted from when it was requested; 0 keeps none.
	MaxAge time.Duration
	// HeadTTL is how long an answer reaching the explorer's head
	// (CacheUntilNextBlock) is served when nothing confirms the head
	// since it was fetched (no live feed polling); 0 means
	// DefaultCacheHeadTTL.
	HeadTTL time.Duration
	// Shared, if set, is a second tier every replica shares.
	Shared SharedCache
	// OnEvent, if set, observes the cache (metrics). It must be fast and
	// safe for concurrent use.
	OnEvent func(CacheEvent)
}

// SharedCache is the tier of the cache that replicas share
// (redisstate.UpstreamCache). Values are opaque to it. It is best-effort:
// an error makes the cache skip the tier for a moment, never fails a
// request; implementations count and log their own failures. One that is
// also a SharedFlights coalesces identical requests across the replicas
// (fleet.go).
type SharedCache interface {
	// Get returns the values of keys, nil where a key holds none.
	Get(ctx context.Context, keys []string) ([][]byte, error)
	// Set stores value under key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// CacheOutcome is what a CacheEvent reports.
type CacheOutcome uint8

const (
	// CacheHit: a request served from this process's cache.
	CacheHit CacheOutcome = iota
	// CacheSharedHit: a request served from the shared tier.
	CacheSharedHit
	// CacheFleetHit: a request served by another replica's fetch: it
	// found that replica fetching the same answer, waited for it instead
	// of asking the upstream, and read its answer from the shared tier
	// (fleet.go).
	CacheFleetHit
	// CacheMiss: a request that went to the upstream (its Kind is the
	// answer's, CacheNone for an error).
	CacheMiss
	// CacheInvalidated: an entry dropped because the explorer's head moved
	// past the block it was true at.
	CacheInvalidated
	// CacheEvicted: an entry dropped to keep the cache within MaxBytes.
	CacheEvicted
	// CacheKept: an explorer list kept across a block none of whose
	// transactions it lists (Client.ObserveTransactions).
	CacheKept
)

// CacheEvent is one observation of the cache, for metrics.
type CacheEvent struct {
	Endpoint Endpoint
	Kind     CacheKind
	Outcome  CacheOutcome
}

// CacheStats are the cache's figures, read at each scrape.
type CacheStats struct {
	// Bytes and Entries are what this process holds (Bytes as counted
	// against MaxBytes).
	Bytes   int64
	Entries int
}

// Cache is the cache of upstream answers a Client is configured with. It
// is safe for concurrent use. A nil *Cache caches nothing.
type Cache struct {
	maxBytes int64
	maxAge   time.Duration
	headTTL  time.Duration
	shared   SharedCache
	onEvent  func(CacheEvent)
	// sharedDown is 0 while the shared tier works; after a failure, when
	// it may be tried again (Unix nanoseconds). sharedFails counts the
	// failures in a row.
	sharedDown  atomic.Int64
	sharedFails atomic.Int32

	mu      sync.Mutex
	entries map[string]*cacheEntry
	lru     list.List // front: most recently used
	bytes   int64
	// atHead holds the CacheUntilNextBlock entries, swept when the head
	// moves.
	atHead map[*cacheEntry]struct{}
	// fed is the newest position of the live feed's batches
	// (transactions); zero before the first.
	fed TxCursor
}

// NewCache returns a cache, or nil (no cache) when cfg.MaxBytes is not
// positive.
func NewCache(cfg CacheConfig) *Cache {
	if cfg.MaxBytes <= 0 {
		return nil
	}
	if cfg.HeadTTL <= 0 {
		cfg.HeadTTL = DefaultCacheHeadTTL
	}
	return &Cache{
		maxBytes: cfg.MaxBytes,
		maxAge:   max(cfg.MaxAge, 0),
		headTTL:  cfg.HeadTTL,
		shared:   cfg.Shared,
		onEvent:  cfg.OnEvent,
		entries:  map[string]*cacheEntry{},
		atHead:   map[*cacheEntry]struct{}{},
	}
}

// Stats returns the cache's figures; zero for a nil cache.
func (c *Cache) Stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Bytes: c.bytes, Entries: len(c.entries)}
}

type noCacheKey struct{}

// WithoutCache returns ctx whose upstream requests never read the cache:
// they always ask the service (their answers are still stored). The live
// feed's poller uses it: its requests are how new blocks are seen.
func WithoutCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, noCacheKey{}, true)
}

func cacheBypassed(ctx context.Context) bool {
	v, _ := ctx.Value(noCacheKey{}).(bool)
	return v
}

// cacheEntry is one answer: decoded (shared by every caller, read-only, as
// a coalesced answer is), with what the cache needs to judge it.
type cacheEntry struct {
	key      string
	endpoint Endpoint
	kind     CacheKind
	body     listBody
	fresh    Freshness
	// requested is when the request that fetched it was sent: the answer
	// is true at least from then (ages count from it); fetched is when it
	// arrived (Answer.FetchedAt).
	requested, fetched time.Time
	// head is, for CacheUntilNextBlock, the head block it is true at;
	// upTo the newest position it is known true at: the end of that block
	// for an answer fetched (the explorer shows a block whole), the last
	// transaction of the live feed's batch it was kept across
	// (transactions). dated is when it was last known true (then).
	head  uint64
	upTo  TxCursor
	dated time.Time
	// filter is, for a filtered explorer list, what it lists: a new
	// transaction it does not match leaves the answer as it is. Nil for
	// the others (an unfiltered list changes with every transaction).
	filter *TxFilter
	size   int64
	elem   *list.Element
}

// headView is what the client knows of the explorer's head when a
// cached answer is judged (heads.go).
type headView struct {
	block     uint64
	at        TxCursor  // the newest position known on the chain
	confirmed time.Time // zero: the head was not confirmed since block became known
}

// valid reports whether e may be served now.
func (c *Cache) valid(e *cacheEntry, h headView, now time.Time) bool {
	switch e.kind {
	case CacheImmutable:
		return true
	case CacheRecent:
		return now.Sub(e.requested) < c.maxAge
	case CacheUntilNextBlock:
		if e.head != h.block || e.upTo.before(h.at) {
			return false
		}
		from := e.requested
		if e.dated.After(from) {
			from = e.dated
		}
		if h.confirmed.After(from) {
			from = h.confirmed
		}
		return now.Sub(from) < c.headTTL
	}
	return false
}

// keeps reports whether answers of kind are stored at all.
func (c *Cache) keeps(kind CacheKind) bool {
	switch kind {
	case CacheImmutable, CacheUntilNextBlock:
		return true
	case CacheRecent:
		return c.maxAge > 0
	}
	return false
}

// lookup returns key's entry when it may be served, marking it recently
// used; an entry that may not is removed.
func (c *Cache) lookup(key string, h headView, now time.Time) (*cacheEntry, bool) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if !ok {
		c.mu.Unlock()
		return nil, false
	}
	if c.valid(e, h, now) {
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		return e, true
	}
	if e.kind == CacheUntilNextBlock && e.head > h.block {
		// Kept across a block the head has not reached here yet
		// (transactions, then the head): not served, not dropped.
		c.mu.Unlock()
		return nil, false
	}
	invalidated := e.kind == CacheUntilNextBlock && e.head < h.block
	c.removeLocked(e)
	c.mu.Unlock()
	if invalidated {
		c.event(e.endpoint, e.kind, CacheInvalidated)
	}
	return nil, false
}

// entrySize is what an answer counts against MaxBytes: twice its body's
// JSON (what its decoded form measures, with room), its key, and the
// entry's own bookkeeping.
func entrySize(key string, bodyLen int) int64 {
	return 2*int64(bodyLen) + int64(len(key)) + 256
}

// store keeps e (replacing key's entry), unless it is no longer true at
// the head h or is larger than the whole cache; the least recently used
// entries go to make room.
func (c *Cache) store(e *cacheEntry, h headView) {
	if !c.keeps(e.kind) || e.size > c.maxBytes || (e.kind == CacheUntilNextBlock && e.head < h.block) {
		return
	}
	if e.kind == CacheUntilNextBlock && e.upTo.Block != e.head {
		e.upTo = wholeBlock(e.head)
	}
	var evicted []*cacheEntry
	c.mu.Lock()
	if old, ok := c.entries[e.key]; ok {
		c.removeLocked(old)
	}
	e.elem = c.lru.PushFront(e)
	c.entries[e.key] = e
	c.bytes += e.size
	if e.kind == CacheUntilNextBlock {
		c.atHead[e] = struct{}{}
	}
	for c.bytes > c.maxBytes {
		oldest := c.lru.Back().Value.(*cacheEntry)
		c.removeLocked(oldest)
		evicted = append(evicted, oldest)
	}
	c.mu.Unlock()
	for _, o := range evicted {
		c.event(o.endpoint, o.kind, CacheEvicted)
	}
}

// headMoved drops the entries true only at heads before block, but the
// explorer lists that reach the live feed's position (fed): the feed's
// next batch starts there and says whether they are still true
// (transactions); until then they are not served (valid).
func (c *Cache) headMoved(block uint64) {
	if c == nil {
		return
	}
	var dropped []*cacheEntry
	c.mu.Lock()
	for e := range c.atHead {
		if e.head < block && !c.awaitsBatchLocked(e) {
			c.removeLocked(e)
			dropped = append(dropped, e)
		}
	}
	c.mu.Unlock()
	for _, e := range dropped {
		c.event(e.endpoint, e.kind, CacheInvalidated)
	}
}

// wholeBlock is the position past every transaction of block: what an
// answer of the explorer that reached block is true up to (the explorer
// shows a block whole).
func wholeBlock(block uint64) TxCursor { return TxCursor{Block: block, Index: math.MaxUint32} }

// awaitsBatchLocked reports whether e, behind the head, may yet be kept
// by the live feed's next batch: a filtered explorer list true up to the
// feed's position or past it (any, before the feed's first batch, which
// drops those it does not reach back to). c.mu is held.
func (c *Cache) awaitsBatchLocked(e *cacheEntry) bool {
	return e.filter != nil && !e.upTo.before(c.fed)
}

// transactions learns the chain's transactions after prev, all of them
// up to the last of txs (in chain order, none missing: a live feed's
// batch). An answer until the next block that is known true at prev or
// later, an explorer list none of whose transactions past that it
// matches, is still true at the batch's last transaction: it is kept and
// re-dated there. Any other answer true only before that is dropped: the
// unfiltered newest page, a list a new transaction matches, one the
// batch does not reach back to (known true only before prev).
func (c *Cache) transactions(prev TxCursor, txs []Transaction, now time.Time) {
	if c == nil || len(txs) == 0 {
		return
	}
	newest := txs[len(txs)-1].Position()
	var dropped []*cacheEntry
	kept := 0
	c.mu.Lock()
	if c.fed.before(newest) {
		c.fed = newest
	}
	for e := range c.atHead {
		if !e.upTo.before(newest) {
			continue // true past the batch already
		}
		if e.filter == nil || e.upTo.before(prev) || matchesAfter(e.filter, e.upTo, txs) {
			c.removeLocked(e)
			dropped = append(dropped, e)
			continue
		}
		e.upTo, e.head, e.dated = newest, newest.Block, now
		kept++
	}
	c.mu.Unlock()
	for _, e := range dropped {
		c.event(e.endpoint, e.kind, CacheInvalidated)
	}
	for range kept {
		c.event(EndpointTransactions, CacheUntilNextBlock, CacheKept)
	}
}

// matchesAfter reports whether f matches a transaction of txs past pos.
func matchesAfter(f *TxFilter, pos TxCursor, txs []Transaction) bool {
	for i := range txs {
		if pos.before(txs[i].Position()) && f.Match(&txs[i]) {
			return true
		}
	}
	return false
}

func (c *Cache) removeLocked(e *cacheEntry) {
	if c.entries[e.key] != e {
		return
	}
	delete(c.entries, e.key)
	delete(c.atHead, e)
	c.lru.Remove(e.elem)
	c.bytes -= e.size
}

func (c *Cache) event(endpoint Endpoint, kind CacheKind, outcome CacheOutcome) {
	if c != nil && c.onEvent != nil {
		c.onEvent(CacheEvent{Endpoint: endpoint, Kind: kind, Outcome: outcome})
	}
}

// The shared tier. An entry's key is the target's SHA-256 (targets can be
// long); an answer reaching the explorer's head is keyed by the head block
// too, so that replicas that know of a newer block never read it:
//
//	upstream:<hash>          immutable and recent answers
//	upstream:h<block>:<hash> answers true until the block after <block>
//
// Explorer lookups read both in one round trip. The value is a fixed
// header (sharedEntryHeader) and the body the service sent.

// sharedKeys are the shared tier's keys of target: its own, and (for the
// explorer, whose answers may reach the head) the one at head block.
func sharedKeys(target string, service Service, head uint64) (base, atHead string) {
	sum := sha256.Sum256([]byte(target))
	hash := base64.RawURLEncoding.EncodeToString(sum[:])
	base = "upstream:" + hash
	if service == ServiceExplorer {
		atHead = "upstream:h" + strconv.FormatUint(head, 10) + ":" + hash
	}
	return base, atHead
}

// sharedEntryMagic starts every shared value: its format's version.
const sharedEntryMagic = "guc1"

// sharedEntryHeader is the length of a shared value's header: the magic,
// the kind, the head block, the request and arrival times, the block
// height and time (times in Unix nanoseconds, 0 for none).
const sharedEntryHeader = len(sharedEntryMagic) + 1 + 8*5

func encodeShared(e *cacheEntry, body []byte) []byte {
	out := make([]byte, 0, sharedEntryHeader+len(body))
	out = append(out, sharedEntryMagic...)
	out = append(out, byte(e.kind))
	out = binary.BigEndian.AppendUint64(out, e.head)
	out = binary.BigEndian.AppendUint64(out, uint64(unixNano(e.requested)))
	out = binary.BigEndian.AppendUint64(out, uint64(unixNano(e.fetched)))
	out = binary.BigEndian.AppendUint64(out, e.fresh.BlockHeight)
	out = binary.BigEndian.AppendUint64(out, uint64(unixNano(e.fresh.BlockTime)))
	return append(out, body...)
}

var errSharedEntry = errors.New("not an upstream cache entry of this version")

// decodeShared reads a shared value's header into e and returns the body.
func decodeShared(v []byte, e *cacheEntry) ([]byte, error) {
	if len(v) < sharedEntryHeader || string(v[:len(sharedEntryMagic)]) != sharedEntryMagic {
		return nil, errSharedEntry
	}
	p := v[len(sharedEntryMagic):]
	e.kind = CacheKind(p[0])
	if e.kind != CacheRecent && e.kind != CacheUntilNextBlock && e.kind != CacheImmutable {
		return nil, errSharedEntry
	}
	p = p[1:]
	next := func() uint64 {
		x := binary.BigEndian.Uint64(p)
		p = p[8:]
		return x
	}
	e.head = next()
	if e.kind == CacheUntilNextBlock {
		e.upTo = wholeBlock(e.head)
	}
	e.requested = fromUnixNano(int64(next()))
	e.fetched = fromUnixNano(int64(next()))
	e.fresh.BlockHeight = next()
	if t := fromUnixNano(int64(next())); !t.IsZero() {
		e.fresh.BlockTime = t.UTC()
	}
	return p, nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// sharedTTL is how long the shared tier keeps e: an immutable answer
// long, an answer at the head briefly (it is keyed by its block), a
// recent one for what is left of MaxAge.
func (c *Cache) sharedTTL(e *cacheEntry, now time.Time) time.Duration {
	switch e.kind {
	case CacheImmutable:
		return sharedImmutableTTL
	case CacheUntilNextBlock:
		return sharedUntilNextBlockTTL
	case CacheRecent:
		return c.maxAge - now.Sub(e.requested)
	}
	return 0
}

// sharedUp reports whether the shared tier is configured and may be
// used: it works, or it failed and its backoff has passed, and this
// caller is the one that tries it again.
func (c *Cache) sharedUp(now time.Time) bool {
	if c.shared == nil {
		return false
	}
	down := c.sharedDown.Load()
	switch {
	case down == 0:
		return true
	case now.UnixNano() < down:
		return false
	}
	// The others skip the tier while this caller tries it.
	return c.sharedDown.CompareAndSwap(down, now.Add(sharedTimeout).UnixNano())
}

// sharedWorked records a call of the shared tier that succeeded.
func (c *Cache) sharedWorked() {
	if c.sharedDown.Load() != 0 {
		c.sharedDown.Store(0)
		c.sharedFails.Store(0)
	}
}

// sharedFailed skips the shared tier for its backoff: sharedBackoff,
// doubled for each failure in a row, at most sharedMaxBackoff. Calls
// failing together (the tier just went down) count once.
func (c *Cache) sharedFailed() {
	now := time.Now()
	if down := c.sharedDown.Load(); down > now.Add(sharedTimeout).UnixNano() {
		return // another failure started a backoff
	}
	n := c.sharedFails.Add(1)
	backoff := sharedMaxBackoff
	if n <= 5 {
		backoff = min(sharedBackoff<<(n-1), sharedMaxBackoff)
	}
	c.sharedDown.Store(now.Add(backoff).UnixNano())
}

// sharedGet reads target's entries from the shared tier: the values at
// its keys, in the order of sharedKeys (nil where none).
func (c *Cache) sharedGet(ctx context.Context, target string, service Service, head uint64) (vals [][]byte, base, atHead string) {
	base, atHead = sharedKeys(target, service, head)
	if !c.sharedUp(time.Now()) {
		return nil, base, atHead
	}
	keys := []string{base}
	if atHead != "" {
		keys = append(keys, atHead)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	defer cancel()
	vals, err := c.shared.Get(ctx, keys)
	if err != nil || len(vals) != len(keys) {
		c.sharedFailed()
		return nil, base, atHead
	}
	c.sharedWorked()
	return vals, base, atHead
}

// sharedSet writes e (whose body the service sent as raw) to the shared
// tier, under its kind's key.
func (c *Cache) sharedSet(ctx context.Context, e *cacheEntry, raw []byte, service Service, target string) {
	now := time.Now()
	if !c.sharedUp(now) || !c.keeps(e.kind) || len(raw)+sharedEntryHeader > MaxSharedCacheValue {
		return
	}
	ttl := c.sharedTTL(e, now)
	if ttl < time.Millisecond {
		return
	}
	base, atHead := sharedKeys(target, service, e.head)
	key := base
	if e.kind == CacheUntilNextBlock {
		key = atHead
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	defer cancel()
	if err := c.shared.Set(ctx, key, encodeShared(e, raw), ttl); err != nil {
		c.sharedFailed()
		return
	}
	c.sharedWorked()
}
