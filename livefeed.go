package main

import (
	"log/slog"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/redisstate"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// newLiveFeed is the live transaction feed behind the GraphQL subscription
// (docs/architecture.md, The live feed), configured here in full: one
// poller of the explorer for every subscriber of this process, first in the
// explorer's rate budget; with Redis, one poller for every replica, elected
// by a lease, its batches signed with LIVE_BATCH_KEY and published to all
// (README, Running many replicas). Its figures are exported at every
// scrape.
func newLiveFeed(cfg *config, client *upstream.Client, budget upstream.Budget, ops *operations, keys *graph.CursorKeys, logger *slog.Logger) *graph.LiveFeed {
	lc := live.Config{
		Explorer:         client,
		Budget:           budget,
		Interval:         cfg.LivePollInterval,
		MaxBacklog:       cfg.LiveMaxBacklog,
		Buffer:           cfg.LiveBuffer,
		MaxSubscriptions: cfg.LiveMaxSubs,
		Logger:           logger,
		// A client's fair share (keyed by the client key,
		// upstream/client_key.go, as the rate budget's): its subscriptions, and its resumes
		// reading the explorer at once.
		MaxSubscriptionsPerClient: cfg.LiveMaxSubsClient,
		MaxCatchUpsPerClient:      cfg.LiveMaxCatchUps,
		MaxCallsPerClient:         cfg.LiveMaxCallsClient,
		// The upstream cache drops what reached an older head the
		// moment the feed sees a new block (on every replica: followers
		// learn it from the poller's batches and heartbeats).
		OnHead: client.ObserveHead,
		// And keeps the explorer lists (a party's page) that no
		// transaction of a new block matches (upstream.Client.ObserveTransactions).
		OnTransactions: client.ObserveTransactions,
		// With the cache on, the poller runs with or without subscribers:
		// the cache learns of each block, and of its transactions, as it
		// comes (one explorer request per LIVE_POLL_INTERVAL, per fleet
		// with Redis).
		AlwaysPoll: cfg.UpstreamCacheBytes > 0,
	}
	// With Redis and a key the replicas share (LIVE_BATCH_KEY, or
	// CURSOR_KEY's), one poller for the fleet; without a shared key no
	// replica would accept another's batches: each polls for itself
	// (openSharedState says so at startup).
	var coord *redisstate.LiveCoordinator
	if ops.shared != nil && cfg.liveBatchKeys != nil {
		coord = ops.shared.LiveCoordinator(redisstate.LiveOptions{
			LeaseTTL: cfg.LiveLeaseTTL,
			// The holder publishes a batch or a heartbeat at every poll:
			// it is silent only after several polls' time.
			SilentAfter: max(cfg.LiveLeaseTTL, 3*cfg.LivePollInterval),
			Keys:        cfg.liveBatchKeys,
			Logger:      logger,
		})
		lc.Coordinator = coord
	}
	feed := graph.NewLiveFeed(lc, keys)
	ops.watchLive(feed.Stats, coord)
	return feed
}

// subscriptions is the subscription transports' configuration: the
// WebSocket limits and timers, the streams a client may hold open (keyed
// by the client key, upstream/client_key.go), and the origins that may
// open a WebSocket, which are CORS's (a page of another origin cannot
// subscribe).
func (c *config) subscriptions() transport.SubscriptionConfig {
	return transport.SubscriptionConfig{
		MaxPerConnection:        c.WSMaxSubs,
		MaxConnectionsPerClient: c.WSMaxConnsClient,
		InitTimeout:             c.WSInitTimeout,
		KeepAlive:               c.WSKeepAlive,
		WriteTimeout:            c.StreamWriteTimeout,
		AllowedOrigins:          c.CORSOrigins,
	}
}
