package main

import (
	"fmt"

	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// upstreamURLs sets the upstream services' URLs: UPSTREAM_URL for the
// data node, EXPLORER_URL (by default the data node's) for the block
// explorer; with neither, it starts the embedded sample data service on
// loopback and serves that.
func (gw *gateway) upstreamURLs() error {
	gw.dataNodeURL, gw.explorerURL = gw.cfg.UpstreamURL, gw.cfg.ExplorerURL
	if gw.dataNodeURL == "" {
		sample, err := sampleservice.Start(sampleservice.Config{
			Dataset: sampleservice.DatasetOptions{Seed: gw.cfg.SampleSeed, Scale: gw.cfg.SampleScale},
			Defects: sampleservice.DefaultDefects(),
			Blocks:  sampleservice.BlocksConfig{Interval: gw.cfg.SampleBlockInterval},
		}, "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("start the embedded sample data service: %w", err)
		}
		gw.sample = sample
		gw.dataNodeURL = sample.URL
		gw.explorerURL = sample.URL + "/rest" // as on real deployments
		gw.logger.Info("no UPSTREAM_URL configured: serving the embedded sample data service", "url", sample.URL, "new_block_every", gw.cfg.SampleBlockInterval)
	}
	if gw.explorerURL == "" {
		gw.explorerURL = gw.dataNodeURL
	}
	return nil
}

// newUpstreamClient is the client of the data node and the block
// explorer, configured here in full: the deadline of each call, retries,
// circuit breakers, concurrency, the data node's rate budget (shared
// through Redis when configured, and taken by clients in turn), the cache
// of its answers (sharedstate.go: in this process, and in Redis when
// replicas share a key), and the metrics and tracing of every call, with
// the breakers, the budget and the cache exported at every scrape. Explorer requests wait on a rate budget of
// their own (EXPLORER_RATE, this process's), taken by clients in turn as
// the data node's is; it is returned too: the live feed's requests are
// explorer requests, its polls first in line.
func newUpstreamClient(cfg *config, dataNodeURL, explorerURL string, ops *operations) (*upstream.Client, upstream.Budget, error) {
	retries := cfg.UpstreamRetries
	if retries == 0 {
		retries = -1 // upstream.Config: 0 takes the default, negative means none
	}
	// Contended budget goes to clients in turn (keyed by upstream.WithClientKey).
	budget := upstream.NewFairBudget(ops.budget(cfg.UpstreamRate, cfg.UpstreamBurst), cfg.UpstreamRate)
	explorer := upstream.NewFairBudget(upstream.NewLocalBudget(cfg.ExplorerRate, cfg.ExplorerBurst), cfg.ExplorerRate)
	c := upstream.Config{
		DataNodeURL:    dataNodeURL,
		ExplorerURL:    explorerURL,
		Timeout:        cfg.UpstreamTimeout,
		UserAgent:      "tradenet-graphql-gateway",
		Retry:          upstream.RetryConfig{Retries: retries},
		Breaker:        upstream.BreakerConfig{Failures: cfg.BreakerFailures, OpenFor: cfg.BreakerOpen},
		MaxConcurrent:  cfg.UpstreamConcurrency,
		Budget:         budget,
		ExplorerBudget: explorer,
		TracerProvider: ops.tracing.Provider,
		Cache:          ops.upstreamCache(cfg),
	}
	if m := ops.metrics; m != nil {
		c.OnResponse = m.ObserveUpstream
		c.OnBreakerChange = m.BreakerChanged
	}
	client, err := upstream.New(c)
	if err != nil {
		return nil, nil, err
	}
	ops.metrics.WatchBreakers(client.BreakerState, upstream.ServiceDataNode, upstream.ServiceExplorer)
	ops.metrics.WatchBudget(budget)
	if c.Cache != nil {
		ops.metrics.WatchUpstreamCache(c.Cache.Stats)
	}
	return client, explorer, nil
}
