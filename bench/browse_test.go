package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"
	"go.uber.org/goleak"

	"github.com/tradenet/gateway/sampleservice"
)

// TestZipf checks the popularity law: every rank in range, rank r drawn
// in proportion to 1/(r+1)^s, so the first rank k times as often as the
// k-th; exponent 0 is uniform.
func TestZipf(t *testing.T) {
	const draws = 400_000
	for _, tc := range []struct {
		n int
		s float64
	}{{100, 1}, {14, 1.2}, {50, 0}, {1, 1}} {
		z := newZipf(tc.n, tc.s)
		r := rand.New(rand.NewPCG(1, 2))
		counts := make([]int, tc.n)
		for range draws {
			i := z.pick(r)
			if i < 0 || i >= tc.n {
				t.Fatalf("n %d: rank %d out of range", tc.n, i)
			}
			counts[i]++
		}
		norm := 0.0
		for k := 1; k <= tc.n; k++ {
			norm += 1 / math.Pow(float64(k), tc.s)
		}
		for _, k := range []int{0, 1, 4, tc.n - 1} {
			if k >= tc.n {
				continue
			}
			want := draws / math.Pow(float64(k+1), tc.s) / norm
			// Five standard deviations of a binomial count.
			if tol := 5 * math.Sqrt(want); math.Abs(float64(counts[k])-want) > tol {
				t.Errorf("n %d, s %g: rank %d drawn %d times, want %.0f ± %.0f", tc.n, tc.s, k, counts[k], want, tol)
			}
		}
		if tc.s > 0 && tc.n > 1 && counts[0] <= counts[tc.n-1] {
			t.Errorf("n %d, s %g: the first rank (%d) is not more popular than the last (%d)", tc.n, tc.s, counts[0], counts[tc.n-1])
		}
	}
}

func TestParseMix(t *testing.T) {
	m, err := parseMix(defaultMix.String())
	if err != nil || m != defaultMix {
		t.Fatalf("round trip of %q: %v, %v", defaultMix.String(), m, err)
	}
	m, err = parseMix("latest=1, transaction=3")
	if err != nil || m[pageLatest] != 1 || m[pageTransaction] != 3 || m[pageParty] != 0 {
		t.Fatalf("latest=1, transaction=3: %v, %v", m, err)
	}
	for _, bad := range []string{"", "latest", "latest=x", "latest=-1", "home=3", "latest=0", "latest=NaN"} {
		if _, err := parseMix(bad); err == nil {
			t.Errorf("parseMix(%q) accepted", bad)
		}
	}
}

// TestPageMix drives one person for many views against a stand-in
// gateway that answers every list page with a cursor naming the page: the
// kinds come out in the mix's proportions, "older" follows the person's
// own previous list page and goes at most historyDepth pages down, and
// the items are those of the catalog, the popular ones most.
func TestPageMix(t *testing.T) {
	cat := testCatalog(t)
	p := newPerson(7, 1)
	const views = 200_000
	var counts [numPageKinds]int
	items := map[string]int{}
	lastList, pages := "", 0
	for i := range views {
		v := p.next(defaultMix, cat)
		counts[v.kind]++
		switch v.kind {
		case pageHistory:
			if v.vars["after"] != lastList || lastList == "" {
				t.Fatalf("view %d: history after %v, want the previous list page's cursor %q", i, v.vars["after"], lastList)
			}
			if p.depth >= historyDepth {
				t.Fatalf("view %d: history deeper than %d pages", i, historyDepth)
			}
		case pageTransaction, pageBlock, pageParty, pageValidator:
			items[v.kind.String()+" "+v.want]++
		}
		cursor := ""
		if v.kind == pageLatest || v.kind == pageHistory {
			pages++
			cursor = "page-" + strings.Repeat("x", pages%3) + string(rune('a'+pages%26))
			lastList = cursor
		}
		p.saw(v, cursor)
		if p.cursor == "" {
			lastList = ""
		}
	}
	total := 0.0
	for _, w := range defaultMix {
		total += w
	}
	// Every kind but the two lists is drawn at its weight; a history pick
	// without a page to follow shows the front page, so the lists share
	// their two weights.
	for k := range numPageKinds {
		want := defaultMix[k] / total
		got := float64(counts[k]) / views
		if k == pageLatest || k == pageHistory {
			continue
		}
		if math.Abs(got-want) > 0.01 {
			t.Errorf("%s: %.3f of the views, want %.3f", k, got, want)
		}
	}
	lists := float64(counts[pageLatest]+counts[pageHistory]) / views
	if want := (defaultMix[pageLatest] + defaultMix[pageHistory]) / total; math.Abs(lists-want) > 0.01 {
		t.Errorf("lists: %.3f of the views, want %.3f", lists, want)
	}
	if h, w := float64(counts[pageHistory])/views, defaultMix[pageHistory]/total; h < 0.8*w || h > w+0.01 {
		t.Errorf("history: %.3f of the views; want most of its weight %.3f", h, w)
	}
	// Popularity: the most popular transaction and party are viewed more
	// than the least.
	for _, tc := range []struct {
		kind          pageKind
		first, last   string
		firstAtLeastX float64
	}{
		{pageTransaction, cat.hashes[0], cat.hashes[len(cat.hashes)-1], 50},
		{pageParty, cat.parties[0], cat.parties[len(cat.parties)-1], 3},
		{pageValidator, cat.validators[0], cat.validators[len(cat.validators)-1], 3},
	} {
		first, last := items[tc.kind.String()+" "+tc.first], items[tc.kind.String()+" "+tc.last]
		if float64(first) < tc.firstAtLeastX*float64(max(last, 1)) {
			t.Errorf("%s: the most popular viewed %d times, the least %d: want at least %.0f×", tc.kind, first, last, tc.firstAtLeastX)
		}
	}
}

