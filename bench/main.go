// Command bench measures what the gateway costs over calling the REST data
// service directly, and how that cost grows.
//
// It starts the sample data service in its fast mode (responses cached) on
// loopback and a gateway in this process over it, then, for a fixed set of
// queries, measures in the same run a Go client fetching the data straight
// from the REST service (decoding it into package upstream's wire types and
// making the extra requests the data needs) and the same client querying
// the gateway. It reports ratios: latency (p50, p99), throughput, CPU and
// allocations, upstream requests per request, bytes on the wire. Before
// measuring a query it checks that both paths return the same items.
//
// The browse section (browse.go) is another kind of measure: people
// browsing an explorer through the gateway binary, on the data node's
// real rate limit, to count the people one upstream budget serves.
//
// The cost section (cost.go) puts the gateway binary, Tailcall (a Rust
// GraphQL gateway, installed by scripts/install-tailcall.sh) and the
// direct call side by side on a page with every field of every kind and on
// three narrow queries: throughput, each gateway process's CPU time per
// request, and latency with the data node at a distance.
//
// Usage:
//
//	go run ./bench                      # every section, markdown on stdout
//	go run ./bench -runs 3 -out r.md    # three runs, medians
//	go run ./bench -smoke               # a few seconds: every query checked, tiny cells
//	go run ./bench -cpuprofile cpu.out -memprofile mem.out   # profile the heaviest query
//	go run ./bench -sections browse -people 50,200 -baseline-env UPSTREAM_CACHE_BYTES=0
//	go run ./bench -sections cost -runs 3 -tailcall-bin "$(scripts/install-tailcall.sh)"
//
// BENCHMARKS.md explains the sections and holds results.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tradenet/gateway/graph"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are the command-line flags.
type options struct {
	sections     []string
	duration     time.Duration
	rounds       int
	runs         int
	maxRequests  int
	largeScale   int
	loaderWait   time.Duration
	executor     string
	directDecode string
	compression  int
	distances    []time.Duration
	smoke        bool
	out          string
	jsonOut      string
	liveWindow   time.Duration

	// The browse section (browse.go).
	people                                    []int
	replicas                                  []int
	replicasGiven                             bool // -replicas was given: the smoke run keeps it
	browseWarmup, browseDuration, browseDrain time.Duration
	think                                     time.Duration
	browseMix                                 pageMix
	browseZipf                                float64
	browseMaxViews                            int
	gatewayEnv, baselineEnv                   settingsList
	gatewayBin                                string
	tailcallBin                               string
	costQueries                               []string // the cost section's queries by name; empty for all
	browseGet                                 bool

	cpuProfile, memProfile string
	profileDuration        time.Duration
	profileConcurrency     int
	profileQuery           string
}

var allSections = []string{"headline", "compression", "distance", "pagesize", "concurrency", "dataset", "coalescing", "live", "browse", "cost"}

