package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tradenet/gateway/graph"
)

// report collects the measured cells of every run and writes them as
// markdown tables.
type report struct {
	options    *options
	machine    machine
	cells      []cell
	coalescing []coalescingResult
	live       []liveResult
	browse     []browseResult
	cost       []costCell
	took       time.Duration
}

// group is one cell over all runs.
type group struct {
	key   string
	cells []cell
}

// groupBy groups items by key, the groups in the order of their first
// item, each in the items' order: a cell's or a step's measures over the
// runs.
func groupBy[S ~[]T, T any](items []T, key func(T) string) []S {
	var out []S
	index := map[string]int{}
	for _, item := range items {
		k := key(item)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], item)
	}
	return out
}

func (r *report) groups(section string) []group {
	key := func(c cell) string {
		return fmt.Sprintf("%s|%s|%d|%v|%s", c.Name, c.Load, c.Scale, c.Cached, c.Coding)
	}
	inSection := slices.DeleteFunc(slices.Clone(r.cells), func(c cell) bool { return c.Section != section })
	var out []group
	for _, cells := range groupBy[[]cell](inSection, key) {
		out = append(out, group{key: key(cells[0]), cells: cells})
	}
	return out
}

// median of f over the group's runs.
func (g group) median(f func(c cell) float64) float64 {
	v := make([]float64, len(g.cells))
	for i, c := range g.cells {
		v[i] = f(c)
	}
	return median(v)
}

// ratioText is the median over runs of f, with the range when there were
// several runs.
func (g group) ratioText(f func(c cell) float64) string {
	m := g.median(f)
	if len(g.cells) == 1 {
		return fmt.Sprintf("%.2f", m)
	}
	lo, hi := f(g.cells[0]), f(g.cells[0])
	for _, c := range g.cells[1:] {
		lo, hi = min(lo, f(c)), max(hi, f(c))
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", m, lo, hi)
}

func (g group) dur(f func(c cell) time.Duration) string {
	return ms(time.Duration(g.median(func(c cell) float64 { return float64(f(c)) })))
}

func (g group) first() cell { return g.cells[0] }

// Ratios: gateway over direct.
var (
	p50Ratio        = func(c cell) float64 { return ratio(c.Gateway.P50, c.Direct.P50) }
	p99Ratio        = func(c cell) float64 { return ratio(c.Gateway.P99, c.Direct.P99) }
	throughputRatio = func(c cell) float64 { return c.Gateway.Throughput / c.Direct.Throughput }
	cpuRatio        = func(c cell) float64 { return ratio(c.Gateway.CPUPerRequest, c.Direct.CPUPerRequest) }
)

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func kb(b float64) string { return fmt.Sprintf("%.1f kB", b/1000) }

func (r *report) write(w io.Writer) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	o := r.options
	p("# Gateway vs direct REST: benchmark results\n\n")
	p("- Machine: %d CPUs, %s, %s, %s\n", r.machine.CPUs, r.machine.CPUModel, r.machine.OS, r.machine.GoVersion)
	p("- Command: `go run ./bench %s`\n", strings.Join(commandFlags(o), " "))
	if len(r.cells) > 0 || len(r.coalescing) > 0 {
		p("- %d run(s); each cell measured for %s per side in %d alternating rounds; figures are medians over runs, ratios are gateway ÷ direct (range over runs in brackets). Took %s.\n",
			o.runs, o.duration, o.rounds, r.took.Round(time.Second))
		p("- Gateway asset cache: off (every request resolves its asset references upstream) unless a row says cached; loader wait %s; executor %s; direct client's decoding %s; gateway's response compression %s (both clients ask for gzip).\n\n", o.loaderWait, o.executor, o.directDecode, compressionText(o.compression))
	} else {
		p("- %d run(s). Took %s.\n\n", o.runs, r.took.Round(time.Second))
	}

	// Each section's tables: latency (with the targets' verdicts where
	// they apply), and the costs.
	for _, sec := range []struct {
		name, title    string
		targets, costs bool
	}{
		{"headline", "Headline: the four queries, one client at a time (default dataset)", true, true},
		{"compression", "Compression: the headline's queries from the gateway uncompressed, gzipped and in zstd", false, true},
		{"distance", "The data node at a distance: every upstream response delayed, on both paths", true, true},
		{"pagesize", "Growth with page size (one client at a time)", false, false},
		{"concurrency", "Growth with concurrency (identical queries)", false, true},
		{"dataset", fmt.Sprintf("Growth with the dataset (scale 1 vs scale %d, one client at a time)", o.largeScale), false, false},
	} {
		gs := r.groups(sec.name)
		if len(gs) == 0 {
			continue
		}
		p("## %s\n\n", sec.title)
		if sec.name == "pagesize" {
			growthTable(p, gs)
		} else {
			latencyTable(p, gs, sec.targets)
		}
		p("\n")
		if sec.costs {
			costTable(p, gs)
			p("\n")
		}
	}
	if len(r.coalescing) > 0 {
		p("## Coalescing: 100 concurrent identical queries\n\n")
		p("| Burst | Upstream requests | Distinct calls of one query | Most identical upstream requests in flight | Took |\n|---|---:|---:|---:|---:|\n")
		for _, g := range r.coalescingGroups() {
			c := g[0]
			lo, hi, most := c.Upstream, c.Upstream, c.MostInFlight
			took := make([]float64, len(g))
			for i, x := range g {
				lo, hi, most = min(lo, x.Upstream), max(hi, x.Upstream), max(most, x.MostInFlight)
				took[i] = float64(x.Elapsed)
			}
			upstream := fmt.Sprint(lo)
			if hi != lo {
				upstream = fmt.Sprintf("%d–%d", lo, hi)
			}
			inflight := "—"
			if c.Gateway {
				inflight = fmt.Sprint(most)
			}
			p("| %s | %s | %d | %s | %s |\n", c.Name, upstream, c.Distinct, inflight, ms(time.Duration(median(took))))
		}
		p("\n")
	}
	writeLive(p, r.live)
	writeBrowse(p, r.browse)
	writeCost(p, r.cost)
	_, err := io.WriteString(w, b.String())
	return err
}

