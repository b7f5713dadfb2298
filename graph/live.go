package graph

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/graph/model"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/upstream"
)

// Subscription.transactions (docs/architecture.md, The live feed). The feed
// (package live) polls the explorer once for the process and hands every
// subscription its transactions as edges, each built once (LiveFeed); the
// resolver validates the arguments as Query.transactions does and returns
// the subscription's channel. gqlgen executes each event like a query of
// its own: subscriptionResponses gives it a fresh request state (loaders,
// memo, freshness), so nested references resolve through the loaders and
// the shared asset cache, and nothing accumulates over a long
// subscription. When a subscription ends with an error, the client gets
// a last result carrying the error, then the end of the operation.

// LiveFeed is the process's feed of new transactions, as the edges
// Subscription.transactions delivers. The executor and the feed must sign
// cursors with the same keys (NewLiveFeed's, which NewExecutor adopts).
type LiveFeed struct {
	feed *live.Feed[*model.TransactionEdge]
	keys *CursorKeys
	cfg  live.Config

	// ops counts the subscription operations under way; Shutdown waits for
	// them to end (their completion written) before closing connections.
	ops opCounter
	// conns is the parent of every WebSocket connection's context:
	// cancelling it closes them with a normal close frame.
	conns     context.Context
	closeConn context.CancelFunc
	closeOnce sync.Once

	// newest is the newest block of the transactions the feed delivered
	// (newestBlock).
	newest atomic.Uint64

	// subscribed, if set (tests), is called after each Subscribe that
	// succeeded: the subscription then starts at the head it read.
	subscribed func()
}

// Defaults of live.Config repeated for the messages that name a limit
// (package live applies them).
const (
	liveDefaultBuffer           = 256
	liveDefaultMaxSubscriptions = 10_000
)

// NewLiveFeed makes the feed. keys sign the events' cursors and verify the
// `after` argument: pass the executor's (ExecutorConfig.CursorKeys); nil
// takes a random key, which NewExecutor then uses too.
func NewLiveFeed(cfg live.Config, keys *CursorKeys) *LiveFeed {
	if keys == nil {
		keys = RandomCursorKeys()
	}
	conns, cancel := context.WithCancel(context.Background())
	lf := &LiveFeed{keys: keys, cfg: cfg, conns: conns, closeConn: cancel}
	lf.ops.init()
	lf.feed = live.New(cfg, func(tx *upstream.Transaction) *model.TransactionEdge {
		c := txCursorOf(tx)
		for old := lf.newest.Load(); c.B > old && !lf.newest.CompareAndSwap(old, c.B); old = lf.newest.Load() {
		}
		return &model.TransactionEdge{Cursor: c.encode(keys), Node: tx}
	})
	return lf
}

// newestBlock is the newest block of the transactions the feed delivered:
// the live events' shared upstream answers last as long as it
// (sharedEvents).
func (lf *LiveFeed) newestBlock() uint64 { return lf.newest.Load() }

// Stats returns the feed's figures (for metrics).
func (lf *LiveFeed) Stats() live.Stats { return lf.feed.Stats() }

// DrainTimeout bounds Close's wait for the operations to write their
// completion.
const DrainTimeout = 5 * time.Second

// Close drains the feed (Shutdown) within DrainTimeout.
func (lf *LiveFeed) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), DrainTimeout)
	defer cancel()
	_ = lf.Shutdown(ctx)
}

// Shutdown ends every subscription cleanly: each client receives the
// completion of its operation (`complete` over WebSocket, `event:
// complete` over SSE), then, once every subscription operation has
// finished writing or ctx ends, every WebSocket connection is closed with
// a normal close frame (1000). Later subscriptions fail with
// UPSTREAM_UNAVAILABLE. The error is ctx's when it ended first.
// Idempotent.
func (lf *LiveFeed) Shutdown(ctx context.Context) error {
	var err error
	lf.closeOnce.Do(func() {
		lf.feed.Close()
		err = lf.ops.wait(ctx)
		lf.closeConn()
	})
	return err
}

// opCounter counts operations; wait returns when none is left.
type opCounter struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed while n is 0
}

func (c *opCounter) init() {
	c.zero = make(chan struct{})
	close(c.zero)
}

// add counts an operation until ctx ends.
func (c *opCounter) add(ctx context.Context) {
	c.mu.Lock()
	if c.n == 0 {
		c.zero = make(chan struct{})
	}
	c.n++
	c.mu.Unlock()
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		if c.n--; c.n == 0 {
			close(c.zero)
		}
		c.mu.Unlock()
	})
}

