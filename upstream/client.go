package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Service names one of the two upstream HTTP services.
type Service string

// The upstream services.
const (
	ServiceDataNode Service = "data-node"
	ServiceExplorer Service = "explorer"
)

// Endpoint names an upstream list endpoint, for errors and metrics.
type Endpoint string

// The upstream endpoints.
const (
	EndpointAssets          Endpoint = "assets"
	EndpointFundingPayments Endpoint = "funding-payments"
	EndpointDelegations     Endpoint = "delegations"
	EndpointTransactions    Endpoint = "transactions"
	// EndpointTransaction is the explorer's lookup of one transaction by
	// hash.
	EndpointTransaction Endpoint = "transaction"
)

// Defaults of Config.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxBodyBytes = 64 << 20
	DefaultUserAgent    = "tradenet-gateway"
)

// Config configures a Client.
type Config struct {
	// DataNodeURL is the data node's base URL, e.g. https://host; the API is
	// under {DataNodeURL}/api/v2/. Required.
	DataNodeURL string
	// ExplorerURL is the block explorer's REST base URL, e.g.
	// https://host/rest; transactions are at {ExplorerURL}/transactions.
	// Default: DataNodeURL.
	ExplorerURL string
	// HTTPClient sends the requests. Default: a client of this package's own
	// with a pooled transport (never http.DefaultClient). Its Transport is
	// the place for a RoundTripper chain (tracing, recording, faults).
	HTTPClient *http.Client
	// Timeout bounds each call, body included, unless the caller's context
	// ends sooner. Default 10s.
	Timeout time.Duration
	// MaxBodyBytes bounds a response body (after decompression). A larger
	// body fails the call with a *DecodeError. Default 64 MiB.
	MaxBodyBytes int64
	// UserAgent is sent with every request. Default "tradenet-gateway".
	UserAgent string
	// OnResponse, if set, is called once per upstream request when it ends,
	// successfully or not, for metrics and tests. It must be fast and safe
	// for concurrent use.
	OnResponse func(RequestInfo)

	// Retry bounds the retries of calls that failed with a connection
	// error, a timeout or a 5xx (see resilience.go).
	Retry RetryConfig
	// Breaker configures the circuit breaker of each service.
	Breaker BreakerConfig
	// MaxConcurrent bounds the requests in flight to each service; 0 means
	// DefaultMaxConcurrent.
	MaxConcurrent int
	// Budget is the rate budget of data-node calls; nil means none.
	// NewLocalBudget makes one.
	Budget Budget
	// ExplorerBudget is the rate budget of block-explorer calls: the
	// explorer has no rate limit of its own, so this one is the gateway's
	// protection of it and the clients' fair share of it; nil means none.
	ExplorerBudget Budget
	// OnBreakerChange, if set, is called when a service's circuit breaker
	// changes state ("closed", "half-open", "open"), for metrics and logs.
	// It is called with the breaker's lock held: it must be fast and must
	// not call BreakerState.
	OnBreakerChange func(service Service, from, to string)
	// TracerProvider, if set, traces every upstream request: a client
	// span per HTTP request, child of the caller's span, whose W3C trace
	// context (traceparent) is sent to the upstream. Nil traces nothing.
	TracerProvider trace.TracerProvider
	// Cache, if set, keeps answers and serves them again while they are
	// true (cache.go); nil caches nothing. Answers are reported with
	// their kind (Answer.Kind) either way.
	Cache *Cache
}

// RequestInfo describes one finished upstream request.
type RequestInfo struct {
	Service  Service
	Endpoint Endpoint
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	// Duration is from sending the request to having read the body.
	Duration time.Duration
	// Bytes is the number of body bytes read.
	Bytes int64
	// Err is nil on success, else the *Error, *UnavailableError or
	// *DecodeError the call returns (unwrapped).
	Err error
}

