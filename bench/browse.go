package main

// The browse section: a load model of people browsing a public explorer
// built on the gateway, to measure capacity as people served per upstream
// budget.
//
// The sample data service runs with the data node's real limits (20
// requests a second per address, bursts of 100, a ban for an address that
// keeps calling while limited) and a new block every second. The gateway
// is the repository's binary, run as a child process with its default
// settings plus those given (-gateway-env), alone or as replicas sharing a
// Redis (-replicas); every gateway reaches the sample service from
// 127.0.0.1, so the data node's limit applies to the whole fleet, as
// behind one egress address in production. People reach the gateway on
// loopback too, each under an address of its own (X-Forwarded-For, the
// harness being the gateway's trusted proxy), so that the gateway's fair
// share sees them as the different clients they are.
//
// Each person browses: a think time (exponential, mean -think), then one
// page view (one GraphQL request, bench/queries/browse-*.graphql), over
// and over. Which page follows a mix (-browse-mix); which transaction,
// block, party or validator it shows, a Zipf law over the dataset's items
// (-browse-zipf): a few popular, a long tail. The "older" link of a list
// follows the cursor of the person's previous list page, up to
// historyDepth pages below the front page.
//
// Each step (a number of people, -people) runs on fresh processes: a
// warm-up (-browse-warmup), the measured window (-browse-duration), then
// no new views while those in flight finish (at most -browse-drain).
// With -baseline-env, each step runs twice, the second time with those
// settings added (the gateway's cache off, say), and the report gives the
// ratios.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tradenet/gateway/sampleservice"
)

// pageKind is one kind of page view.
type pageKind int

const (
	pageLatest pageKind = iota
	pageHistory
	pageTransaction
	pageBlock
	pageAssets
	pageParty
	pageValidator
	numPageKinds
)

// pageNames name the kinds in flags and reports; pageDocs are their
// queries (bench/queries/browse-*.graphql).
var (
	pageNames = [numPageKinds]string{"latest", "history", "transaction", "block", "assets", "party", "validator"}
	pageDocs  = func() (docs [numPageKinds]string) {
		for k := range numPageKinds {
			docs[k] = queryText("browse-" + pageNames[k])
		}
		return docs
	}()
)

func (k pageKind) String() string { return pageNames[k] }

// historyDepth is how many pages below the front page a person follows
// "older" before the link leads nowhere (and a history pick shows the
// front page again).
const historyDepth = 5

// pageMix weighs the kinds of page view.
type pageMix [numPageKinds]float64

// defaultMix: mostly the newest transactions and single transactions,
// as on a public explorer; the data-node pages (party, validator,
// assets) a quarter.
var defaultMix = pageMix{
	pageLatest: 25, pageHistory: 15, pageTransaction: 25, pageBlock: 10,
	pageAssets: 5, pageParty: 12, pageValidator: 8,
}

// parseMix reads "latest=25,history=15,…": kinds not named weigh 0.
func parseMix(s string) (pageMix, error) {
	var m pageMix
	total := 0.0
	for part := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		k := slices.Index(pageNames[:], strings.TrimSpace(name))
		w, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		switch {
		case !ok || k < 0:
			return m, fmt.Errorf("%q: want page=weight, pages %s", part, strings.Join(pageNames[:], ", "))
		case err != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w):
			return m, fmt.Errorf("%q: the weight must be a number ≥ 0", part)
		}
		m[k] = w
		total += w
	}
	if total <= 0 {
		return m, errors.New("every weight is 0")
	}
	return m, nil
}

func (m pageMix) String() string {
	parts := make([]string, 0, numPageKinds)
	for k := range numPageKinds {
		if m[k] > 0 {
			parts = append(parts, pageNames[k]+"="+strconv.FormatFloat(m[k], 'g', -1, 64))
		}
	}
	return strings.Join(parts, ",")
}

// pick draws a kind by weight.
func (m pageMix) pick(r *rand.Rand) pageKind {
	total := 0.0
	for _, w := range m {
		total += w
	}
	u := r.Float64() * total
	for k, w := range m {
		if u < w {
			return pageKind(k)
		}
		u -= w
	}
	// Rounding left u at the total: the last kind that weighs.
	for k := numPageKinds - 1; k >= 0; k-- {
		if m[k] > 0 {
			return k
		}
	}
	return pageLatest
}

// zipf draws ranks 0..n-1 with probability proportional to 1/(rank+1)^s:
// rank 0 the most popular, then a long tail.
type zipf struct{ cdf []float64 }

func newZipf(n int, s float64) *zipf {
	z := &zipf{cdf: make([]float64, n)}
	sum := 0.0
	for i := range n {
		sum += 1 / math.Pow(float64(i+1), s)
		z.cdf[i] = sum
	}
	return z
}

func (z *zipf) pick(r *rand.Rand) int {
	u := r.Float64() * z.cdf[len(z.cdf)-1]
	return sort.Search(len(z.cdf), func(i int) bool { return z.cdf[i] > u })
}

