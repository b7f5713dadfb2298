package main

// The cost section: what a request costs, by what it asks, side by side in
// one run on three paths over the same sample service: the gateway binary
// (built from this repository, run as its own process), Tailcall (a Rust
// GraphQL gateway, its own process, configured by bench/tailcall/) and the
// direct REST call (this process's client). Four queries: every field of
// every kind on a page of 50 transactions, and three narrow ones (hashes,
// one command kind, a party's page). Five loads: 16 connections for
// throughput, 8 for the CPU time of each gateway process per request
// (read from /proc, so the load generator and the sample service, which
// share this process, are not counted), 16 with every upstream
// response delayed 20 ms for latency against the direct call, and 16
// again with a client that reads the responses without decoding them
// (throughput with the cores left to the servers).

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tradenet/gateway/upstream"
)

//go:embed tailcall/tailcall.graphql tailcall/queries/*.graphql
var tailcallFiles embed.FS

// costPath is one of the three paths of the cost section.
type costPath int

const (
	costDirect costPath = iota
	costGateway
	costTailcall
	costPaths
)

func (p costPath) String() string {
	return [...]string{"direct", "gateway", "tailcall"}[p]
}

// costQuery is one query of the cost section on the three paths.
type costQuery struct {
	name string
	rows int
	// doc and vars are the gateway's request, tailcallDoc and
	// tailcallVars Tailcall's (its schema mirrors the wire: other names).
	doc, tailcallDoc    string
	vars, tailcallVars  map[string]any
	direct              func(ctx context.Context, c *directClient) (any, error)
	directItems         func(v any) ([]string, error)
	gatewayItems        func(data any) ([]string, error)
	tailcallDirectItems func(v any) ([]string, error)
	tailcallItems       func(data any) ([]string, error)
	// typed is the direct call whose result directItems lists when it is
	// not direct's (the typed decoding, for the command kinds' names).
	typed func(ctx context.Context, c *directClient) (any, error)
}

// tailcallQueryText is one of bench/tailcall/queries/.
func tailcallQueryText(name string) string {
	b, err := tailcallFiles.ReadFile("tailcall/queries/" + name + ".graphql")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	return string(b)
}

