package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// browseGroup is one step over every run.
type browseGroup []browseResult

// browseGroups groups the steps of every run, in order: by replicas,
// configuration and people.
func browseGroups(results []browseResult) []browseGroup {
	return groupBy[browseGroup](results, func(r browseResult) string {
		return fmt.Sprintf("%d|%s|%s|%d", r.Replicas, r.Config, strings.Join(r.Settings, " "), r.People)
	})
}

// median of f over the runs.
func (g browseGroup) median(f func(browseResult) float64) float64 {
	v := make([]float64, len(g))
	for i, r := range g {
		v[i] = f(r)
	}
	return median(v)
}

// latency is the median over runs of a latency, notServed as +Inf.
func (g browseGroup) latency(f func(browseResult) time.Duration) float64 {
	return g.median(func(r browseResult) float64 { return latencySeconds(f(r)) })
}

func latencySeconds(d time.Duration) float64 {
	if d == notServed {
		return math.Inf(1)
	}
	return d.Seconds()
}

// sum of f over the runs.
func (g browseGroup) sum(f func(browseResult) int) int {
	n := 0
	for _, r := range g {
		n += f(r)
	}
	return n
}

// errors are the views by error code, summed over the runs.
func (g browseGroup) errors() string {
	counts := map[string]int{}
	for _, r := range g {
		for c, n := range r.Errors {
			counts[c] += n
		}
	}
	return codesText(counts)
}

// codesText lists counts by code, largest first: "RATE_LIMITED 120, HTTP 503 2".
func codesText(counts map[string]int) string {
	if len(counts) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(counts))
	for _, c := range byCount(counts) {
		parts = append(parts, fmt.Sprintf("%s %d", c, counts[c]))
	}
	return strings.Join(parts, ", ")
}

// secondsText formats a latency in seconds (+Inf: not served).
func secondsText(s float64) string {
	switch {
	case math.IsInf(s, 1):
		return "not served"
	case s < 1:
		return fmt.Sprintf("%.0f ms", s*1000)
	}
	return fmt.Sprintf("%.2f s", s)
}

// methodText says how people send their queries.
func methodText(m string) string {
	if m == "GET" {
		return "GET, each person keeping a browser cache that honours Cache-Control and revalidates with the ETag"
	}
	return "POST, as Apollo Client sends queries by default"
}

// configText names a configuration with its settings.
func configText(r browseResult) string {
	if len(r.Settings) == 0 {
		return r.Config + " (defaults)"
	}
	return r.Config + ": `" + strings.Join(r.Settings, " ") + "`"
}

// p95Target is the latency a person should get a page within, 95 times
// in 100.
const p95Target = time.Second