// Client calls the data node and the block explorer. It is safe for
// concurrent use.
type Client struct {
	httpClient *http.Client
	timeout    time.Duration
	maxBody    int64
	userAgent  string
	onResponse func(RequestInfo)
	tracer     trace.Tracer // nil: no tracing
	flights    flights
	cache      *Cache // nil: none
	head       chainHead

	guards                 map[Service]*guard
	retries                int
	retryInitial, retryMax time.Duration

	assets, fundingPayments, delegations, transactions route
	// transaction is the lookup route's base: the hash is appended.
	transaction route
}

// route is one endpoint and its absolute URL, without query.
type route struct {
	service  Service
	endpoint Endpoint
	url      string
	// filter is, for an explorer list, what it lists (cacheEntry.filter).
	filter *TxFilter
}

// New returns a Client for cfg, or an error if a URL is not an absolute
// http(s) URL without query or fragment.
func New(cfg Config) (*Client, error) {
	dataNode, err := parseBaseURL("data node URL", cfg.DataNodeURL)
	if err != nil {
		return nil, err
	}
	explorer := dataNode
	if cfg.ExplorerURL != "" {
		if explorer, err = parseBaseURL("explorer URL", cfg.ExplorerURL); err != nil {
			return nil, err
		}
	}
	c := &Client{
		httpClient: cfg.HTTPClient,
		timeout:    cfg.Timeout,
		maxBody:    cfg.MaxBodyBytes,
		userAgent:  cfg.UserAgent,
		onResponse: cfg.OnResponse,
		tracer:     tracerOf(cfg.TracerProvider),
		cache:      cfg.Cache,

		assets:          route{ServiceDataNode, EndpointAssets, dataNode.JoinPath("api/v2/assets").String(), nil},
		fundingPayments: route{ServiceDataNode, EndpointFundingPayments, dataNode.JoinPath("api/v2/funding-payments").String(), nil},
		delegations:     route{ServiceDataNode, EndpointDelegations, dataNode.JoinPath("api/v2/delegations").String(), nil},
		transactions:    route{ServiceExplorer, EndpointTransactions, explorer.JoinPath("transactions").String(), nil},
		transaction:     route{ServiceExplorer, EndpointTransaction, explorer.JoinPath("transactions").String(), nil},
	}
	c.head.moved = c.cache.headMoved
	if c.httpClient == nil {
		c.httpClient = &http.Client{Transport: newTransport()}
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	c.retries, c.retryInitial, c.retryMax = cfg.Retry.Retries, cfg.Retry.InitialInterval, cfg.Retry.MaxInterval
	switch {
	case c.retries == 0:
		c.retries = DefaultRetries
	case c.retries < 0:
		c.retries = 0
	}
	if c.retryInitial <= 0 {
		c.retryInitial = DefaultRetryInitial
	}
	if c.retryMax <= 0 {
		c.retryMax = DefaultRetryMax
	}
	c.guards = map[Service]*guard{
		ServiceDataNode: newGuard(ServiceDataNode, &cfg, cfg.Budget),
		ServiceExplorer: newGuard(ServiceExplorer, &cfg, cfg.ExplorerBudget),
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBodyBytes
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	return c, nil
}

func parseBaseURL(name, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return nil, fmt.Errorf("upstream: the %s is required", name)
	case err != nil:
		return nil, fmt.Errorf("upstream: %s: %w", name, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("upstream: %s %q: want an http or https URL", name, raw)
	case u.Host == "":
		return nil, fmt.Errorf("upstream: %s %q has no host", name, raw)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("upstream: %s %q: a base URL cannot have a query or fragment", name, raw)
	}
	return u, nil
}

// newTransport is the default transport: the standard one (proxy from the
// environment, dial and TLS timeouts, HTTP/2) with more idle connections
// per host, since every request goes to one or two hosts.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return t
}

// ListAssets lists assets.
//
// GET {data node}/api/v2/assets
func (c *Client) ListAssets(ctx context.Context, p AssetsParams) (*AssetPage, error) {
	q := url.Values{}
	p.Pagination.addTo(q)
	body, fresh, derived, err := get[assetsBody](ctx, c, c.assets, q, dataNodeAnswer)
	if err != nil {
		return nil, fmt.Errorf("list assets: %w", err)
	}
	page := *body.Assets // the decoded page may be shared with coalesced callers
	page.Freshness, page.derived = fresh, derived
	return &page, nil
}

// GetAsset returns the asset with the given id, and the freshness of the
// answer. An unknown id gives an error for which IsNotFound is true.
//
// GET {data node}/api/v2/assets?assetId={id}
func (c *Client) GetAsset(ctx context.Context, id string) (*Asset, *Freshness, error) {
	if id == "" {
		// Without assetId the endpoint would list every asset.
		return nil, nil, fmt.Errorf("get asset with empty id: %w", ErrNotFound)
	}
	body, fresh, _, err := get[assetsBody](ctx, c, c.assets, url.Values{"assetId": {id}}, dataNodeAnswer)
	if err != nil {
		return nil, nil, fmt.Errorf("get asset %q: %w", id, err)
	}
	for i := range body.Assets.Edges {
		if body.Assets.Edges[i].Node.ID == id {
			return &body.Assets.Edges[i].Node, &fresh, nil
		}
	}
	return nil, nil, fmt.Errorf("get asset %q: %w", id, ErrNotFound)
}

// ListFundingPayments lists a party's funding payments.
//
// GET {data node}/api/v2/funding-payments
func (c *Client) ListFundingPayments(ctx context.Context, p FundingPaymentsParams) (*FundingPaymentPage, error) {
	q := url.Values{}
	q.Set("partyId", p.PartyID) // required: sent even when empty, for the upstream's own error
	if p.MarketID != "" {
		q.Set("marketId", p.MarketID)
	}
	p.Pagination.addTo(q)
	body, fresh, derived, err := get[fundingPaymentsBody](ctx, c, c.fundingPayments, q, dataNodeAnswer)
	if err != nil {
		return nil, fmt.Errorf("list funding payments of party %q: %w", p.PartyID, err)
	}
	page := *body.FundingPayments
	page.Freshness, page.derived = fresh, derived
	return &page, nil
}

// ListDelegations lists delegations.
//
// GET {data node}/api/v2/delegations
func (c *Client) ListDelegations(ctx context.Context, p DelegationsParams) (*DelegationPage, error) {
	q := url.Values{}
	if p.PartyID != "" {
		q.Set("partyId", p.PartyID)
	}
	if p.NodeID != "" {
		q.Set("nodeId", p.NodeID)
	}
	if p.EpochID != "" {
		q.Set("epochId", p.EpochID)
	}
	p.Pagination.addTo(q)
	body, fresh, derived, err := get[delegationsBody](ctx, c, c.delegations, q, dataNodeAnswer)
	if err != nil {
		return nil, fmt.Errorf("list delegations: %w", err)
	}
	page := *body.Delegations
	page.Freshness, page.derived = fresh, derived
	return &page, nil
}

// ListTransactions lists transactions, newest first.
//
// GET {explorer}/transactions
func (c *Client) ListTransactions(ctx context.Context, p TransactionsParams) (*TransactionPage, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	// The answer lists what its filter matches: a block none of whose
	// transactions it matches leaves it true (Cache.transactions).
	r := c.transactions
	if f := NewTxFilter(p); !f.empty() {
		r.filter = &f
	}
	body, _, _, err := get[pageBody](ctx, c, r, p.query(), func(b *pageBody, head uint64) judgement {
		rows := b.rows
		kind, atHead := transactionsKind(p, rows, head)
		return judgement{kind: kind, atHead: atHead, seen: newestPosition(rows), exact: p.namesHead()}
	})
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	return &TransactionPage{Transactions: body.rows}, nil
}

// GetTransaction returns the transaction with the given hash (hex, any
// letter case: it is sent upper-cased, as the explorer stores it, so
// lookups differing only in case share one request). An unknown hash gives
// an error for which IsNotFound is true; a hash the explorer holds more
// than once (it answers 400, FailedPrecondition) gives one wrapping
// ErrHashNotUnique and the *Error. A hash that is not hexadecimal is
// refused before any request.
//
// GET {explorer}/transactions/{hash}
func (c *Client) GetTransaction(ctx context.Context, hash string) (*Transaction, error) {
	if err := checkHash(hash); err != nil {
		return nil, fmt.Errorf("get transaction: %w", err)
	}
	hash = strings.ToUpper(hash)
	r := c.transaction
	r.url += "/" + hash
	body, _, _, err := get[lookupBody](ctx, c, r, nil, func(b *lookupBody, _ uint64) judgement {
		// Found by hash: that transaction, for ever. (Not found is an
		// error, never kept.)
		return judgement{kind: CacheImmutable, seen: b.tx.Position()}
	})
	var e *Error
	switch {
	case errors.As(err, &e) && e.lookupNotFound():
		return nil, fmt.Errorf("get transaction %s: %w", hash, ErrNotFound)
	case errors.As(err, &e) && e.StatusCode == http.StatusBadRequest && e.Code == grpcFailedPrecondition:
		return nil, fmt.Errorf("get transaction %s: %w: %w", hash, ErrHashNotUnique, err)
	case err != nil:
		return nil, fmt.Errorf("get transaction %s: %w", hash, err)
	}
	return body.tx, nil
}

// maxHashLength bounds a hash GetTransaction sends (real ones are 64 hex
// characters), so that no input makes an unbounded URL.
const maxHashLength = 128

// checkHash refuses what cannot be a transaction hash, so that nothing but
// hex digits reaches the URL path.
func checkHash(hash string) error {
	if hash == "" || len(hash) > maxHashLength {
		return fmt.Errorf("a transaction hash is 1 to %d hexadecimal characters, got %d", maxHashLength, len(hash))
	}
	for i := 0; i < len(hash); i++ {
		if c := hash[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return fmt.Errorf("a transaction hash is hexadecimal: %q at offset %d", c, i)
		}
	}
	return nil
}

// The response bodies: {"<list>": …}. A nil field after decoding means the
// body was not the expected list (a wrong URL answering 200, say).
type (
	assetsBody struct {
		Assets *AssetPage `json:"assets"`
	}
	fundingPaymentsBody struct {
		FundingPayments *FundingPaymentPage `json:"fundingPayments"`
	}
	delegationsBody struct {
		Delegations *DelegationPage `json:"delegations"`
	}
	// transactionsBody is the list of transactions decoded whole, each
	// command with it (the reference of the tests); the client decodes
	// pageBody.
	transactionsBody struct {
		Transactions *[]Transaction `json:"transactions"`
	}
	// pageBody is the list of transactions as the client decodes it: its
	// rows hold their commands undecoded (command_lazy.go).
	pageBody struct {
		Wire *[]wireTransaction `json:"transactions"`
		rows []Transaction
	}
	// lookupBody is the lookup's {"transaction": {…}}, decoded as pageBody.
	lookupBody struct {
		Wire *wireTransaction `json:"transaction"`
		tx   *Transaction
	}
	listBody interface{ hasList() bool }
)

func (b *assetsBody) hasList() bool          { return b.Assets != nil }
func (b *fundingPaymentsBody) hasList() bool { return b.FundingPayments != nil }
func (b *delegationsBody) hasList() bool     { return b.Delegations != nil }
func (b *transactionsBody) hasList() bool    { return b.Transactions != nil }
func (b *pageBody) hasList() bool            { return b.rows != nil }
func (b *lookupBody) hasList() bool          { return b.tx != nil }

// decoded turns the wire rows into Transactions (decodeBody).
func (b *pageBody) decoded() {
	if b.Wire != nil {
		b.rows = make([]Transaction, len(*b.Wire))
		for i := range *b.Wire {
			b.rows[i] = (*b.Wire)[i].transaction()
		}
		b.Wire = nil
	}
}

// decoded turns the wire row into a Transaction (decodeBody).
func (b *lookupBody) decoded() {
	if b.Wire != nil {
		tx := b.Wire.transaction()
		b.tx, b.Wire = &tx, nil
	}
}

// judgement is a route's reading of a fresh answer, given the head block
// known when it was asked (0: unknown): its kind, the head block it is
// true at (CacheUntilNextBlock), and what it shows of the explorer's head
// (seen, the newest block it holds; exact when that is the head itself).
type judgement struct {
	kind   CacheKind
	atHead uint64
	seen   TxCursor
	exact  bool
}

// dataNodeAnswer judges a data-node answer: true at the block it names,
// served again for a little while.
func dataNodeAnswer[B any](*B, uint64) judgement { return judgement{kind: CacheRecent} }

// rawBody receives the body a request read: its length, and a copy of it
// when keep is set; and when the request that read it was sent.
type rawBody struct {
	keep bool
	data []byte
	n    int
	sent time.Time
}

// get performs one GET and decodes its 2xx JSON body, or joins an
// identical GET already in flight (coalescing: one upstream request serves
// every caller, across requests; with a shared tier, across replicas too:
// fleet.go), or serves it from the cache while it is true (cache.go; judge
// says what the answer is). Every upstream call goes
// through here: it is the one place for the cache, retries, a circuit
// breaker, a shared rate budget, coalescing and metrics. The decoded body
// may be shared by the callers, and by later ones from the cache: they
// must not modify it. The *Derived is the store of the callers that shared
// this answer in flight (nil for an answer served from the cache without
// a flight): pages hand it on, for Page.Derive.
func get[B any, PB interface {
	*B
	listBody
}](ctx context.Context, c *Client, r route, q url.Values, judge func(*B, uint64) judgement) (*B, Freshness, *Derived, error) {
	target := r.url
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	cache := c.cache
	if cacheBypassed(ctx) {
		cache = nil
	}
	if cache != nil {
		if e, ok := cache.lookup(target, c.head.view(), time.Now()); ok {
			if body, ok := e.body.(PB); ok {
				cache.event(r.endpoint, e.kind, CacheHit)
				RecordAnswer(ctx, Answer{Service: r.service, Endpoint: r.endpoint, Freshness: e.fresh, Kind: e.kind, FetchedAt: e.fetched, Cached: true})
				return (*B)(body), e.fresh, nil, nil
			}
		}
	}
	if testAfterCacheMiss != nil {
		testAfterCacheMiss()
	}
	key := target
	if cache == nil {
		// A request that bypasses the cache never joins one that may be
		// served from it.
		key = "\x00fresh " + target
	}
	// The flight outlives a caller who gives up, but not the first
	// caller's deadline: retries never run past it.
	deadline, hasDeadline := ctx.Deadline()
	res, err, _ := c.flights.do(ctx, key, func(ctx context.Context) (flightResult, error) {
		if hasDeadline {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
		}
		if cache != nil {
			// A caller that missed the cache just before an identical
			// flight stored its answer and ended starts this flight:
			// that answer serves it.
			if e, ok := cache.lookup(target, c.head.view(), time.Now()); ok {
				if _, ok := e.body.(PB); ok {
					return flightResult{body: e.body, fresh: e.fresh, at: e.fetched, kind: e.kind, cached: true, local: true}, nil
				}
			}
			if res, ok := sharedAnswer[B, PB](ctx, c, r, target); ok {
				return res, nil
			}
			// Another replica may be fetching it (fleet.go).
			return fetchForFleet[B, PB](ctx, c, r, target, judge)
		}
		return fetch[B, PB](ctx, c, r, target, judge)
	})
	if err != nil {
		cache.event(r.endpoint, CacheNone, CacheMiss)
		if ctx.Err() != nil && err == ctx.Err() {
			err = &UnavailableError{Service: r.service, Endpoint: r.endpoint, Err: err}
		}
		return nil, Freshness{}, nil, err
	}
	body, _ := res.body.(PB)
	switch {
	case res.local:
		cache.event(r.endpoint, res.kind, CacheHit)
	case res.fleet:
		cache.event(r.endpoint, res.kind, CacheFleetHit)
	case res.cached:
		cache.event(r.endpoint, res.kind, CacheSharedHit)
	default:
		cache.event(r.endpoint, res.kind, CacheMiss)
	}
	RecordAnswer(ctx, Answer{Service: r.service, Endpoint: r.endpoint, Freshness: res.fresh, Kind: res.kind, FetchedAt: res.at, Cached: res.cached})
	return (*B)(body), res.fresh, res.derived, nil
}

// testAfterCacheMiss, set by tests only, runs between a request's miss in
// this process's cache and its flight.
var testAfterCacheMiss func()

// fetch asks the service for target, judges the answer, learns what it
// shows of the explorer's head, and keeps it in the cache (this process's
// and the shared tier) when its kind allows.
func fetch[B any, PB interface {
	*B
	listBody
}](ctx context.Context, c *Client, r route, target string, judge func(*B, uint64) judgement) (flightResult, error) {
	before := c.head.view()
	body := PB(new(B))
	raw := &rawBody{keep: c.cache != nil && c.cache.shared != nil}
	var shared flightResult
	if raw.keep {
		// Another replica may fetch the same answer while this flight
		// queues for the budget: FairBudget asks the shared tier again
		// when the flight's turn comes, before it takes a token.
		ctx = withAnsweredMeanwhile(ctx, func(ctx context.Context) (ok bool) {
			shared, ok = sharedAnswer[B, PB](ctx, c, r, target)
			return ok
		})
	}
	fresh, err := c.call(ctx, r, target, body, raw)
	if errors.Is(err, errAnsweredMeanwhile) {
		return shared, nil
	}
	if err != nil {
		return flightResult{}, err
	}
	// The answer is true at least from when its request was sent: after
	// the wait for the budget (seconds, while it is spent), which would
	// otherwise age it past MaxAge before it arrives, and keep it from
	// being served again by this process or any replica.
	requested := raw.sent
	j := judge((*B)(body), before.block)
	res := flightResult{body: body, fresh: fresh, at: time.Now(), kind: j.kind}
	// What the answer shows of the head first: entries true only at an
	// older head go before this one is stored.
	c.head.observe(j.seen, j.exact, requested)
	if c.cache == nil || !c.cache.keeps(j.kind) {
		return res, nil
	}
	e := &cacheEntry{key: target, endpoint: r.endpoint, kind: j.kind, body: body, fresh: fresh,
		requested: requested, fetched: res.at, head: j.atHead, filter: r.filter, size: entrySize(target, raw.n)}
	c.cache.store(e, c.head.view())
	if raw.keep && !(j.kind == CacheUntilNextBlock && j.atHead < c.head.view().block) {
		c.cache.sharedSet(ctx, e, raw.data, r.service, target)
	}
	return res, nil
}

// sharedAnswer serves target from the shared tier when it holds an entry
// that may be served now (cache.valid), decoded as a fresh answer would
// be; the entry is then kept in this process too. An entry it cannot read
// is a miss.
func sharedAnswer[B any, PB interface {
	*B
	listBody
}](ctx context.Context, c *Client, r route, target string) (flightResult, bool) {
	cache := c.cache
	if cache.shared == nil {
		return flightResult{}, false
	}
	h := c.head.view()
	vals, _, _ := cache.sharedGet(ctx, target, r.service, h.block)
	now := time.Now()
	for _, v := range vals {
		if v == nil {
			continue
		}
		e := &cacheEntry{key: target, endpoint: r.endpoint, filter: r.filter}
		raw, err := decodeShared(v, e)
		if err != nil || !cache.valid(e, h, now) {
			continue
		}
		body := PB(new(B))
		if err := decodeBody(raw, body); err != nil || !body.hasList() {
			continue
		}
		e.body, e.size = body, entrySize(target, len(raw))
		cache.store(e, h)
		return flightResult{body: body, fresh: e.fresh, at: e.fetched, kind: e.kind, cached: true}, true
	}
	return flightResult{}, false
}

// BreakerState is the state of service's circuit breaker: "closed",
// "half-open" or "open" (BreakerClosed, BreakerHalfOpen, BreakerOpen).
func (c *Client) BreakerState(service Service) string {
	g, ok := c.guards[service]
	if !ok {
		return ""
	}
	return g.state()
}

// do performs one GET of target and decodes a 2xx JSON body into out;
// raw, if not nil, receives the body.
func (c *Client) do(ctx context.Context, r route, target string, out listBody, raw *rawBody) (fresh Freshness, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fresh, fmt.Errorf("%s %s: build request: %w", r.service, r.endpoint, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	acceptGzip(req)
	ctx, span := c.startSpan(ctx, r, target, req.Header)
	req = req.WithContext(ctx)
	countCall(ctx)

	info := RequestInfo{Service: r.service, Endpoint: r.endpoint}
	start := time.Now()
	if raw != nil {
		raw.sent = start
	}
	defer func() {
		info.Duration = time.Since(start)
		info.Err = err
		endSpan(span, info)
		if c.onResponse != nil {
			c.onResponse(info)
		}
	}()

	resp, err := c.httpClient.Do(req)
	if err != nil {
		return fresh, &UnavailableError{Service: r.service, Endpoint: r.endpoint, Err: err}
	}
	defer resp.Body.Close()
	info.StatusCode = resp.StatusCode

	body, done, err := bodyReader(resp)
	if err != nil {
		return fresh, &UnavailableError{Service: r.service, Endpoint: r.endpoint, Err: fmt.Errorf("read body: %w", err)}
	}
	defer done()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, readErr := io.ReadAll(io.LimitReader(body, maxErrorBody))
		info.Bytes = int64(len(body))
		if readErr != nil && len(body) == 0 {
			return fresh, &UnavailableError{Service: r.service, Endpoint: r.endpoint, Err: readErr}
		}
		return fresh, newError(r, resp, body)
	}

	buf := getBuffer()
	defer putBuffer(buf)
	if resp.ContentLength > 0 && resp.ContentLength <= c.maxBody && body == io.Reader(resp.Body) {
		buf.Grow(int(resp.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(body, c.maxBody+1))
	info.Bytes = n
	if err != nil {
		return fresh, &UnavailableError{Service: r.service, Endpoint: r.endpoint, Err: fmt.Errorf("read body: %w", err)}
	}
	if n > c.maxBody {
		return fresh, &DecodeError{Service: r.service, Endpoint: r.endpoint,
			Err: fmt.Errorf("%w (%d bytes)", ErrResponseTooLarge, c.maxBody)}
	}
	if err := decodeBody(buf.Bytes(), out); err != nil {
		return fresh, &DecodeError{Service: r.service, Endpoint: r.endpoint, Err: err}
	}
	if !out.hasList() {
		return fresh, &DecodeError{Service: r.service, Endpoint: r.endpoint,
			Err: fmt.Errorf("the body is not the expected %s list", r.endpoint)}
	}
	if raw != nil {
		raw.n = buf.Len()
		if raw.keep {
			raw.data = bytes.Clone(buf.Bytes())
		}
	}
	return freshness(resp.Header), nil
}

// freshness reads the data node's X-Block-Height and X-Block-Timestamp
// (Unix nanoseconds). A missing or malformed header leaves its field zero.
func freshness(h http.Header) Freshness {
	var f Freshness
	if v := h.Get("X-Block-Height"); v != "" {
		f.BlockHeight, _ = strconv.ParseUint(v, 10, 64)
	}
	if v := h.Get("X-Block-Timestamp"); v != "" {
		if ns, err := strconv.ParseInt(v, 10, 64); err == nil && ns > 0 {
			f.BlockTime = time.Unix(0, ns).UTC()
		}
	}
	return f
}

// Response bodies are read into pooled buffers: decoding copies everything
// it keeps, so a buffer is free again once decoded. Buffers grown past
// maxPooledBuffer are left to the garbage collector rather than pinned.
const maxPooledBuffer = 4 << 20

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer {
	buf := bufferPool.Get().(*bytes.Buffer)
	buf.Reset()
	return buf
}

func putBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBuffer {
		bufferPool.Put(buf)
	}
}
