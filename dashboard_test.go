package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/tradenet/gateway/sampleservice"
)

// The Grafana dashboard (deploy/grafana/gateway.json) is checked against
// the gateway it shows: its structure (what Grafana needs to import it
// anywhere), and every metric its queries name against what a running
// gateway serves on /metrics.

const dashboardPath = "deploy/grafana/gateway.json"

type grafanaDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type grafanaPanel struct {
	ID         int                `json:"id"`
	Type       string             `json:"type"`
	Title      string             `json:"title"`
	Datasource *grafanaDatasource `json:"datasource"`
	Targets    []struct {
		RefID      string             `json:"refId"`
		Expr       string             `json:"expr"`
		Datasource *grafanaDatasource `json:"datasource"`
	} `json:"targets"`
	Panels  []grafanaPanel `json:"panels"` // a collapsed row's
	GridPos struct {
		X int `json:"x"`
		Y int `json:"y"`
		W int `json:"w"`
		H int `json:"h"`
	} `json:"gridPos"`
}

type grafanaDashboard struct {
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

func readDashboard(t *testing.T) (grafanaDashboard, []byte) {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d, raw
}

// allPanels lists the panels, those of collapsed rows included.
func allPanels(panels []grafanaPanel) []grafanaPanel {
	var out []grafanaPanel
	for _, p := range panels {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// The dashboard imports into any Grafana: one Prometheus data source
// variable that every panel and query uses (no data source uid of one
// installation), unique panel ids, a query in every panel, the rows an
// operator looks for.
func TestDashboardStructure(t *testing.T) {
	d, raw := readDashboard(t)
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d, want at least 36", d.SchemaVersion)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q, title %q: want both", d.UID, d.Title)
	}
	var dsVar string
	for _, v := range d.Templating.List {
		if v.Type == "datasource" && v.Query == "prometheus" {
			dsVar = "${" + v.Name + "}"
		}
	}
	if dsVar == "" {
		t.Fatal("no Prometheus data source variable in templating")
	}
	isVar := func(ds *grafanaDatasource) bool {
		return ds != nil && ds.Type == "prometheus" && ds.UID == dsVar
	}

	panels := allPanels(d.Panels)
	// No panel covers another (Grafana would push one down, out of its
	// row).
	for i, a := range d.Panels {
		for _, b := range d.Panels[i+1:] {
			pa, pb := a.GridPos, b.GridPos
			if pa.X < pb.X+pb.W && pb.X < pa.X+pa.W && pa.Y < pb.Y+pb.H && pb.Y < pa.Y+pa.H {
				t.Errorf("panels %q %+v and %q %+v overlap", a.Title, pa, b.Title, pb)
			}
		}
	}
	ids := map[int]string{}
	var rows []string
	for _, p := range panels {
		if prev, dup := ids[p.ID]; dup || p.ID == 0 {
			t.Errorf("panel %q: id %d (also %q)", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			rows = append(rows, p.Title)
			if len(p.Targets) > 0 {
				t.Errorf("row %q has queries", p.Title)
			}
			continue
		}
		if p.Title == "" {
			t.Errorf("panel %d has no title", p.ID)
		}
		if !isVar(p.Datasource) {
			t.Errorf("panel %q: data source %+v, want the variable %s", p.Title, p.Datasource, dsVar)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		refs := map[string]bool{}
		for _, q := range p.Targets {
			if strings.TrimSpace(q.Expr) == "" || q.RefID == "" || refs[q.RefID] {
				t.Errorf("panel %q: query %q with refId %q (empty, or a refId twice)", p.Title, q.Expr, q.RefID)
			}
			refs[q.RefID] = true
			if q.Datasource != nil && !isVar(q.Datasource) {
				t.Errorf("panel %q: query data source %+v, want the variable %s", p.Title, q.Datasource, dsVar)
			}
		}
	}
	for _, want := range []string{"Traffic", "Upstream", "Caches", "Live", "Redis", "compression"} {
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, want) }) {
			t.Errorf("no row about %s among %q", want, rows)
		}
	}
	// Whatever the structs above do not look at: a data source uid
	// anywhere (the annotations' built-in one aside) must be a variable.
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ds, ok := v["datasource"].(map[string]any); ok {
				uid, _ := ds["uid"].(string)
				if ds["type"] != "grafana" && !strings.HasPrefix(uid, "$") {
					t.Errorf("a data source with uid %q, not a variable", uid)
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	walk(generic)
}

var (
	promqlStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promqlGrouping  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlMatchers  = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promqlVariables = regexp.MustCompile(`\$\{?\w+\}?`)
	promqlName      = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promqlKeywords  = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true, "atan2": true}
)

// promqlMetrics returns the metric names expr reads: the identifiers left
// once strings, label matchers, ranges, groupings and Grafana variables
// are gone that are not functions (followed by "(") or keywords.
func promqlMetrics(expr string) []string {
	e := promqlStrings.ReplaceAllString(expr, `""`)
	e = promqlGrouping.ReplaceAllString(e, " ")
	e = promqlMatchers.ReplaceAllString(e, " ")
	e = promqlVariables.ReplaceAllString(e, " ")
	var names []string
	for _, loc := range promqlName.FindAllStringIndex(e, -1) {
		name := e[loc[0]:loc[1]]
		rest := strings.TrimLeft(e[loc[1]:], " \t\n")
		if strings.HasPrefix(rest, "(") || promqlKeywords[strings.ToLower(name)] {
			continue
		}
		if loc[0] > 0 && (e[loc[0]-1] >= '0' && e[loc[0]-1] <= '9' || e[loc[0]-1] == '.') {
			continue // an exponent's "e9" in 1e-9
		}
		names = append(names, name)
	}
	return names
}

func TestPromQLMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (code) (rate(gateway_graphql_errors_total{job=~"$job", code!="a{b}"}[$__rate_interval]))`: {"gateway_graphql_errors_total"},
		`histogram_quantile(0.99, sum by (le, op) (rate(x_seconds_bucket{a="b"}[5m])))`:                   {"x_seconds_bucket"},
		`max by (service) (2 * a{state="open"} + ignoring(state) b{state="half-open"})`:                   {"a", "b"},
		`sum(rate(hits[1m])) / clamp_min(sum(rate(all[1m])), 1e-9) and on(instance) up offset 5m`:         {"hits", "all", "up"},
		`min by (instance) (gateway_live_delivered_block{instance=~"${instance}"} > 0)`:                   {"gateway_live_delivered_block"},
	} {
		if got := promqlMetrics(expr); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", expr, got, want)
		}
	}
}

// afterWiring are metrics the dashboard shows that a gateway serves only
// once something else exists: the live feed's, once the feed is wired
// (operations.watchLive; all or none of them), its Redis coordinator's,
// with Redis (TestForgedLiveMessagesShowOnMetrics scrapes them), and the
// subscription event errors, once an event had an error.
var afterWiring = map[string]string{
	"gateway_graphql_subscription_event_errors_total": "appears with the first subscription event error",
	"gateway_live_coordinator_messages_dropped_total": "served with Redis and a key the replicas share (the live feed's coordinator)",
	"gateway_live_lease_takeovers_total":              "served with Redis and a key the replicas share (the live feed's coordinator)",
}

const liveMetricPrefix = "gateway_live_"

// Every metric the dashboard's queries read is one the gateway serves
// (histograms by their _bucket, _sum and _count series), and every
// gateway_ metric the gateway serves is on the dashboard.
func TestDashboardMetricsAreServed(t *testing.T) {
	d, _ := readDashboard(t)
	used := map[string][]string{} // metric → panels
	for _, p := range allPanels(d.Panels) {
		for _, q := range p.Targets {
			for _, name := range promqlMetrics(q.Expr) {
				used[name] = append(used[name], p.Title)
			}
		}
	}
	for _, sure := range []string{"gateway_graphql_operation_duration_seconds_bucket", "gateway_live_lag_seconds", "gateway_upstream_budget_tokens"} {
		if used[sure] == nil {
			t.Fatalf("no %s among the dashboard's metrics %v: the extraction misses names", sure, used)
		}
	}

	// A gateway with some traffic: a query whose asset reference goes
	// through a loader, one refused, and an upstream error.
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	g := startOpsGateway(t, u.args("-upstream-retries", "0")...)
	if r := postGraphQL(t, g.URL, query(`query OneAsset($id: ID!) { asset(id: $id) { id } }`, map[string]any{"id": u.Sample.Dataset().Assets[0].ID}), nil); len(r.Errors) > 0 {
		t.Fatalf("OneAsset: %+v", r.Errors)
	}
	if r := postGraphQL(t, g.URL, query(`query BadPage { assets(first: -1) { edges { cursor } } }`, nil), nil); len(r.Errors) == 0 {
		t.Fatal("BadPage: no error")
	}
	families := scrape(t, g.URL)

	served := func(name string) bool {
		if f := families[name]; f != nil {
			return f.GetType() != dto.MetricType_HISTOGRAM // a histogram is read by its series
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && families[base].GetType() == dto.MetricType_HISTOGRAM {
				return true
			}
		}
		return false
	}
	liveWired := false
	for name := range families {
		liveWired = liveWired || strings.HasPrefix(name, liveMetricPrefix)
	}
	var telemetrySource strings.Builder
	files, _ := filepath.Glob("telemetry/*.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		telemetrySource.Write(b)
	}
	for name, panels := range used {
		if served(name) {
			continue
		}
		why, later := afterWiring[name]
		if strings.HasPrefix(name, liveMetricPrefix) && !liveWired {
			why, later = "the live feed is not wired to the metrics yet (operations.watchLive)", true
		}
		if !later {
			t.Errorf("%s (panels %q) is not served on /metrics", name, panels)
			continue
		}
		// Not served yet: it must at least be a metric the gateway
		// defines, not a typo.
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			base = strings.TrimSuffix(base, suffix)
		}
		if !strings.Contains(telemetrySource.String(), fmt.Sprintf("%q", base)) {
			t.Errorf("%s (panels %q) is defined nowhere in telemetry/", name, panels)
			continue
		}
		t.Logf("%s not served yet: %s", name, why)
	}
	for name, f := range families {
		if !strings.HasPrefix(name, "gateway_") {
			continue
		}
		shown := used[name] != nil
		if f.GetType() == dto.MetricType_HISTOGRAM {
			shown = used[name+"_bucket"] != nil || used[name+"_count"] != nil || used[name+"_sum"] != nil
		}
		if !shown {
			t.Errorf("the gateway serves %s, which no panel of %s shows", name, dashboardPath)
		}
	}
}
