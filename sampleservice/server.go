package sampleservice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tradenet/gateway/internal/httpcompress"
)

// Endpoint names one of the service's list endpoints, for faults and
// request counts.
type Endpoint string

// The endpoints.
const (
	EndpointAssets          Endpoint = "assets"           // GET /api/v2/assets
	EndpointFundingPayments Endpoint = "funding-payments" // GET /api/v2/funding-payments
	EndpointDelegations     Endpoint = "delegations"      // GET /api/v2/delegations
	EndpointTransactions    Endpoint = "transactions"     // GET /transactions, /rest/transactions
	EndpointTransaction     Endpoint = "transaction"      // GET /transactions/{hash}, /rest/transactions/{hash}
)

var endpoints = [...]Endpoint{EndpointAssets, EndpointFundingPayments, EndpointDelegations, EndpointTransactions, EndpointTransaction}

// Defects switches the real service's known defects (docs/wire.md, Known
// defects). A faithful simulation has them all (DefaultDefects); turning
// one off shows what the gateway would do against a fixed upstream.
type Defects struct {
	// FundingCursors: any cursor on /api/v2/funding-payments answers 500.
	FundingCursors bool
	// ExplorerTwoCursorWindows: explorer before+after windows refuse a
	// valid window (400) and accept only an inverted, empty one.
	ExplorerTwoCursorWindows bool
	// AssetPagingErrors500: invalid paging on /api/v2/assets answers 500
	// (200001 "failed to get assets") instead of 400 10028.
	AssetPagingErrors500 bool
}

// DefaultDefects returns every defect switched on, as on the real network.
func DefaultDefects() Defects {
	return Defects{FundingCursors: true, ExplorerTwoCursorWindows: true, AssetPagingErrors500: true}
}

// Config configures a Service.
type Config struct {
	// Dataset says which dataset to generate when Data is nil; a zero Seed
	// means 1 and a zero Scale means 1.
	Dataset DatasetOptions
	// Data, when set, is served instead of a generated dataset (tests use
	// small hand-made ones). The service does not modify it.
	Data *Dataset
	// RateLimit is the data node's rate limit; off unless Enabled.
	RateLimit RateLimitConfig
	// Defects are used as given: the zero value has none, so pass
	// DefaultDefects() to behave like the real network.
	Defects Defects
	// CacheEntries bounds the response cache: 0 means 1024 entries, a
	// negative value disables the cache.
	CacheEntries int
	// ExplorerMaxPage caps an explorer page (the real explorer has no
	// maximum); 0 means 100,000 transactions.
	ExplorerMaxPage int
	// FaultSeed seeds the fault-injection draws; 0 means 1.
	FaultSeed int64
	// Blocks makes the chain grow: with an Interval, a Server appends a
	// block that often (live.go). Off by default. Needs a generated
	// dataset.
	Blocks BlocksConfig
	// Control serves the control route POST /_sample/blocks, which appends
	// a block now (for end-to-end tests in other processes). Off by
	// default: the route is then unknown (404).
	Control bool
	// OnRequest, when set, sees every request to a known route as it
	// arrives, before it is answered (the benchmark's count of upstream
	// requests by shape). It must not keep or modify r.
	OnRequest func(r *http.Request)
}

// Service serves one dataset as the data node and the block explorer.
// All its methods are safe for concurrent use.
type Service struct {
	data      *Dataset
	dataNode  *dataNode
	cache     *responseCache
	faults    *faultInjector
	limiter   *rateLimiter // nil when the rate limit is off
	maxTxRows int
	blocks    BlocksConfig
	control   bool
	onRequest func(*http.Request)

	// txs is the explorer's index of the chain now; an append replaces it
	// (live.go). fresh is the data node's X-Block-* headers.
	txs   atomic.Pointer[txIndex]
	fresh atomic.Pointer[freshness]
	// generated is the generated chain blocks are appended to; nil when
	// the dataset is hand-made. appendMu serialises appends.
	generated *txSource
	appendMu  sync.Mutex
	// onAppend, when set (by tests, before any append), is called with
	// each append's transactions.
	onAppend func([]AppendedTx)

	state       atomic.Pointer[serviceState]
	requests    [len(endpoints)]atomic.Int64
	bans        atomic.Int64
	rateLimited atomic.Int64
}

