package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

// noLeaks checks, once the test and its cleanups are done, that no
// goroutine it started is left: servers closed, idle keep-alive
// connections closed, flights finished. Call it first in a test, so that
// its cleanup runs last.
func noLeaks(t *testing.T, clients ...func() *Client) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		for _, c := range clients {
			if c := c(); c != nil {
				c.httpClient.CloseIdleConnections()
			}
		}
		goleak.VerifyNone(t, ignore)
	})
}

// scripted is an upstream whose answers follow a script: answer(n) is
// called for the n-th request (from 1) of each path.
type scripted struct {
	mu     sync.Mutex
	counts map[string]int
	answer func(w http.ResponseWriter, r *http.Request, n int)
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.counts == nil {
		s.counts = map[string]int{}
	}
	s.counts[r.URL.Path]++
	n := s.counts[r.URL.Path]
	s.mu.Unlock()
	s.answer(w, r, n)
}

func (s *scripted) requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[path]
}

const (
	assetsPath = "/dn/api/v2/assets"
	txPath     = "/rest/transactions"
)

var (
	okAssets = `{"assets":{"edges":[{"node":{"id":"a1","details":{},"status":"STATUS_ENABLED"},"cursor":"x"}],"pageInfo":{}}}`
	okTxs    = `{"transactions":[]}`
	internal = `{"code":13,"message":"Internal error","details":[]}`
)

func writeOK(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case txPath:
		io.WriteString(w, okTxs)
	case "/dn/api/v2/delegations":
		io.WriteString(w, `{"delegations":{"edges":[],"pageInfo":{}}}`)
	default:
		io.WriteString(w, okAssets)
	}
}

func status(w http.ResponseWriter, code int, body string) {
	w.WriteHeader(code)
	io.WriteString(w, body)
}

// fastRetries keeps backoffs short in tests.
func fastRetries(cfg *Config) {
	cfg.Retry.InitialInterval = 5 * time.Millisecond
	cfg.Retry.MaxInterval = 20 * time.Millisecond
}

func TestRetryRecoversFromServerErrors(t *testing.T) {
	var c *Client
	noLeaks(t, func() *Client { return c })
	for _, code := range []int{500, 502, 503, 504} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
				if n <= 2 {
					status(w, code, internal)
					return
				}
				writeOK(w, r)
			}}
			c = setup(t, s.ServeHTTP, fastRetries)
			if _, err := c.ListAssets(context.Background(), AssetsParams{}); err != nil {
				t.Fatalf("after two %ds: %v", code, err)
			}
			if n := s.requests(assetsPath); n != 3 {
				t.Fatalf("%d requests, want 3 (two failures, one success)", n)
			}
		})
	}
}

func TestRetriesAreBounded(t *testing.T) {
	var c *Client
	noLeaks(t, func() *Client { return c })
	s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) { status(w, 503, "") }}
	c = setup(t, s.ServeHTTP, fastRetries)
	_, err := c.ListAssets(context.Background(), AssetsParams{})
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 503 {
		t.Fatalf("error %v, want the last 503", err)
	}
	if n := s.requests(assetsPath); n != 1+DefaultRetries {
		t.Fatalf("%d requests, want %d", n, 1+DefaultRetries)
	}

	// Configured: one retry; negative: none.
	for _, tc := range []struct{ retries, want int }{{1, 2}, {-1, 1}} {
		s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) { status(w, 500, internal) }}
		c = setup(t, s.ServeHTTP, fastRetries, func(cfg *Config) { cfg.Retry.Retries = tc.retries })
		c.ListAssets(context.Background(), AssetsParams{})
		if n := s.requests(assetsPath); n != tc.want {
			t.Errorf("Retries %d: %d requests, want %d", tc.retries, n, tc.want)
		}
	}
}

func TestClientErrorsAreNeverRetried(t *testing.T) {
	var c *Client
	noLeaks(t, func() *Client { return c })
	for _, code := range []int{400, 401, 403, 404, 409, 422, 501} {
		s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
			status(w, code, `{"code":3,"message":"InvalidArgument error","details":[]}`)
		}}
		c = setup(t, s.ServeHTTP, fastRetries)
		_, err := c.ListAssets(context.Background(), AssetsParams{})
		var e *Error
		if !errors.As(err, &e) || e.StatusCode != code {
			t.Errorf("%d: error %v", code, err)
		}
		if n := s.requests(assetsPath); n != 1 {
			t.Errorf("%d: %d requests, want 1", code, n)
		}
	}
}

