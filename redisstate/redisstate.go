// Package redisstate keeps the state that replicas of the gateway share in
// Redis when REDIS_URL is set: automatic persisted queries, the asset
// cache, the data node's rate budget and the shared tier of the upstream
// client's cache (UpstreamCache, which also coalesces identical upstream
// requests across the replicas), and it elects the one replica that
// polls the live transaction feed (LiveCoordinator). Without Redis each
// replica keeps its own (package graph's in-memory caches, upstream's local
// budget, a poller per process).
//
// Shared state is best-effort where it can be: a cache that cannot reach
// Redis reports a miss and the request goes on. The rate budget cannot
// simply go on: it falls back to a local budget while Redis fails.
package redisstate

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configures the shared state.
type Options struct {
	// URL is the Redis URL: redis://[user:password@]host:port/db, or
	// rediss:// for TLS.
	URL string
	// Prefix starts every key, so that gateways of different networks
	// can share one Redis without mixing their data. Default "gateway:".
	Prefix string
	// Logger receives Redis failures (at most one line per use every
	// ten seconds). Default slog.Default().
	Logger *slog.Logger
	// OnError, if set, is called on every Redis failure with what the
	// call was for ("apq", "asset_cache", "budget", "live",
	// "upstream_cache"), for metrics.
	OnError func(use string, err error)
}

// DefaultPrefix starts every key unless Options.Prefix says otherwise.
const DefaultPrefix = "gateway:"

// Store is a connection to Redis and the key prefix of this gateway's
// shared state. It is safe for concurrent use.
type Store struct {
	client *redis.Client
	prefix string
	errors *errorReporter

	// background ends with Close, which waits for the goroutines
	// started by goBackground (the flights' hub: flights.go).
	background context.Context
	stop       context.CancelFunc
	bgMu       sync.Mutex
	closed     bool
	bg         sync.WaitGroup
	hubOnce    sync.Once
	hub        atomic.Pointer[flightHub]
}

// Open connects to Redis and checks that it answers. The connection
// honours callers' deadlines; each command is bounded by a short timeout
// of its own, so that a slow Redis cannot stall requests for long.
func Open(ctx context.Context, opts Options) (*Store, error) {
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	ro.DialTimeout = 2 * time.Second
	ro.ReadTimeout = time.Second
	ro.WriteTimeout = time.Second
	ro.ContextTimeoutEnabled = true
	// Shared state is tuned for a small, fast store: short pool waits.
	ro.PoolTimeout = 2 * time.Second
	client := redis.NewClient(ro)
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("redis at %s: %w", ro.Addr, err)
	}
	prefix := opts.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	background, stop := context.WithCancel(context.Background())
	return &Store{client: client, prefix: prefix, errors: &errorReporter{logger: logger, onError: opts.OnError, last: map[string]time.Time{}},
		background: background, stop: stop}, nil
}

// Close stops what the store runs in the background and closes the
// connections.
func (s *Store) Close() error {
	s.bgMu.Lock()
	s.closed = true
	s.bgMu.Unlock()
	s.stop()
	s.bg.Wait()
	return s.client.Close()
}

// goBackground runs f on a goroutine of its own until Close, which ends
// f's context and waits for it; it reports false, running nothing, once
// the store is closed.
func (s *Store) goBackground(f func(ctx context.Context)) bool {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.closed {
		return false
	}
	s.bg.Go(func() { f(s.background) })
	return true
}

// key is the full key of name.
func (s *Store) key(parts ...string) string {
	k := s.prefix
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += p
	}
	return k
}

// errorReporter counts Redis failures and logs them, at most one line per
// use every logEvery, so that an outage does not flood the log.
type errorReporter struct {
	logger  *slog.Logger
	onError func(use string, err error)

	mu   sync.Mutex
	last map[string]time.Time
}

const logEvery = 10 * time.Second

func (r *errorReporter) report(ctx context.Context, use string, err error) {
	if r.onError != nil {
		r.onError(use, err)
	}
	r.mu.Lock()
	now := time.Now()
	quiet := now.Sub(r.last[use]) < logEvery
	if !quiet {
		r.last[use] = now
	}
	r.mu.Unlock()
	if !quiet {
		r.logger.WarnContext(ctx, "redis failed; going on without the shared state", "use", use, "error", err.Error())
	}
}