// costQueries are the section's four queries; party is the party of the
// party page.
func costQueries(party string) []costQuery {
	const first = 50
	txVars := map[string]any{"first": first}
	newest := func(ctx context.Context, c *directClient) (any, error) {
		return c.getAny(ctx, c.explorer+"/transactions?first="+strconv.Itoa(first+1))
	}
	// rawRows are a generic explorer page's first 50 rows.
	rawRows := func(v any) []any {
		rows, _ := at(v, "transactions").([]any)
		return rows[:min(len(rows), first)]
	}
	hashes := func(rows []any, path ...string) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = str(r, path...)
		}
		return out
	}
	gatewayRows := func(data any) ([]any, error) {
		edges, ok := at(data, "transactions", "edges").([]any)
		if !ok {
			return nil, errors.New("no transactions.edges")
		}
		rows := make([]any, len(edges))
		for i, e := range edges {
			rows[i] = at(e, "node")
		}
		return rows, nil
	}
	tailcallRows := func(data any) ([]any, error) {
		rows, ok := at(data, "transactions", "transactions").([]any)
		if !ok {
			return nil, errors.New("no transactions.transactions")
		}
		return rows, nil
	}
	return []costQuery{
		{
			name: "every-field-50", rows: first,
			doc: queryText("every-field-50"), vars: txVars,
			tailcallDoc: tailcallQueryText("every-field-50"), tailcallVars: txVars,
			direct: func(ctx context.Context, c *directClient) (any, error) {
				return c.transactionsAny(ctx, first, nil)
			},
			typed: func(ctx context.Context, c *directClient) (any, error) {
				return c.transactions(ctx, first, nil)
			},
			directItems: func(v any) ([]string, error) {
				p := v.(*directTransactions)
				out := make([]string, len(p.Rows))
				for i := range p.Rows {
					t := &p.Rows[i]
					out[i] = strings.Join([]string{t.Hash, t.Submitter, t.Type, commandTypename(t.Command.Kind)}, " ")
				}
				return out, nil
			},
			gatewayItems: func(data any) ([]string, error) {
				rows, err := gatewayRows(data)
				if err != nil {
					return nil, err
				}
				out := make([]string, len(rows))
				for i, r := range rows {
					kind := str(r, "command", "__typename")
					if kind == "UnknownCommand" {
						kind += ":" + str(r, "command", "name")
					}
					out[i] = strings.Join([]string{str(r, "hash"), str(r, "submitter", "id"), str(r, "type"), kind}, " ")
				}
				return out, nil
			},
			tailcallDirectItems: func(v any) ([]string, error) {
				return wireTransactionItems(v.(*genericTransactions).Rows), nil
			},
			tailcallItems: func(data any) ([]string, error) {
				rows, err := tailcallRows(data)
				return wireTransactionItems(rows), err
			},
		},
		{
			name: "hashes-50", rows: first,
			doc: queryText("hashes-50"), vars: txVars,
			tailcallDoc: tailcallQueryText("hashes-50"), tailcallVars: txVars,
			direct: newest,
			directItems: func(v any) ([]string, error) {
				return hashes(rawRows(v), "hash"), nil
			},
			gatewayItems: func(data any) ([]string, error) {
				rows, err := gatewayRows(data)
				return hashes(rows, "hash"), err
			},
			tailcallItems: func(data any) ([]string, error) {
				rows, err := tailcallRows(data)
				return hashes(rows, "hash"), err
			},
		},
		{
			name: "one-kind-50", rows: first,
			doc: queryText("one-kind-50"), vars: txVars,
			tailcallDoc: tailcallQueryText("one-kind-50"), tailcallVars: txVars,
			direct: newest,
			directItems: func(v any) ([]string, error) {
				rows := rawRows(v)
				out := make([]string, len(rows))
				for i, r := range rows {
					out[i] = str(r, "hash") + batchItem(at(r, "command", "batchMarketInstructions"))
				}
				return out, nil
			},
			gatewayItems: func(data any) ([]string, error) {
				rows, err := gatewayRows(data)
				out := make([]string, len(rows))
				for i, r := range rows {
					// Another kind's command is an empty object: the
					// query selects nothing of it.
					var b any
					if c, _ := at(r, "command").(map[string]any); len(c) > 0 {
						b = c
					}
					out[i] = str(r, "hash") + batchItem(b)
				}
				return out, err
			},
			tailcallItems: func(data any) ([]string, error) {
				rows, err := tailcallRows(data)
				out := make([]string, len(rows))
				for i, r := range rows {
					out[i] = str(r, "hash") + batchItem(at(r, "command", "batchMarketInstructions"))
				}
				return out, err
			},
		},
		partyCostQuery(party, first),
	}
}