// testCatalog is the catalog of the default sample dataset.
func testCatalog(t *testing.T) *catalog {
	t.Helper()
	_, cat := testDatasetCatalog(t)
	return cat
}

// testDatasetCatalog is the default sample dataset and its catalog.
func testDatasetCatalog(t *testing.T) (*sampleservice.Dataset, *catalog) {
	t.Helper()
	ds, err := sampleservice.Generate(sampleservice.DatasetOptions{Seed: 1, Scale: 1})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := newCatalog(ds, 1)
	if err != nil {
		t.Fatal(err)
	}
	return ds, cat
}

// TestCatalog: transactions and blocks newest first, every validator and
// party of the dataset listed once, the busiest first.
func TestCatalog(t *testing.T) {
	ds, cat := testDatasetCatalog(t)
	txs := ds.Transactions
	if want := txs.(sampleservice.TxHasher).Hash(txs.Len() - 1); cat.hashes[0] != want || len(cat.hashes) != txs.Len() {
		t.Errorf("hashes: first %s of %d, want the newest %s of %d", cat.hashes[0], len(cat.hashes), want, txs.Len())
	}
	if cat.blocks[0] != txs.Meta(txs.Len()-1).Block || !slices.IsSortedFunc(cat.blocks, func(a, b uint64) int { return cmp.Compare(b, a) }) {
		t.Errorf("blocks are not newest first: %v…", cat.blocks[:5])
	}
	if len(slices.Compact(slices.Clone(cat.blocks))) != len(cat.blocks) {
		t.Error("a block is listed twice")
	}
	for _, n := range ds.Nodes {
		if !slices.Contains(cat.validators, n) {
			t.Errorf("validator %s is missing", n)
		}
	}
	for _, party := range ds.Parties {
		if !slices.Contains(cat.parties, strings.ToLower(party)) {
			t.Errorf("party %s is missing", party)
		}
	}
	if len(cat.parties) <= len(ds.Parties) {
		t.Errorf("%d parties: want the submitters beyond the dataset's %d named parties", len(cat.parties), len(ds.Parties))
	}
}

// TestBrowseQueriesAreValid checks the page queries against the schema.
func TestBrowseQueriesAreValid(t *testing.T) {
	schema := loadSchema(t)
	for k := range numPageKinds {
		if _, errs := gqlparser.LoadQuery(schema, pageDocs[k]); errs != nil {
			t.Errorf("queries/browse-%s.graphql: %v", k, errs)
		}
	}
}