// freshness is the data node's X-Block-Height and X-Block-Timestamp.
type freshness struct{ height, time string }

// serviceState is what SetDefects replaces; gen keeps cached responses of
// other defect settings from being served.
type serviceState struct {
	defects Defects
	gen     uint64
}

// New builds a service: it generates the dataset unless cfg.Data is set,
// sorts the data-node lists and indexes the transactions.
func New(cfg Config) (*Service, error) {
	data := cfg.Data
	if data == nil {
		opts := cfg.Dataset
		if opts.Seed == 0 {
			opts.Seed = 1
		}
		if opts.Scale <= 0 {
			opts.Scale = 1
		}
		d, err := Generate(opts)
		if err != nil {
			return nil, fmt.Errorf("generate sample dataset: %w", err)
		}
		data = d
	}
	txs, err := newTxIndex(data.Transactions)
	if err != nil {
		return nil, fmt.Errorf("index transactions: %w", err)
	}
	blocks := cfg.Blocks
	if err := blocks.validate(); err != nil {
		return nil, err
	}
	generated, _ := data.Transactions.(*txSource)
	if blocks.Interval > 0 && generated == nil {
		return nil, errNotAppendable
	}
	s := &Service{
		data:      data,
		dataNode:  newDataNode(data),
		cache:     newResponseCache(cfg.CacheEntries),
		maxTxRows: cfg.ExplorerMaxPage,
		blocks:    blocks,
		control:   cfg.Control,
		onRequest: cfg.OnRequest,
		generated: generated,
	}
	s.txs.Store(txs)
	s.fresh.Store(&freshness{height: strconv.FormatUint(data.BlockHeight, 10), time: strconv.FormatInt(data.BlockTime, 10)})
	if s.maxTxRows <= 0 {
		s.maxTxRows = defaultExplorerCap
	}
	seed := cfg.FaultSeed
	if seed == 0 {
		seed = 1
	}
	s.faults = newFaultInjector(seed)
	if cfg.RateLimit.Enabled {
		s.limiter = newRateLimiter(cfg.RateLimit)
	}
	s.state.Store(&serviceState{defects: cfg.Defects})
	return s, nil
}

// Dataset returns the dataset served. Callers must not modify it. Blocks
// appended since start are not in it: Transactions gives the chain now.
func (s *Service) Dataset() *Dataset { return s.data }

// Handler returns the HTTP handler of both services: the data node under
// /api/v2/ and the explorer at /transactions and /rest/transactions (the
// list) and /transactions/{hash}, /rest/transactions/{hash} (the lookup).
func (s *Service) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// SetDefects switches defects at run time.
func (s *Service) SetDefects(d Defects) {
	for {
		old := s.state.Load()
		if s.state.CompareAndSwap(old, &serviceState{defects: d, gen: old.gen + 1}) {
			break
		}
	}
	s.cache.purge()
}

// SetFault sets endpoint e's fault, replacing any previous one; the zero
// Fault clears it. It takes effect from the next request.
func (s *Service) SetFault(e Endpoint, f Fault) { s.faults.set(e, f) }

// Requests is the number of requests endpoint e has received since start
// or the last ResetCounters, whatever their outcome.
func (s *Service) Requests(e Endpoint) int64 {
	for i, ep := range endpoints {
		if ep == e {
			return s.requests[i].Load()
		}
	}
	return 0
}

// ResetCounters zeroes the request, ban and 429 counters (bans in force
// stay in force).
func (s *Service) ResetCounters() {
	for i := range s.requests {
		s.requests[i].Store(0)
	}
	s.bans.Store(0)
	s.rateLimited.Store(0)
}

// Bans is the number of bans issued by the rate limiter.
func (s *Service) Bans() int64 { return s.bans.Load() }

// RateLimited is the number of 429 responses issued.
func (s *Service) RateLimited() int64 { return s.rateLimited.Load() }