// catalog is what people look at: the dataset's transactions and blocks
// (newest first), parties (most active first) and validators (most
// delegated to first), each with its popularity law.
type catalog struct {
	hashes     []string
	blocks     []uint64
	parties    []string
	validators []string

	tx, block, party, validator *zipf
}

// newCatalog lists ds's items by popularity rank.
func newCatalog(ds *sampleservice.Dataset, s float64) (*catalog, error) {
	txs := ds.Transactions
	hasher, ok := txs.(sampleservice.TxHasher)
	if !ok || txs.Len() == 0 {
		return nil, errors.New("the dataset's transactions have no hashes")
	}
	c := &catalog{}
	activity := map[string]int{}
	for i := txs.Len() - 1; i >= 0; i-- {
		c.hashes = append(c.hashes, hasher.Hash(i))
		m := txs.Meta(i)
		if n := len(c.blocks); n == 0 || c.blocks[n-1] != m.Block {
			c.blocks = append(c.blocks, m.Block)
		}
		if len(m.Parties) > 0 {
			activity[strings.ToLower(m.Parties[0])]++
		}
	}
	delegated := map[string]int{}
	for _, d := range ds.Delegations {
		activity[strings.ToLower(d.Party)]++
		delegated[d.NodeID]++
	}
	for _, f := range ds.FundingPayments {
		activity[strings.ToLower(f.PartyID)]++
	}
	c.parties = byCount(activity)
	for _, n := range ds.Nodes {
		delegated[n] += 0
	}
	c.validators = byCount(delegated)
	if len(c.parties) == 0 || len(c.validators) == 0 {
		return nil, errors.New("the dataset has no parties or no validators")
	}
	c.tx, c.block = newZipf(len(c.hashes), s), newZipf(len(c.blocks), s)
	c.party, c.validator = newZipf(len(c.parties), s), newZipf(len(c.validators), s)
	return c, nil
}

// byCount lists m's keys by count, largest first (ties by key).
func byCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := m[b] - m[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return keys
}

// person is one simulated person browsing.
type person struct {
	id   int
	addr string // the client address the gateway sees (X-Forwarded-For)
	rng  *rand.Rand
	// cursor is the end cursor of the person's last list page, which
	// "older" follows; depth is how many history pages they have followed
	// from the front page.
	cursor string
	depth  int
	views  int
	// cache is the person's browser cache (GET only), by request.
	cache map[string]cachedPage
}

func newPerson(id int, seed uint64) *person {
	return &person{
		id:   id,
		addr: fmt.Sprintf("10.%d.%d.%d", (id+1)>>16&255, (id+1)>>8&255, (id+1)&255),
		rng:  rand.New(rand.NewPCG(seed, uint64(id))),
	}
}

// pageView is one request: its kind, variables, and what the page must
// show (the hash, block, party or validator asked for).
type pageView struct {
	kind pageKind
	vars map[string]any
	want string
}

// next is the person's next page view: a kind drawn from the mix ("older"
// without a page to follow shows the front page), its item drawn by
// popularity.
func (p *person) next(m pageMix, c *catalog) pageView {
	k := m.pick(p.rng)
	if k == pageHistory && p.cursor == "" {
		k = pageLatest
	}
	v := pageView{kind: k}
	switch k {
	case pageHistory:
		v.vars = map[string]any{"after": p.cursor}
	case pageTransaction:
		v.want = c.hashes[c.tx.pick(p.rng)]
		v.vars = map[string]any{"hash": v.want}
	case pageBlock:
		v.want = strconv.FormatUint(c.blocks[c.block.pick(p.rng)], 10)
		v.vars = map[string]any{"block": v.want}
	case pageParty:
		v.want = c.parties[c.party.pick(p.rng)]
		v.vars = map[string]any{"id": v.want}
	case pageValidator:
		v.want = c.validators[c.validator.pick(p.rng)]
		v.vars = map[string]any{"id": v.want}
	}
	return v
}

// saw records what a list page's "older" link leads to (endCursor, empty
// when the view failed).
func (p *person) saw(v pageView, endCursor string) {
	p.views++
	switch v.kind {
	case pageLatest:
		p.cursor, p.depth = endCursor, 0
	case pageHistory:
		p.depth++
		p.cursor = endCursor
		if p.depth >= historyDepth {
			p.cursor = ""
		}
	}
}

// think is the pause before the next view: exponential, mean mean, at
// most 20 means.
func (p *person) think(mean time.Duration) time.Duration {
	return time.Duration(min(p.rng.ExpFloat64(), 20) * float64(mean))
}

// Outcomes of a view.
type viewOutcome int

const (
	viewServed     viewOutcome = iota // 200, the page whole and right
	viewFailed                        // GraphQL errors other than the data's own
	viewRefused                       // another HTTP status, or no response
	viewWrong                         // 200 without errors, but not the page asked for
	viewUnfinished                    // unanswered when the drain ended
)

