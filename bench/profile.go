package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// profile drives the gateway with the heaviest query (the transactions page
// with every command field, asset cache off) for a while and writes CPU
// and allocation profiles of the process. The client and the sample
// service share the process: in the profiles, the gateway is what runs
// under packages graph, upstream, gqlgen and net/http's server.
func profile(ctx context.Context, o *options, stderr io.Writer) error {
	// Allocations are sampled during the load only, so that setting up
	// the dataset does not show in the profile.
	runtime.MemProfileRate = 0
	e, err := newEnv(o.envOptions(1))
	if err != nil {
		return err
	}
	defer e.close()
	q, err := namedQuery(o.profileQuery, e)
	if err != nil {
		return err
	}
	if _, err := verify(ctx, e, e.uncached, q); err != nil {
		return err
	}
	fn := func(ctx context.Context) error {
		_, _, err := e.graphql.query(ctx, e.uncached, q.doc, q.vars)
		return err
	}
	if _, err := runPhase(ctx, e, fn, load{concurrency: o.profileConcurrency, duration: time.Second}); err != nil {
		return err
	}

	var cpu *os.File
	if o.cpuProfile != "" {
		if cpu, err = os.Create(o.cpuProfile); err != nil {
			return err
		}
		defer cpu.Close()
		if err := pprof.StartCPUProfile(cpu); err != nil {
			return err
		}
	}
	if o.memProfile != "" {
		runtime.MemProfileRate = 16 << 10
	}
	p, err := runPhase(ctx, e, fn, load{concurrency: o.profileConcurrency, duration: o.profileDuration})
	if cpu != nil {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return err
	}
	if o.memProfile != "" {
		runtime.GC()
		f, err := os.Create(o.memProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return err
		}
	}
	st := p.stats(sideGateway)
	fmt.Fprintf(stderr, "profiled %s through the gateway: %d requests at concurrency %d in %s; p50 %s, p99 %s, %.0f req/s, CPU %s and %.0f allocations per request\n",
		q.name, st.Requests, o.profileConcurrency, st.Elapsed.Round(time.Millisecond), ms(st.P50), ms(st.P99), st.Throughput, ms(st.CPUPerRequest), st.AllocsPerRequest)
	return nil
}

// namedQuery is the query of the comparison with the given name
// (transactions-N, assets-N, delegations-N, party-N).
func namedQuery(name string, e *env) (query, error) {
	kind, size, ok := strings.Cut(name, "-")
	n, err := strconv.Atoi(size)
	if !ok || err != nil || n < 1 || n > 1000 {
		return query{}, fmt.Errorf("query %q: want transactions-N, assets-N, delegations-N or party-N with N from 1 to 1000", name)
	}
	switch kind {
	case "transactions":
		return transactionsQuery(n), nil
	case "assets":
		return assetsQuery(n), nil
	case "delegations":
		return delegationsQuery(n), nil
	case "party":
		party, _ := busiestParty(e.sample.Service.Dataset())
		return partyQuery(party, n), nil
	}
	return query{}, fmt.Errorf("query %q: unknown kind %q", name, kind)
}
