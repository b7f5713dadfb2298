package graph

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// scriptedTxs answers ListTransactions with answer, counting the calls;
// release, when set, holds every call until it is closed.
type scriptedTxs struct {
	Upstream
	calls   atomic.Int32
	release chan struct{}
	answer  func(ctx context.Context) (*upstream.TransactionPage, error)
}

func (s *scriptedTxs) ListTransactions(ctx context.Context, _ upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	s.calls.Add(1)
	if s.release != nil {
		<-s.release
	}
	return s.answer(ctx)
}

// concurrently runs n events' ListTransactions of the same params while
// the first is held, and returns their errors.
func concurrently(t *testing.T, shared *sharedEvents, up *scriptedTxs, n int) []error {
	t.Helper()
	up.release = make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = errors.New("panicked")
				}
			}()
			ev := &eventUpstream{shared: shared, max: 10}
			_, errs[i] = ev.ListTransactions(context.Background(), upstream.TransactionsParams{Submitter: "p"})
		})
	}
	// Every caller is in: one holds the call, the others wait on it.
	synctest.Wait()
	if up.calls.Load() != 1 || shared.waiting() != n-1 {
		t.Fatalf("%d calls, %d waiting; want 1 and %d", up.calls.Load(), shared.waiting(), n-1)
	}
	close(up.release)
	wg.Wait()
	return errs
}

func TestSharedEventsShareAnswersNotTheAskersFailures(t *testing.T) {
	synctest.Test(t, testSharedEvents)
}

func testSharedEvents(t *testing.T) {
	var block atomic.Uint64
	block.Store(7)
	page := &upstream.TransactionPage{}
	up := &scriptedTxs{answer: func(context.Context) (*upstream.TransactionPage, error) { return page, nil }}
	shared := newSharedEvents(up, block.Load)

	// An answer: one request for every subscriber of the block.
	if errs := concurrently(t, shared, up, 5); errors.Join(errs...) != nil {
		t.Fatal(errs)
	}
	if n := up.calls.Load(); n != 1 {
		t.Fatalf("%d requests for 5 subscribers, want 1", n)
	}
	// Later in the same block: still shared, no request.
	ev := &eventUpstream{shared: shared, max: 10}
	if got, err := ev.ListTransactions(context.Background(), upstream.TransactionsParams{Submitter: "p"}); err != nil || got != page {
		t.Fatalf("%v %v", got, err)
	}
	if n := up.calls.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	// A new block: asked again.
	block.Store(8)
	if _, err := ev.ListTransactions(context.Background(), upstream.TransactionsParams{Submitter: "p"}); err != nil {
		t.Fatal(err)
	}
	if n := up.calls.Load(); n != 2 {
		t.Fatalf("%d requests after a new block, want 2", n)
	}

	// The asker's budget refused: the others ask for themselves (their
	// own budget turn), and the refusal is not kept.
	for _, failure := range []error{&upstream.BudgetError{RetryAfter: time.Second}, context.Canceled} {
		block.Add(1)
		up.calls.Store(0)
		first := true
		var mu sync.Mutex
		up.answer = func(context.Context) (*upstream.TransactionPage, error) {
			mu.Lock()
			defer mu.Unlock()
			if first {
				first = false
				return nil, failure
			}
			return page, nil
		}
		errs := concurrently(t, shared, up, 4)
		failed := 0
		for _, err := range errs {
			if err != nil {
				failed++
			}
		}
		if failed != 1 || up.calls.Load() != 4 {
			t.Fatalf("%v: %d of 4 failed after %d requests, want 1 (the asker) after 4", failure, failed, up.calls.Load())
		}
	}

	// An upstream failure is the data's: shared.
	block.Add(1)
	up.calls.Store(0)
	up.answer = func(context.Context) (*upstream.TransactionPage, error) {
		return nil, &upstream.UnavailableError{Service: upstream.ServiceExplorer, Err: errors.New("refused")}
	}
	for _, err := range concurrently(t, shared, up, 4) {
		if _, ok := errors.AsType[*upstream.UnavailableError](err); !ok {
			t.Fatalf("error %v", err)
		}
	}
	if n := up.calls.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}

	// A panic reaches its asker; the others do not wait for ever, and ask
	// for themselves.
	block.Add(1)
	up.calls.Store(0)
	var panicked atomic.Bool
	up.answer = func(context.Context) (*upstream.TransactionPage, error) {
		if panicked.CompareAndSwap(false, true) {
			panic("boom")
		}
		return page, nil
	}
	errs := concurrently(t, shared, up, 3)
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed != 1 || up.calls.Load() != 3 {
		t.Fatalf("after a panic: %d of 3 failed after %d requests, want 1 after 3", failed, up.calls.Load())
	}
}

// TestEventUpstreamBound: an event's requests past the bound are refused
// with QUERY_TOO_COMPLEX, without a request.
func TestEventUpstreamBound(t *testing.T) {
	up := &scriptedTxs{answer: func(context.Context) (*upstream.TransactionPage, error) { return &upstream.TransactionPage{}, nil }}
	ev := &eventUpstream{shared: newSharedEvents(up, func() uint64 { return 1 }), max: 2}
	for i := range 3 {
		_, err := ev.ListTransactions(context.Background(), upstream.TransactionsParams{First: i + 1})
		if i < 2 && err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if code, _, _ := classify(err); code != CodeQueryTooComplex {
				t.Fatalf("third request: %v, want QUERY_TOO_COMPLEX", err)
			}
		}
	}
	if n := up.calls.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}