// viewRecord is one page view as the person saw it.
type viewRecord struct {
	kind pageKind
	// start and end are nanoseconds since the step's start.
	start, end int64
	outcome    viewOutcome
	// codes are the view's error codes (each once): GraphQL codes, "HTTP
	// nnn", "transport", "WRONG_PAGE".
	codes []string
	// dataErrors are the errors the dataset causes on purpose (dangling
	// asset references, unknown enum values, non-finite floats).
	dataErrors int
	// local: served from the person's browser cache without a request;
	// notModified: revalidated (304).
	local, notModified bool
}

// browseResponse is the part of a page's response the harness checks.
type browseResponse struct {
	Data *struct {
		Transactions *struct {
			Edges []struct {
				Node struct {
					Hash  string          `json:"hash"`
					Block json.RawMessage `json:"block"`
				} `json:"node"`
			} `json:"edges"`
			PageInfo struct {
				EndCursor string `json:"endCursor"`
			} `json:"pageInfo"`
		} `json:"transactions"`
		Transaction *struct {
			Hash string `json:"hash"`
		} `json:"transaction"`
		Assets *struct {
			Edges []json.RawMessage `json:"edges"`
		} `json:"assets"`
		Party *struct {
			ID string `json:"id"`
		} `json:"party"`
		ValidatorNode *struct {
			ID string `json:"id"`
		} `json:"validatorNode"`
	} `json:"data"`
	Errors []gqlError `json:"errors"`
}

// check says whether r is the page v asked for, and returns the list's
// end cursor.
func (r *browseResponse) check(v pageView) (endCursor string, err error) {
	d := r.Data
	if d == nil {
		return "", errors.New("no data")
	}
	switch v.kind {
	case pageLatest, pageHistory:
		if d.Transactions == nil || len(d.Transactions.Edges) != 25 || d.Transactions.PageInfo.EndCursor == "" {
			return "", errors.New("not a full page of 25 transactions with an end cursor")
		}
		return d.Transactions.PageInfo.EndCursor, nil
	case pageTransaction:
		if d.Transaction == nil || !strings.EqualFold(d.Transaction.Hash, v.want) {
			return "", fmt.Errorf("not transaction %s", v.want)
		}
	case pageBlock:
		if d.Transactions == nil || len(d.Transactions.Edges) == 0 {
			return "", fmt.Errorf("block %s: no transactions", v.want)
		}
		for _, e := range d.Transactions.Edges {
			if strings.Trim(string(e.Node.Block), `"`) != v.want {
				return "", fmt.Errorf("block %s: a transaction of block %s", v.want, e.Node.Block)
			}
		}
	case pageAssets:
		if d.Assets == nil || len(d.Assets.Edges) == 0 {
			return "", errors.New("no assets")
		}
	case pageParty:
		if d.Party == nil || !strings.EqualFold(d.Party.ID, v.want) {
			return "", fmt.Errorf("not party %s", v.want)
		}
	case pageValidator:
		if d.ValidatorNode == nil || d.ValidatorNode.ID != v.want {
			return "", fmt.Errorf("not validator %s", v.want)
		}
	}
	return "", nil
}

// browser sends people's page views to the gateways.
type browser struct {
	client  *http.Client
	urls    []string
	catalog *catalog
	start   time.Time
	// get sends queries as GET requests, each person with a browser
	// cache (-browse-get); else POST, which no cache keeps.
	get bool
	// now is the browser caches' clock (nil: time.Now); a test's own
	// clock lets a copy go stale without waiting.
	now func() time.Time
}

// clock is the time the browser caches judge freshness by.
func (b *browser) clock() time.Time {
	if b.now != nil {
		return b.now()
	}
	return time.Now()
}

// acceptHeader is what Apollo Client sends.
const acceptHeader = "application/graphql-response+json,application/json;q=0.9"