// route is one endpoint's path binding.
type route struct {
	// index is the endpoint's position in endpoints.
	index    int
	dataNode bool
	// handle serves the route from the chain x; param is the path's last
	// segment for a route with one (the lookup's hash).
	handle func(s *Service, x *txIndex, param string, q query, d Defects) ([]byte, *apiError)
}

var routes = map[string]route{
	"/api/v2/assets": {0, true, func(s *Service, _ *txIndex, _ string, q query, d Defects) ([]byte, *apiError) {
		return s.dataNode.listAssets(q, d)
	}},
	"/api/v2/funding-payments": {1, true, func(s *Service, _ *txIndex, _ string, q query, d Defects) ([]byte, *apiError) {
		return s.dataNode.listFundingPayments(q, d)
	}},
	"/api/v2/delegations": {2, true, func(s *Service, _ *txIndex, _ string, q query, d Defects) ([]byte, *apiError) {
		return s.dataNode.listDelegations(q, d)
	}},
	"/transactions":      {3, false, explorerHandler},
	"/rest/transactions": {3, false, explorerHandler},
	// The lookup by hash, matched by prefix (routeFor).
	"/transactions/":      {4, false, lookupHandler},
	"/rest/transactions/": {4, false, lookupHandler},
}

func explorerHandler(s *Service, x *txIndex, _ string, q query, d Defects) ([]byte, *apiError) {
	return x.listTransactions(q, d, s.maxTxRows)
}

func lookupHandler(_ *Service, x *txIndex, hash string, _ query, _ Defects) ([]byte, *apiError) {
	return x.getTransaction(hash)
}

// routeFor finds path's route: an exact match, or a route ending in "/"
// followed by one non-empty segment (its parameter).
func routeFor(path string) (rt route, param string, ok bool) {
	if strings.HasSuffix(path, "/") {
		return route{}, "", false // a prefix route needs its segment
	}
	if rt, ok = routes[path]; ok {
		return rt, "", true
	}
	i := strings.LastIndexByte(path, '/')
	if i < 0 || i == len(path)-1 {
		return route{}, "", false
	}
	rt, ok = routes[path[:i+1]]
	return rt, path[i+1:], ok
}

// serve is the service's one handler. In order: route, count, method,
// rate limit (data node), faults, cache, the endpoint itself.
func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	rt, param, known := routeFor(path)
	dataNode := rt.dataNode || (!known && strings.HasPrefix(path, "/api/"))
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			// Never reached by design; answer like a failing service
			// rather than crash the connection.
			s.writeError(w, r, plainError(http.StatusInternalServerError, grpcInternal, fmt.Sprint("internal error: ", v)), dataNode)
		}
	}()
	if dataNode {
		h := w.Header()
		f := s.fresh.Load()
		h.Set("X-Block-Height", f.height)
		h.Set("X-Block-Timestamp", f.time)
	}
	if !known && s.control && path == controlBlocksPath {
		s.serveControl(w, r)
		return
	}
	if !known {
		s.writeError(w, r, errNotFoundRoute, dataNode)
		return
	}
	s.requests[rt.index].Add(1)
	if s.onRequest != nil {
		s.onRequest(r)
	}
	if r.Method != http.MethodGet {
		s.writeError(w, r, errMethodNotAllowed, dataNode)
		return
	}
	if dataNode && s.limiter != nil {
		d := s.limiter.check(clientIP(r), time.Now())
		s.limiter.setHeaders(w.Header(), d)
		switch d.verdict {
		case banned:
			s.writeError(w, r, errBanned, true)
			return
		case limited:
			s.rateLimited.Add(1)
			if d.newBan {
				s.bans.Add(1)
			}
			s.writeError(w, r, errRateLimited, true)
			return
		}
	}

	plan := s.faults.plan(endpoints[rt.index])
	if !plan.wait(r) {
		return
	}
	switch {
	case plan.fail:
		s.writeError(w, r, injectedError(), dataNode)
		return
	case plan.malformed:
		writeBody(w, r, http.StatusOK, "text/html", []byte(malformedBody), nil)
		return
	case plan.drop && !plan.truncated:
		dropConnection(w)
		return
	}

	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, plainError(http.StatusBadRequest, grpcInvalidArgument, err.Error()), dataNode)
		return
	}
	st := s.state.Load()
	// One snapshot of the chain serves the request. A list's cache key
	// names the chain's length, so a page cached before an append is not
	// served after it; a lookup's body never changes, and a miss (404) is
	// not cached.
	x := s.txs.Load()
	chain := ""
	if endpoints[rt.index] == EndpointTransactions {
		chain = strconv.Itoa(x.len()) + "@"
	}
	key := chain + strconv.FormatUint(st.gen, 10) + path + "?" + values.Encode()
	body, ok := s.cache.get(key)
	if !ok {
		b, apiErr := rt.handle(s, x, param, query(values), st.defects)
		if apiErr != nil {
			s.writeError(w, r, apiErr, dataNode)
			return
		}
		body = &cachedBody{body: b}
		s.cache.add(key, body)
	}
	if plan.truncated {
		writeBody(w, r, http.StatusOK, "application/json", body.body[:len(body.body)/2], nil)
		return
	}
	var gz func() []byte
	if dataNode {
		gz = body.gzipped
	}
	writeBody(w, r, http.StatusOK, "application/json", body.body, gz)
}

