package transport

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/upstream"
)

// The per-client bound on open streams (SubscriptionConfig.
// MaxConnectionsPerClient): one client (the client key the gateway's
// middleware, upstream.WithClientKey, puts in each request's context,
// upstream.ClientFrom: its address, TRUSTED_PROXIES-aware; the rate
// budget's fair share uses the same key) holds at most that many WebSocket
// connections, SSE streams (graphql-sse's distinct connections mode, and
// single connection mode's event streams) and multipart/mixed responses
// at once. Past it the request is refused before anything starts (before
// the WebSocket upgrade is accepted): 429 with Retry-After and a GraphQL
// error, RATE_LIMITED, naming the limit. Each stream is counted for as long as
// its request is served, which is as long as the stream lasts (a
// WebSocket connection is served by its upgrade request's goroutine). A
// request without a client key (none of the gateway's: in-process
// callers, tests) is not counted.
//
// The subscriptions of a client are bounded apart, on every transport
// (live.Config.MaxSubscriptionsPerClient).

// clientStreams counts each client's open streams.
type clientStreams struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

// limitClientStreams applies MaxConnectionsPerClient (max) in front of
// next.
func limitClientStreams(max int, next http.Handler) http.Handler {
	c := &clientStreams{max: max, open: map[string]int{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := upstream.ClientFrom(r.Context())
		if key == "" || !isLongStream(r) {
			next.ServeHTTP(w, r)
			return
		}
		if !c.acquire(key) {
			refuseTooManyStreams(w, r, c.max)
			return
		}
		defer c.release(key)
		next.ServeHTTP(w, r)
	})
}

func (c *clientStreams) acquire(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[key] >= c.max {
		return false
	}
	c.open[key]++
	return true
}

func (c *clientStreams) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[key]--; c.open[key] <= 0 {
		delete(c.open, key)
	}
}

// isLongStream reports a request served as a stream for as long as the
// client keeps it: a WebSocket upgrade, an SSE or multipart/mixed
// response, a single connection mode's event stream. A single connection
// mode's reservations (PUT), operations and stops are not: they are
// answered at once.
func isLongStream(r *http.Request) bool {
	switch {
	case isWebSocketUpgrade(r):
		return true
	case r.Header.Get("Upgrade") != "" || (r.Method != http.MethodGet && r.Method != http.MethodPost):
		return false
	case eventStreamToken(r) != "":
		return r.Method == http.MethodGet && preferredStream(r.Header.Get("Accept")) == streamSSE
	}
	return preferredStream(r.Header.Get("Accept")) != streamNone
}

// refuseTooManyStreams answers a stream past the client's limit.
func refuseTooManyStreams(w http.ResponseWriter, r *http.Request, max int) {
	msg := fmt.Sprintf("this client (one address) has %d streams open (WebSocket connections, SSE and multipart/mixed streams), "+
		"the most one client may hold at once (the per-client connection limit); close one, or carry several subscriptions on one connection", max)
	setContentType(w.Header(), negotiate(r.Header.Get("Accept")))
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusTooManyRequests)
	body, _ := json.Marshal(map[string]any{"errors": gqlerror.List{{
		Message:    msg,
		Extensions: map[string]any{"code": graph.CodeRateLimited},
	}}})
	_, _ = w.Write(body)
}
