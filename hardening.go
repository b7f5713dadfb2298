package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/upstream"
)

// validateHardening checks the query limits and the upstream resilience
// settings.
func (c *config) validateHardening() error {
	for _, l := range []struct {
		name  string
		value int
	}{{"MAX_DEPTH", c.MaxDepth}, {"MAX_COST", c.MaxCost}, {"MAX_TOKENS", c.MaxTokens}, {"MAX_ALIASES", c.MaxAliases},
		{"UPSTREAM_BURST", c.UpstreamBurst}, {"UPSTREAM_CONCURRENCY", c.UpstreamConcurrency}, {"BREAKER_FAILURES", c.BreakerFailures}} {
		if l.value < 1 {
			return fmt.Errorf("%s=%d: want at least 1", l.name, l.value)
		}
	}
	if c.UpstreamRate <= 0 {
		return fmt.Errorf("UPSTREAM_RATE=%g: want a positive number of requests per second", c.UpstreamRate)
	}
	if c.MaxUpstreamCalls < 0 {
		return fmt.Errorf("MAX_UPSTREAM_CALLS=%d: want at least 1, or 0 to derive it from UPSTREAM_RATE × REQUEST_TIMEOUT", c.MaxUpstreamCalls)
	}
	if c.UpstreamRetries < 0 || c.UpstreamRetries > 10 {
		return fmt.Errorf("UPSTREAM_RETRIES=%d: want 0 to 10", c.UpstreamRetries)
	}
	if c.BreakerOpen <= 0 {
		return fmt.Errorf("BREAKER_OPEN must be positive")
	}
	return nil
}

// limits is the handler's query limits from the configuration.
func (c *config) limits() graph.Limits {
	calls, basis := c.upstreamCalls()
	return graph.Limits{
		MaxDepth:     c.MaxDepth,
		MaxCost:      c.MaxCost,
		MaxTokens:    c.MaxTokens,
		MaxAliases:   c.MaxAliases,
		MaxBodyBytes: c.MaxBodyBytes,

		MaxUpstreamCalls:   calls,
		UpstreamCallsBasis: basis,
	}
}

// upstreamCalls is the bound on one query's data-node requests, and what
// it is for the error message: MAX_UPSTREAM_CALLS when set, else what the
// rate budget serves within the request's deadline, so that no query can
// hold the budget every client shares for longer than its own deadline.
func (c *config) upstreamCalls() (calls int, basis string) {
	if c.MaxUpstreamCalls > 0 {
		return c.MaxUpstreamCalls, "MAX_UPSTREAM_CALLS"
	}
	calls = max(int(math.Floor(c.UpstreamRate*c.RequestTimeout.Seconds())), 1)
	return calls, fmt.Sprintf("what the rate budget of %s a second serves within the %s request deadline",
		strconv.FormatFloat(c.UpstreamRate, 'f', -1, 64), c.RequestTimeout)
}

// resilience sets the upstream client's retries, breakers, concurrency
// and rate budget from the configuration. budget is the data node's rate
// budget (a shared one, or nil for one kept in this process).
func (c *config) resilience(uc *upstream.Config, budget upstream.Budget) {
	retries := c.UpstreamRetries
	if retries == 0 {
		retries = -1 // upstream.Config: negative means none
	}
	uc.Retry = upstream.RetryConfig{Retries: retries}
	uc.Breaker = upstream.BreakerConfig{Failures: c.BreakerFailures, OpenFor: c.BreakerOpen}
	uc.MaxConcurrent = c.UpstreamConcurrency
	if budget == nil {
		budget = upstream.NewLocalBudget(c.UpstreamRate, c.UpstreamBurst)
	}
	uc.Budget = budget
}