// view sends one page view of person p to url and classifies the answer;
// detail describes a failure. With GET, the person's browser cache
// answers while its copy is fresh, and revalidates it after.
func (b *browser) view(ctx context.Context, url string, p *person, v pageView) (rec viewRecord, endCursor, detail string) {
	rec.kind = v.kind
	rec.start = int64(time.Since(b.start))
	defer func() { rec.end = int64(time.Since(b.start)) }()
	fail := func(o viewOutcome, code, why string) (viewRecord, string, string) {
		rec.outcome = o
		rec.codes = append(rec.codes, code)
		return rec, "", why
	}
	var req *http.Request
	var key string
	var cached *cachedPage
	if b.get {
		vars, err := json.Marshal(v.vars)
		if err != nil {
			return fail(viewRefused, "transport", err.Error())
		}
		key = "query=" + neturl.QueryEscape(pageDocs[v.kind])
		if v.vars != nil {
			key += "&variables=" + neturl.QueryEscape(string(vars))
		}
		if c, ok := p.cache[key]; ok {
			if b.clock().Before(c.expires) {
				rec.local = true
				return rec, c.endCursor, ""
			}
			cached = &c
		}
		if req, err = http.NewRequestWithContext(ctx, http.MethodGet, url+"?"+key, nil); err != nil {
			return fail(viewRefused, "transport", err.Error())
		}
		if cached != nil {
			req.Header.Set("If-None-Match", cached.etag)
		}
	} else {
		body, err := json.Marshal(gqlRequest{Query: pageDocs[v.kind], Variables: v.vars})
		if err != nil {
			return fail(viewRefused, "transport", err.Error())
		}
		if req, err = http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body)); err != nil {
			return fail(viewRefused, "transport", err.Error())
		}
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", acceptHeader)
	req.Header.Set("X-Forwarded-For", p.addr)
	resp, err := b.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			rec.outcome = viewUnfinished
			return rec, "", "unfinished"
		}
		return fail(viewRefused, "transport", err.Error())
	}
	defer resp.Body.Close()
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer bodyBuffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		if ctx.Err() != nil {
			rec.outcome = viewUnfinished
			return rec, "", "unfinished"
		}
		return fail(viewRefused, "transport", "read body: "+err.Error())
	}
	if resp.StatusCode == http.StatusNotModified && cached != nil {
		rec.notModified = true
		p.store(key, resp.Header, cached.endCursor, b.clock())
		return rec, cached.endCursor, ""
	}
	if resp.StatusCode != http.StatusOK {
		return fail(viewRefused, "HTTP "+strconv.Itoa(resp.StatusCode), clip(buf.Bytes()))
	}
	var r browseResponse
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		return fail(viewWrong, "WRONG_PAGE", "decode: "+err.Error())
	}
	for _, e := range r.Errors {
		if e.danglingAsset() || e.unknownEnum() || e.nonFiniteFloat() {
			rec.dataErrors++
			continue
		}
		code, _ := e.Extensions["code"].(string)
		if code == "" {
			code = "(no code)"
		}
		if !slices.Contains(rec.codes, code) {
			rec.codes = append(rec.codes, code)
		}
		if detail == "" {
			detail = fmt.Sprintf("%s at %v: %s", code, e.Path, e.Message)
		}
	}
	if len(rec.codes) > 0 {
		rec.outcome = viewFailed
		return rec, "", detail
	}
	endCursor, err = r.check(v)
	if err != nil {
		return fail(viewWrong, "WRONG_PAGE", err.Error())
	}
	if b.get {
		p.store(key, resp.Header, endCursor, b.clock())
	}
	return rec, endCursor, ""
}

// cachedPage is a page in a person's browser cache: what the harness
// keeps of it (the page was checked when it arrived), its validator, and
// until when it is fresh.
type cachedPage struct {
	etag, endCursor string
	expires         time.Time
}

// browserCacheSize bounds a person's browser cache.
const browserCacheSize = 256

// store keeps a page the response headers h allow a browser to keep
// (Cache-Control: no no-store; fresh for max-age less Age, no-cache or no
// max-age: revalidated every time, which needs an ETag), or forgets it.
func (p *person) store(key string, h http.Header, endCursor string, now time.Time) {
	fresh, ok := freshness(h)
	etag := h.Get("ETag")
	if !ok || (fresh <= 0 && etag == "") {
		delete(p.cache, key)
		return
	}
	if p.cache == nil {
		p.cache = map[string]cachedPage{}
	}
	if _, ok := p.cache[key]; !ok && len(p.cache) >= browserCacheSize {
		for k := range p.cache { // an arbitrary page makes room
			delete(p.cache, k)
			break
		}
	}
	p.cache[key] = cachedPage{etag: etag, endCursor: endCursor, expires: now.Add(fresh)}
}

// freshness is how long a response may be used without asking, from its
// Cache-Control and Age; ok is false when it must not be stored.
func freshness(h http.Header) (fresh time.Duration, ok bool) {
	cc := strings.ToLower(strings.Join(h.Values("Cache-Control"), ","))
	if cc == "" {
		return 0, false
	}
	maxAge, noCache := -1, false
	for d := range strings.SplitSeq(cc, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch name {
		case "no-store":
			return 0, false
		case "no-cache":
			noCache = true
		case "max-age":
			if n, err := strconv.Atoi(strings.Trim(value, `"`)); err == nil && n >= 0 {
				maxAge = n
			}
		}
	}
	if noCache || maxAge < 0 {
		return 0, true
	}
	age, _ := strconv.Atoi(h.Get("Age"))
	return time.Duration(max(maxAge-max(age, 0), 0)) * time.Second, true
}

// browseConfig is one configuration of the gateways a step runs with.
type browseConfig struct {
	// name is "as configured" or "baseline".
	name string
	// settings are the gateway settings given (-gateway-env, then
	// -baseline-env for the baseline), KEY=VALUE.
	settings []string
}

