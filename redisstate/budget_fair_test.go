package redisstate_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/upstream"
)

// waitUntil polls cond until it holds, failing t after 10s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func tokens(t *testing.T, b upstream.BudgetReporter) float64 {
	t.Helper()
	st, err := b.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Tokens
}

// A caller that gives up while sleeping until its reserved slot gives the
// slot back: the next caller, on another replica, gets it rather than the
// one after.
func TestBudgetGivesBackTheSlotOfACallerThatGaveUp(t *testing.T) {
	url := redistest.Start(t)
	// One request, then one every 10s: far apart, so that a busy machine
	// cannot blur which slot a caller got.
	opts := redisstate.BudgetOptions{Rate: 0.1, Burst: 1}
	a, b := open(t, url, "", nil).Budget(opts), open(t, url, "", nil).Budget(opts)
	if err := a.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Wait(ctx) }()
	waitUntil(t, "the second caller reserved its slot", func() bool { return tokens(t, a) < -0.5 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Wait = %v", err)
	}
	if tk := tokens(t, b); tk < -0.1 || tk > 0.1 {
		t.Fatalf("%.2f tokens after the cancelled caller gave its slot back, want 0", tk)
	}
	// The next caller's slot is one interval away (the one given back),
	// not two.
	short, cancelShort := context.WithTimeout(context.Background(), time.Second)
	defer cancelShort()
	var be *upstream.BudgetError
	if err := b.Wait(short); !errors.As(err, &be) || be.RetryAfter < 5*time.Second || be.RetryAfter > 15*time.Second {
		t.Fatalf("next caller: %v, want a refusal with a wait of about 10s (one interval), not 20s", err)
	}
}

// grantOrder is an upstream.Budget that records whose wait its inner
// budget granted, by client key.
type grantOrder struct {
	upstream.Budget
	mu    sync.Mutex
	order []string
}

func (g *grantOrder) Wait(ctx context.Context) error {
	err := g.Budget.Wait(ctx)
	if err == nil {
		g.mu.Lock()
		g.order = append(g.order, upstream.ClientFrom(ctx))
		g.mu.Unlock()
	}
	return err
}

func (g *grantOrder) granted() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.order)
}

// Over the shared budget too, a light client is served between a heavy
// client's calls, not after all of them.
func TestFairBudgetOverRedis(t *testing.T) {
	url := redistest.Start(t)
	shared := open(t, url, "", nil).Budget(redisstate.BudgetOptions{Rate: 10, Burst: 1})
	inner := &grantOrder{Budget: shared}
	fair := upstream.NewFairBudget(inner, 10)
	heavy := upstream.WithClient(context.Background(), "heavy")
	const heavyCalls = 15
	var wg sync.WaitGroup
	for i := range heavyCalls {
		wg.Go(func() {
			if err := fair.Wait(heavy); err != nil {
				t.Error(err)
			}
		})
		if i >= 1 { // the first takes the free turn without queueing
			waitUntil(t, "the heavy call queued", func() bool {
				st, _ := fair.State(context.Background())
				return st.Waiting+len(inner.granted()) >= i
			})
		}
	}
	before := len(inner.granted())
	if err := fair.Wait(upstream.WithClient(context.Background(), "light")); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	order := inner.granted()
	at := slices.Index(order, "light")
	// The turn being taken when it came, one heavy call, then it (one
	// more in case a grant slipped in between counting and calling).
	if at < 0 || at-before > 3 {
		t.Fatalf("light call granted %d grants after it came; order %v", at-before, order)
	}
	if at == len(order)-1 {
		t.Fatalf("light call served after every heavy one: %v", order)
	}
}
