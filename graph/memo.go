package graph

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/upstream"
)

// requestUpstream memoises one request's upstream calls: a connection
// nested under a list (each row's party { delegations }) asks the same
// question once per row, and the upstream cannot answer for several
// parties at once, so identical calls are made once and shared. It lives
// for one request only, so it never serves stale data.
type requestUpstream struct {
	next Upstream

	mu    sync.Mutex
	calls map[string]*memoCall
}

// errPanicked is what callers sharing a call get when it panicked.
var errPanicked = &Error{Code: CodeInternal, Message: "internal error", Err: fmt.Errorf("a shared upstream call panicked")}

type memoCall struct {
	done chan struct{}
	val  any
	err  error
}

var _ Upstream = (*requestUpstream)(nil)

func newRequestUpstream(next Upstream) *requestUpstream {
	return &requestUpstream{next: next, calls: map[string]*memoCall{}}
}

// memo runs fn once per key for the request; concurrent callers wait for
// the first. The key is the method's name, a zero byte and the params' key
// (upstream's AppendKey: equal only for equal params), built in the
// caller's stack buffer: looking it up costs no allocation, and only a
// first call keeps a copy.
func memo[T any](u *requestUpstream, key []byte, fn func() (T, error)) (T, error) {
	u.mu.Lock()
	c, ok := u.calls[string(key)]
	if !ok {
		c = &memoCall{done: make(chan struct{})}
		u.calls[string(key)] = c
	}
	u.mu.Unlock()
	if !ok {
		// Close even if fn panics (the panic goes on up to gqlgen's
		// recovery), so that callers waiting on this call never hang.
		defer close(c.done)
		c.err = errPanicked
		c.val, c.err = fn()
	} else {
		<-c.done
	}
	v, _ := c.val.(T)
	return v, c.err
}

// callKeyBuffer sizes the stack buffers memo keys are built in (a longer
// key spills to the heap, still correct).
const callKeyBuffer = 256

// callKey starts a memo key in buf: the method's name and a zero byte,
// which no name holds, so that no two methods' keys meet.
func callKey(buf []byte, method string) []byte {
	return append(append(buf, method...), 0)
}

func (u *requestUpstream) ListAssets(ctx context.Context, p upstream.AssetsParams) (*upstream.AssetPage, error) {
	var buf [callKeyBuffer]byte
	return memo(u, p.AppendKey(callKey(buf[:0], "assets")), func() (*upstream.AssetPage, error) { return u.next.ListAssets(ctx, p) })
}

// GetAsset is not memoised here: the asset loader already batches and
// caches lookups.
func (u *requestUpstream) GetAsset(ctx context.Context, id string) (*upstream.Asset, *upstream.Freshness, error) {
	return u.next.GetAsset(ctx, id)
}

func (u *requestUpstream) ListFundingPayments(ctx context.Context, p upstream.FundingPaymentsParams) (*upstream.FundingPaymentPage, error) {
	var buf [callKeyBuffer]byte
	return memo(u, p.AppendKey(callKey(buf[:0], "funding")), func() (*upstream.FundingPaymentPage, error) { return u.next.ListFundingPayments(ctx, p) })
}

func (u *requestUpstream) ListDelegations(ctx context.Context, p upstream.DelegationsParams) (*upstream.DelegationPage, error) {
	var buf [callKeyBuffer]byte
	return memo(u, p.AppendKey(callKey(buf[:0], "delegations")), func() (*upstream.DelegationPage, error) { return u.next.ListDelegations(ctx, p) })
}

func (u *requestUpstream) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	var buf [callKeyBuffer]byte
	return memo(u, p.AppendKey(callKey(buf[:0], "transactions")), func() (*upstream.TransactionPage, error) { return u.next.ListTransactions(ctx, p) })
}

// GetTransaction shares one lookup among the request's lookups of the same
// hash in any letter case (the explorer upper-cases it).
func (u *requestUpstream) GetTransaction(ctx context.Context, hash string) (*upstream.Transaction, error) {
	var buf [callKeyBuffer]byte
	key := append(callKey(buf[:0], "transaction"), strings.ToUpper(hash)...)
	return memo(u, key, func() (*upstream.Transaction, error) { return u.next.GetTransaction(ctx, hash) })
}

// upstreamFor is the upstream a resolver uses: the request's memoising
// one, or the shared client outside a request.
func (r *Resolver) upstreamFor(ctx context.Context) Upstream {
	if s := stateFor(ctx); s != nil && s.upstream != nil {
		return s.upstream
	}
	return r.Upstream
}

// nestedInList reports whether the field being resolved sits under a
// list (e.g. party { delegations } on every row of a page).
func nestedInList(ctx context.Context) bool {
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		if fc.Index != nil {
			return true
		}
	}
	return false
}

// pagingFor is the paging configuration of the connection being resolved:
// connections nested under a list get the smaller NestedMaxSize, since
// each row costs an upstream call and its rows.
func (r *Resolver) pagingFor(ctx context.Context) PagingConfig {
	c := r.Paging
	if nestedInList(ctx) {
		c.MaxSize = min(c.MaxSize, c.NestedMaxSize)
		c.DefaultSize = min(c.DefaultSize, c.NestedMaxSize)
		c.nested = true
	}
	return c
}