// browseResult is one step: a number of people, one configuration.
type browseResult struct {
	Run      int
	Replicas int
	Config   string
	Settings []string
	People   int
	// Think is the mean think time; Warmup, Window, Drain the phases.
	Think, Warmup, Window, Drain time.Duration
	Mix                          string
	Zipf                         float64
	// Method is POST, or GET with a browser cache per person.
	Method string

	viewSummary

	// Upstream requests during the window (the sample service's
	// counters): the data node's and the explorer's, the data node's 429
	// answers and the bans it issued.
	DataNode, Explorer, DataNode429, Bans int64
	DataNodePer100, ExplorerPer100        float64
	DataNodePerSecond                     float64
	// Requests are the upstream requests of the window by shape
	// (requestShape).
	Requests map[string]int64
	// CPU during the window, in cores busy: the gateways together, and
	// this process (the people and the sample service).
	GatewayCPU, HarnessCPU float64
	// GatewayRSS is the gateways' resident memory at the window's end.
	GatewayRSS int64
	// LoadAverage is the machine's (1 minute) when the step started.
	LoadAverage float64
	// Bounded: the step's views reached -browse-max-views.
	Bounded bool
	Took    time.Duration
}

// notServed stands for the latency of a view that was never served (it
// failed, or was unanswered when the drain ended).
const notServed = time.Duration(math.MaxInt64)

// viewSummary is what the views of a step add up to.
type viewSummary struct {
	// Views completed within the window, and per second of it.
	Views          int
	ViewsPerSecond float64
	// Of the views started within the window: how many, served whole and
	// right, failed (errors, refusals, wrong pages), unanswered when the
	// drain ended.
	Started, Served, Failed, Unfinished int
	// Refused: answered with another HTTP status than 200, or not at all
	// (a connection error).
	Refused int
	// P50, P95, P99: latency of the views started within the window, those
	// not served counting as never served (notServed). AnswerP95 is over
	// every answer, failures included: how fast refusals come.
	P50, P95, P99, AnswerP95 time.Duration
	// Errors count views by error code (a view counts once per code);
	// DataErrors the errors the dataset causes on purpose.
	Errors     map[string]int
	DataErrors int
	// BrowserCache: served from the person's own cache without a
	// request; NotModified: revalidated with a 304 (GET only).
	BrowserCache, NotModified int
	Pages                     []pageSummary
}

// pageSummary is the views of one kind started within the window.
type pageSummary struct {
	Page          string
	Started       int
	Failed        int
	P50, P95      time.Duration
	ErrorsPerPage map[string]int `json:",omitempty"`
}

// summarizeViews adds up recs over the window [t0, t1) (nanoseconds since
// the step's start).
func summarizeViews(recs []viewRecord, t0, t1 int64) viewSummary {
	s := viewSummary{Errors: map[string]int{}}
	var served, answered []time.Duration
	perPage := make([][]time.Duration, numPageKinds)
	started, failed := make([]int, numPageKinds), make([]int, numPageKinds)
	for _, r := range recs {
		if r.outcome != viewUnfinished && r.end >= t0 && r.end < t1 {
			s.Views++
		}
		if r.start < t0 || r.start >= t1 {
			continue
		}
		s.Started++
		started[r.kind]++
		if r.local {
			s.BrowserCache++
		}
		if r.notModified {
			s.NotModified++
		}
		s.DataErrors += r.dataErrors
		for _, c := range r.codes {
			s.Errors[c]++
		}
		d := time.Duration(r.end - r.start)
		switch r.outcome {
		case viewServed:
			s.Served++
			served = append(served, d)
			answered = append(answered, d)
			perPage[r.kind] = append(perPage[r.kind], d)
			continue
		case viewUnfinished:
			s.Unfinished++
		case viewRefused:
			s.Refused++
			answered = append(answered, d)
		default:
			answered = append(answered, d)
		}
		if r.outcome != viewUnfinished {
			s.Failed++
		}
		failed[r.kind]++
	}
	if t1 > t0 {
		s.ViewsPerSecond = float64(s.Views) / time.Duration(t1-t0).Seconds()
	}
	slices.Sort(served)
	slices.Sort(answered)
	s.P50, s.P95, s.P99 = servedPercentile(served, s.Started, 50), servedPercentile(served, s.Started, 95), servedPercentile(served, s.Started, 99)
	s.AnswerP95 = servedPercentile(answered, len(answered), 95)
	for k := range numPageKinds {
		if started[k] == 0 {
			continue
		}
		slices.Sort(perPage[k])
		s.Pages = append(s.Pages, pageSummary{
			Page: pageNames[k], Started: started[k], Failed: failed[k],
			P50: servedPercentile(perPage[k], started[k], 50), P95: servedPercentile(perPage[k], started[k], 95),
		})
	}
	return s
}

