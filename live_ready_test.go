package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradenet/gateway/sampleservice"
)

// TestReadyzFailsWhileTheLiveFeedIsStuck: a gateway whose live feed has a
// subscriber and cannot reach the explorer's head, though every poll
// succeeds (the explorer answers one row for its newest page and nothing
// after the feed's position), turns unready once the feed's lag passes
// its bound (ten poll intervals, at least 30 s), says why, and shows the
// poller stalled on /metrics; when the explorer answers properly again
// the feed catches up and the gateway is ready again. A feed that is not
// stuck, with a subscriber, is ready. It waits for the real bound: about
// 35 s.
func TestReadyzFailsWhileTheLiveFeedIsStuck(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 30 s for the live feed's stall bound")
	}
	svc, err := sampleservice.New(sampleservice.Config{Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var stuck atomic.Bool
	inner := svc.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stuck.Load() && r.URL.Path == "/rest/transactions" {
			q := r.URL.Query()
			if q.Has("after") {
				q.Set("after", "999999999999.0") // nothing after the feed's position
			} else {
				q.Set("first", "1") // the newest transaction only
			}
			r.URL.RawQuery = q.Encode()
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g := startOpsGateway(t, "-upstream", srv.URL, "-explorer", srv.URL+"/rest", "-live-poll-interval", "100ms")

	// Blocks arrive all along.
	ctx, cancel := context.WithCancel(context.Background())
	appended := make(chan struct{})
	go func() {
		defer close(appended)
		for ctx.Err() == nil {
			if _, err := svc.AppendBlock(); err != nil {
				t.Errorf("append: %v", err)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	defer func() { cancel(); <-appended }()

	// A subscriber, over SSE; its stream is read (and dropped) until the end.
	resp := postSSE(t, ctx, g.URL, `{"query":"subscription { transactions { cursor } }"}`)
	defer resp.Body.Close()
	events := make(chan string, 1000)
	go sseDataLines(resp.Body, events)
	select {
	case <-events: // the feed delivers
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	if st := g.gw.live.Stats(); st.Subscriptions != 1 {
		t.Fatalf("live stats %+v, want one subscription", st)
	}
	if resp, body := get(t, g.URL+"/readyz", nil); resp.StatusCode != 200 {
		t.Fatalf("readyz with a live subscriber = %d %q", resp.StatusCode, body)
	}

	stuck.Store(true)
	start := time.Now()
	var body string
	for {
		var resp *http.Response
		resp, body = get(t, g.URL+"/readyz", nil)
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if time.Since(start) > 90*time.Second {
			t.Fatalf("readyz still %d %q after %s stuck (live stats %+v)", resp.StatusCode, body, time.Since(start), g.gw.live.Stats())
		}
		time.Sleep(250 * time.Millisecond)
	}
	if waited := time.Since(start); waited < 29*time.Second {
		t.Errorf("readyz failed %s after the feed got stuck, before the 30 s bound", waited)
	}
	if !strings.HasPrefix(body, "live feed stalled: 1 subscriptions, lag ") || !strings.Contains(body, "state stalled") {
		t.Errorf("readyz body %q", body)
	}
	families := scrape(t, g.URL)
	if v := metricValue(families, "gateway_live_poller_state", map[string]string{"state": "stalled"}); v != 1 {
		t.Errorf("gateway_live_poller_state{state=stalled} = %v", v)
	}
	if v := metricValue(families, "gateway_live_lag_seconds", nil); v < 30 {
		t.Errorf("gateway_live_lag_seconds = %v", v)
	}
	if v := metricValue(families, "gateway_live_lag_threshold_seconds", nil); v != 30 {
		t.Errorf("gateway_live_lag_threshold_seconds = %v", v)
	}

	// The explorer answers properly again: the feed catches up.
	stuck.Store(false)
	recovered := time.Now()
	for {
		resp, body := get(t, g.URL+"/readyz", nil)
		if resp.StatusCode == 200 {
			break
		}
		if time.Since(recovered) > 30*time.Second {
			t.Fatalf("readyz still %d %q 30s after the explorer recovered (live stats %+v)", resp.StatusCode, body, g.gw.live.Stats())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st := g.gw.live.Stats(); st.State != "polling" || st.Subscriptions != 1 {
		t.Errorf("live stats after recovery %+v", st)
	}
}
