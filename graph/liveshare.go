package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tradenet/gateway/upstream"
)

// The upstream requests of live events. Every subscriber receives the
// same transaction at about the same moment and runs its selection on it
// like a query of its own (streamingOperations.responses): left alone, a
// thousand subscribers selecting a transaction's submitter { transactions }
// would make a thousand identical requests for each transaction. So each
// event's requests, below the event's own memo (requestUpstream), go
// through:
//
//   - eventUpstream, which bounds the requests of one event
//     (Limits.MaxCallsPerEvent): the limits counted them before the
//     subscription started, and the live feed's admission charged them to
//     its client (live.Config.MaxCallsPerClient); this catches what no
//     count foresees (the explorer's follow-up requests over rows it
//     skips);
//   - sharedEvents, which makes each distinct request once for every
//     subscriber running an event of the same block: the same selection
//     of the same transaction is fetched once, whoever asks.
//
// A shared answer is as fresh as a request of the subscriber's own would
// be: it was made after the newest block the feed delivered was known
// (the data node changes only as blocks are processed), and it is
// forgotten when the feed delivers a newer block. The request runs under
// the context of the subscriber that asked first, so it is charged to
// that client's budget; an answer that says more about that subscriber
// than about the data (its context ended, its budget refused) is not
// shared: the others make the request themselves.

// maxSharedEventCalls bounds the answers sharedEvents keeps for one
// block: beyond it, requests are made unshared.
const maxSharedEventCalls = 256

// sharedEvents shares live events' upstream requests among subscribers,
// per block.
type sharedEvents struct {
	next Upstream
	// block is the newest block the feed delivered (LiveFeed.newestBlock).
	block func() uint64

	mu    sync.Mutex
	at    uint64
	calls map[string]*sharedCall

	// waiters counts the callers waiting for another's request (tests).
	waiters atomic.Int32
}

type sharedCall struct {
	done chan struct{}
	val  any
	err  error
}

func newSharedEvents(next Upstream, block func() uint64) *sharedEvents {
	return &sharedEvents{next: next, block: block}
}

// share makes the request (method, params) once for the subscribers of
// this block: fn for the first, its answer for the others.
func share[T any](s *sharedEvents, ctx context.Context, method string, params any, fn func(context.Context) (T, error)) (T, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return fn(ctx)
	}
	key := method + string(raw)
	block := s.block()
	s.mu.Lock()
	if s.calls == nil || block != s.at {
		s.at, s.calls = block, map[string]*sharedCall{}
	}
	c, waiting := s.calls[key]
	if !waiting {
		if len(s.calls) >= maxSharedEventCalls {
			s.mu.Unlock()
			return fn(ctx)
		}
		c = &sharedCall{done: make(chan struct{}), err: errPanicked}
		s.calls[key] = c
	}
	s.mu.Unlock()
	if !waiting {
		// Settled even if fn panics (the panic goes on up to the
		// executor's recovery), so that no subscriber waits for ever.
		defer func() {
			if !shareable(c.err) {
				s.forget(key, c)
			}
			close(c.done)
		}()
		v, err := fn(ctx)
		c.val, c.err = v, err
		return v, err
	}
	s.waiters.Add(1)
	select {
	case <-c.done:
		s.waiters.Add(-1)
	case <-ctx.Done():
		s.waiters.Add(-1)
		var zero T
		return zero, ctx.Err()
	}
	if !shareable(c.err) {
		return fn(ctx)
	}
	v, _ := c.val.(T)
	return v, c.err
}

// waiting is the number of callers waiting for another's request (tests).
func (s *sharedEvents) waiting() int { return int(s.waiters.Load()) }

// forget drops c, so that later subscribers make the request again.
func (s *sharedEvents) forget(key string, c *sharedCall) {
	s.mu.Lock()
	if s.calls[key] == c {
		delete(s.calls, key)
	}
	s.mu.Unlock()
}

// shareable reports whether an answer holds for every subscriber: not
// when it is the asker's context ending, its budget's refusal, or a
// panic.
func shareable(err error) bool {
	var budget *upstream.BudgetError
	switch {
	case err == nil:
		return true
	case err == errPanicked, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &budget):
		return false
	}
	return true
}

// assetAnswer is GetAsset's answer, shared whole.
type assetAnswer struct {
	asset *upstream.Asset
	fresh *upstream.Freshness
}

// eventUpstream is one subscriber's event's way to the upstream: at most
// max requests, each shared with the other subscribers of the block.
type eventUpstream struct {
	shared *sharedEvents
	max    int
	n      atomic.Int32
}

var _ Upstream = (*eventUpstream)(nil)

// take counts a request; past max it is refused.
func (u *eventUpstream) take() error {
	if int(u.n.Add(1)) <= u.max {
		return nil
	}
	return &Error{Code: CodeQueryTooComplex, Message: fmt.Sprintf(
		"this transaction needed more than %d upstream requests, the most a subscription may make for one transaction (maximum requests per event); select fewer nested lists", u.max)}
}

func (u *eventUpstream) ListAssets(ctx context.Context, p upstream.AssetsParams) (*upstream.AssetPage, error) {
	if err := u.take(); err != nil {
		return nil, err
	}
	return share(u.shared, ctx, "assets", p, func(ctx context.Context) (*upstream.AssetPage, error) { return u.shared.next.ListAssets(ctx, p) })
}

func (u *eventUpstream) GetAsset(ctx context.Context, id string) (*upstream.Asset, *upstream.Freshness, error) {
	if err := u.take(); err != nil {
		return nil, nil, err
	}
	a, err := share(u.shared, ctx, "asset", id, func(ctx context.Context) (assetAnswer, error) {
		asset, fresh, err := u.shared.next.GetAsset(ctx, id)
		return assetAnswer{asset, fresh}, err
	})
	return a.asset, a.fresh, err
}

func (u *eventUpstream) ListFundingPayments(ctx context.Context, p upstream.FundingPaymentsParams) (*upstream.FundingPaymentPage, error) {
	if err := u.take(); err != nil {
		return nil, err
	}
	return share(u.shared, ctx, "funding", p, func(ctx context.Context) (*upstream.FundingPaymentPage, error) {
		return u.shared.next.ListFundingPayments(ctx, p)
	})
}

func (u *eventUpstream) ListDelegations(ctx context.Context, p upstream.DelegationsParams) (*upstream.DelegationPage, error) {
	if err := u.take(); err != nil {
		return nil, err
	}
	return share(u.shared, ctx, "delegations", p, func(ctx context.Context) (*upstream.DelegationPage, error) {
		return u.shared.next.ListDelegations(ctx, p)
	})
}

func (u *eventUpstream) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	if err := u.take(); err != nil {
		return nil, err
	}
	return share(u.shared, ctx, "transactions", p, func(ctx context.Context) (*upstream.TransactionPage, error) {
		return u.shared.next.ListTransactions(ctx, p)
	})
}

func (u *eventUpstream) GetTransaction(ctx context.Context, hash string) (*upstream.Transaction, error) {
	if err := u.take(); err != nil {
		return nil, err
	}
	return share(u.shared, ctx, "transaction", strings.ToUpper(hash), func(ctx context.Context) (*upstream.Transaction, error) {
		return u.shared.next.GetTransaction(ctx, hash)
	})
}