// partyCostQuery is the party page: the headline's party query on the
// gateway, its two lists on Tailcall.
func partyCostQuery(party string, first int) costQuery {
	q := partyQuery(party, first)
	wireItems := func(funding, delegations any) []string {
		var out []string
		for _, e := range asList(at(funding, "fundingPayments", "edges")) {
			n := at(e, "node")
			out = append(out, "funding "+strings.Join([]string{str(n, "partyId"), str(n, "marketId"), str(n, "fundingPeriodSeq"), str(n, "timestamp"), str(n, "amount")}, " "))
		}
		for _, e := range asList(at(delegations, "delegations", "edges")) {
			n := at(e, "node")
			out = append(out, "delegation "+strings.Join([]string{str(n, "party"), str(n, "nodeId"), str(n, "epochSeq"), str(n, "amount")}, " "))
		}
		return out
	}
	return costQuery{
		name: "party-page", rows: q.rows,
		doc: q.doc, vars: q.vars,
		tailcallDoc: tailcallQueryText("party-page"), tailcallVars: map[string]any{"id": party, "first": first},
		direct: func(ctx context.Context, c *directClient) (any, error) {
			return c.partyAny(ctx, party, first)
		},
		typed: q.direct,
		directItems: func(v any) ([]string, error) {
			items, _ := q.directItems(v)
			return items, nil
		},
		gatewayItems: func(data any) ([]string, error) {
			items, _, err := q.gatewayItems(data)
			return items, err
		},
		tailcallDirectItems: func(v any) ([]string, error) {
			p := v.([2]any)
			return wireItems(p[0], p[1]), nil
		},
		tailcallItems: func(data any) ([]string, error) {
			if at(data, "fundingPayments") == nil || at(data, "delegations") == nil {
				return nil, errors.New("no fundingPayments or delegations")
			}
			return wireItems(at(data, "fundingPayments"), at(data, "delegations")), nil
		},
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// commandTypename is the GraphQL type of a decoded command: its Go type's
// name (gqlgen.yml binds each member to the upstream type of its name),
// and an unknown command's wire name.
func commandTypename(k upstream.CommandKind) string {
	switch k := k.(type) {
	case nil:
		return ""
	case *upstream.UnknownCommand:
		return "UnknownCommand:" + k.Name
	}
	return reflect.TypeOf(k).Elem().Name()
}

// wireTransactionItems lists generic explorer rows as Tailcall serves
// them: hash, submitter, type and the command's member key.
func wireTransactionItems(rows []any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		var member []string
		if c, ok := at(r, "command").(map[string]any); ok {
			for k, v := range c {
				if k != "nonce" && k != "blockHeight" && v != nil {
					member = append(member, k)
				}
			}
		}
		slices.Sort(member)
		out[i] = strings.Join([]string{str(r, "hash"), str(r, "submitter"), str(r, "type"), strings.Join(member, "+")}, " ")
	}
	return out
}

// batchItem describes a batch of market instructions by the size of its
// lists and its submissions' prices and sizes; "" for none.
func batchItem(b any) string {
	if b == nil {
		return ""
	}
	s := fmt.Sprintf(" batch amend=%d cancel=%d stopCancel=%d stopSubmit=%d submit=%d margin=%d",
		length(b, "amendments"), length(b, "cancellations"), length(b, "stopOrdersCancellation"),
		length(b, "stopOrdersSubmission"), length(b, "submissions"), length(b, "updateMarginMode"))
	for _, o := range asList(at(b, "submissions")) {
		s += " " + str(o, "price") + "x" + str(o, "size")
	}
	return s
}

// targets are the three paths' calls of q under l. With l.bytesOnly the
// gateway's and Tailcall's responses are read and not decoded, and the
// direct call is not made (its asset lookups need its page decoded).
func (c *costRun) targets(q costQuery, l load) ([costPaths]func(context.Context) error, error) {
	gw := &gatewayServer{url: c.gatewayURL}
	tc := &gatewayServer{url: c.tailcallURL}
	if l.bytesOnly {
		gwBody, err := json.Marshal(gqlRequest{Query: q.doc, Variables: q.vars})
		if err != nil {
			return [costPaths]func(context.Context) error{}, err
		}
		tcBody, err := json.Marshal(gqlRequest{Query: q.tailcallDoc, Variables: q.tailcallVars})
		if err != nil {
			return [costPaths]func(context.Context) error{}, err
		}
		return [costPaths]func(context.Context) error{
			costGateway:  func(ctx context.Context) error { return c.env.graphql.readOnly(ctx, c.gatewayURL, gwBody) },
			costTailcall: func(ctx context.Context) error { return c.env.graphql.readOnly(ctx, c.tailcallURL, tcBody) },
		}, nil
	}
	return [costPaths]func(context.Context) error{
		costDirect: func(ctx context.Context) error { _, err := q.direct(ctx, c.env.direct); return err },
		costGateway: func(ctx context.Context) error {
			_, _, err := c.env.graphql.query(ctx, gw, q.doc, q.vars)
			return err
		},
		costTailcall: func(ctx context.Context) error {
			_, _, err := c.env.graphql.query(ctx, tc, q.tailcallDoc, q.tailcallVars)
			return err
		},
	}, nil
}

// costRun is the section's set-up: the env's sample service and client,
// and the gateway and Tailcall over it (their URLs, and their process ids
// when they run as processes of their own: 0 otherwise).
type costRun struct {
	env                     *env
	gatewayURL, tailcallURL string
	gatewayPID, tailcallPID int
}

// verifyCost checks that the three paths return the same rows of q:
// the gateway as the direct call does, Tailcall as the wire has them.
func (c *costRun) verifyCost(ctx context.Context, q costQuery) error {
	dv, err := q.direct(ctx, c.env.direct)
	if err != nil {
		return fmt.Errorf("direct: %w", err)
	}
	want := dv
	if q.typed != nil {
		if want, err = q.typed(ctx, c.env.direct); err != nil {
			return fmt.Errorf("direct (typed): %w", err)
		}
	}
	wantItems, err := q.directItems(want)
	if err != nil {
		return err
	}
	if len(wantItems) < min(q.rows, 10) {
		return fmt.Errorf("the direct call returned %d rows: the query measures little", len(wantItems))
	}
	data, _, err := c.env.graphql.query(ctx, &gatewayServer{url: c.gatewayURL}, q.doc, q.vars)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	got, err := q.gatewayItems(data)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if err := sameItems("gateway", wantItems, got); err != nil {
		return err
	}
	tailcallWant := wantItems
	if q.tailcallDirectItems != nil {
		if tailcallWant, err = q.tailcallDirectItems(dv); err != nil {
			return err
		}
	}
	data, _, err = c.env.graphql.query(ctx, &gatewayServer{url: c.tailcallURL}, q.tailcallDoc, q.tailcallVars)
	if err != nil {
		return fmt.Errorf("tailcall: %w", err)
	}
	if got, err = q.tailcallItems(data); err != nil {
		return fmt.Errorf("tailcall: %w", err)
	}
	return sameItems("tailcall", tailcallWant, got)
}

// sameItems reports how got differs from want.
func sameItems(who string, want, got []string) error {
	if len(got) != len(want) {
		return fmt.Errorf("direct returned %d rows, %s %d", len(want), who, len(got))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Errorf("row %d differs:\n  direct: %s\n  %s: %s", i, want[i], who, got[i])
		}
	}
	return nil
}