func parseOptions(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	sections := fs.String("sections", strings.Join(allSections, ","), "sections to run, comma-separated: "+strings.Join(allSections, ", "))
	fs.DurationVar(&o.duration, "duration", 3*time.Second, "how long each side of each cell is measured")
	fs.IntVar(&o.rounds, "rounds", 3, "alternating rounds per cell (direct, gateway, direct, …) the duration is split into")
	fs.IntVar(&o.runs, "runs", 1, "repeat every section this many times and report medians")
	fs.IntVar(&o.maxRequests, "max-requests", 50000, "most requests per side of a cell")
	fs.IntVar(&o.largeScale, "large-scale", 200, "scale of the large dataset (200: 1.2 million transactions)")
	fs.StringVar(&o.directDecode, "direct-decode", "generic", "how the direct client decodes the REST bodies: generic (into any, as the client decodes the gateway's responses: the same client on both paths) or typed (into package upstream's wire types)")
	fs.StringVar(&o.executor, "executor", "direct", "the gateways' executor: direct (the default: the generated writers, gqlgen's executor for introspection and subscriptions only) or gqlgen (gqlgen's alone: the before of BENCHMARKS.md)")
	fs.IntVar(&o.compression, "compression-level", 0, "the gateways' COMPRESSION_LEVEL: gzip level of their responses, 0 for none. Both clients ask for gzip, as browsers do; the sample service's gzip is made once per response, so the direct path pays no compression, and by default neither does the gateway. The compression section measures the other setting (the gateway's default, level 1, when this is 0) beside it")
	fs.DurationVar(&o.loaderWait, "loader-wait", graph.DefaultLoaderConfig.Wait, "the gateways' loader wait (LOADER_WAIT): how long the asset loader collects references before one upstream round")
	distancesFlag := fs.String("distances", "1ms,5ms", "upstream latencies of the distance section, comma-separated (e.g. 1ms alone)")
	fs.DurationVar(&o.liveWindow, "live-window", 24*time.Second, "live section: how long blocks are appended in each cell")
	peopleFlag := fs.String("people", "50,200,800", "browse section: the steps' numbers of people browsing, comma-separated")
	replicasFlag := fs.String("replicas", "1", "browse section: gateway replicas, comma-separated (e.g. 1,2); more than one share a Redis of their own (redis-server must be installed)")
	fs.DurationVar(&o.browseWarmup, "browse-warmup", 5*time.Second, "browse section: how long people browse before the measured window")
	fs.DurationVar(&o.browseDuration, "browse-duration", 30*time.Second, "browse section: the measured window of each step")
	fs.DurationVar(&o.browseDrain, "browse-drain", 35*time.Second, "browse section: after the window, how long the views in flight may take to finish (no new ones start); those still unanswered count as not served")
	fs.DurationVar(&o.think, "think", 2*time.Second, "browse section: mean think time between a person's page views (exponential)")
	mixFlag := fs.String("browse-mix", defaultMix.String(), "browse section: weights of the page views, page=weight comma-separated; pages "+strings.Join(pageNames[:], ", "))
	fs.Float64Var(&o.browseZipf, "browse-zipf", 1, "browse section: exponent of the Zipf law of the items viewed (transactions, blocks, parties, validators); 0 makes them equally popular")
	fs.IntVar(&o.browseMaxViews, "browse-max-views", 1_000_000, "browse section: most page views of one step")
	fs.Var(&o.gatewayEnv, "gateway-env", "browse section: a gateway setting KEY=VALUE, as its environment variable (repeat the flag for several)")
	fs.Var(&o.baselineEnv, "baseline-env", "browse section: run every step a second time with this setting KEY=VALUE added (repeat for several), the baseline of the ratios; e.g. the gateway's cache off")
	fs.BoolVar(&o.browseGet, "browse-get", false, "browse section: people send their queries as GET requests and keep a browser cache each (Cache-Control, ETag and If-None-Match, as a browser does); by default POST, which no cache keeps")
	fs.StringVar(&o.gatewayBin, "gateway-bin", "", "browse section: the gateway binary to run (default: go build of this repository's gateway)")
	fs.StringVar(&o.tailcallBin, "tailcall-bin", "", "cost section: the Tailcall binary to run (default: what scripts/install-tailcall.sh installs from npm)")
	costQueriesFlag := fs.String("cost-queries", "", "cost section: the queries to measure, comma-separated (every-field-50, hashes-50, one-kind-50, party-page); empty for all")
	fs.BoolVar(&o.smoke, "smoke", false, "a short run that checks every query on both paths and exercises each section briefly; fails on any error")
	fs.StringVar(&o.out, "out", "", "write the markdown report to this file (default: stdout)")
	fs.StringVar(&o.jsonOut, "json", "", "also write every measurement (each run's cells and bursts) as JSON to this file")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "profile mode: write a CPU profile of the gateway serving the heaviest query under load")
	fs.StringVar(&o.memProfile, "memprofile", "", "profile mode: write an allocation profile of the same")
	fs.DurationVar(&o.profileDuration, "profile-duration", 10*time.Second, "how long profile mode drives the gateway")
	fs.IntVar(&o.profileConcurrency, "profile-concurrency", 4, "concurrent clients in profile mode")
	fs.StringVar(&o.profileQuery, "profile-query", "transactions-50", "the query profile mode drives: transactions-N, assets-N, delegations-N or party-N")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	for s := range strings.SplitSeq(*sections, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(allSections, s) {
			return nil, fmt.Errorf("-sections: unknown section %q (want some of %s)", s, strings.Join(allSections, ", "))
		}
		o.sections = append(o.sections, s)
	}
	for s := range strings.SplitSeq(*costQueriesFlag, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(costQueryNames, s) {
			return nil, fmt.Errorf("-cost-queries: unknown query %q (want some of %s)", s, strings.Join(costQueryNames, ", "))
		}
		o.costQueries = append(o.costQueries, s)
	}
	var err error
	if o.people, err = parseCounts(*peopleFlag, 1, 100_000); err != nil {
		return nil, fmt.Errorf("-people: %w", err)
	}
	if o.replicas, err = parseCounts(*replicasFlag, 1, 8); err != nil {
		return nil, fmt.Errorf("-replicas: %w", err)
	}
	fs.Visit(func(f *flag.Flag) { o.replicasGiven = o.replicasGiven || f.Name == "replicas" })
	if o.browseMix, err = parseMix(*mixFlag); err != nil {
		return nil, fmt.Errorf("-browse-mix: %w", err)
	}
	for s := range strings.SplitSeq(*distancesFlag, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("-distances: %q is not a positive duration", s)
		}
		o.distances = append(o.distances, d)
	}
	switch {
	case o.liveWindow <= 0:
		return nil, errors.New("-live-window must be positive")
	case o.browseWarmup < 0 || o.browseDuration <= 0 || o.browseDrain <= 0 || o.think <= 0:
		return nil, errors.New("-browse-duration, -browse-drain and -think must be positive, -browse-warmup not negative")
	case o.browseZipf < 0 || math.IsNaN(o.browseZipf) || math.IsInf(o.browseZipf, 0):
		return nil, errors.New("-browse-zipf must be a number ≥ 0")
	case o.browseMaxViews < 1:
		return nil, errors.New("-browse-max-views must be positive")
	case o.duration <= 0 || o.rounds < 1 || o.runs < 1 || o.maxRequests < 1:
		return nil, errors.New("-duration, -rounds, -runs and -max-requests must be positive")
	case o.largeScale < 1:
		return nil, errors.New("-large-scale must be at least 1")
	case o.directDecode != "generic" && o.directDecode != "typed":
		return nil, errors.New("-direct-decode must be generic or typed")
	case o.executor != "direct" && o.executor != "gqlgen":
		return nil, errors.New("-executor must be direct or gqlgen")
	case o.compression < 0 || o.compression > 9:
		return nil, errors.New("-compression-level must be 0 to 9")
	case o.loaderWait < 0:
		return nil, errors.New("-loader-wait must not be negative")
	case o.profileDuration <= 0 || o.profileConcurrency < 1:
		return nil, errors.New("-profile-duration and -profile-concurrency must be positive")
	}
	if o.smoke {
		o.duration, o.rounds, o.runs = 50*time.Millisecond, 1, 1
		o.maxRequests = min(o.maxRequests, 20)
	}
	return o, nil
}