func TestRetryRecoversFromTimeoutsAndDroppedConnections(t *testing.T) {
	var c *Client
	noLeaks(t, func() *Client { return c })
	t.Run("timeout", func(t *testing.T) {
		s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				<-r.Context().Done()
				return
			}
			writeOK(w, r)
		}}
		c = setup(t, s.ServeHTTP, fastRetries, func(cfg *Config) { cfg.Timeout = 100 * time.Millisecond })
		if _, err := c.ListAssets(context.Background(), AssetsParams{}); err != nil {
			t.Fatal(err)
		}
		if n := s.requests(assetsPath); n != 2 {
			t.Fatalf("%d requests, want 2", n)
		}
	})
	t.Run("dropped connection", func(t *testing.T) {
		s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
			writeOK(w, r)
		}}
		c = setup(t, s.ServeHTTP, fastRetries)
		if _, err := c.ListTransactions(context.Background(), TransactionsParams{First: 1}); err != nil {
			t.Fatal(err)
		}
		if n := s.requests(txPath); n != 2 {
			t.Fatalf("%d requests, want 2", n)
		}
	})
	t.Run("malformed bodies are not retried", func(t *testing.T) {
		s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) { io.WriteString(w, `{"assets":`) }}
		c = setup(t, s.ServeHTTP, fastRetries)
		_, err := c.ListAssets(context.Background(), AssetsParams{})
		var de *DecodeError
		if !errors.As(err, &de) || s.requests(assetsPath) != 1 {
			t.Fatalf("error %v after %d requests, want a *DecodeError after 1", err, s.requests(assetsPath))
		}
	})
}

func TestRetriesNeverOutliveTheCallersDeadline(t *testing.T) {
	var c *Client
	noLeaks(t, func() *Client { return c })
	s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) { status(w, 500, internal) }}
	// A backoff of at least 5s cannot fit in a deadline of 300ms: the
	// call ends with the upstream's answer after one request.
	c = setup(t, s.ServeHTTP, func(cfg *Config) { cfg.Retry.InitialInterval = 10 * time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.ListAssets(ctx, AssetsParams{})
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 500 {
		t.Fatalf("error %v, want the upstream's 500", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the call waited until the caller's deadline")
	}
	if n := s.requests(assetsPath); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestCoalescedCallIsRetriedOnceForAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
			if n <= 2 {
				<-release // every caller joins the first flight
				status(w, 500, internal)
				return
			}
			writeOK(w, r)
		}}
		c := setupInMemory(t, s.ServeHTTP, fastRetries)
		var wg sync.WaitGroup
		var failed atomic.Int32
		for range 20 {
			wg.Go(func() {
				if _, err := c.ListAssets(context.Background(), AssetsParams{}); err != nil {
					failed.Add(1)
				}
			})
		}
		synctest.Wait() // one request in the handler, every caller joined it
		if n := s.requests(assetsPath); n != 1 {
			t.Fatalf("%d requests for 20 identical callers, want 1", n)
		}
		close(release)
		wg.Wait()
		if n := s.requests(assetsPath); n != 3 || failed.Load() != 0 {
			t.Fatalf("%d requests and %d failed callers, want 3 requests (one retried call) and none", n, failed.Load())
		}
	})
}

// In a bubble: the breaker's OpenFor passes on the fake clock, at once.
func TestBreakerOpensFailsFastAndClosesAfterAProbe(t *testing.T) {
	synctest.Test(t, testBreakerOpensFailsFastAndClosesAfterAProbe)
}