// costStats is what one path cost under one load.
type costStats struct {
	stats
	// ProcessCPUPerRequest is the CPU time of the path's own process (the
	// gateway's or Tailcall's) per request; 0 for the direct call.
	ProcessCPUPerRequest time.Duration
}

// costQueryNames are the names of costQueries' queries, in their order.
var costQueryNames = []string{"every-field-50", "hashes-50", "one-kind-50", "party-page"}

// costCell is one query under one load on the three paths, in one run.
type costCell struct {
	Name  string
	Load  string
	Rows  int
	Paths [costPaths]costStats
}

// The section's loads.
const (
	costConnections    = 16
	costCPUConnections = 8
	costLatency        = 20 * time.Millisecond
)

// runCost measures the section once.
func runCost(ctx context.Context, o *options, small *env, rep *report, logf func(string, ...any)) error {
	dir, err := os.MkdirTemp("", "bench-cost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	gatewayBin := o.gatewayBin
	if gatewayBin == "" {
		if gatewayBin, err = buildGateway(ctx, dir); err != nil {
			return err
		}
	}
	tailcallBin := o.tailcallBin
	if tailcallBin == "" {
		if tailcallBin, err = installTailcall(ctx); err != nil {
			return err
		}
	}
	gw, err := startGatewayProc(ctx, gatewayBin, filepath.Join(dir, "gateway.log"), costGatewayEnv(small))
	if err != nil {
		return err
	}
	defer gw.stop()
	tc, err := startTailcall(ctx, tailcallBin, dir, small.sample.URL)
	if err != nil {
		return err
	}
	defer tc.stop()
	run := &costRun{env: small, gatewayURL: gw.url, tailcallURL: tc.url, gatewayPID: gw.cmd.Process.Pid, tailcallPID: tc.cmd.Process.Pid}

	party, _ := busiestParty(small.sample.Service.Dataset())
	loads := []load{
		{concurrency: costConnections, duration: o.duration, maxRequests: o.maxRequests},
		{concurrency: costCPUConnections, duration: o.duration, maxRequests: o.maxRequests},
		{concurrency: 1, duration: o.duration, maxRequests: o.maxRequests},
		{concurrency: costConnections, duration: o.duration, maxRequests: o.maxRequests, upstreamLatency: costLatency},
		{concurrency: costConnections, duration: o.duration, maxRequests: o.maxRequests, bytesOnly: true},
	}
	for _, q := range costQueries(party) {
		if len(o.costQueries) > 0 && !slices.Contains(o.costQueries, q.name) {
			continue
		}
		if err := run.verifyCost(ctx, q); err != nil {
			return fmt.Errorf("verify %s: %w", q.name, err)
		}
		for _, l := range loads {
			c, err := run.measure(ctx, q, l, o.rounds, !o.smoke)
			if err != nil {
				return err
			}
			logf("  %-15s %-32s req/s %7.0f / %7.0f / %7.0f  p50 %s / %s / %s  CPU/req gateway %s tailcall %s",
				c.Name, c.Load, c.Paths[costDirect].Throughput, c.Paths[costGateway].Throughput, c.Paths[costTailcall].Throughput,
				ms(c.Paths[costDirect].P50), ms(c.Paths[costGateway].P50), ms(c.Paths[costTailcall].P50),
				ms(c.Paths[costGateway].ProcessCPUPerRequest), ms(c.Paths[costTailcall].ProcessCPUPerRequest))
			rep.cost = append(rep.cost, c)
		}
		if err := errors.Join(gw.alive(), tc.alive()); err != nil {
			return err
		}
	}
	return nil
}

// costGatewayEnv is the gateway process's settings: the sample service
// as both upstreams, no upstream-answer cache and no asset cache (every
// request does its whole work), no response compression (Tailcall
// compresses none), budgets that never throttle a benchmark, and a log
// of warnings only (Tailcall's is errors only).
func costGatewayEnv(e *env) []string {
	return []string{
		"UPSTREAM_URL=" + e.sample.URL,
		"EXPLORER_URL=" + e.sample.URL + "/rest",
		"UPSTREAM_CACHE_BYTES=0",
		"ASSET_CACHE_SIZE=0",
		"COMPRESSION_LEVEL=0",
		"UPSTREAM_RATE=1000000", "UPSTREAM_BURST=1000000",
		"EXPLORER_RATE=1000000", "EXPLORER_BURST=1000000",
		"LOG_LEVEL=warn",
	}
}

// measure verifies nothing (runCost does once per query), warms the three
// paths, then measures them in alternating rounds, reading the gateway's
// and Tailcall's CPU time around each of their phases.
func (c *costRun) measure(ctx context.Context, q costQuery, l load, rounds int, warmup bool) (costCell, error) {
	if l.upstreamLatency > 0 {
		setLatency(c.env, l.upstreamLatency)
		defer clearFaults(c.env)
	}
	fns, err := c.targets(q, l)
	if err != nil {
		return costCell{}, err
	}
	pids := [costPaths]int{costGateway: c.gatewayPID, costTailcall: c.tailcallPID}
	if warmup {
		warm := load{concurrency: l.concurrency, duration: 150 * time.Millisecond, maxRequests: max(20, 2*l.concurrency)}
		for p, fn := range fns {
			if fn == nil {
				continue
			}
			if _, err := runPhase(ctx, c.env, fn, warm); err != nil {
				return costCell{}, fmt.Errorf("%s (%s): warm-up: %w", q.name, costPath(p), err)
			}
		}
	}
	var recs [costPaths]phase
	var cpu [costPaths]time.Duration
	per := load{concurrency: l.concurrency, duration: l.duration / time.Duration(rounds), maxRequests: l.maxRequests / rounds}
	for range rounds {
		for p, fn := range fns {
			if fn == nil {
				continue
			}
			var before procStat
			if pids[p] != 0 {
				before, _ = readProcStat(pids[p])
			}
			ph, err := runPhase(ctx, c.env, fn, per)
			if err != nil {
				return costCell{}, fmt.Errorf("%s (%s, %s): %w", q.name, costPath(p), l, err)
			}
			if pids[p] != 0 {
				after, err := readProcStat(pids[p])
				if err != nil {
					return costCell{}, fmt.Errorf("%s: read the %s process's CPU time: %w", q.name, costPath(p), err)
				}
				cpu[p] += after.cpu - before.cpu
			}
			recs[p].add(ph)
		}
	}
	out := costCell{Name: q.name, Load: l.String(), Rows: q.rows}
	for p := range costPaths {
		s := recs[p].stats(side(min(int(p), int(sideGateway))))
		out.Paths[p] = costStats{stats: s}
		if s.Requests > 0 {
			out.Paths[p].ProcessCPUPerRequest = cpu[p] / time.Duration(s.Requests)
		}
	}
	return out, nil
}

// installTailcall runs scripts/install-tailcall.sh, which prints the
// binary's path.
func installTailcall(ctx context.Context) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "install-tailcall.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/install-tailcall.sh (or give -tailcall-bin): %w", err)
	}
	bin := strings.TrimSpace(string(out))
	if bin == "" {
		return "", errors.New("scripts/install-tailcall.sh printed no path")
	}
	return bin, nil
}

