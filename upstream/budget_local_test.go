package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The local budget's tests run in synctest bubbles: its refill, pauses
// and deadlines follow the fake clock, at once and exactly.

func TestLocalBudgetWait(t *testing.T) {
	synctest.Test(t, testLocalBudgetWait)
}

func testLocalBudgetWait(t *testing.T) {
	b := NewLocalBudget(0.001, 3) // three tokens, then none for a long while
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for i := range 3 {
		if err := b.Wait(ctx); err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
	}
	// The next token comes long after the deadline: refused at once.
	err := b.Wait(ctx)
	var be *BudgetError
	if !errors.As(err, &be) || be.Banned || be.RetryAfter < time.Minute {
		t.Fatalf("fourth wait: %v, want a *BudgetError with a long RetryAfter", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the refusal waited for the deadline")
	}
	// Without a deadline it waits until the context ends.
	ctx2, cancel2 := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() { waited <- b.Wait(ctx2) }()
	synctest.Wait()
	select {
	case err := <-waited:
		t.Fatalf("wait without deadline returned %v before its context ended", err)
	default:
	}
	cancel2()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("wait without deadline: %v, want context.Canceled", err)
	}
	s, _ := b.State(ctx)
	if s.Tokens > 0.01 || s.Banned || s.PausedFor != 0 {
		t.Fatalf("state %+v", s)
	}
}

func TestLocalBudgetPause(t *testing.T) {
	synctest.Test(t, testLocalBudgetPause)
}

func testLocalBudgetPause(t *testing.T) {
	b := NewLocalBudget(1000, 100)
	ctx := context.Background()
	b.Pause(ctx, time.Second, false)
	s, _ := b.State(ctx)
	if s.PausedFor <= 0 || s.Banned || s.Tokens >= 1 {
		t.Fatalf("after a 429 pause: %+v, want paused, not banned, tokens spent", s)
	}
	// A deadline shorter than the pause is refused at once...
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	var be *BudgetError
	if err := b.Wait(short); !errors.As(err, &be) || be.Banned {
		t.Fatalf("wait within a pause: %v", err)
	}
	// ...a longer one waits for the pause to end.
	long, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := b.Wait(long); err != nil {
		t.Fatalf("wait past the pause: %v", err)
	}
	if waited := time.Since(start); waited != time.Second {
		t.Fatalf("waited %v for a pause of 1s", waited)
	}
	if s, _ := b.State(ctx); s.PausedFor != 0 {
		t.Fatalf("still paused: %+v", s)
	}

	// A ban refuses every wait at once, whatever the deadline.
	b.Pause(ctx, time.Hour, true)
	for range 3 {
		if err := b.Wait(long); !errors.As(err, &be) || !be.Banned || be.RetryAfter < 59*time.Minute {
			t.Fatalf("wait while banned: %v", err)
		}
	}
	if s, _ := b.State(ctx); !s.Banned || s.PausedFor < 59*time.Minute {
		t.Fatalf("banned state: %+v", s)
	}
	// A shorter pause does not shorten a ban.
	b.Pause(ctx, time.Second, false)
	if s, _ := b.State(ctx); !s.Banned || s.PausedFor < 59*time.Minute {
		t.Fatalf("state after a later 429: %+v", s)
	}
}

func TestBudgetAppliesToTheDataNodeOnly(t *testing.T) {
	var c *Client
	noLeaks(t, func() *Client { return c })
	s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) { writeOK(w, r) }}
	c = setup(t, s.ServeHTTP, func(cfg *Config) { cfg.Budget = NewLocalBudget(0.001, 2) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 2 {
		if _, err := c.ListAssets(ctx, AssetsParams{Pagination: Pagination{First: ptr(int32(i + 1))}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.ListAssets(ctx, AssetsParams{Pagination: Pagination{First: ptr(int32(9))}})
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("third data-node call: %v, want a *BudgetError", err)
	}
	for i := range 5 {
		if _, err := c.ListTransactions(ctx, TransactionsParams{First: i + 1}); err != nil {
			t.Fatalf("explorer call %d: %v", i, err)
		}
	}
	if n, m := s.requests(assetsPath), s.requests(txPath); n != 2 || m != 5 {
		t.Fatalf("%d data-node and %d explorer requests, want 2 and 5", n, m)
	}
}

func TestRateLimitedCallPausesAndRetriesWithinTheBudget(t *testing.T) {
	var c *Client
	noLeaks(t, func() *Client { return c })
	s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Ratelimit-Reset", "1")
			status(w, 429, `{"code":8,"message":"api request rate limit exceeded","details":[]}`)
			return
		}
		writeOK(w, r)
	}}
	budget := &recordingBudget{Budget: NewLocalBudget(100, 10)}
	c = setup(t, s.ServeHTTP, func(cfg *Config) { cfg.Budget = budget })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.ListAssets(ctx, AssetsParams{}); err != nil {
		t.Fatalf("the retried call failed: %v", err)
	}
	if n := s.requests(assetsPath); n != 2 {
		t.Fatalf("%d requests, want 2 (the 429, then the retry)", n)
	}
	// The 429 paused everyone for Ratelimit-Reset, and the retry waited
	// its turn: two waits, one pause.
	if got := budget.log(); got != "wait pause(1s,false) wait" {
		t.Fatalf("budget calls: %s", got)
	}

	// A 429 when the pause outlasts the caller's deadline: RATE_LIMITED
	// material, at once, without another request.
	s2 := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Ratelimit-Reset", "5")
		status(w, 429, `{"code":8,"message":"api request rate limit exceeded","details":[]}`)
	}}
	c = setup(t, s2.ServeHTTP, func(cfg *Config) { cfg.Budget = NewLocalBudget(100, 10) })
	short, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	_, err := c.ListAssets(short, AssetsParams{})
	if _, limited := IsRateLimited(err); !limited && !errors.As(err, new(*BudgetError)) {
		t.Fatalf("error %v, want a rate-limit error", err)
	}
	if n := s2.requests(assetsPath); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}

	// Without a budget, a 429 is answered at once.
	s3 := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) { status(w, 429, "") }}
	c = setup(t, s3.ServeHTTP)
	if _, err := c.ListAssets(context.Background(), AssetsParams{}); !isRateLimit(err) || s3.requests(assetsPath) != 1 {
		t.Fatalf("no budget: %v after %d requests", err, s3.requests(assetsPath))
	}
}