// TestSummarizeViews: the window's views, the served latency percentiles
// with failures and unanswered views never served, and the counts.
func TestSummarizeViews(t *testing.T) {
	ms := int64(time.Millisecond)
	s := int64(time.Second)
	recs := []viewRecord{
		// Before the window: not counted, but its end inside counts
		// towards the views answered in the window.
		{kind: pageLatest, start: 900 * ms, end: 1100 * ms},
		// In the window: 16 served at 10..160 ms.
	}
	for i := range 16 {
		recs = append(recs, viewRecord{kind: pageTransaction, start: s + int64(i)*100*ms, end: s + int64(i)*100*ms + int64(i+1)*10*ms})
	}
	recs = append(recs,
		viewRecord{kind: pageParty, start: 2 * s, end: 2*s + 5*ms, outcome: viewFailed, codes: []string{"RATE_LIMITED"}},
		viewRecord{kind: pageParty, start: 2 * s, end: 2*s + 2*ms, outcome: viewRefused, codes: []string{"HTTP 429"}},
		viewRecord{kind: pageBlock, start: 2 * s, end: 2*s + 3*ms, outcome: viewWrong, codes: []string{"WRONG_PAGE"}, dataErrors: 2},
		// Started at the window's end, after it: not counted.
		viewRecord{kind: pageAssets, start: 3 * s, end: 3*s + ms},
		// Unanswered at the drain's end.
		viewRecord{kind: pageValidator, start: 2900 * ms, end: 6 * s, outcome: viewUnfinished},
	)
	got := summarizeViews(recs, s, 3*s)
	if got.Started != 20 || got.Served != 16 || got.Failed != 3 || got.Unfinished != 1 || got.Refused != 1 {
		t.Errorf("started %d served %d failed %d unfinished %d refused %d; want 20, 16, 3, 1, 1", got.Started, got.Served, got.Failed, got.Unfinished, got.Refused)
	}
	// Answered in the window: the one before it, 16 served, 3 failed.
	if got.Views != 20 || got.ViewsPerSecond != 10 {
		t.Errorf("views %d (%.1f/s), want 20 (10/s)", got.Views, got.ViewsPerSecond)
	}
	// 20 started, 16 served: p50 is the 10th fastest (100 ms), p95 and
	// p99 fall among the 4 never served.
	if got.P50 != 100*time.Millisecond || got.P95 != notServed || got.P99 != notServed {
		t.Errorf("p50 %v p95 %v p99 %v; want 100ms, not served, not served", got.P50, servedText(got.P95), servedText(got.P99))
	}
	// Every answer: 19 (16 served, 3 failures of 2–5 ms); p95 the 19th.
	if got.AnswerP95 != 160*time.Millisecond {
		t.Errorf("answers p95 %v, want 160ms", got.AnswerP95)
	}
	if codesText(got.Errors) != "HTTP 429 1, RATE_LIMITED 1, WRONG_PAGE 1" || got.DataErrors != 2 {
		t.Errorf("errors %s, data errors %d", codesText(got.Errors), got.DataErrors)
	}
	want := map[string]pageSummary{
		"transaction": {Page: "transaction", Started: 16, P50: 80 * time.Millisecond, P95: 160 * time.Millisecond},
		"party":       {Page: "party", Started: 2, Failed: 2, P50: notServed, P95: notServed},
		"block":       {Page: "block", Started: 1, Failed: 1, P50: notServed, P95: notServed},
		"validator":   {Page: "validator", Started: 1, Failed: 1, P50: notServed, P95: notServed},
	}
	if len(got.Pages) != len(want) {
		t.Errorf("pages %+v, want %d", got.Pages, len(want))
	}
	for _, ps := range got.Pages {
		w := want[ps.Page]
		if ps.Started != w.Started || ps.Failed != w.Failed || ps.P50 != w.P50 || ps.P95 != w.P95 {
			t.Errorf("page %+v, want %+v", ps, w)
		}
	}
	if z := summarizeViews(nil, s, 2*s); z.P95 != 0 || z.Views != 0 {
		t.Errorf("no views: %+v", z)
	}
}

