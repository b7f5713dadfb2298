package upstream

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// The flights tests run in synctest bubbles: synctest.Wait returns once
// every caller is blocked (joined, or left), with no sleep to guess how
// long that takes.

func TestFlightsShareOneCall(t *testing.T) {
	synctest.Test(t, testFlightsShareOneCall)
}

func testFlightsShareOneCall(t *testing.T) {
	var f flights
	var calls atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]flightResult, 50)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err, _ := f.do(context.Background(), "k", func(context.Context) (flightResult, error) {
				calls.Add(1)
				<-release
				return flightResult{fresh: Freshness{BlockHeight: 7}}, nil
			})
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	synctest.Wait() // every caller joined the one call
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d calls for 50 identical callers", n)
	}
	for _, r := range results {
		if r.fresh.BlockHeight != 7 {
			t.Fatalf("a caller got %+v", r)
		}
	}
}

func TestFlightsCallerLeavingDoesNotFailOthers(t *testing.T) {
	synctest.Test(t, testFlightsCallerLeavingDoesNotFailOthers)
}

func testFlightsCallerLeavingDoesNotFailOthers(t *testing.T) {
	var f flights
	started := make(chan struct{})
	release := make(chan struct{})
	fn := func(ctx context.Context) (flightResult, error) {
		close(started)
		select {
		case <-release:
			return flightResult{fresh: Freshness{BlockHeight: 1}}, nil
		case <-ctx.Done():
			return flightResult{}, ctx.Err()
		}
	}
	impatient, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err, _ := f.do(impatient, "k", fn); errc <- err }()
	<-started
	patient := make(chan flightResult, 1)
	go func() {
		res, err, _ := f.do(context.Background(), "k", fn)
		if err != nil {
			t.Error(err)
		}
		patient <- res
	}()
	synctest.Wait() // the patient caller joined
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the impatient caller got %v", err)
	}
	close(release)
	if res := <-patient; res.fresh.BlockHeight != 1 {
		t.Fatalf("the patient caller got %+v", res)
	}
}

func TestFlightsCancelWhenEveryCallerLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f flights
		started := make(chan struct{})
		cancelled := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		_, err, _ := f.do(ctx, "k", func(ctx context.Context) (flightResult, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return flightResult{}, ctx.Err()
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		synctest.Wait() // the call ran on as far as it could
		select {
		case <-cancelled:
		default:
			t.Fatal("the call went on with no caller left")
		}
	})
}

func TestFlightsPanicBecomesAnError(t *testing.T) {
	var f flights
	_, err, _ := f.do(context.Background(), "k", func(context.Context) (flightResult, error) {
		panic("boom")
	})
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("err = %v", err)
	}
	// The key is free again.
	res, err, shared := f.do(context.Background(), "k", func(context.Context) (flightResult, error) {
		return flightResult{fresh: Freshness{BlockHeight: 2}}, nil
	})
	if err != nil || shared || res.fresh.BlockHeight != 2 {
		t.Fatalf("after a panic: %+v %v %v", res, err, shared)
	}
}
