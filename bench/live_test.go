package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestLiveSmoke runs the live section as the smoke run does: subscribers
// over real WebSocket connections to a gateway over the sample service,
// blocks appended, every delivery checked (measureLive fails otherwise);
// then the report holds the section, the upstream requests are the feed's
// polls whatever the subscribers and their filters, and nothing is left
// running.
func TestLiveSmoke(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	o, err := parseOptions([]string{"-smoke", "-sections", "live"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep := &report{options: o, machine: describeMachine()}
	if err := runLive(ctx, o, rep, t.Logf); err != nil {
		t.Fatal(err)
	}
	p := liveCellParams(o)
	if want := len(p.intervals)*len(p.shapes) + 1; len(rep.live) != want {
		t.Fatalf("%d live cells, want %d", len(rep.live), want)
	}
	for _, r := range rep.live {
		if r.Transactions == 0 || r.Deliveries == 0 || r.P50 <= 0 || r.P99 < r.P50 {
			t.Errorf("cell %+v: nothing measured", r)
		}
		if !r.Filtered && r.Deliveries != r.Transactions*r.Subscribers {
			t.Errorf("cell %+v: %d deliveries, want every transaction to every subscriber", r, r.Deliveries)
		}
		if r.Polls == 0 {
			t.Errorf("cell %+v: the feed did not poll", r)
		}
	}
	if f := rep.live[len(rep.live)-1]; !f.Filtered || f.Subscribers != p.filtered {
		t.Errorf("last cell %+v: want %d filtered subscribers", f, p.filtered)
	}
	var b strings.Builder
	if err := rep.write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Live transactions", "| 50ms | 20 | 4 × 5 |", "a filter each"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
