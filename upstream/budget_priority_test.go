package upstream

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// The live feed's poller marks its requests WithPriority: they go before
// every client's waiting callers, however many, and still at the rate.

// urgent starts a priority caller labelled "poll-i" and waits until it
// is queued.
func urgent(ctx context.Context, b Budget, i int) func() error {
	done := make(chan error, 1)
	go func() { done <- b.Wait(WithPriority(labelled(ctx, "poll", i))) }()
	synctest.Wait()
	return func() error { return <-done }
}

func TestFairBudgetServesPriorityBeforeEveryClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &grantLog{Budget: NewLocalBudget(10, 1)}
		b := NewFairBudget(inner, 10)
		ctx := context.Background()
		// A flood: three clients with many callers each, queued first.
		flood := []func() []error{queue(ctx, b, "x", 30), queue(ctx, b, "y", 30), queue(ctx, b, "z", 30)}
		time.Sleep(250 * time.Millisecond)
		synctest.Wait()
		before := len(inner.granted())
		start := time.Now()
		poll0 := urgent(ctx, b, 0)
		poll1 := urgent(ctx, b, 1)
		// Waiting: the priority callers, and the flood's less those
		// granted and the one holding the turn.
		if s, _ := b.State(ctx); s.WaitingClients != 3 || s.Waiting != 2+90-before-1 {
			t.Errorf("state %+v: want the 2 priority callers counted as callers, not a client", s)
		}
		for _, wait := range []func() error{poll0, poll1} {
			if err := wait(); err != nil {
				t.Fatal(err)
			}
		}
		// The turn being taken when they came, then them, in order: one
		// interval each, the rate unchanged.
		order := inner.granted()
		if got := order[before+1 : before+3]; !slices.Equal(got, []string{"poll-0", "poll-1"}) {
			t.Fatalf("grants after the priority callers came: %v, want the turn under way then poll-0, poll-1 (all: %v)", order[before:], order)
		}
		if took := time.Since(start); took > 300*time.Millisecond {
			t.Fatalf("the priority callers waited %v, want at most 3 intervals", took)
		}
		for _, f := range flood {
			noErrors(t, f())
		}
		// Rate unchanged: 92 grants at 10/s after the burst of 1.
		if took := time.Since(start.Add(-250 * time.Millisecond)); took < 9*time.Second {
			t.Fatalf("92 grants in %v: priority must not exceed the rate", took)
		}
	})
}

func TestFairBudgetPriorityCallerThatGivesUpLeavesTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner, b := spentFairBudget(t)
		ctx := context.Background()
		holder := queue(ctx, b, "a", 1) // holds the turn
		cancelled, cancel := context.WithCancel(ctx)
		gaveUp := urgent(cancelled, b, 0)
		client := queue(ctx, b, "b", 1)
		cancel()
		if err := gaveUp(); !errors.Is(err, context.Canceled) {
			t.Fatalf("priority caller that gave up: %v", err)
		}
		noErrors(t, append(holder(), client()...))
		if got := inner.granted(); !slices.Equal(got, []string{"", "a-0", "b-0"}) {
			t.Fatalf("grants %v", got)
		}
		if len(b.urgent) != 0 || b.waiting != 0 || b.busy {
			t.Fatalf("queue not empty: urgent %d, waiting %d, busy %v", len(b.urgent), b.waiting, b.busy)
		}
	})
}

func TestFairBudgetPriorityRefusedAtOnceWhenTooLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewFairBudget(NewLocalBudget(1, 1), 1)
		ctx := context.Background()
		if err := b.Wait(ctx); err != nil { // the burst
			t.Fatal(err)
		}
		holder := queue(ctx, b, "a", 1)
		first := urgent(ctx, b, 0)
		// A second priority call would wait 3 s (the turn under way, the
		// first, its own): refused at once with a deadline of 2 s; a
		// client's waiting calls do not count against it.
		clients := queue(ctx, b, "c", 5)
		deadline, cancel := context.WithTimeout(WithPriority(ctx), 2*time.Second)
		defer cancel()
		start := time.Now()
		var be *BudgetError
		if err := b.Wait(deadline); !errors.As(err, &be) || time.Since(start) != 0 {
			t.Fatalf("priority call past its deadline: %v after %v, want a *BudgetError at once", err, time.Since(start))
		}
		noErrors(t, append(append(holder(), first()), clients()...))
	})
}

func TestFairBudgetPriorityTakesTheReserveAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The gateway's default budget: 15/s, a burst of 60, of which
		// clients leave 2 to priority callers.
		b := NewFairBudget(NewLocalBudget(15, 60), 15)
		ctx := context.Background()
		start := time.Now()
		flood := queue(ctx, b, "x", 200)
		time.Sleep(5 * time.Second) // the burst is spent; the flood goes at the rate
		synctest.Wait()
		for i := range 10 {
			at := time.Now()
			if err := b.Wait(WithPriority(labelled(ctx, "poll", i))); err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(at); waited != 0 {
				t.Fatalf("priority call %d waited %v with the budget spent by a flood, want none (the reserve)", i, waited)
			}
			time.Sleep(500 * time.Millisecond)
		}
		noErrors(t, flood())
		// The rate holds: 210 grants, 60 of the burst, the rest at 15/s.
		if took, least := time.Since(start), time.Duration(float64(210-60)/15*float64(time.Second)); took < least {
			t.Fatalf("210 grants in %v, want at least %v", took, least)
		}
		if s, _ := b.State(ctx); s.Tokens < 1.9 {
			t.Fatalf("tokens %v after the flood, want the reserve refilled", s.Tokens)
		}
	})
}
