package upstream

import (
	"context"
	"time"
)

// CacheKind says why an upstream answer may be served again, and so how
// long a copy of it (in the gateway's cache, a browser's or a CDN's) stays
// true. The chain has instant finality: what a committed block holds never
// changes, and the data node's state changes only as blocks are processed.
// Kinds are ordered: an answer built from several parts is as cacheable as
// its least cacheable part (the smallest kind).
type CacheKind uint8

const (
	// CacheNone: not to be served again (errors, not-found answers, or an
	// answer whose kind is unknown).
	CacheNone CacheKind = iota
	// CacheRecent: a data-node answer, true at the block it names
	// (X-Block-Height); served again for at most a block or so.
	CacheRecent
	// CacheUntilNextBlock: the explorer's newest transactions (a page
	// reaching the chain head): true until the next block arrives.
	CacheUntilNextBlock
	// CacheImmutable: committed history (a page of transactions below the
	// head, a committed block's transactions, a transaction found by
	// hash): true for ever.
	CacheImmutable
)

func (k CacheKind) String() string {
	switch k {
	case CacheRecent:
		return "recent"
	case CacheUntilNextBlock:
		return "until_next_block"
	case CacheImmutable:
		return "immutable"
	}
	return "none"
}

// Answer describes one upstream answer the client returned to a caller:
// from the service, from a call in flight it joined, or from a cache.
type Answer struct {
	Service  Service
	Endpoint Endpoint
	// Freshness is the data node's block height and time when it
	// answered (zero for the explorer, which reports none).
	Freshness Freshness
	// Kind is why the answer may be served again.
	Kind CacheKind
	// FetchedAt is when the answer left the service (a cached answer keeps
	// its own): its age is time.Since(FetchedAt).
	FetchedAt time.Time
	// Cached reports an answer served from the cache.
	Cached bool
}

type answersKey struct{}

// WithAnswers returns ctx whose upstream calls report every answer they
// return to record (called on the caller's goroutine, possibly from
// several at once: record must be safe for concurrent use). A request
// uses it to learn what its response is made of (its freshness, how long
// it may be cached).
func WithAnswers(ctx context.Context, record func(Answer)) context.Context {
	return context.WithValue(ctx, answersKey{}, record)
}

// RecordAnswer reports a to ctx's recorder, if any. The client calls it
// for every answer it returns; other implementations of the upstream
// (tests' fakes, caches in front of the client) may too.
func RecordAnswer(ctx context.Context, a Answer) {
	if record, ok := ctx.Value(answersKey{}).(func(Answer)); ok && record != nil {
		record(a)
	}
}
