package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tradenet/gateway/live"
)

// liveStates are the live feed's poller states (live.Stats.State), in
// the order gateway_live_poller_state lists them.
var liveStates = []string{"idle", "starting", "polling", "following", "backoff", "stalled"}

// liveDescs are the live feed's metrics, computed from live.Stats at
// each scrape.
var liveDescs = struct {
	subscriptions, deliveries, dropped, refused, polls, pollErrors, state, lag, head, delivered, refusedPositions, reanchors, lagThreshold *prometheus.Desc

	historyResumes, history, messagesRefused *prometheus.Desc
}{
	subscriptions: prometheus.NewDesc("gateway_live_subscriptions",
		"Open subscriptions to the live transaction feed in this process (GraphQL subscriptions over WebSocket or SSE).", nil, nil),
	deliveries: prometheus.NewDesc("gateway_live_deliveries_total",
		"Transactions handed to subscriptions: one per subscription per transaction, replays of a resumed subscription included.", nil, nil),
	dropped: prometheus.NewDesc("gateway_live_dropped_total",
		"Subscriptions the feed ended with an error, by reason: slow (the client did not keep up and its buffer filled), gap (this process missed transactions it could not fetch again; clients resubscribe from their last cursor).",
		[]string{"reason"}, nil),
	refused: prometheus.NewDesc("gateway_live_refused_total",
		"Subscriptions refused at the start, by reason: limit (the process's subscription limit was reached), client (the client's share, LIVE_MAX_SUBSCRIPTIONS_PER_CLIENT, was reached), calls (the client's subscriptions' upstream requests per transaction would pass LIVE_MAX_CALLS_PER_CLIENT), backlog (the cursor resumed from is further behind than the feed replays).",
		[]string{"reason"}, nil),
	polls: prometheus.NewDesc("gateway_live_polls_total",
		"Polls of the block explorer's newest transactions made by this process (one poller for all its subscriptions; with Redis, one process polls for the fleet).", nil, nil),
	pollErrors: prometheus.NewDesc("gateway_live_poll_errors_total",
		"Polls of the block explorer that failed; the poller backs off and retries, subscriptions stay open.", nil, nil),
	state: prometheus.NewDesc("gateway_live_poller_state",
		"The live feed's poller state: 1 for the current one, 0 for the others. idle: no subscriptions, nothing polls; starting: reading the chain head; polling: this process polls; following: another replica holds the polling lease and this one receives its batches through Redis; backoff: polls are failing; stalled: polls succeed (or batches arrive) but the feed has not reached the explorer's head for gateway_live_lag_threshold_seconds.",
		[]string{"state"}, nil),
	lag: prometheus.NewDesc("gateway_live_lag_seconds",
		"How long ago the live feed last knew it had delivered up to the chain head (a poll whose head read it had reached, or the polling replica's batch or heartbeat reaching no further than it); grows while polls fail, while the explorer's head is ahead of what the feed can deliver, while the explorer is behind the feed, or while the polling replica is silent. 0 while idle.", nil, nil),
	head: prometheus.NewDesc("gateway_live_head_block",
		"Block of the explorer's head as the live feed last read it (following: the newest the polling replica's batches reached); 0 until it has read the chain head.", nil, nil),
	delivered: prometheus.NewDesc("gateway_live_delivered_block",
		"Block of the newest transaction the live feed has fanned out to subscriptions; below gateway_live_head_block while the feed catches up (or is stuck), above it while the explorer is behind the feed.", nil, nil),
	refusedPositions: prometheus.NewDesc("gateway_live_refused_positions_total",
		"Explorer rows (and Redis batches) the live feed refused for their position: further past the transaction before it than any chain goes (the chain from the feed's position does not reach it), past the explorer's head, or at an index no block has. The rows of the same page at valid positions are delivered.", nil, nil),
	reanchors: prometheus.NewDesc("gateway_live_reanchors_total",
		"Times the live feed moved back to the explorer's head (or the polling replica's) after it stayed behind the feed's position, or after the explorer rewrote the transaction at it: an explorer reset or reindexed, or a position accepted that the chain never reached.", nil, nil),
	lagThreshold: prometheus.NewDesc("gateway_live_lag_threshold_seconds",
		"The lag past which the live feed counts as stalled (ten poll intervals, at least 30 s): /readyz fails while the feed has subscriptions and gateway_live_lag_seconds exceeds it.", nil, nil),
	historyResumes: prometheus.NewDesc("gateway_live_history_resumes_total",
		"Subscriptions resuming from a cursor that the live feed's history of recent transactions answered without an explorer request, by result: served (caught up from the history alone), refused (the history proves the cursor further behind than the feed replays; also counted in gateway_live_refused_total{reason=\"backlog\"}).",
		[]string{"result"}, nil),
	history: prometheus.NewDesc("gateway_live_history_transactions",
		"Transactions the live feed remembers (the newest delivered, up to twice LIVE_MAX_BACKLOG) to catch resumes up from memory.", nil, nil),
	messagesRefused: prometheus.NewDesc("gateway_live_coordinator_messages_refused_total",
		"Refusals of authentic messages from the Redis coordinator (signed by a replica of the fleet) by the live feed: undecodable, more transactions than a poll finds, starting at a position no chain reaches, or reaching past the explorer's head. Their rows refused for their position are also counted in gateway_live_refused_positions_total. Always 0 without a coordinator (no Redis, or no key the replicas share).", nil, nil),
}