// TestWriteBrowse: the report's tables from two runs of two steps, each
// with its baseline: medians, the verdict, the capacity line, the ratios.
func TestWriteBrowse(t *testing.T) {
	step := func(run int, config string, people int, views float64, p95 time.Duration, dataNodePer100 float64, failed int) browseResult {
		r := browseResult{Run: run, Replicas: 1, Config: config, People: people, Think: 2 * time.Second, Warmup: 5 * time.Second,
			Window: 30 * time.Second, Drain: 35 * time.Second, Mix: defaultMix.String(), Zipf: 1,
			DataNodePer100: dataNodePer100, DataNodePerSecond: views * dataNodePer100 / 100, ExplorerPer100: 90, GatewayCPU: 0.1, HarnessCPU: 0.05}
		if config == "baseline" {
			r.Settings = []string{"UPSTREAM_CACHE_BYTES=0"}
		}
		r.viewSummary = viewSummary{Views: int(views * 30), ViewsPerSecond: views, Started: int(views * 30), Served: int(views*30) - failed, Failed: failed,
			P50: 2 * time.Millisecond, P95: p95, P99: p95, AnswerP95: p95, Errors: map[string]int{},
			Pages: []pageSummary{{Page: "latest", Started: 10, P50: time.Millisecond, P95: 2 * time.Millisecond}}}
		if failed > 0 {
			r.Errors["RATE_LIMITED"] = failed
		}
		return r
	}
	results := []browseResult{
		step(1, "as configured", 50, 25, 3*time.Millisecond, 10, 0),
		step(1, "baseline", 50, 25, 4*time.Millisecond, 40, 0),
		step(1, "as configured", 200, 98, 800*time.Millisecond, 5, 0),
		step(1, "baseline", 200, 80, notServed, 18, 300),
		step(2, "as configured", 50, 24, 5*time.Millisecond, 12, 0),
		step(2, "baseline", 50, 25, 6*time.Millisecond, 40, 0),
		step(2, "as configured", 200, 96, 600*time.Millisecond, 5, 0),
		step(2, "baseline", 200, 78, notServed, 18, 200),
	}
	var b strings.Builder
	writeBrowse(func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }, results)
	out := b.String()
	for _, want := range []string{
		"## Browse: people on one upstream budget",
		"2 run(s)",
		// Medians over the runs: 24.5 views/s, p95 4 ms.
		"| 1 | as configured (defaults) | 50 | 24.5 | 2 ms | 4 ms | 4 ms | met | 0 / 1470 | none |",
		"| 1 | baseline: `UPSTREAM_CACHE_BYTES=0` | 200 | 79.0 | 2 ms | not served | not served | **not met** | 500 / 4740 | RATE_LIMITED 500 |",
		"- 1 replica(s), as configured (defaults): **200 people** (97.0 views/s, 4.8 data-node requests/s)",
		"- 1 replica(s), baseline: `UPSTREAM_CACHE_BYTES=0`: **50 people**",
		"As configured ÷ baseline (`UPSTREAM_CACHE_BYTES=0`)",
		// 24.5 / 25 views/s, p95 4 / 5 ms, data node 11 / 40 per 100 views.
		"| 1 | 50 | 0.98 | 0.80 | 0 / 0 | 0.28 | 1.00 | 0 / 0 | 1.00 |",
		"| 1 | 200 | 1.23 | — | 0 / 500 | 0.28 |",
		"| 1 | as configured (defaults) | 50 | latest | 20 | 0 | 1 ms | 2 ms |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestParseProcStat reads CPU time and resident memory from a stat line
// whose command name holds spaces and parentheses.
func TestParseProcStat(t *testing.T) {
	line := "4242 (gate way) (x)) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 12 0 100 123456789 3000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	st, err := parseProcStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.cpu != 3*time.Second || st.rss != 3000*int64(os.Getpagesize()) {
		t.Errorf("cpu %v rss %d; want 3s and 3000 pages", st.cpu, st.rss)
	}
	if _, err := parseProcStat([]byte("4242 (x) S 1 2")); err == nil {
		t.Error("a short line was accepted")
	}
}