// coalescingGroups groups the bursts of every run by name, in order.
func (r *report) coalescingGroups() [][]coalescingResult {
	var out [][]coalescingResult
	index := map[string]int{}
	for _, c := range r.coalescing {
		i, ok := index[c.Name]
		if !ok {
			i = len(out)
			index[c.Name] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], c)
	}
	return out
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func compressionText(level int) string {
	if level == 0 {
		return "off"
	}
	return fmt.Sprintf("gzip level %d", level)
}

func rowName(c cell) string {
	name := c.Name
	if c.Cached {
		name += " (cached)"
	}
	if c.Section == "compression" {
		if c.Coding == "" {
			name += ", uncompressed"
		} else {
			name += ", " + c.Coding
		}
	}
	return name
}

func latencyTable(p func(string, ...any), gs []group, targets bool) {
	p("| Query | Load | Scale | Direct p50 | Gateway p50 | p50 × | Direct p99 | Gateway p99 | p99 × | Direct req/s | Gateway req/s | Throughput × |")
	if targets {
		p(" Targets (p50 ≤ 1.5×, p99 ≤ 2×) |")
	}
	p("\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	if targets {
		p("---|")
	}
	p("\n")
	for _, g := range gs {
		c := g.first()
		p("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %s |", rowName(c), c.Load, c.Scale,
			g.dur(func(c cell) time.Duration { return c.Direct.P50 }), g.dur(func(c cell) time.Duration { return c.Gateway.P50 }), g.ratioText(p50Ratio),
			g.dur(func(c cell) time.Duration { return c.Direct.P99 }), g.dur(func(c cell) time.Duration { return c.Gateway.P99 }), g.ratioText(p99Ratio),
			g.median(func(c cell) float64 { return c.Direct.Throughput }), g.median(func(c cell) float64 { return c.Gateway.Throughput }), g.ratioText(throughputRatio))
		if targets {
			p(" %s / %s |", verdict(g.median(p50Ratio) <= 1.5), verdict(g.median(p99Ratio) <= 2))
		}
		p("\n")
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func costTable(p func(string, ...any), gs []group) {
	p("| Query | Load | Upstream requests per request (direct / gateway) | Wire per request: direct / client↔gateway / gateway↔upstream | CPU per request (direct / gateway, ×) | Allocations per request (direct / gateway) | Goroutines per request (direct / gateway) |\n")
	p("|---|---|---:|---:|---:|---:|---:|\n")
	for _, g := range gs {
		c := g.first()
		p("| %s | %s | %.2f / %.2f | %s / %s / %s | %s / %s, %s | %.0f / %.0f | %.0f / %.0f |\n", rowName(c), c.Load,
			g.median(func(c cell) float64 { return c.Direct.UpstreamPerRequest }), g.median(func(c cell) float64 { return c.Gateway.UpstreamPerRequest }),
			kb(g.median(func(c cell) float64 { return c.Direct.ClientBytes })), kb(g.median(func(c cell) float64 { return c.Gateway.ClientBytes })),
			kb(g.median(func(c cell) float64 { return c.Gateway.UpstreamBytes })),
			g.dur(func(c cell) time.Duration { return c.Direct.CPUPerRequest }), g.dur(func(c cell) time.Duration { return c.Gateway.CPUPerRequest }), g.ratioText(cpuRatio),
			g.median(func(c cell) float64 { return c.Direct.AllocsPerRequest }), g.median(func(c cell) float64 { return c.Gateway.AllocsPerRequest }),
			g.median(func(c cell) float64 { return c.Direct.GoroutinesPerRequest }), g.median(func(c cell) float64 { return c.Gateway.GoroutinesPerRequest }))
	}
}

func growthTable(p func(string, ...any), gs []group) {
	p("| Query | Direct p50 | Gateway p50 | p50 × | p99 × | Throughput × | Gateway p50 per row | CPU per request (direct / gateway, ×) | Gateway allocations per row (direct) | Wire per request: direct / client↔gateway |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range gs {
		c := g.first()
		rows := float64(max(c.Rows, 1))
		p("| %s | %s | %s | %s | %s | %s | %.1f µs | %s / %s, %s | %.0f (%.0f) | %s / %s |\n", rowName(c),
			g.dur(func(c cell) time.Duration { return c.Direct.P50 }), g.dur(func(c cell) time.Duration { return c.Gateway.P50 }), g.ratioText(p50Ratio),
			g.ratioText(p99Ratio), g.ratioText(throughputRatio),
			g.median(func(c cell) float64 { return float64(c.Gateway.P50) / float64(time.Microsecond) })/rows,
			g.dur(func(c cell) time.Duration { return c.Direct.CPUPerRequest }), g.dur(func(c cell) time.Duration { return c.Gateway.CPUPerRequest }), g.ratioText(cpuRatio),
			g.median(func(c cell) float64 { return c.Gateway.AllocsPerRequest })/rows, g.median(func(c cell) float64 { return c.Direct.AllocsPerRequest })/rows,
			kb(g.median(func(c cell) float64 { return c.Direct.ClientBytes })), kb(g.median(func(c cell) float64 { return c.Gateway.ClientBytes })))
	}
}

// commandFlags are the flags that differ from the defaults, to repeat the
// run.
func commandFlags(o *options) []string {
	var f []string
	if o.smoke {
		return []string{"-smoke"}
	}
	if len(o.sections) != len(allSections) {
		f = append(f, "-sections "+strings.Join(o.sections, ","))
	}
	if o.duration != 3*time.Second {
		f = append(f, "-duration "+o.duration.String())
	}
	if o.rounds != 3 {
		f = append(f, fmt.Sprintf("-rounds %d", o.rounds))
	}
	if o.runs != 1 {
		f = append(f, fmt.Sprintf("-runs %d", o.runs))
	}
	if o.largeScale != 200 {
		f = append(f, fmt.Sprintf("-large-scale %d", o.largeScale))
	}
	if o.loaderWait != graph.DefaultLoaderConfig.Wait {
		f = append(f, "-loader-wait "+o.loaderWait.String())
	}
	if o.executor != "direct" {
		f = append(f, "-executor "+o.executor)
	}
	if o.compression != 0 {
		f = append(f, fmt.Sprintf("-compression-level %d", o.compression))
	}
	if len(o.costQueries) > 0 {
		f = append(f, "-cost-queries "+strings.Join(o.costQueries, ","))
	}
	if o.liveWindow != 24*time.Second {
		f = append(f, "-live-window "+o.liveWindow.String())
	}
	if o.directDecode != "generic" {
		f = append(f, "-direct-decode "+o.directDecode)
	}
	return append(f, browseFlags(o)...)
}
