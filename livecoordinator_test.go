package main

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/sampleservice"
)

// A message on the live channel that no replica signed (someone else
// writing to the Redis the replicas share) is dropped by the gateway's
// coordinator and shows on /metrics as one unauthentic message; the feed
// never sees it. A gateway without Redis serves no coordinator metrics.
func TestForgedLiveMessagesShowOnMetrics(t *testing.T) {
	redisURL := redistest.Start(t)
	u := startUpstream(t, sampleservice.Config{}, nil)
	g := startOpsGateway(t, u.args("-redis-url", redisURL, "-cursor-key", cursorKeyA)...)
	dropped := func(reason string) float64 {
		return metricValue(scrape(t, g.URL), "gateway_live_coordinator_messages_dropped_total", map[string]string{"reason": reason})
	}
	m := scrape(t, g.URL)
	for _, reason := range []string{"oversized", "unauthentic", "stale"} {
		if v := metricValue(m, "gateway_live_coordinator_messages_dropped_total", map[string]string{"reason": reason}); v != 0 {
			t.Fatalf("before any message: dropped %s = %v, want 0", reason, v)
		}
	}
	if v := metricValue(m, "gateway_live_lease_takeovers_total", nil); v != 0 {
		t.Fatalf("lease takeovers = %v, want 0", v)
	}

	// The coordinator listens while the feed has a subscriber.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := dialAs(ctx, "ws"+strings.TrimPrefix(g.URL, "http")+"/graphql", "198.51.100.1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	subscribeWS(ctx, c, "s", "", "")
	waitLive(t, g, 1)

	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	raw := redis.NewClient(opts)
	defer raw.Close()
	channel := redisstate.DefaultPrefix + "live:batches"
	waitCond(t, "the coordinator did not subscribe to "+channel, func() bool {
		n, err := raw.PubSubNumSub(ctx, channel).Result()
		return err == nil && n[channel] > 0
	})
	forged := `{"prev":"100.0","transactions":[{"block":"101","index":0,"hash":"FORGED"}]}`
	if err := raw.Publish(ctx, channel, forged).Err(); err != nil {
		t.Fatal(err)
	}
	waitCond(t, "no unauthentic message counted", func() bool { return dropped("unauthentic") >= 1 })

	m = scrape(t, g.URL)
	for reason, want := range map[string]float64{"oversized": 0, "unauthentic": 1, "stale": 0} {
		if v := metricValue(m, "gateway_live_coordinator_messages_dropped_total", map[string]string{"reason": reason}); v != want {
			t.Errorf("dropped %s = %v, want %v", reason, v, want)
		}
	}
	if v := metricValue(m, "gateway_live_coordinator_messages_refused_total", nil); v != 0 {
		t.Errorf("the feed refused %v messages, want 0: the forged one must not reach it", v)
	}

	alone := startOpsGateway(t, u.args()...)
	m = scrape(t, alone.URL)
	for _, name := range []string{"gateway_live_coordinator_messages_dropped_total", "gateway_live_lease_takeovers_total"} {
		if m[name] != nil {
			t.Errorf("a gateway without Redis serves %s", name)
		}
	}
}