// servedPercentile is the nearest-rank p-th percentile of n views of
// which those in served (sorted) were served: notServed when it falls
// among the others, 0 when there were none.
func servedPercentile(served []time.Duration, n, p int) time.Duration {
	if n == 0 {
		return 0
	}
	rank := max((p*n+99)/100, 1)
	if rank > len(served) {
		return notServed
	}
	return served[rank-1]
}

// browseSnapshot is the counters at one moment.
type browseSnapshot struct {
	at                                time.Time
	dataNode, explorer, limited, bans int64
	shapes                            map[string]int64
	harnessCPU                        time.Duration
	gatewayCPU                        time.Duration
	gatewayRSS                        int64
}

func takeBrowseSnapshot(svc *sampleservice.Service, shapes *shapeCounter, gws []*childProc) (browseSnapshot, error) {
	s := browseSnapshot{at: time.Now(), harnessCPU: cpuTime(), limited: svc.RateLimited(), bans: svc.Bans(), shapes: shapes.snapshot()}
	for _, e := range []sampleservice.Endpoint{sampleservice.EndpointAssets, sampleservice.EndpointFundingPayments, sampleservice.EndpointDelegations} {
		s.dataNode += svc.Requests(e)
	}
	for _, e := range []sampleservice.Endpoint{sampleservice.EndpointTransactions, sampleservice.EndpointTransaction} {
		s.explorer += svc.Requests(e)
	}
	for _, g := range gws {
		if err := g.alive(); err != nil {
			return s, err
		}
		// Without /proc (not Linux) the gateways' CPU and memory read 0.
		st, _ := readProcStat(g.cmd.Process.Pid)
		s.gatewayCPU += st.cpu
		s.gatewayRSS += st.rss
	}
	return s, nil
}

// browseParams are a run's steps.
type browseParams struct {
	people                []int
	replicas              []int
	warmup, window, drain time.Duration
	think                 time.Duration
	mix                   pageMix
	zipf                  float64
	maxViews              int
	// get: GET requests and a browser cache per person.
	get bool
}

// browseStepParams are what the options ask, or the smoke run's few
// seconds with a handful of people, one gateway and two replicas (or the
// replicas -replicas gives: the short test runs two alone).
func browseStepParams(o *options) browseParams {
	p := browseParams{
		people: o.people, replicas: o.replicas,
		warmup: o.browseWarmup, window: o.browseDuration, drain: o.browseDrain,
		think: o.think, mix: o.browseMix, zipf: o.browseZipf, maxViews: o.browseMaxViews, get: o.browseGet,
	}
	if o.smoke {
		p.people = []int{4}
		if !o.replicasGiven {
			p.replicas = []int{1, 2}
		}
		p.warmup, p.window, p.drain = time.Second, 2*time.Second, 15*time.Second
		p.think = 500 * time.Millisecond
	}
	return p
}

// browseConfigs are the configurations each step runs with.
func browseConfigs(o *options) []browseConfig {
	cs := []browseConfig{{name: "as configured", settings: o.gatewayEnv}}
	if len(o.baselineEnv) > 0 {
		cs = append(cs, browseConfig{name: "baseline", settings: append(slices.Clone(o.gatewayEnv), o.baselineEnv...)})
	}
	return cs
}

