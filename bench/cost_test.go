package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
)

// testTailcallBin is the Tailcall binary of the tests: $TAILCALL_BIN, or
// what scripts/install-tailcall.sh installed in its default directory; ""
// when there is none (the tests then leave Tailcall out and say so).
func testTailcallBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("TAILCALL_BIN"); bin != "" {
		return bin
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(home, ".cache")
	}
	bin := filepath.Join(cache, "gateway-bench", "tailcall-"+tailcallVersion, "tailcall")
	if _, err := exec.LookPath(bin); err != nil {
		return ""
	}
	return bin
}

// TestCostQueriesAgree checks the cost section's comparison on each of
// its queries: the gateway (in this process, as the other sections run it)
// returns the direct call's rows, and so does Tailcall when it is
// installed; a gateway page one row short, or of other rows, fails.
func TestCostQueriesAgree(t *testing.T) {
	e, ctx := costTestEnv(t)
	run := &costRun{env: e, gatewayURL: e.uncached.url}
	if bin := testTailcallBin(t); bin != "" {
		tc, err := startTailcall(ctx, bin, t.TempDir(), e.sample.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer tc.stop()
		run.tailcallURL = tc.url
	} else {
		t.Log("Tailcall is not installed (scripts/install-tailcall.sh): the gateway's rows alone are checked")
	}
	party, _ := busiestParty(e.sample.Service.Dataset())
	queries := costQueries(party)
	var names []string
	for _, q := range queries {
		names = append(names, q.name)
	}
	if !slices.Equal(names, costQueryNames) {
		t.Errorf("costQueryNames (-cost-queries) = %v, the queries are %v", costQueryNames, names)
	}
	o, err := parseOptions([]string{"-sections", "cost", "-cost-queries", "hashes-50, party-page"}, io.Discard)
	if err != nil || !slices.Equal(o.costQueries, []string{"hashes-50", "party-page"}) ||
		!strings.Contains(strings.Join(commandFlags(o), " "), "-cost-queries hashes-50,party-page") {
		t.Errorf("-cost-queries hashes-50, party-page: %v, %+v", err, o)
	}
	if _, err := parseOptions([]string{"-cost-queries", "hashes"}, io.Discard); err == nil {
		t.Error("-cost-queries with an unknown query accepted")
	}
	for _, q := range queries {
		if err := run.verifyCost(ctx, q); err != nil {
			t.Errorf("%s: %v", q.name, err)
		}
	}

	for _, q := range queries[:3] {
		short := q
		short.vars = map[string]any{"first": 49}
		if err := run.verifyCost(ctx, short); err == nil || !strings.Contains(err.Error(), "direct returned 50 rows, gateway 49") {
			t.Errorf("%s: a gateway page one row short: got %v", q.name, err)
		}
	}
	other := queries[0]
	other.doc = strings.Replace(other.doc, "transactions(first: $first)", `transactions(first: $first, cmdTypes: ["Batch Market Instructions"])`, 1)
	if err := run.verifyCost(ctx, other); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("a gateway page of other transactions: got %v", err)
	}
	if run.tailcallURL != "" {
		short := queries[0]
		short.tailcallVars = map[string]any{"first": 49}
		if err := run.verifyCost(ctx, short); err == nil || !strings.Contains(err.Error(), "direct returned 50 rows, tailcall 49") {
			t.Errorf("a Tailcall page one row short: got %v", err)
		}
	}
}

// TestCostMeasuresEachProcess checks that a cell of the cost section
// counts each path's requests and reads the CPU time of the processes it
// is given: here this test's own process stands in for both gateways.
func TestCostMeasuresEachProcess(t *testing.T) {
	e, ctx := costTestEnv(t)
	self := os.Getpid()
	run := &costRun{env: e, gatewayURL: e.uncached.url, tailcallURL: e.cached.url, gatewayPID: self, tailcallPID: self}
	q := costQueries("")[1]                       // hashes-50
	q.tailcallDoc, q.tailcallVars = q.doc, q.vars // the second gateway serves the gateway's query
	c, err := run.measure(ctx, q, load{concurrency: 2, duration: time.Minute, maxRequests: 200}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	for p := range costPaths {
		if got := c.Paths[p].Requests; got != 200 {
			t.Errorf("%s: %d requests, want 200", costPath(p), got)
		}
	}
	if c.Paths[costDirect].ProcessCPUPerRequest != 0 {
		t.Errorf("the direct call has no process of its own, but a CPU time per request of %s", c.Paths[costDirect].ProcessCPUPerRequest)
	}
	if c.Paths[costGateway].ProcessCPUPerRequest <= 0 && c.Paths[costTailcall].ProcessCPUPerRequest <= 0 {
		t.Error("no CPU time read for either process")
	}
	if c.Name != "hashes-50" || c.Rows != 50 || c.Load != "concurrency 2" {
		t.Errorf("cell %q, %d rows, load %q", c.Name, c.Rows, c.Load)
	}
}

// TestCostBytesOnly checks the load whose client reads the responses
// without decoding them: the gateway's and Tailcall's requests are made
// and counted, the direct call is not, and an answer naming errors fails
// the phase.
func TestCostBytesOnly(t *testing.T) {
	e, ctx := costTestEnv(t)
	run := &costRun{env: e, gatewayURL: e.uncached.url, tailcallURL: e.cached.url}
	q := costQueries("")[1] // hashes-50
	q.tailcallDoc, q.tailcallVars = q.doc, q.vars
	l := load{concurrency: 2, duration: time.Minute, maxRequests: 100, bytesOnly: true}
	c, err := run.measure(ctx, q, l, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Paths[costDirect].Requests; got != 0 {
		t.Errorf("direct: %d requests, want none", got)
	}
	for _, p := range []costPath{costGateway, costTailcall} {
		if got := c.Paths[p].Requests; got != 100 {
			t.Errorf("%s: %d requests, want 100", p, got)
		}
	}
	if c.Load != "concurrency 2, bytes only" {
		t.Errorf("load %q", c.Load)
	}

	bad := q
	bad.doc = `{ transactions(first: 2) { edges { node { hash } } } asset(id: "nope") { id } }`
	if _, err := run.measure(ctx, bad, l, 1, false); err == nil || !strings.Contains(err.Error(), `"errors"`) {
		t.Errorf("an answer with errors: got %v", err)
	}
}

// costTestEnv is the default dataset's env, as the cost section's gateway
// in this process sees it, closed with the test, and a minute to use it.
func costTestEnv(t *testing.T) (*env, context.Context) {
	t.Helper()
	e, err := newEnv(envOptions{scale: 1, loaderWait: graph.DefaultLoaderConfig.Wait, genericDirect: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return e, ctx
}