// startTailcall runs Tailcall with bench/tailcall/tailcall.graphql on a
// free loopback port over the sample service at sampleURL, and waits
// until it answers a query.
func startTailcall(ctx context.Context, bin, dir, sampleURL string) (*childProc, error) {
	config, err := tailcallFiles.ReadFile("tailcall/tailcall.graphql")
	if err != nil {
		return nil, err
	}
	if !strings.Contains(string(config), tailcallServerLine) {
		return nil, fmt.Errorf("bench/tailcall/tailcall.graphql lacks %q", tailcallServerLine)
	}
	return onFreePort(func(port int) (*childProc, error) {
		text := strings.Replace(string(config), tailcallServerLine, fmt.Sprintf(`schema @server(port: %d, hostname: "127.0.0.1")`, port), 1)
		path := filepath.Join(dir, "tailcall.graphql")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, "start", path)
		cmd.Env = append(childEnv(), "SAMPLE_URL="+sampleURL, "TAILCALL_LOG_LEVEL=error", "TC_LOG_LEVEL=error", "TAILCALL_TRACKER=false", "TC_TRACKER=false")
		url := fmt.Sprintf("http://127.0.0.1:%d/graphql", port)
		return startChild(ctx, "Tailcall", url, 5*time.Second, cmd, filepath.Join(dir, "tailcall.log"), func(client *http.Client) error {
			resp, err := client.PostForm(url, nil) // any answer means it listens
			if err == nil {
				resp.Body.Close()
			}
			return err
		})
	})
}