// WatchLive exports the live feed's figures, read from stats at every
// scrape (live.Feed.Stats).
func (m *Metrics) WatchLive(stats func() live.Stats) {
	if m == nil || stats == nil {
		return
	}
	d := liveDescs
	m.registry.MustRegister(collectorFunc{
		desc: d.subscriptions,
		also: []*prometheus.Desc{d.deliveries, d.dropped, d.refused, d.polls, d.pollErrors, d.state, d.lag, d.head, d.delivered, d.refusedPositions, d.reanchors, d.lagThreshold, d.historyResumes, d.history, d.messagesRefused},
		collect: func(ch chan<- prometheus.Metric) {
			st := stats()
			gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
			}
			counter := func(desc *prometheus.Desc, v uint64, labels ...string) {
				ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), labels...)
			}
			gauge(d.subscriptions, float64(st.Subscriptions))
			counter(d.deliveries, st.Delivered)
			counter(d.dropped, st.DroppedSlow, "slow")
			counter(d.dropped, st.DroppedGap, "gap")
			counter(d.refused, st.Refused, "limit")
			counter(d.refused, st.BacklogRefused, "backlog")
			counter(d.refused, st.RefusedClient, "client")
			counter(d.refused, st.RefusedCalls, "calls")
			counter(d.polls, st.Polls)
			counter(d.pollErrors, st.PollErrors)
			for _, s := range liveStates {
				v := 0.0
				if s == st.State {
					v = 1
				}
				gauge(d.state, v, s)
			}
			gauge(d.lag, st.Lag.Seconds())
			gauge(d.head, float64(st.Head.Block))
			gauge(d.delivered, float64(st.DeliveredAt.Block))
			counter(d.refusedPositions, st.RefusedPositions)
			counter(d.reanchors, st.Reanchors)
			gauge(d.lagThreshold, st.StallAfter.Seconds())
			counter(d.historyResumes, st.CaughtUpFromHistory, "served")
			counter(d.historyResumes, st.HistoryRefused, "refused")
			gauge(d.history, float64(st.History))
			counter(d.messagesRefused, st.BadMessages)
		},
	})
}

// LiveCoordinatorStats are the figures of the coordinator that shares the
// live feed's poller among replicas through Redis (redisstate's
// LiveCoordinator.Stats).
type LiveCoordinatorStats struct {
	// Oversized, Unauthentic and Stale count the messages on the
	// coordinator's channel it dropped before reading them: larger than a
	// batch can be, not signed by a key of the fleet, or sent too far
	// from this process's clock or replayed.
	Oversized, Unauthentic, Stale uint64
	// Takeovers counts leases this replica took over from a holder that
	// could not be a live replica's or had gone silent.
	Takeovers uint64
}

// liveCoordinatorDescs are the coordinator's metrics, computed from
// LiveCoordinatorStats at each scrape.
var liveCoordinatorDescs = struct {
	dropped, takeovers *prometheus.Desc
}{
	dropped: prometheus.NewDesc("gateway_live_coordinator_messages_dropped_total",
		"Messages on the live feed's Redis channel this replica dropped before reading them, by reason: oversized (larger than a batch can be), unauthentic (no envelope, or no key of LIVE_BATCH_KEY verifies its MAC), stale (sent more than 30 s from this replica's clock, or a replay). Replicas sign every message: any drop means someone else writes to the channel, or a replica has another key.",
		[]string{"reason"}, nil),
	takeovers: prometheus.NewDesc("gateway_live_lease_takeovers_total",
		"Polling leases this replica took over from a holder that could not be a live replica's (no expiry, another type, a value too long to name a replica) or had published nothing, neither batch nor heartbeat, for the lease's lifetime.", nil, nil),
}

// WatchLiveCoordinator exports the live feed coordinator's figures, read
// from stats at every scrape; nothing when stats is nil (no Redis, or no
// key the replicas share: no coordinator).
func (m *Metrics) WatchLiveCoordinator(stats func() LiveCoordinatorStats) {
	if m == nil || stats == nil {
		return
	}
	d := liveCoordinatorDescs
	m.registry.MustRegister(collectorFunc{
		desc: d.dropped,
		also: []*prometheus.Desc{d.takeovers},
		collect: func(ch chan<- prometheus.Metric) {
			st := stats()
			counter := func(desc *prometheus.Desc, v uint64, labels ...string) {
				ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), labels...)
			}
			counter(d.dropped, st.Oversized, "oversized")
			counter(d.dropped, st.Unauthentic, "unauthentic")
			counter(d.dropped, st.Stale, "stale")
			counter(d.takeovers, st.Takeovers)
		},
	})
}