// writeBrowse writes the browse section's tables.
func writeBrowse(p func(string, ...any), results []browseResult) {
	if len(results) == 0 {
		return
	}
	groups := browseGroups(results)
	runs := 0
	for _, r := range results {
		runs = max(runs, r.Run)
	}
	r0 := results[0]
	p("## Browse: people on one upstream budget\n\n")
	p("Set-up: the sample data service with the data node's limits (20 requests a second per address, bursts of 100, a ban of 10 minutes after 10 consecutive 429s) and a new block every second; the repository's gateway binary, its default settings plus those listed, every replica reaching the data node from 127.0.0.1 (replicas share a Redis); each person from an address of its own (`X-Forwarded-For`). A person thinks (exponential, mean %s), then views one page: one GraphQL request (%s), mix `%s`, the items by a Zipf law of exponent %g over the dataset's transactions, blocks, parties and validators. Each step on fresh processes: %s of warm-up, %s measured, then the views in flight finish (at most %s). %d run(s): medians over runs; error counts summed over runs.\n\n",
		r0.Think, methodText(r0.Method), r0.Mix, r0.Zipf, r0.Warmup, r0.Window, r0.Drain, runs)
	p("Views/s are the views answered within the window. Latency is over the views started in the window; a view that failed (an error, a refusal, a wrong page) or was still unanswered after the drain is never served, so a percentile that falls among them reads *not served*; *answers p95* is over every answer, failures included. Upstream requests are the sample service's counts over the window; CPU over the window, in cores busy (the harness's: the people and the sample service); gateway memory is resident, all replicas together, at the window's end.\n\n")
	get := slices.ContainsFunc(results, func(r browseResult) bool { return r.Method == "GET" })
	p("| Replicas | Gateway | People | Views/s | p50 | p95 | p99 | p95 ≤ 1 s | Failed / started | Errors by code | Refused | Unanswered | Answers p95 |")
	if get {
		p(" From the browser cache / 304 |")
	}
	p(" Data node 429s / bans | Data node req/s | Data node req per 100 views | Explorer req per 100 views | Gateway CPU (cores) | Gateway memory | Harness CPU (cores) | Load average |\n")
	p("|---:|---|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---:|")
	if get {
		p("---:|")
	}
	p("---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range groups {
		r := g[0]
		p95 := g.latency(func(r browseResult) time.Duration { return r.P95 })
		p("| %d | %s | %d | %.1f | %s | %s | %s | %s | %d / %d | %s | %d | %d | %s |",
			r.Replicas, configText(r), r.People,
			g.median(func(r browseResult) float64 { return r.ViewsPerSecond }),
			secondsText(g.latency(func(r browseResult) time.Duration { return r.P50 })),
			secondsText(p95),
			secondsText(g.latency(func(r browseResult) time.Duration { return r.P99 })),
			verdict(p95 <= p95Target.Seconds()),
			g.sum(func(r browseResult) int { return r.Failed + r.Unfinished }), g.sum(func(r browseResult) int { return r.Started }),
			g.errors(), g.sum(func(r browseResult) int { return r.Refused }), g.sum(func(r browseResult) int { return r.Unfinished }),
			secondsText(g.latency(func(r browseResult) time.Duration { return r.AnswerP95 })))
		if get {
			p(" %d / %d |", g.sum(func(r browseResult) int { return r.BrowserCache }), g.sum(func(r browseResult) int { return r.NotModified }))
		}
		p(" %d / %d | %.1f | %.1f | %.1f | %.2f | %.0f MB | %.2f | %.1f |\n",
			g.sum(func(r browseResult) int { return int(r.DataNode429) }), g.sum(func(r browseResult) int { return int(r.Bans) }),
			g.median(func(r browseResult) float64 { return r.DataNodePerSecond }),
			g.median(func(r browseResult) float64 { return r.DataNodePer100 }),
			g.median(func(r browseResult) float64 { return r.ExplorerPer100 }),
			g.median(func(r browseResult) float64 { return r.GatewayCPU }),
			g.median(func(r browseResult) float64 { return float64(r.GatewayRSS) / 1e6 }),
			g.median(func(r browseResult) float64 { return r.HarnessCPU }),
			g.median(func(r browseResult) float64 { return r.LoadAverage }))
	}
	p("\n")
	writeBrowseShapes(p, groups)
	writeBrowseCapacity(p, groups)
	writeBrowseRatios(p, groups)
	p("Per page (views started in the window; p50 and p95 as above):\n\n")
	p("| Replicas | Gateway | People | Page | Views | Failed | p50 | p95 |\n|---:|---|---:|---|---:|---:|---:|---:|\n")
	for _, g := range groups {
		r := g[0]
		for k := range numPageKinds {
			page := func(r browseResult) (pageSummary, bool) {
				i := slices.IndexFunc(r.Pages, func(s pageSummary) bool { return s.Page == pageNames[k] })
				if i < 0 {
					return pageSummary{}, false
				}
				return r.Pages[i], true
			}
			if _, ok := page(r); !ok {
				continue
			}
			pl := func(f func(pageSummary) time.Duration) string {
				return secondsText(g.median(func(r browseResult) float64 { s, _ := page(r); return latencySeconds(f(s)) }))
			}
			p("| %d | %s | %d | %s | %d | %d | %s | %s |\n", r.Replicas, configText(r), r.People, pageNames[k],
				g.sum(func(r browseResult) int { s, _ := page(r); return s.Started }),
				g.sum(func(r browseResult) int { s, _ := page(r); return s.Failed }),
				pl(func(s pageSummary) time.Duration { return s.P50 }), pl(func(s pageSummary) time.Duration { return s.P95 }))
		}
	}
	p("\n")
}

// writeBrowseCapacity says, for each set-up, the most people served
// within the target.
func writeBrowseCapacity(p func(string, ...any), groups []browseGroup) {
	type setup struct {
		replicas int
		config   string
	}
	var order []setup
	best := map[setup]string{}
	for _, g := range groups {
		r := g[0]
		s := setup{r.Replicas, configText(r)}
		if _, ok := best[s]; !ok {
			order = append(order, s)
			best[s] = "none of the steps"
		}
		if g.latency(func(r browseResult) time.Duration { return r.P95 }) <= p95Target.Seconds() {
			best[s] = fmt.Sprintf("**%d people** (%.1f views/s, %.1f data-node requests/s)", r.People,
				g.median(func(r browseResult) float64 { return r.ViewsPerSecond }),
				g.median(func(r browseResult) float64 { return r.DataNodePerSecond }))
		}
	}
	p("Most people served with p95 ≤ 1 s, among the steps:\n\n")
	for _, s := range order {
		p("- %d replica(s), %s: %s\n", s.replicas, s.config, best[s])
	}
	p("\n")
}