// tailcallServerLine is the configuration's @server line, whose port the
// harness replaces.
const tailcallServerLine = "schema @server(port: 8000)"

// writeCost writes the cost section's tables: medians over the runs, each
// ratio computed within its run and then the median taken, the range over
// runs in brackets.
func writeCost(p func(string, ...any), cells []costCell) {
	if len(cells) == 0 {
		return
	}
	groups := groupBy[[]costCell](cells, func(c costCell) string { return c.Name + "|" + c.Load })
	byLoad := func(load string) [][]costCell {
		var out [][]costCell
		for _, g := range groups {
			if g[0].Load == load {
				out = append(out, g)
			}
		}
		return out
	}
	med := func(g []costCell, f func(c costCell) float64) float64 {
		v := make([]float64, len(g))
		for i, c := range g {
			v[i] = f(c)
		}
		return median(v)
	}
	ratioText := func(g []costCell, f func(c costCell) float64) string {
		m := med(g, f)
		if len(g) == 1 {
			return fmt.Sprintf("%.2f", m)
		}
		lo, hi := f(g[0]), f(g[0])
		for _, c := range g[1:] {
			lo, hi = min(lo, f(c)), max(hi, f(c))
		}
		return fmt.Sprintf("%.2f (%.2f–%.2f)", m, lo, hi)
	}
	dur := func(g []costCell, f func(c costCell) time.Duration) string {
		return ms(time.Duration(med(g, func(c costCell) float64 { return float64(f(c)) })))
	}
	tput := func(p costPath) func(c costCell) float64 {
		return func(c costCell) float64 { return c.Paths[p].Throughput }
	}
	p("## Cost in proportion to what is asked: the gateway, Tailcall and the direct REST call\n\n")
	p("Each query on the three paths in alternating rounds. The gateway is this repository's binary and Tailcall %s, each its own process, both over the sample service (fast mode); the gateway with `UPSTREAM_CACHE_BYTES=0 ASSET_CACHE_SIZE=0 COMPRESSION_LEVEL=0`. CPU per request is the gateway's or Tailcall's process alone (/proc/PID/stat), the load generator and the sample service not counted.\n\n", tailcallVersion)
	load16 := load{concurrency: costConnections}.String()
	load8 := load{concurrency: costCPUConnections}.String()
	load1 := load{concurrency: 1}.String()
	loadFar := load{concurrency: costConnections, upstreamLatency: costLatency}.String()
	loadBytes := load{concurrency: costConnections, bytesOnly: true}.String()
	p("### Throughput, %d connections (req/s)\n\n", costConnections)
	p("| Query | Rows | Direct REST | Gateway | Tailcall | Gateway ÷ Tailcall | Gateway ÷ direct |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range byLoad(load16) {
		p("| %s | %d | %.0f | %.0f | %.0f | %s | %s |\n", g[0].Name, g[0].Rows, med(g, tput(costDirect)), med(g, tput(costGateway)), med(g, tput(costTailcall)),
			ratioText(g, func(c costCell) float64 { return c.Paths[costGateway].Throughput / c.Paths[costTailcall].Throughput }),
			ratioText(g, func(c costCell) float64 { return c.Paths[costGateway].Throughput / c.Paths[costDirect].Throughput }))
	}
	p("\n### Throughput, %d connections, the client reading the bytes only (req/s)\n\n", costConnections)
	p("The same load, but the client reads each response without decoding it (it checks the status and that no error is named), so that the two cores go to the gateway or Tailcall and the sample service. The direct call is not made: its asset lookups need its page decoded.\n\n")
	p("| Query | Gateway | Tailcall | Gateway ÷ Tailcall |\n|---|---:|---:|---:|\n")
	for _, g := range byLoad(loadBytes) {
		p("| %s | %.0f | %.0f | %s |\n", g[0].Name, med(g, tput(costGateway)), med(g, tput(costTailcall)),
			ratioText(g, func(c costCell) float64 { return c.Paths[costGateway].Throughput / c.Paths[costTailcall].Throughput }))
	}
	p("\n### CPU per request: each gateway's process alone, at saturation (%d connections) and one request at a time\n\n", costCPUConnections)
	p("At %d connections, identical requests in flight together share one upstream request (the gateway coalesces them and decodes the answer once; Tailcall's `dedupe`): the last column says how many upstream requests a request made. At 1 connection every request does its whole work.\n\n", costCPUConnections)
	p("| Query | Gateway CPU/req, %[1]d conns | Tailcall CPU/req, %[1]d conns | Gateway ÷ Tailcall | Gateway CPU/req, 1 conn | Tailcall CPU/req, 1 conn | Gateway ÷ Tailcall, 1 conn | Gateway req/s, %[1]d conns | Tailcall req/s, %[1]d conns | Upstream requests per request, %[1]d conns (gateway / Tailcall / direct) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n", costCPUConnections)
	one := map[string][]costCell{}
	for _, g := range byLoad(load1) {
		one[g[0].Name] = g
	}
	cpu := func(p costPath) func(c costCell) time.Duration {
		return func(c costCell) time.Duration { return c.Paths[p].ProcessCPUPerRequest }
	}
	cpuRatio := func(c costCell) float64 {
		return ratio(c.Paths[costGateway].ProcessCPUPerRequest, c.Paths[costTailcall].ProcessCPUPerRequest)
	}
	for _, g := range byLoad(load8) {
		g1 := one[g[0].Name]
		single := "— | — | —"
		if len(g1) > 0 {
			single = dur(g1, cpu(costGateway)) + " | " + dur(g1, cpu(costTailcall)) + " | " + ratioText(g1, cpuRatio)
		}
		p("| %s | %s | %s | %s | %s | %.0f | %.0f | %.2f / %.2f / %.2f |\n", g[0].Name,
			dur(g, cpu(costGateway)), dur(g, cpu(costTailcall)), ratioText(g, cpuRatio), single,
			med(g, tput(costGateway)), med(g, tput(costTailcall)),
			med(g, func(c costCell) float64 { return c.Paths[costGateway].UpstreamPerRequest }),
			med(g, func(c costCell) float64 { return c.Paths[costTailcall].UpstreamPerRequest }),
			med(g, func(c costCell) float64 { return c.Paths[costDirect].UpstreamPerRequest }))
	}
	p("\n### The data node %s away (every sample-service response delayed), %d connections\n\n", costLatency, costConnections)
	p("| Query | Direct p50 | Gateway p50 | Gateway ÷ direct p50 | Direct p99 | Gateway p99 | Gateway ÷ direct p99 | Tailcall p50 / p99 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range byLoad(loadFar) {
		lat := func(p costPath, pct int) func(c costCell) time.Duration {
			return func(c costCell) time.Duration {
				if pct == 50 {
					return c.Paths[p].P50
				}
				return c.Paths[p].P99
			}
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s / %s |\n", g[0].Name,
			dur(g, lat(costDirect, 50)), dur(g, lat(costGateway, 50)),
			ratioText(g, func(c costCell) float64 { return ratio(c.Paths[costGateway].P50, c.Paths[costDirect].P50) }),
			dur(g, lat(costDirect, 99)), dur(g, lat(costGateway, 99)),
			ratioText(g, func(c costCell) float64 { return ratio(c.Paths[costGateway].P99, c.Paths[costDirect].P99) }),
			dur(g, lat(costTailcall, 50)), dur(g, lat(costTailcall, 99)))
	}
	p("\n")
}

// tailcallVersion is the Tailcall release scripts/install-tailcall.sh
// installs.
const tailcallVersion = "1.6.14"