// envOptions are the options' set-up of an env of the given scale.
func (o *options) envOptions(scale int) envOptions {
	return envOptions{
		scale:         scale,
		loaderWait:    o.loaderWait,
		gqlgenOnly:    o.executor == "gqlgen",
		genericDirect: o.directDecode == "generic",
		compression:   o.compression,
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.cpuProfile != "" || o.memProfile != "" {
		return profile(ctx, o, stderr)
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }

	start := time.Now()
	// The sections that compare with the direct path share one set-up;
	// live and browse start their own.
	var small *env
	if slices.ContainsFunc(o.sections, func(s string) bool { return s != "live" && s != "browse" }) {
		if small, err = newEnv(o.envOptions(1)); err != nil {
			return err
		}
		defer small.close()
	}
	var large *env
	if slices.Contains(o.sections, "dataset") {
		if large, err = newEnv(o.envOptions(o.largeScale)); err != nil {
			return err
		}
		defer large.close()
	}
	logf("sample services ready in %s", time.Since(start).Round(time.Millisecond))

	rep := &report{options: o, machine: describeMachine()}
	for r := range o.runs {
		for _, s := range o.sections {
			logf("run %d/%d: %s", r+1, o.runs, s)
			if err := runSection(ctx, o, s, small, large, rep, logf); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
	}
	rep.took = time.Since(start)

	w := stdout
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := rep.write(w); err != nil {
		return err
	}
	if o.jsonOut != "" {
		b, err := json.MarshalIndent(struct {
			Machine    machine
			Cells      []cell
			Coalescing []coalescingResult
			Live       []liveResult
			Browse     []browseResult
		}{rep.machine, rep.cells, rep.coalescing, rep.live, rep.browse}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	if o.smoke {
		logf("smoke run passed in %s", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// runSection measures one section and adds its cells to rep.
func runSection(ctx context.Context, o *options, section string, small, large *env, rep *report, logf func(string, ...any)) error {
	switch section {
	case "live":
		return runLive(ctx, o, rep, logf)
	case "browse":
		return runBrowse(ctx, o, rep, logf)
	case "cost":
		return runCost(ctx, o, small, rep, logf)
	}
	party, _ := busiestParty(small.sample.Service.Dataset())
	l := load{concurrency: 1, duration: o.duration, maxRequests: o.maxRequests}
	measure := func(e *env, g *gatewayServer, q query, l load) error {
		c, err := measureCell(ctx, e, g, q, l, o.rounds, !o.smoke)
		if err != nil {
			return err
		}
		c.Section = section
		logf("  %-18s %-16s scale %-4d p50 %s / %s (×%.2f)  p99 %s / %s (×%.2f)", c.Name, c.Load, c.Scale,
			ms(c.Direct.P50), ms(c.Gateway.P50), ratio(c.Gateway.P50, c.Direct.P50),
			ms(c.Direct.P99), ms(c.Gateway.P99), ratio(c.Gateway.P99, c.Direct.P99))
		rep.cells = append(rep.cells, c)
		return nil
	}
	switch section {
	case "headline":
		for _, q := range []query{transactionsQuery(50), assetsQuery(100), partyQuery(party, 50), delegationsQuery(1000)} {
			if err := measure(small, small.uncached, q, l); err != nil {
				return err
			}
		}
		// The default configuration, for contrast: assets come from the
		// shared cache after the first request.
		return measure(small, small.cached, transactionsQuery(50), l)
	case "compression":
		// The headline's queries from the same gateway with compression
		// the other way round, next to it.
		for _, q := range []query{transactionsQuery(50), assetsQuery(100), partyQuery(party, 50), delegationsQuery(1000)} {
			for _, g := range []*gatewayServer{small.uncached, small.otherCompression, small.zstd} {
				if err := measure(small, g, q, l); err != nil {
					return err
				}
			}
		}
	case "distance":
		// The headline's queries with the data node at a distance: every
		// upstream response delayed, on both paths.
		for _, d := range distances(o) {
			l := l
			l.upstreamLatency = d
			for _, q := range []query{transactionsQuery(50), assetsQuery(100), partyQuery(party, 50), delegationsQuery(1000)} {
				if err := measure(small, small.uncached, q, l); err != nil {
					return err
				}
			}
		}
	case "pagesize":
		for _, n := range []int{10, 100, 1000} {
			for _, q := range []query{transactionsQuery(n), delegationsQuery(n)} {
				if err := measure(small, small.uncached, q, l); err != nil {
					return err
				}
			}
		}
	case "concurrency":
		for _, c := range concurrencies(o) {
			l := l
			l.concurrency = c
			if o.smoke {
				l.maxRequests = c // one request per client
			}
			if err := measure(small, small.uncached, transactionsQuery(50), l); err != nil {
				return err
			}
		}
	case "dataset":
		for _, e := range []*env{small, large} {
			for _, q := range []query{transactionsQuery(50), transactionsQuery(1000)} {
				if err := measure(e, e.uncached, q, l); err != nil {
					return err
				}
			}
		}
	case "coalescing":
		latencies := []time.Duration{0, 100 * time.Millisecond}
		if o.smoke {
			latencies = latencies[1:]
		}
		res, err := coalescing(ctx, small, transactionsQuery(50), 100, latencies)
		if err != nil {
			return err
		}
		for _, r := range res {
			inflight := ""
			if r.Gateway {
				inflight = fmt.Sprintf("; most identical in flight: %d", r.MostInFlight)
			}
			logf("  %-46s upstream requests %d for %d distinct calls%s", r.Name, r.Upstream, r.Distinct, inflight)
			if r.Gateway && r.MostInFlight > 1 {
				return fmt.Errorf("%s: %d identical upstream requests were in flight at once; coalescing promises one", r.Name, r.MostInFlight)
			}
		}
		rep.coalescing = append(rep.coalescing, res...)
	}
	return nil
}

// parseCounts reads a comma-separated list of integers in [lo, hi].
func parseCounts(s string, lo, hi int) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("%q: want integers from %d to %d, comma-separated", part, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}

// settingsList is a repeated KEY=VALUE flag: gateway settings, as their
// environment variables.
type settingsList []string

func (l *settingsList) String() string { return strings.Join(*l, " ") }

func (l *settingsList) Set(s string) error {
	k, _, ok := strings.Cut(s, "=")
	if !ok || k == "" || strings.ContainsAny(k, " \t\n") {
		return fmt.Errorf("%q: want KEY=VALUE", s)
	}
	*l = append(*l, s)
	return nil
}

// distances are the upstream latencies of the distance section (-distances):
// by default a data node in the same zone, and in the same region; the
// smoke run takes the first alone.
func distances(o *options) []time.Duration {
	if o.smoke {
		return o.distances[:1]
	}
	return o.distances
}

// concurrencies are the client counts of the concurrency section; the
// smoke run stops at 16 (the coalescing section starts 100 at once).
func concurrencies(o *options) []int {
	if o.smoke {
		return []int{1, 16}
	}
	return []int{1, 16, 256}
}

// machine describes where the numbers were taken.
type machine struct {
	CPUs      int
	CPUModel  string
	GoVersion string
	OS        string
}

func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUModel: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}