// writeBrowseRatios compares each step as configured with its baseline.
func writeBrowseRatios(p func(string, ...any), groups []browseGroup) {
	type step struct{ replicas, people int }
	configured, baseline := map[step]browseGroup{}, map[step]browseGroup{}
	var order []step
	for _, g := range groups {
		s := step{g[0].Replicas, g[0].People}
		if g[0].Config == "baseline" {
			baseline[s] = g
			continue
		}
		configured[s] = g
		order = append(order, s)
	}
	if len(baseline) == 0 {
		return
	}
	ratio := func(a, b browseGroup, f func(browseResult) float64) string {
		x, y := a.median(f), b.median(f)
		if y == 0 || math.IsInf(x, 0) || math.IsInf(y, 0) {
			return "—"
		}
		return fmt.Sprintf("%.2f", x/y)
	}
	p("As configured ÷ baseline (`%s`), the same step run on fresh processes:\n\n", strings.Join(baselineSettings(groups), " "))
	p("| Replicas | People | Views/s × | p95 × | Failed views (as configured / baseline) | Data node req per 100 views × | Explorer req per 100 views × | Data node 429s (as configured / baseline) | Gateway CPU × |\n")
	p("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range order {
		a, b := configured[s], baseline[s]
		if b == nil {
			continue
		}
		failed := func(g browseGroup) int { return g.sum(func(r browseResult) int { return r.Failed + r.Unfinished }) }
		limited := func(g browseGroup) int { return g.sum(func(r browseResult) int { return int(r.DataNode429) }) }
		p("| %d | %d | %s | %s | %d / %d | %s | %s | %d / %d | %s |\n", s.replicas, s.people,
			ratio(a, b, func(r browseResult) float64 { return r.ViewsPerSecond }),
			ratio(a, b, func(r browseResult) float64 { return latencySeconds(r.P95) }),
			failed(a), failed(b),
			ratio(a, b, func(r browseResult) float64 { return r.DataNodePer100 }),
			ratio(a, b, func(r browseResult) float64 { return r.ExplorerPer100 }),
			limited(a), limited(b),
			ratio(a, b, func(r browseResult) float64 { return r.GatewayCPU }))
	}
	p("\n")
}

// baselineSettings are the settings the baseline adds to the configured
// ones.
func baselineSettings(groups []browseGroup) []string {
	var configured, baseline []string
	for _, g := range groups {
		if g[0].Config == "baseline" {
			baseline = g[0].Settings
		} else {
			configured = g[0].Settings
		}
	}
	if len(baseline) >= len(configured) {
		return baseline[len(configured):]
	}
	return baseline
}

// browseFlags are the browse flags that differ from the defaults.
func browseFlags(o *options) []string {
	if !slices.Contains(o.sections, "browse") {
		return nil
	}
	var f []string
	ints := func(v []int) string {
		s := make([]string, len(v))
		for i, n := range v {
			s[i] = fmt.Sprint(n)
		}
		return strings.Join(s, ",")
	}
	if s := ints(o.people); s != "50,200,800" {
		f = append(f, "-people "+s)
	}
	if s := ints(o.replicas); s != "1" {
		f = append(f, "-replicas "+s)
	}
	for _, d := range []struct {
		name      string
		v, defval time.Duration
	}{
		{"-browse-warmup", o.browseWarmup, 5 * time.Second},
		{"-browse-duration", o.browseDuration, 30 * time.Second},
		{"-browse-drain", o.browseDrain, 35 * time.Second},
		{"-think", o.think, 2 * time.Second},
	} {
		if d.v != d.defval {
			f = append(f, d.name+" "+d.v.String())
		}
	}
	if o.browseMix != defaultMix {
		f = append(f, "-browse-mix "+o.browseMix.String())
	}
	if o.browseZipf != 1 {
		f = append(f, fmt.Sprintf("-browse-zipf %g", o.browseZipf))
	}
	if o.browseMaxViews != 1_000_000 {
		f = append(f, fmt.Sprintf("-browse-max-views %d", o.browseMaxViews))
	}
	for _, s := range o.gatewayEnv {
		f = append(f, "-gateway-env "+s)
	}
	for _, s := range o.baselineEnv {
		f = append(f, "-baseline-env "+s)
	}
	if o.browseGet {
		f = append(f, "-browse-get")
	}
	if o.gatewayBin != "" {
		f = append(f, "-gateway-bin "+o.gatewayBin)
	}
	return f
}

// writeBrowseShapes breaks each step's upstream requests per 100 views
// down by what they asked (requestShape): the shapes that occur, in
// requestShapes' order.
func writeBrowseShapes(p func(string, ...any), groups []browseGroup) {
	var shapes []string
	for _, shape := range requestShapes {
		for _, g := range groups {
			if slices.ContainsFunc(g, func(r browseResult) bool { return r.Requests[shape] > 0 }) {
				shapes = append(shapes, shape)
				break
			}
		}
	}
	if len(shapes) == 0 {
		return
	}
	p("Upstream requests per 100 views by what they asked (the window's; the explorer's newest transactions include the live feed's poll):\n\n| Replicas | Gateway | People |")
	for _, shape := range shapes {
		p(" %s |", shape)
	}
	p("\n|---:|---|---:|%s\n", strings.Repeat("---:|", len(shapes)))
	for _, g := range groups {
		r := g[0]
		p("| %d | %s | %d |", r.Replicas, configText(r), r.People)
		for _, shape := range shapes {
			p(" %.2f |", g.median(func(r browseResult) float64 {
				if r.Views == 0 {
					return 0
				}
				return 100 * float64(r.Requests[shape]) / float64(r.Views)
			}))
		}
		p("\n")
	}
	p("\n")
}
