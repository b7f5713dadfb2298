package sampleservice

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestFaults(t *testing.T) {
	assets := "/api/v2/assets"

	// The latency faults run in a synctest bubble, the handler called in
	// memory: the delay is exact on the fake clock, whatever the machine.
	t.Run("fault Latency delays only its endpoint", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			svc := newFixtureService(t, Config{})
			svc.SetFault(EndpointAssets, Fault{Latency: 200 * time.Millisecond})
			start := time.Now()
			if r := serveFrom(t, svc, "127.0.0.1", assets); r.status != http.StatusOK {
				t.Fatalf("status %d, want 200", r.status)
			}
			if d := time.Since(start); d != 200*time.Millisecond {
				t.Errorf("answered in %s, want 200ms", d)
			}
			start = time.Now()
			serveFrom(t, svc, "127.0.0.1", "/api/v2/delegations")
			if d := time.Since(start); d != 0 {
				t.Errorf("another endpoint took %s", d)
			}
		})
	})

	t.Run("fault Latency ends when the client gives up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			svc := newFixtureService(t, Config{})
			svc.SetFault(EndpointAssets, Fault{Latency: time.Minute})
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			req := httptest.NewRequestWithContext(ctx, http.MethodGet, assets, nil)
			start := time.Now()
			svc.Handler().ServeHTTP(httptest.NewRecorder(), req)
			if d := time.Since(start); d != 100*time.Millisecond {
				t.Errorf("the handler returned after %s, want when the client gave up (100ms)", d)
			}
		})
	})

	t.Run("fault ErrorRate 1 answers 500 with an Internal status", func(t *testing.T) {
		srv := startFixture(t, Config{})
		srv.Service.SetFault(EndpointDelegations, Fault{ErrorRate: 1})
		r := fetch(t, srv.URL+"/api/v2/delegations")
		if r.status != http.StatusInternalServerError {
			t.Fatalf("status %d, want 500", r.status)
		}
		if e := decodeError(t, r); e.Code != 13 || e.Message != "Internal error" || e.Details == nil || len(*e.Details) != 1 {
			t.Errorf("body %s: want code 13, Internal error, one detail", r.body)
		}
		if r.header.Get("X-Block-Height") == "" || len(r.header.Values("Content-Type")) != 2 {
			t.Errorf("injected data-node 500 lacks the data node's error headers: %v", r.header)
		}
	})

	t.Run("fault ErrorRate 0.5 fails about half the requests, reproducibly", func(t *testing.T) {
		count := func() int {
			srv := startFixture(t, Config{FaultSeed: 7})
			srv.Service.SetFault(EndpointTransactions, Fault{ErrorRate: 0.5})
			fails := 0
			for range 200 {
				if fetch(t, srv.URL+"/rest/transactions?first=1").status == http.StatusInternalServerError {
					fails++
				}
			}
			return fails
		}
		a, b := count(), count()
		if a < 60 || a > 140 {
			t.Errorf("%d of 200 failed, want about 100", a)
		}
		if a != b {
			t.Errorf("same seed, different outcomes: %d then %d failures", a, b)
		}
	})

	t.Run("fault MalformedRate answers 200 with a body that is not JSON", func(t *testing.T) {
		srv := startFixture(t, Config{})
		srv.Service.SetFault(EndpointAssets, Fault{MalformedRate: 1})
		r := fetch(t, srv.URL+assets)
		if r.status != http.StatusOK || json.Valid(r.body) {
			t.Errorf("status %d, valid JSON %v; want 200 and not JSON", r.status, json.Valid(r.body))
		}
	})

	t.Run("fault TruncatedRate answers 200 with the first half of the body", func(t *testing.T) {
		srv := startFixture(t, Config{})
		full := fetch(t, srv.URL+assets)
		srv.Service.SetFault(EndpointAssets, Fault{TruncatedRate: 1})
		r := fetch(t, srv.URL+assets, "Accept-Encoding", "gzip")
		if r.status != http.StatusOK {
			t.Fatalf("status %d, want 200", r.status)
		}
		if string(r.body) != string(full.body[:len(full.body)/2]) {
			t.Errorf("body is not the first half of the real one:\n%s", r.body)
		}
		if json.Valid(r.body) {
			t.Errorf("truncated body is valid JSON")
		}
	})

	t.Run("fault DropRate closes the connection without a response", func(t *testing.T) {
		srv := startFixture(t, Config{})
		srv.Service.SetFault(EndpointFundingPayments, Fault{DropRate: 1})
		resp, err := noGzip.Get(srv.URL + "/api/v2/funding-payments?partyId=" + partyA)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("got status %d, want a dropped connection", resp.StatusCode)
		}
		var uerr interface{ Timeout() bool }
		if errors.As(err, &uerr) && uerr.Timeout() {
			t.Errorf("error %v is a timeout, want the connection closed", err)
		}
	})

	t.Run("fault FailNext answers 500 N times, then recovers", func(t *testing.T) {
		srv := startFixture(t, Config{})
		srv.Service.SetFault(EndpointAssets, Fault{FailNext: 2})
		var got []int
		for range 4 {
			got = append(got, fetch(t, srv.URL+assets).status)
		}
		if want := []int{500, 500, 200, 200}; !equalInts(got, want) {
			t.Errorf("statuses %v, want %v", got, want)
		}
	})

	t.Run("fault: the zero Fault clears it", func(t *testing.T) {
		srv := startFixture(t, Config{})
		srv.Service.SetFault(EndpointAssets, Fault{ErrorRate: 1})
		srv.Service.SetFault(EndpointAssets, Fault{})
		if r := fetch(t, srv.URL+assets); r.status != http.StatusOK {
			t.Errorf("status %d after clearing the fault, want 200", r.status)
		}
	})

	t.Run("Requests counts every request per endpoint; ResetCounters zeroes", func(t *testing.T) {
		srv := startFixture(t, Config{})
		svc := srv.Service
		srv.Service.SetFault(EndpointAssets, Fault{FailNext: 1})
		fetch(t, srv.URL+assets)
		fetch(t, srv.URL+assets+"?pagination.first=abc")
		fetch(t, srv.URL+"/api/v2/delegations")
		fetch(t, srv.URL+"/api/v2/funding-payments")
		fetch(t, srv.URL+"/api/v2/funding-payments?partyId="+partyA)
		fetch(t, srv.URL+"/api/v2/funding-payments?partyId="+partyA)
		fetch(t, srv.URL+"/transactions")
		fetch(t, srv.URL+"/rest/transactions")
		fetch(t, srv.URL+"/nope")
		want := map[Endpoint]int64{EndpointAssets: 2, EndpointDelegations: 1, EndpointFundingPayments: 3, EndpointTransactions: 2}
		for e, n := range want {
			if got := svc.Requests(e); got != n {
				t.Errorf("Requests(%s) = %d, want %d", e, got, n)
			}
		}
		svc.ResetCounters()
		for e := range want {
			if got := svc.Requests(e); got != 0 {
				t.Errorf("after ResetCounters, Requests(%s) = %d", e, got)
			}
		}
	})

	t.Run("faults can be switched while requests are in flight", func(t *testing.T) {
		srv := startFixture(t, Config{})
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					resp, err := noGzip.Get(srv.URL + assets)
					if err == nil {
						resp.Body.Close()
					}
				}
			})
		}
		for i := range 50 {
			srv.Service.SetFault(EndpointAssets, Fault{ErrorRate: float64(i%3) / 2, FailNext: i % 2, TruncatedRate: 0.1})
			srv.Service.SetDefects(Defects{AssetPagingErrors500: i%2 == 0})
			time.Sleep(time.Millisecond)
		}
		close(stop)
		wg.Wait()
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