func (c *opCounter) wait(ctx context.Context) error {
	c.mu.Lock()
	zero := c.zero
	c.mu.Unlock()
	select {
	case <-zero:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// subscribeTransactions serves Subscription.transactions.
func (r *Resolver) subscribeTransactions(ctx context.Context, f transactionFilter, after *string) (<-chan *model.TransactionEdge, error) {
	filters, err := f.params()
	if err != nil {
		return nil, err
	}
	opts := live.SubscribeOptions{Filter: filters, Calls: eventCallsOf(ctx)}
	if after != nil && *after != "" {
		var c txCursor
		if err := decodeCursor(r.Cursors, "after", *after, listTransactions, &c); err != nil {
			return nil, err
		}
		opts.After = &upstream.TxCursor{Block: c.B, Index: c.I}
	}
	if r.Live == nil {
		return nil, &Error{Code: CodeUpstreamUnavailable, Message: "live feed disabled: this gateway serves no subscriptions; poll Query.transactions instead"}
	}
	if conn := wsConnFor(ctx); conn != nil {
		if !conn.acquire(ctx) {
			return nil, &Error{Code: CodeRateLimited, Message: fmt.Sprintf(
				"this connection has %d subscriptions open, the most a connection may hold; complete one, or open another connection", conn.max)}
		}
	}
	// Counted from before Subscribe, so that a drain that starts meanwhile
	// waits for this operation's completion too.
	r.Live.ops.add(ctx)
	sub, err := r.Live.feed.Subscribe(ctx, opts)
	if err != nil {
		return nil, r.Live.subscribeError(err)
	}
	if r.Live.subscribed != nil {
		r.Live.subscribed()
	}
	if op := liveOperationFor(ctx); op != nil {
		op.set(sub)
	}
	return sub.C(), nil
}

// subscribeError is the client's error for a failed Subscribe.
func (lf *LiveFeed) subscribeError(err error) error {
	var backlog *live.BacklogError
	var perClient *live.ClientLimitError
	var calls *live.ClientCallsError
	switch {
	case errors.As(err, &backlog):
		return &Error{Code: CodeBadUserInput, Err: err, Message: fmt.Sprintf(
			"after: more than %d matching transactions are newer than this cursor, the most a subscription replays; "+
				"read them with Query.transactions (its first page is the newest; page on with `after` down to your cursor), "+
				"then subscribe with `after` set to the newest cursor", backlog.Max)}
	case errors.As(err, &perClient):
		return &Error{Code: CodeRateLimited, Err: err, Message: fmt.Sprintf(
			"this client (one address) holds %d subscriptions, the most one client may hold open at once (the per-client subscription limit); "+
				"complete one before subscribing again", perClient.Max)}
	case errors.As(err, &calls):
		return &Error{Code: CodeRateLimited, Err: err, Message: fmt.Sprintf(
			"this client's open subscriptions make %d upstream requests for each transaction, and this one would add %d: "+
				"the most one client's subscriptions may make is %d (the per-client limit of requests per event); "+
				"complete one, or select fewer nested lists", calls.Held, calls.Calls, calls.Max)}
	case errors.Is(err, live.ErrTooManySubscriptions):
		n := lf.cfg.MaxSubscriptions
		if n <= 0 {
			n = liveDefaultMaxSubscriptions
		}
		return &Error{Code: CodeRateLimited, Err: err, Message: fmt.Sprintf(
			"the gateway holds %d subscriptions, the most it serves at once; retry later", n)}
	case errors.Is(err, live.ErrClosed):
		return &Error{Code: CodeUpstreamUnavailable, Err: err, Message: "the live feed is closed: the gateway is shutting down; reconnect and subscribe again"}
	}
	return fmt.Errorf("subscribe to transactions: %w", err)
}

// endError is the client's error for a subscription that ended with err
// (Subscription.Err).
func (lf *LiveFeed) endError(err error) error {
	const resume = "resubscribe with `after` set to the cursor of the last event received: nothing is lost"
	switch {
	case errors.Is(err, live.ErrTooSlow):
		n := lf.cfg.Buffer
		if n <= 0 {
			n = liveDefaultBuffer
		}
		return &Error{Code: CodeRateLimited, Err: err, Message: fmt.Sprintf(
			"the subscription fell %d transactions behind (the client read too slowly) and was ended; %s", n, resume)}
	case errors.Is(err, live.ErrGap):
		return &Error{Code: CodeUpstreamUnavailable, Err: err, Message: "the gateway missed transactions it could not fetch again, and ended the subscription; " + resume}
	}
	return &Error{Code: CodeUpstreamUnavailable, Err: err, Message: "the live feed ended the subscription; " + resume}
}

// liveOperation is one subscription operation: its subscription, to
// report why it ended.
type liveOperation struct {
	mu       sync.Mutex
	sub      *live.Subscription[*model.TransactionEdge]
	reported bool
}

func (op *liveOperation) set(sub *live.Subscription[*model.TransactionEdge]) {
	op.mu.Lock()
	op.sub = sub
	op.mu.Unlock()
}

// takeError returns the error the subscription ended with, once; nil
// after a clean end or once reported.
func (op *liveOperation) takeError() error {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.reported || op.sub == nil {
		return nil
	}
	err := op.sub.Err()
	op.reported = err != nil
	return err
}

func liveOperationFor(ctx context.Context) *liveOperation { return valueOf[liveOperation](ctx) }

// streamingOperations are the executor's interceptors of operations on the
// streaming transports and of subscriptions:
//
//   - an operation on a WebSocket connection gets a request state of its
//     own (the connection's context carries the upgrade request's);
//   - a query over WebSocket or SSE gets the request deadline, which the
//     handler did not set on the stream;
//   - a subscription operation carries a liveOperation, and each of its
//     events is executed with a fresh request state (responses), whose
//     upstream requests are bounded and shared among the subscribers
//     (liveshare.go).
type streamingOperations struct {
	newState func() *requestState
	// newEventState is a subscription event's state: its requests bounded
	// and shared with the other subscribers' (liveshare.go).
	newEventState func() *requestState
	present       graphql.ErrorPresenterFunc
	live          *LiveFeed
}

func (s streamingOperations) operations(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	if wsConnFor(ctx) != nil {
		ctx = withRequestState(ctx, s.newState())
	}
	if opCtx.Operation != nil && opCtx.Operation.Operation == ast.Subscription {
		return next(withValue(ctx, &liveOperation{}))
	}
	if d := streamTimeoutFor(ctx); d > 0 {
		ctx, cancel := context.WithTimeout(ctx, d)
		responses := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			resp := responses(ctx)
			if resp == nil {
				cancel()
			}
			return resp
		}
	}
	return next(ctx)
}

// responses executes each event of a subscription with a fresh request
// state, and turns the end of a subscription that failed into the error
// the client receives.
func (s streamingOperations) responses(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	op := liveOperationFor(ctx)
	if op == nil {
		return next(ctx)
	}
	newState := s.newEventState
	if newState == nil { // no feed: the subscription fails at once
		newState = s.newState
	}
	if resp := next(withRequestState(ctx, newState())); resp != nil {
		return resp
	}
	err := op.takeError()
	if err == nil {
		return nil
	}
	gqlErr := s.present(ctx, s.live.endError(err))
	if opCtx := graphql.GetOperationContext(ctx); opCtx.Operation != nil && len(opCtx.Operation.SelectionSet) == 1 {
		if f, ok := opCtx.Operation.SelectionSet[0].(*ast.Field); ok {
			gqlErr.Path = ast.Path{ast.PathName(f.Alias)}
		}
	}
	// On every transport a last result carries the error, then the
	// operation completes (graphql-transport-ws's `error` is for an
	// operation that did not start: no `complete` may follow it).
	return &graphql.Response{Errors: gqlerror.List{gqlErr}}
}

// WithConnection marks ctx as a connection's that carries many operations
// (a WebSocket), for the operations started under it: each gets a request
// state of its own (streamingOperations), and the connection holds at most
// maxSubscriptions subscriptions at once (past it, a subscription is
// RATE_LIMITED).
func WithConnection(ctx context.Context, maxSubscriptions int) context.Context {
	return withValue(ctx, &wsConn{max: maxSubscriptions})
}

// wsConn is one connection's state (WithConnection), in the context of its
// operations.
type wsConn struct {
	max int
	mu  sync.Mutex
	n   int // subscriptions open
}

func wsConnFor(ctx context.Context) *wsConn { return valueOf[wsConn](ctx) }

// acquire counts a subscription of the connection until ctx (the
// operation's) ends; false when the connection holds max already.
func (c *wsConn) acquire(ctx context.Context) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= c.max {
		return false
	}
	c.n++
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.n--
		c.mu.Unlock()
	})
	return true
}

type streamTimeoutKey struct{}

// withStreamTimeout marks a streaming request (WebSocket, SSE), which has
// no deadline of its own: its queries get d each.
func withStreamTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, streamTimeoutKey{}, d)
}

func streamTimeoutFor(ctx context.Context) time.Duration {
	d, _ := ctx.Value(streamTimeoutKey{}).(time.Duration)
	return d
}
