package upstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// labelKey marks a test caller's context with a label of its own, so that
// a grantLog can say whose wait was granted.
type labelKey struct{}

func labelled(ctx context.Context, client string, i int) context.Context {
	return context.WithValue(WithClient(ctx, client), labelKey{}, fmt.Sprintf("%s-%d", client, i))
}

// grantLog records the order in which its budget granted waits.
// Under a FairBudget its waits are taken one at a time, so the order is
// exact.
type grantLog struct {
	Budget
	mu    sync.Mutex
	order []string
}

func (r *grantLog) Wait(ctx context.Context) error {
	err := r.Budget.Wait(ctx)
	if err == nil {
		r.mu.Lock()
		label, _ := ctx.Value(labelKey{}).(string)
		r.order = append(r.order, label)
		r.mu.Unlock()
	}
	return err
}

func (r *grantLog) granted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

func (r *grantLog) State(ctx context.Context) (BudgetState, error) {
	return r.Budget.(BudgetReporter).State(ctx)
}

// spentFairBudget is a FairBudget of 10 calls a second over a logged
// local budget with a burst of 1, which a first call has spent.
func spentFairBudget(t *testing.T) (*grantLog, *FairBudget) {
	t.Helper()
	inner := &grantLog{Budget: NewLocalBudget(10, 1)}
	b := NewFairBudget(inner, 10)
	if err := b.Wait(context.Background()); err != nil { // the burst
		t.Fatal(err)
	}
	return inner, b
}

// noErrors fails t at the first non-nil error of errs.
func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// queue starts n callers of client, one after the other (each queued
// before the next starts), and returns their errors once all have
// returned.
func queue(ctx context.Context, b Budget, client string, n int) func() []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = b.Wait(labelled(ctx, client, i)) })
		synctest.Wait()
	}
	return func() []error { wg.Wait(); return errs }
}

func TestFairBudgetServesALightClientBetweenAHeavyClientsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &grantLog{Budget: NewLocalBudget(10, 1)}
		b := NewFairBudget(inner, 10)
		ctx := context.Background()
		heavy := queue(ctx, b, "heavy", 100)
		time.Sleep(250 * time.Millisecond) // a few heavy calls are served
		synctest.Wait()
		before := len(inner.granted())
		light := queue(ctx, b, "light", 1)
		noErrors(t, append(heavy(), light()...))
		order := inner.granted()
		at := slices.Index(order, "light-0")
		// The turn being taken when it came, one heavy call, then it.
		if at < 0 || at-before > 2 {
			t.Fatalf("light client's call granted %d grants after it came (grant %d), want at most 2; order %v", at-before, at, order)
		}
		heavyOrder := slices.DeleteFunc(order, func(s string) bool { return s == "light-0" })
		for i, s := range heavyOrder {
			if s != fmt.Sprintf("heavy-%d", i) {
				t.Fatalf("heavy client's calls out of order at %d: %v", i, heavyOrder)
			}
		}
	})
}

func TestFairBudgetTakesClientsInTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &grantLog{Budget: NewLocalBudget(10, 1)}
		b := NewFairBudget(inner, 10)
		ctx := context.Background()
		a := queue(ctx, b, "a", 4)
		bb := queue(ctx, b, "b", 2)
		c := queue(ctx, b, "c", 2)
		noErrors(t, slices.Concat(a(), bb(), c()))
		// a-0 took the burst and a-1 the free turn; then one each, in
		// the order the clients came.
		want := []string{"a-0", "a-1", "a-2", "b-0", "c-0", "a-3", "b-1", "c-1"}
		if got := inner.granted(); !slices.Equal(got, want) {
			t.Fatalf("grants %v, want %v", got, want)
		}
	})
}

func TestFairBudgetWaiterThatGivesUpLeavesTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner, b := spentFairBudget(t)
		ctx := context.Background()
		start := time.Now()
		first := queue(ctx, b, "a", 1) // holds the turn, sleeping for its slot
		cancelled, cancel := context.WithCancel(ctx)
		gaveUp := queue(cancelled, b, "a", 3)
		last := queue(ctx, b, "b", 1)
		if s, _ := b.State(ctx); s.Waiting != 4 || s.WaitingClients != 2 {
			t.Fatalf("state %+v, want 4 callers of 2 clients waiting", s)
		}
		cancel()
		synctest.Wait()
		for _, err := range gaveUp() {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("a caller that gave up: %v", err)
			}
		}
		if s, _ := b.State(ctx); s.Waiting != 1 || s.WaitingClients != 1 {
			t.Fatalf("state %+v after 3 gave up, want 1 caller of 1 client waiting", s)
		}
		noErrors(t, append(first(), last()...))
		// The callers that gave up reserved nothing: the last one came
		// one interval after the first.
		if took := time.Since(start); took != 200*time.Millisecond {
			t.Fatalf("two grants took %v after the burst, want 200ms", took)
		}
		if got := inner.granted(); !slices.Equal(got, []string{"", "a-0", "b-0"}) {
			t.Fatalf("grants %v", got)
		}
		if len(b.clients) != 0 || len(b.ring) != 0 || b.busy {
			t.Fatalf("queue not empty: %d clients, ring %d, busy %v", len(b.clients), len(b.ring), b.busy)
		}
	})
}