// runBrowse measures the browse section once and adds its steps to rep.
func runBrowse(ctx context.Context, o *options, rep *report, logf func(string, ...any)) error {
	run := 1
	for _, r := range rep.browse {
		run = max(run, r.Run+1)
	}
	raiseOpenFileLimit()
	p := browseStepParams(o)
	dir, err := os.MkdirTemp("", "bench-browse-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := o.gatewayBin
	if bin == "" {
		start := time.Now()
		if bin, err = buildGateway(ctx, dir); err != nil {
			return err
		}
		logf("  browse: built the gateway in %s", time.Since(start).Round(time.Millisecond))
	}
	for _, replicas := range p.replicas {
		for _, n := range p.people {
			for _, cfg := range browseConfigs(o) {
				res, err := runBrowseStep(ctx, p, bin, dir, replicas, cfg, n, logf)
				if err != nil {
					return fmt.Errorf("%d replica(s), %d people, %s: %w", replicas, n, cfg.name, err)
				}
				res.Run = run
				logf("  browse %d replica(s) %-13s %5d people: %6.1f views/s  p50 %s p95 %s p99 %s  failed %d/%d %v  data node %.1f/s (%.0f per 100 views) 429s %d bans %d  explorer %.0f per 100 views  gateway %.2f cores, harness %.2f  (%s)",
					replicas, cfg.name, n, res.ViewsPerSecond, servedText(res.P50), servedText(res.P95), servedText(res.P99),
					res.Failed+res.Unfinished, res.Started, res.Errors, res.DataNodePerSecond, res.DataNodePer100, res.DataNode429, res.Bans,
					res.ExplorerPer100, res.GatewayCPU, res.HarnessCPU, res.Took.Round(time.Second))
				if res.Bounded {
					logf("  browse: the step reached -browse-max-views (%d): its people stopped early", p.maxViews)
				}
				if o.smoke {
					if err := smokeCheck(res); err != nil {
						return fmt.Errorf("%d replica(s), %d people, %s: %w", replicas, n, cfg.name, err)
					}
				}
				rep.browse = append(rep.browse, res)
			}
		}
	}
	return nil
}

// smokeCheck fails a smoke step that is not clean: a handful of people
// are far inside the budget, so every view must be served.
func smokeCheck(r browseResult) error {
	switch {
	case r.Started == 0 || r.Views == 0:
		return errors.New("no view in the window")
	case r.Failed+r.Unfinished > 0:
		return fmt.Errorf("%d of %d views failed and %d were unanswered: %v", r.Failed, r.Started, r.Unfinished, r.Errors)
	case r.DataNode429 > 0 || r.Bans > 0:
		return fmt.Errorf("the data node answered 429 %d times and banned %d times", r.DataNode429, r.Bans)
	case r.Bounded:
		return errors.New("the views reached -browse-max-views")
	}
	return nil
}

// runBrowseStep runs one step on fresh processes: the sample service,
// Redis for replicas, the gateways; a tour of every page, then people.
func runBrowseStep(ctx context.Context, p browseParams, bin, dir string, replicas int, cfg browseConfig, people int, logf func(string, ...any)) (browseResult, error) {
	began := time.Now()
	res := browseResult{
		Replicas: replicas, Config: cfg.name, Settings: cfg.settings, People: people,
		Think: p.think, Warmup: p.warmup, Window: p.window, Drain: p.drain, Mix: p.mix.String(), Zipf: p.zipf,
		Method: "POST", LoadAverage: loadAverage(),
	}
	if p.get {
		res.Method = "GET"
	}
	stepDir, err := os.MkdirTemp(dir, "step-")
	if err != nil {
		return res, err
	}
	shapes := &shapeCounter{}
	sample, err := sampleservice.Start(sampleservice.Config{
		OnRequest: shapes.count,
		Dataset:   sampleservice.DatasetOptions{Seed: 1, Scale: 1},
		Defects:   sampleservice.DefaultDefects(),
		// The data node's limits (sampleservice/ratelimit.go's defaults,
		// spelled out): 20 a second per address, bursts of 100, a ban of
		// 10 minutes after 10 consecutive 429s.
		RateLimit: sampleservice.RateLimitConfig{Enabled: true, Rate: 20, Burst: 100, BanAfter: 10, BanDuration: 10 * time.Minute},
		Blocks:    sampleservice.BlocksConfig{Interval: time.Second},
	}, "127.0.0.1:0")
	if err != nil {
		return res, fmt.Errorf("start the sample service: %w", err)
	}
	defer sample.Close()
	cat, err := newCatalog(sample.Service.Dataset(), p.zipf)
	if err != nil {
		return res, err
	}

	env := []string{
		"UPSTREAM_URL=" + sample.URL,
		"EXPLORER_URL=" + sample.URL + "/rest",
		// People come through this process, which names each in
		// X-Forwarded-For.
		"TRUSTED_PROXIES=127.0.0.1",
		// Replicas verify each other's cursors.
		"CURSOR_KEY=" + randomHex(32),
		"SHUTDOWN_TIMEOUT=5s",
	}
	if replicas > 1 {
		r, err := startRedis(stepDir)
		if err != nil {
			return res, err
		}
		defer r.stop()
		env = append(env, "REDIS_URL="+r.url)
	}
	env = append(env, cfg.settings...)
	gws := make([]*childProc, 0, replicas)
	defer func() {
		for _, g := range gws {
			g.stop()
		}
	}()
	for i := range replicas {
		g, err := startGatewayProc(ctx, bin, filepath.Join(stepDir, fmt.Sprintf("gateway-%d.log", i)), env)
		if err != nil {
			return res, err
		}
		gws = append(gws, g)
	}
	urls := make([]string, len(gws))
	for i, g := range gws {
		urls[i] = g.url
	}
	transport := &http.Transport{
		Proxy:               nil, // never a proxy from the environment: loopback only
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        people + 16,
		MaxIdleConnsPerHost: people + 16,
		IdleConnTimeout:     90 * time.Second,
	}
	defer transport.CloseIdleConnections()
	b := &browser{client: &http.Client{Transport: transport}, urls: urls, catalog: cat, start: time.Now(), get: p.get}

	// The tour: every page once, on every replica in turn; each must be
	// served (the queries still fit the gateway).
	if err := b.tour(ctx); err != nil {
		return res, fmt.Errorf("tour of the pages: %w", err)
	}

	// The people.
	b.start = time.Now()
	t0, t1 := p.warmup, p.warmup+p.window
	stop := make(chan struct{})
	viewCtx, cancelViews := context.WithCancel(ctx)
	defer cancelViews()
	var left atomic.Int64
	left.Store(int64(p.maxViews))
	records := make([][]viewRecord, people)
	var firstFailure sync.Once
	var wg sync.WaitGroup
	for i := range people {
		wg.Go(func() {
			records[i] = b.browse(viewCtx, stop, newPerson(i, uint64(people)), p, &left, func(detail string) {
				firstFailure.Do(func() { logf("  browse: first failed view: %s", detail) })
			})
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	abort := func(err error) (browseResult, error) {
		close(stop)
		cancelViews()
		<-done
		return res, err
	}
	if err := sleepUntil(ctx, b.start.Add(t0)); err != nil {
		return abort(err)
	}
	s0, err := takeBrowseSnapshot(sample.Service, shapes, gws)
	if err != nil {
		return abort(err)
	}
	if err := sleepUntil(ctx, b.start.Add(t1)); err != nil {
		return abort(err)
	}
	s1, err := takeBrowseSnapshot(sample.Service, shapes, gws)
	if err != nil {
		return abort(err)
	}
	close(stop)
	drain := time.NewTimer(p.drain)
	defer drain.Stop()
	select {
	case <-done:
	case <-drain.C:
		cancelViews()
		<-done
	case <-ctx.Done():
		cancelViews()
		<-done
		return res, ctx.Err()
	}
	for _, g := range gws {
		if err := g.alive(); err != nil {
			return res, err
		}
	}

	var all []viewRecord
	for _, r := range records {
		all = append(all, r...)
	}
	res.viewSummary = summarizeViews(all, int64(t0), int64(t1))
	res.Bounded = left.Load() < 0
	window := s1.at.Sub(s0.at).Seconds()
	res.DataNode, res.Explorer = s1.dataNode-s0.dataNode, s1.explorer-s0.explorer
	res.DataNode429, res.Bans = s1.limited-s0.limited, s1.bans-s0.bans
	res.Requests = shapesBetween(s0.shapes, s1.shapes)
	if res.Views > 0 {
		res.DataNodePer100 = 100 * float64(res.DataNode) / float64(res.Views)
		res.ExplorerPer100 = 100 * float64(res.Explorer) / float64(res.Views)
	}
	res.DataNodePerSecond = float64(res.DataNode) / window
	res.GatewayCPU = (s1.gatewayCPU - s0.gatewayCPU).Seconds() / window
	res.HarnessCPU = (s1.harnessCPU - s0.harnessCPU).Seconds() / window
	res.GatewayRSS = s1.gatewayRSS
	res.Took = time.Since(began)
	return res, nil
}

// tour views every kind of page once, in order, spreading them over the
// replicas: each must be served.
func (b *browser) tour(ctx context.Context) error {
	cat := b.catalog
	p := newPerson(1<<24-2, 0) // 10.255.255.255
	for k := range numPageKinds {
		v := pageView{kind: k}
		switch k {
		case pageHistory:
			v.vars = map[string]any{"after": p.cursor}
		case pageTransaction:
			v.want = cat.hashes[0]
			v.vars = map[string]any{"hash": v.want}
		case pageBlock:
			v.want = strconv.FormatUint(cat.blocks[0], 10)
			v.vars = map[string]any{"block": v.want}
		case pageParty:
			v.want = cat.parties[0]
			v.vars = map[string]any{"id": v.want}
		case pageValidator:
			v.want = cat.validators[0]
			v.vars = map[string]any{"id": v.want}
		}
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		rec, cursor, detail := b.view(rctx, b.urls[int(k)%len(b.urls)], p, v)
		cancel()
		if rec.outcome != viewServed {
			return fmt.Errorf("%s page (%v): %s", k, rec.codes, detail)
		}
		p.saw(v, cursor)
	}
	return nil
}

// browse is one person's loop: think, view, until stop (the window's end)
// or ctx (the drain's end, or the run's) or the step's bound on views.
func (b *browser) browse(ctx context.Context, stop <-chan struct{}, p *person, params browseParams, left *atomic.Int64, failed func(string)) []viewRecord {
	var recs []viewRecord
	for {
		t := time.NewTimer(p.think(params.think))
		select {
		case <-stop:
			t.Stop()
			return recs
		case <-ctx.Done():
			t.Stop()
			return recs
		case <-t.C:
		}
		select {
		case <-stop:
			return recs
		default:
		}
		if left.Add(-1) < 0 {
			return recs
		}
		v := p.next(params.mix, b.catalog)
		url := b.urls[(p.id+p.views)%len(b.urls)]
		rec, cursor, detail := b.view(ctx, url, p, v)
		if rec.outcome != viewServed && rec.outcome != viewUnfinished {
			failed(fmt.Sprintf("%s page: %s", v.kind, detail))
		}
		p.saw(v, cursor)
		recs = append(recs, rec)
	}
}

// sleepUntil waits until t or ctx's end.
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// servedText formats a latency percentile, notServed as "not served".
func servedText(d time.Duration) string {
	if d == notServed {
		return "not served"
	}
	return ms(d)
}
