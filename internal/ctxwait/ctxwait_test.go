package ctxwait

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestOutlasts(t *testing.T) {
	now := time.Now()
	if Outlasts(context.Background(), now, time.Hour) {
		t.Fatal("a context without a deadline is outlasted")
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(time.Minute))
	defer cancel()
	if Outlasts(ctx, now, 30*time.Second) || !Outlasts(ctx, now, 2*time.Minute) {
		t.Fatal("wrong against a deadline a minute away")
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("a completed sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// An hour's sleep on an ended context returns at once, with its error.
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended context: %v", err)
	}
}

func TestEveryCallsUntilTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 3500*time.Millisecond)
		defer cancel()
		calls := 0
		Every(ctx, time.Second, func() { calls++ })
		if calls != 3 {
			t.Errorf("%d calls in 3.5 intervals, want 3", calls)
		}
	})
}