// recordingBudget records the calls made to a Budget.
type recordingBudget struct {
	Budget
	mu    sync.Mutex
	calls []string
}

func (b *recordingBudget) Wait(ctx context.Context) error {
	b.mu.Lock()
	b.calls = append(b.calls, "wait")
	b.mu.Unlock()
	return b.Budget.Wait(ctx)
}

func (b *recordingBudget) Pause(ctx context.Context, d time.Duration, banned bool) {
	b.mu.Lock()
	b.calls = append(b.calls, fmt.Sprintf("pause(%v,%v)", d, banned))
	b.mu.Unlock()
	b.Budget.Pause(ctx, d, banned)
}

func (b *recordingBudget) log() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.calls, " ")
}

func TestBanStopsEveryCallUntilItEnds(t *testing.T) {
	var c *Client
	noLeaks(t, func() *Client { return c })
	s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == txPath {
			io.WriteString(w, okTxs)
			return
		}
		w.Header().Set("Ratelimit-Retry-After", "600")
		status(w, 403, `{"code":7,"message":"temporarily banned for continuing to request while rate limited"}`)
	}}
	budget := NewLocalBudget(100, 10)
	c = setup(t, s.ServeHTTP, func(cfg *Config) { cfg.Budget = budget })
	ctx := context.Background()
	_, err := c.ListAssets(ctx, AssetsParams{})
	if wait, limited := IsRateLimited(err); !limited || wait != 10*time.Minute {
		t.Fatalf("first call: %v, want the ban", err)
	}
	if st, _ := budget.State(ctx); !st.Banned || st.PausedFor < 9*time.Minute {
		t.Fatalf("budget after the ban: %+v", st)
	}
	for range 5 {
		_, err := c.ListDelegations(ctx, DelegationsParams{})
		var be *BudgetError
		if !errors.As(err, &be) || !be.Banned || be.RetryAfter < 9*time.Minute {
			t.Fatalf("call while banned: %v, want a banned *BudgetError", err)
		}
	}
	if n := s.requests(assetsPath) + s.requests("/dn/api/v2/delegations"); n != 1 {
		t.Fatalf("%d data-node requests, want only the one that was banned", n)
	}
	if _, err := c.ListTransactions(ctx, TransactionsParams{First: 1}); err != nil {
		t.Fatalf("the explorer is not banned: %v", err)
	}
}

// TestExplorerBudget: explorer calls wait on the explorer's budget (the
// data node's is not asked), and its refusal names the explorer.
func TestExplorerBudget(t *testing.T) {
	s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) { writeOK(w, r) }}
	dataNode := &recordingBudget{Budget: NewLocalBudget(100, 10)}
	explorer := &recordingBudget{Budget: NewLocalBudget(100, 10)}
	c := setup(t, s.ServeHTTP, func(cfg *Config) { cfg.Budget, cfg.ExplorerBudget = dataNode, explorer })
	if _, err := c.ListTransactions(context.Background(), TransactionsParams{First: 1}); err != nil {
		t.Fatal(err)
	}
	if got := explorer.log(); got != "wait" {
		t.Errorf("explorer budget calls: %q, want one wait", got)
	}
	if got := dataNode.log(); got != "" {
		t.Errorf("data-node budget calls: %q, want none", got)
	}
	explorer.Pause(context.Background(), time.Minute, false)
	short, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.ListTransactions(short, TransactionsParams{First: 1})
	be, ok := errors.AsType[*BudgetError](err)
	if !ok || be.Service != ServiceExplorer || !strings.Contains(err.Error(), "the block explorer's rate budget is spent") {
		t.Fatalf("error %v, want the explorer budget's refusal", err)
	}
	if n := s.requests(txPath); n != 1 {
		t.Errorf("%d explorer requests, want 1 (the refused call is not sent)", n)
	}
}