func TestBrowseOptions(t *testing.T) {
	o, err := parseOptions([]string{"-sections", "browse", "-people", "10, 20", "-replicas", "1,2", "-gateway-env", "A=1",
		"-gateway-env", "B=x=y", "-baseline-env", "UPSTREAM_CACHE_BYTES=0", "-browse-mix", "latest=1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.people, []int{10, 20}) || !slices.Equal(o.replicas, []int{1, 2}) || o.browseMix[pageLatest] != 1 {
		t.Errorf("people %v replicas %v mix %v", o.people, o.replicas, o.browseMix)
	}
	cs := browseConfigs(o)
	if len(cs) != 2 || !slices.Equal(cs[0].settings, []string{"A=1", "B=x=y"}) || !slices.Equal(cs[1].settings, []string{"A=1", "B=x=y", "UPSTREAM_CACHE_BYTES=0"}) {
		t.Errorf("configs %+v", cs)
	}
	if f := strings.Join(commandFlags(o), " "); !strings.Contains(f, "-people 10,20 -replicas 1,2") || !strings.Contains(f, "-baseline-env UPSTREAM_CACHE_BYTES=0") {
		t.Errorf("command flags %q", f)
	}
	for _, bad := range [][]string{{"-people", "0"}, {"-people", "x"}, {"-replicas", "9"}, {"-gateway-env", "NOVALUE"}, {"-gateway-env", "=1"}, {"-think", "0s"}} {
		if _, err := parseOptions(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if o, _ := parseOptions([]string{"-smoke"}, nil); len(browseStepParams(o).people) != 1 || !slices.Equal(browseStepParams(o).replicas, []int{1, 2}) {
		t.Errorf("smoke steps %+v", browseStepParams(o))
	}
	if o, _ := parseOptions([]string{"-smoke", "-replicas", "2"}, nil); !slices.Equal(browseStepParams(o).replicas, []int{2}) {
		t.Errorf("smoke steps with -replicas 2: %+v", browseStepParams(o))
	}
}

// TestBrowseSmoke runs the browse section as the smoke run does: the
// gateway binary built from this repository, alone and as two replicas
// over a Redis, the sample service with the data node's limits, a handful
// of people; every page served (runBrowse fails otherwise), the upstream
// counted, and nothing left running. Under -short, two replicas only (half
// its 16 s): the Redis they share and each gateway's own path are still
// run; the full suite and scripts/check-bench-smoke.sh run both steps.
func TestBrowseSmoke(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	args, steps := []string{"-smoke", "-sections", "browse", "-baseline-env", "ASSET_CACHE_SIZE=0"}, 4
	if testing.Short() {
		args, steps = append(args, "-replicas", "2"), 2
	}
	o, err := parseOptions(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep := &report{options: o, machine: describeMachine()}
	if err := runBrowse(ctx, o, rep, t.Logf); err != nil {
		t.Fatal(err)
	}
	if len(rep.browse) != steps {
		t.Fatalf("%d steps, want %d (1 and 2 replicas, or 2 alone under -short, each as configured and the baseline)", len(rep.browse), steps)
	}
	for _, r := range rep.browse {
		if r.Served == 0 || r.Explorer == 0 || r.P95 <= 0 || r.P95 == notServed || r.GatewayCPU < 0 {
			t.Errorf("step %+v: nothing measured", r)
		}
	}
	var b strings.Builder
	if err := rep.write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Browse: people on one upstream budget", "| 2 | as configured (defaults) | 4 |", "As configured ÷ baseline (`ASSET_CACHE_SIZE=0`)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestFreshness(t *testing.T) {
	for _, tc := range []struct {
		cc, age string
		fresh   time.Duration
		ok      bool
	}{
		{"", "", 0, false},
		{"no-store", "", 0, false},
		{"public, max-age=31536000, immutable", "", 31536000 * time.Second, true},
		{"public, max-age=3", "1", 2 * time.Second, true},
		{"public, max-age=3", "9", 0, true},
		{"public, no-cache", "", 0, true},
		{"Public, Max-Age=5, no-cache", "", 0, true},
		{"private", "", 0, true},
	} {
		h := http.Header{}
		if tc.cc != "" {
			h.Set("Cache-Control", tc.cc)
		}
		if tc.age != "" {
			h.Set("Age", tc.age)
		}
		if fresh, ok := freshness(h); fresh != tc.fresh || ok != tc.ok {
			t.Errorf("Cache-Control %q, Age %q: %v, %v; want %v, %v", tc.cc, tc.age, fresh, ok, tc.fresh, tc.ok)
		}
	}
}

// TestBrowserCache: with GET, a person's second view of a page is served
// by their browser cache while it is fresh, then revalidated with its
// ETag (a 304 serves the kept page, its cursor included); a page marked
// no-store is asked for every time; the cache stays bounded.
func TestBrowserCache(t *testing.T) {
	var requests, revalidations atomic.Int64
	const page = `{"data":{"transactions":{"edges":[` +
		`{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},` +
		`{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},` +
		`{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},` +
		`{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},` +
		`{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}},{"node":{"hash":"A","block":"1"}}` +
		`],"pageInfo":{"endCursor":"next"}},"transaction":{"hash":"H"}}}`
	var cacheControl atomic.Value
	cacheControl.Store("public, max-age=1")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method != http.MethodGet || r.URL.Query().Get("query") == "" || r.Header.Get("X-Forwarded-For") == "" {
			http.Error(w, "want a GET query from a person", http.StatusBadRequest)
			return
		}
		w.Header().Set("Cache-Control", cacheControl.Load().(string))
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			revalidations.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, page)
	}))
	defer srv.Close()
	// The caches' clock is the test's: a copy goes stale when the test
	// moves it, not after a wait.
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	b := &browser{client: srv.Client(), urls: []string{srv.URL}, start: time.Now(), get: true,
		now: func() time.Time { return time.Unix(0, clock.Load()) }}
	p := newPerson(3, 1)
	latest := pageView{kind: pageLatest}
	view := func(v pageView) viewRecord {
		t.Helper()
		rec, cursor, detail := b.view(context.Background(), srv.URL, p, v)
		if rec.outcome != viewServed || (v.kind == pageLatest && cursor != "next") {
			t.Fatalf("%s: outcome %d cursor %q: %s", v.kind, rec.outcome, cursor, detail)
		}
		return rec
	}
	if r := view(latest); r.local || r.notModified || requests.Load() != 1 {
		t.Fatalf("first view: %+v after %d requests", r, requests.Load())
	}
	if r := view(latest); !r.local || requests.Load() != 1 {
		t.Fatalf("second view while fresh: %+v after %d requests, want the browser cache's", r, requests.Load())
	}
	clock.Add(int64(1100 * time.Millisecond)) // past max-age=1
	if r := view(latest); !r.notModified || revalidations.Load() != 1 {
		t.Fatalf("view once stale: %+v, %d revalidations; want a 304", r, revalidations.Load())
	}
	if r := view(latest); !r.local {
		t.Fatalf("view after the 304: %+v, want fresh again", r)
	}
	// Another page is another entry.
	tx := pageView{kind: pageTransaction, want: "H", vars: map[string]any{"hash": "H"}}
	if r := view(tx); r.local {
		t.Fatalf("another page from the cache: %+v", r)
	}
	cacheControl.Store("no-store")
	before := requests.Load()
	view(pageView{kind: pageTransaction, want: "H", vars: map[string]any{"hash": "h"}})
	view(pageView{kind: pageTransaction, want: "H", vars: map[string]any{"hash": "h"}})
	if n := requests.Load() - before; n != 2 {
		t.Fatalf("no-store page: %d requests for 2 views", n)
	}
	for i := range 2 * browserCacheSize {
		p.store(fmt.Sprint(i), http.Header{"Cache-Control": {"max-age=60"}}, "", time.Now())
	}
	if len(p.cache) > browserCacheSize {
		t.Fatalf("%d pages cached, want at most %d", len(p.cache), browserCacheSize)
	}
}

// The breakdown names each request the gateway sends by what it asks
// (URLs as the gateway sends them, from a run's trace).
func TestRequestShape(t *testing.T) {
	for url, want := range map[string]string{
		"/rest/transactions/7F72AB":                                               shapeByHash,
		"/rest/transactions?filters%5Bblock.height%5D=34505994&first=51":          shapeBlock,
		"/rest/transactions?before=34505994.0&filters%5Bblock.height%5D=1&last=9": shapeBlock,
		"/rest/transactions?first=11&parties=1741e542":                            shapePartyTxs,
		"/rest/transactions?first=100":                                            shapeNewest,
		"/rest/transactions?before=34505983.3&last=26":                            shapeOlder,
		"/rest/transactions?after=34505983.3&first=26":                            shapeNewer,
		"/api/v2/delegations?pagination.first=11&partyId=ab":                      shapePartyDelegations,
		"/api/v2/delegations?nodeId=ab&pagination.first=26":                       shapeNodeDelegations,
		"/api/v2/funding-payments?pagination.first=11&partyId=ab":                 shapePartyFunding,
		"/api/v2/assets?assetId=ab":                                               shapeAsset,
		"/api/v2/assets?pagination.first=101":                                     shapeAssets,
		"/api/v2/markets":                                                         shapeOther,
	} {
		r := httptest.NewRequest(http.MethodGet, url, nil)
		if got := requestShape(r); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
}