func TestFairBudgetCancelledTurnGivesItsSlotBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewFairBudget(NewLocalBudget(10, 1), 10)
		ctx := context.Background()
		if err := b.Wait(ctx); err != nil { // the burst
			t.Fatal(err)
		}
		start := time.Now()
		holder, cancel := context.WithCancel(ctx)
		gaveUp := queue(holder, b, "a", 1) // reserves the slot 100ms on
		next := queue(ctx, b, "b", 1)
		time.Sleep(10 * time.Millisecond)
		cancel()
		if err := gaveUp()[0]; !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		if err := next()[0]; err != nil {
			t.Fatal(err)
		}
		// The next caller got the slot given back, not the one after it.
		if took := time.Since(start); took != 100*time.Millisecond {
			t.Fatalf("the next caller waited %v, want 100ms (the cancelled caller's slot)", took)
		}
	})
}

func TestFairBudgetRefusesAtOnceWhenTheTurnComesTooLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewFairBudget(NewLocalBudget(1, 1), 1)
		ctx := context.Background()
		heavy := queue(ctx, b, "heavy", 10)
		deadline, cancel := context.WithTimeout(ctx, 4*time.Second)
		defer cancel()
		start := time.Now()
		// Another heavy call would come after the 10 queued: refused.
		err := b.Wait(WithClient(deadline, "heavy"))
		var be *BudgetError
		if !errors.As(err, &be) || be.Banned || be.RetryAfter < 5*time.Second {
			t.Fatalf("heavy call past its deadline: %v, want a *BudgetError with a long RetryAfter", err)
		}
		if time.Since(start) != 0 {
			t.Fatal("the refusal waited")
		}
		// A light call comes after the turn being taken and one heavy
		// call: its slot is 3s away, within its deadline.
		if err := b.Wait(WithClient(deadline, "light")); err != nil {
			t.Fatalf("light call: %v", err)
		}
		if took := time.Since(start); took != 3*time.Second {
			t.Fatalf("light call waited %v", took)
		}
		noErrors(t, heavy())
	})
}

func TestFairBudgetBanRefusesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewFairBudget(NewLocalBudget(1, 1), 1)
		ctx := context.Background()
		queued := queue(ctx, b, "heavy", 3)
		b.Pause(ctx, time.Hour, true)
		start := time.Now()
		err := b.Wait(WithClient(ctx, "light"))
		var be *BudgetError
		if !errors.As(err, &be) || !be.Banned || be.RetryAfter < 59*time.Minute {
			t.Fatalf("wait while banned: %v", err)
		}
		// A caller still waiting for its turn is refused when the turn
		// comes, without waiting for a slot; one that had reserved its
		// slot before the ban (heavy-1; heavy-0 had the burst) is refused
		// when the slot comes: it would have called the data node while
		// banned.
		errs := queued()
		if time.Since(start) > time.Second {
			t.Fatalf("queued callers took %v to be refused", time.Since(start))
		}
		if errs[0] != nil {
			t.Fatalf("heavy-0, granted before the ban: %v", errs[0])
		}
		for i, err := range errs[1:] {
			if !errors.As(err, &be) || !be.Banned {
				t.Fatalf("heavy-%d: %v, want banned", i+1, err)
			}
		}
		if s, _ := b.State(ctx); !s.Banned || s.Waiting != 0 {
			t.Fatalf("state %+v", s)
		}
	})
}

// Uncontended, FairBudget adds two mutex sections to the budget's own
// cost: compare BenchmarkBudgetUncontended/local and /fair.
func BenchmarkBudgetUncontended(b *testing.B) {
	ctx := WithClient(context.Background(), "203.0.113.7")
	for _, bc := range []struct {
		name   string
		budget func() Budget
	}{
		{"local", func() Budget { return NewLocalBudget(1e9, 1e9) }},
		{"fair", func() Budget { return NewFairBudget(NewLocalBudget(1e9, 1e9), 1e9) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			budget := bc.budget()
			b.ReportAllocs()
			for b.Loop() {
				if err := budget.Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
