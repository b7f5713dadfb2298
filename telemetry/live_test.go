package telemetry_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/telemetry"
	"github.com/tradenet/gateway/upstream"
)

// The live feed's figures are read at each scrape: a scrape shows the
// stats of that moment, the poller state as one 1 among 0s.
func TestLiveMetricsReadTheFeedAtEachScrape(t *testing.T) {
	m := telemetry.NewMetrics()
	var mu sync.Mutex
	st := live.Stats{State: "idle"}
	m.WatchLive(func() live.Stats {
		mu.Lock()
		defer mu.Unlock()
		return st
	})
	metricsHave(t, m, "idle",
		"gateway_live_subscriptions 0",
		"gateway_live_deliveries_total 0",
		`gateway_live_poller_state{state="idle"} 1`,
		`gateway_live_poller_state{state="polling"} 0`,
		"gateway_live_lag_seconds 0",
		"gateway_live_head_block 0",
		`gateway_live_history_resumes_total{result="served"} 0`,
		"gateway_live_history_transactions 0",
		"gateway_live_coordinator_messages_refused_total 0",
	)

	mu.Lock()
	st = live.Stats{
		Subscriptions: 3, Delivered: 1234,
		DroppedSlow: 2, DroppedGap: 1, Refused: 5, BacklogRefused: 4,
		RefusedClient: 8, RefusedCalls: 9,
		Polls: 77, PollErrors: 6,
		State:            "following",
		Head:             upstream.TxCursor{Block: 34514203, Index: 2},
		DeliveredAt:      upstream.TxCursor{Block: 34514200, Index: 9},
		Lag:              1500 * time.Millisecond,
		RefusedPositions: 7, Reanchors: 1,
		StallAfter:          30 * time.Second,
		CaughtUpFromHistory: 11, HistoryRefused: 3, History: 1999,
		BadMessages: 2,
	}
	mu.Unlock()
	text := metricsHave(t, m, "busy",
		"gateway_live_subscriptions 3",
		"gateway_live_deliveries_total 1234",
		`gateway_live_dropped_total{reason="slow"} 2`,
		`gateway_live_dropped_total{reason="gap"} 1`,
		`gateway_live_refused_total{reason="limit"} 5`,
		`gateway_live_refused_total{reason="backlog"} 4`,
		`gateway_live_refused_total{reason="client"} 8`,
		`gateway_live_refused_total{reason="calls"} 9`,
		"gateway_live_polls_total 77",
		"gateway_live_poll_errors_total 6",
		`gateway_live_poller_state{state="following"} 1`,
		`gateway_live_poller_state{state="idle"} 0`,
		`gateway_live_poller_state{state="starting"} 0`,
		`gateway_live_poller_state{state="polling"} 0`,
		`gateway_live_poller_state{state="backoff"} 0`,
		"gateway_live_lag_seconds 1.5",
		"gateway_live_head_block 3.4514203e+07",
		"gateway_live_delivered_block 3.45142e+07",
		"gateway_live_refused_positions_total 7",
		"gateway_live_reanchors_total 1",
		"gateway_live_lag_threshold_seconds 30",
		`gateway_live_poller_state{state="stalled"} 0`,
		`gateway_live_history_resumes_total{result="served"} 11`,
		`gateway_live_history_resumes_total{result="refused"} 3`,
		"gateway_live_history_transactions 1999",
		"gateway_live_coordinator_messages_refused_total 2",
		"# TYPE gateway_live_deliveries_total counter",
		"# TYPE gateway_live_history_resumes_total counter",
		"# TYPE gateway_live_history_transactions gauge",
		"# TYPE gateway_live_coordinator_messages_refused_total counter",
		"# TYPE gateway_live_dropped_total counter",
		"# TYPE gateway_live_subscriptions gauge",
	)
	if n := strings.Count(text, "\ngateway_live_poller_state{"); n != 6 {
		t.Errorf("%d poller state series, want 6", n)
	}
}

// The Redis coordinator's figures are read at each scrape too: messages
// dropped by reason, and leases taken over.
func TestLiveCoordinatorMetricsReadTheCoordinatorAtEachScrape(t *testing.T) {
	m := telemetry.NewMetrics()
	var mu sync.Mutex
	var st telemetry.LiveCoordinatorStats
	m.WatchLiveCoordinator(func() telemetry.LiveCoordinatorStats {
		mu.Lock()
		defer mu.Unlock()
		return st
	})
	metricsHave(t, m, "quiet",
		`gateway_live_coordinator_messages_dropped_total{reason="oversized"} 0`,
		`gateway_live_coordinator_messages_dropped_total{reason="unauthentic"} 0`,
		`gateway_live_coordinator_messages_dropped_total{reason="stale"} 0`,
		"gateway_live_lease_takeovers_total 0",
	)

	mu.Lock()
	st = telemetry.LiveCoordinatorStats{Oversized: 1, Unauthentic: 4, Stale: 2, Takeovers: 3}
	mu.Unlock()
	metricsHave(t, m, "attacked",
		`gateway_live_coordinator_messages_dropped_total{reason="oversized"} 1`,
		`gateway_live_coordinator_messages_dropped_total{reason="unauthentic"} 4`,
		`gateway_live_coordinator_messages_dropped_total{reason="stale"} 2`,
		"gateway_live_lease_takeovers_total 3",
		"# TYPE gateway_live_coordinator_messages_dropped_total counter",
		"# TYPE gateway_live_lease_takeovers_total counter",
	)
}

// Without metrics, or without a feed (a coordinator), WatchLive
// (WatchLiveCoordinator) does nothing.
func TestWatchLiveIsNilSafe(t *testing.T) {
	var none *telemetry.Metrics
	none.WatchLive(func() live.Stats { t.Fatal("stats read without metrics"); return live.Stats{} })
	none.WatchLiveCoordinator(func() telemetry.LiveCoordinatorStats {
		t.Fatal("coordinator stats read without metrics")
		return telemetry.LiveCoordinatorStats{}
	})
	m := telemetry.NewMetrics()
	m.WatchLive(nil)
	m.WatchLiveCoordinator(nil)
	if text := gather(t, m); strings.Contains(text, "gateway_live_") {
		t.Errorf("live metrics without a feed:\n%s", text)
	}
}