// writeError writes an error response. Data-node errors are compact and
// carry two Content-Type headers; explorer errors are pretty-printed.
func (s *Service) writeError(w http.ResponseWriter, r *http.Request, e *apiError, dataNode bool) {
	b := e.encode(!dataNode)
	if !dataNode {
		writeBody(w, r, e.status, "application/json", b, nil)
		return
	}
	w.Header()["Content-Type"] = []string{"application/json", "application/grpc"}
	writeBody(w, r, e.status, "", b, func() []byte { return gzipBytes(b) })
}

// writeBody writes a response, gzipped when gz is given and the client
// accepts gzip. An empty contentType leaves the header as set.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte, gz func() []byte) {
	h := w.Header()
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	if gz != nil {
		h.Add("Vary", "Accept-Encoding")
		if httpcompress.AcceptsGzip(r.Header.Values("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			body = gz()
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// Server is a Service listening on a real socket.
type Server struct {
	// URL is the base URL of both services, e.g. http://127.0.0.1:41234:
	// the data node at URL+"/api/v2/…", the explorer at URL+"/rest".
	URL string
	// Service is the service being served, for faults and counters.
	Service *Service

	srv  *http.Server
	done chan struct{}
	// stopBlocks ends the block producer; blocksDone is closed when it
	// has (at once without one).
	stopBlocks context.CancelFunc
	blocksDone chan struct{}
}

// Start builds a service from cfg and serves it in the background on addr
// ("" means 127.0.0.1 on a free port).
func Start(cfg Config, addr string) (*Server, error) {
	svc, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return Serve(svc, addr)
}

// Serve serves an existing service in the background on addr ("" means
// 127.0.0.1 on a free port). With Config.Blocks.Interval set, the server
// appends a block that often until it is closed.
func Serve(svc *Service, addr string) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := &Server{
		URL:     "http://" + ln.Addr().String(),
		Service: svc,
		srv: &http.Server{
			Handler:           svc.Handler(),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
		},
		done:       make(chan struct{}),
		blocksDone: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	var ctx context.Context
	ctx, s.stopBlocks = context.WithCancel(context.Background())
	if svc.blocks.Interval > 0 {
		go func() {
			defer close(s.blocksDone)
			svc.produceBlocks(ctx, svc.blocks.Interval)
		}()
	} else {
		close(s.blocksDone)
	}
	return s, nil
}

// stopProducing stops the block producer and waits for it.
func (s *Server) stopProducing() {
	s.stopBlocks()
	<-s.blocksDone
}

// Close stops the server at once, closing open connections, and its block
// producer.
func (s *Server) Close() error {
	s.stopProducing()
	err := s.srv.Close()
	<-s.done
	return err
}

// Shutdown stops the server gracefully: it stops accepting connections and
// waits for requests in flight until ctx is done, then closes the rest.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopProducing()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		s.srv.Close()
	}
	<-s.done
	return err
}