func testBreakerOpensFailsFastAndClosesAfterAProbe(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		if failing.Load() && r.URL.Path == assetsPath {
			status(w, 500, internal)
			return
		}
		writeOK(w, r)
	}}
	var mu sync.Mutex
	var changes []string
	c := setupInMemory(t, s.ServeHTTP, func(cfg *Config) {
		cfg.Retry.Retries = -1
		cfg.Breaker = BreakerConfig{Failures: 3, OpenFor: 2 * time.Second}
		cfg.OnBreakerChange = func(service Service, from, to string) {
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, fmt.Sprintf("%s %s→%s", service, from, to))
		}
	})
	ctx := context.Background()
	for i := range 3 {
		var e *Error
		if _, err := c.ListAssets(ctx, AssetsParams{}); !errors.As(err, &e) {
			t.Fatalf("call %d: %v, want the 500", i, err)
		}
	}
	if got := c.BreakerState(ServiceDataNode); got != BreakerOpen {
		t.Fatalf("after 3 failures the breaker is %s", got)
	}
	// Open: fail fast, without a request.
	for range 5 {
		_, err := c.ListAssets(ctx, AssetsParams{})
		if !errors.Is(err, ErrCircuitOpen) || !IsUnavailable(err) {
			t.Fatalf("error %v, want an *UnavailableError wrapping ErrCircuitOpen", err)
		}
	}
	if n := s.requests(assetsPath); n != 3 {
		t.Fatalf("%d requests while open, want none beyond the 3", n)
	}
	// The explorer has its own breaker.
	if _, err := c.ListTransactions(ctx, TransactionsParams{First: 1}); err != nil || c.BreakerState(ServiceExplorer) != BreakerClosed {
		t.Fatalf("explorer: %v, breaker %s", err, c.BreakerState(ServiceExplorer))
	}

	// A failed probe opens it again.
	halfOpenAfter(t, c, 2*time.Second)
	if _, err := c.ListAssets(ctx, AssetsParams{}); err == nil || errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("probe: %v, want the upstream's 500", err)
	}
	if got := c.BreakerState(ServiceDataNode); got != BreakerOpen {
		t.Fatalf("after a failed probe the breaker is %s", got)
	}
	// A successful probe closes it.
	failing.Store(false)
	halfOpenAfter(t, c, 2*time.Second)
	if _, err := c.ListAssets(ctx, AssetsParams{}); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if got := c.BreakerState(ServiceDataNode); got != BreakerClosed {
		t.Fatalf("after a successful probe the breaker is %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "[data-node closed→open data-node open→half-open data-node half-open→open data-node open→half-open data-node half-open→closed]"
	if fmt.Sprint(changes) != want {
		t.Fatalf("OnBreakerChange saw %v\nwant %s", changes, want)
	}
}

func TestBreakerIgnoresClientErrorsAndRateLimits(t *testing.T) {
	var c *Client
	noLeaks(t, func() *Client { return c })
	s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		switch n % 3 {
		case 0:
			status(w, 400, `{"code":3,"message":"InvalidArgument error","details":[]}`)
		case 1:
			status(w, 429, `{"code":8,"message":"api request rate limit exceeded","details":[]}`)
		default:
			io.WriteString(w, "<html>")
		}
	}}
	c = setup(t, s.ServeHTTP, func(cfg *Config) { cfg.Breaker.Failures = 2 })
	for range 12 {
		c.ListAssets(context.Background(), AssetsParams{})
	}
	if got := c.BreakerState(ServiceDataNode); got != BreakerClosed || s.requests(assetsPath) != 12 {
		t.Fatalf("breaker %s after %d requests of 4xx, 429 and unreadable bodies, want closed after 12", got, s.requests(assetsPath))
	}
}

func TestConcurrencyTowardsAServiceIsBounded(t *testing.T) {
	synctest.Test(t, testConcurrencyTowardsAServiceIsBounded)
}

func testConcurrencyTowardsAServiceIsBounded(t *testing.T) {
	var inFlight, most atomic.Int32
	release := make(chan struct{})
	s := &scripted{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		now := inFlight.Add(1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		writeOK(w, r)
	}}
	c := setupInMemory(t, s.ServeHTTP, func(cfg *Config) { cfg.MaxConcurrent = 3 })
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = c.ListDelegations(context.Background(), DelegationsParams{EpochID: fmt.Sprint(i)}) // distinct: no coalescing
		})
	}
	synctest.Wait() // every caller is in the handler or waits for a slot
	if n := inFlight.Load(); n != 3 {
		t.Fatalf("%d requests in flight, want 3", n)
	}

	// A caller whose context ends while waiting for a slot gives up
	// without sending anything.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := c.ListDelegations(ctx, DelegationsParams{EpochID: "waiting"})
	cancel()
	if !IsUnavailable(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting caller: %v, want unavailable (deadline)", err)
	}
	close(release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if m := most.Load(); m != 3 {
		t.Fatalf("at most %d requests in flight, want 3", m)
	}
	if n := s.requests("/dn/api/v2/delegations"); n != 10 {
		t.Fatalf("%d requests, want 10 (the waiting caller sent none)", n)
	}
}

// halfOpenAfter lets openFor pass on a bubble's clock and checks that the
// data node's breaker is half-open just after it, not just before.
func halfOpenAfter(t *testing.T, c *Client, openFor time.Duration) {
	t.Helper()
	time.Sleep(openFor - time.Millisecond)
	if got := c.BreakerState(ServiceDataNode); got != BreakerOpen {
		t.Fatalf("the breaker is %s before OpenFor passed, want open", got)
	}
	time.Sleep(2 * time.Millisecond)
	if got := c.BreakerState(ServiceDataNode); got != BreakerHalfOpen {
		t.Fatalf("the breaker is %s once OpenFor passed, want half-open", got)
	}
}

// setupInMemory is setup for a synctest bubble: the client's requests go
// to handler in memory, without sockets (a bubble cannot wait on those).
func setupInMemory(t *testing.T, handler http.HandlerFunc, opts ...func(*Config)) *Client {
	t.Helper()
	return newTestClient(t, Config{
		DataNodeURL: "http://upstream.test/dn/", ExplorerURL: "http://upstream.test/rest",
		HTTPClient: &http.Client{Transport: handlerTransport{handler}},
	}, opts...)
}

// handlerTransport answers each request by calling an http.Handler.
type handlerTransport struct{ handler http.Handler }

func (h handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
