package sampleservice

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// The rate limit's tests call the service's handler in memory, in synctest
// bubbles: tokens refill and bans end on the fake clock, so a slow
// machine cannot refill a token between two requests, and a ban's end
// is waited for at once.

// newFixtureService is the fixture's service, without a server.
func newFixtureService(t *testing.T, cfg Config) *Service {
	t.Helper()
	if cfg.Data == nil {
		cfg.Data = fixtureDataset()
	}
	svc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// serveFrom answers a GET of target (path and query) by calling the
// service's handler, as from a client at ip.
func serveFrom(t *testing.T, svc *Service, ip, target string) fetched {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.RemoteAddr = net.JoinHostPort(ip, "40000")
	rec := httptest.NewRecorder()
	svc.Handler().ServeHTTP(rec, req)
	return fetched{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

func TestRateLimit(t *testing.T) {
	t.Run("§7 the rate limit is off unless enabled: no 429, no headers", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			svc := newFixtureService(t, Config{})
			for range 150 {
				r := serveFrom(t, svc, "127.0.0.1", "/api/v2/assets")
				if r.status != http.StatusOK || r.header.Get("Ratelimit-Limit") != "" {
					t.Fatalf("status %d, Ratelimit-Limit %q; want 200 and none", r.status, r.header.Get("Ratelimit-Limit"))
				}
			}
		})
	})

	t.Run("§7 every data-node response carries Ratelimit-Limit, -Remaining and -Reset", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			svc := newFixtureService(t, Config{RateLimit: RateLimitConfig{Enabled: true}})
			for i, path := range []string{"/api/v2/assets", "/api/v2/funding-payments", "/api/v2/delegations?epochId=x"} {
				r := serveFrom(t, svc, "127.0.0.1", path)
				want := map[string]string{"Ratelimit-Limit": "20", "Ratelimit-Remaining": strconv.Itoa(99 - i), "Ratelimit-Reset": "1"}
				for h, v := range want {
					if got := r.header.Get(h); got != v {
						t.Errorf("%s: %s = %q, want %q", path, h, got, v)
					}
				}
			}
			if r := serveFrom(t, svc, "127.0.0.1", "/rest/transactions"); r.header.Get("Ratelimit-Limit") != "" {
				t.Errorf("explorer response carries Ratelimit-Limit %q; the explorer has no rate limit", r.header.Get("Ratelimit-Limit"))
			}
		})
	})

	t.Run("§7 over the limit 429, then a ban 403 with Ratelimit-Retry-After, per client IP", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			svc := newFixtureService(t, Config{RateLimit: RateLimitConfig{Enabled: true, Rate: 0.5, Burst: 3, BanAfter: 2, BanDuration: 1500 * time.Millisecond}})
			url := "/api/v2/assets"
			for i := range 3 {
				r := serveFrom(t, svc, "127.0.0.1", url)
				if r.status != http.StatusOK {
					t.Fatalf("request %d: status %d, want 200", i+1, r.status)
				}
				if got, want := r.header.Get("Ratelimit-Remaining"), strconv.Itoa(2-i); got != want {
					t.Errorf("request %d: Ratelimit-Remaining = %q, want %q", i+1, got, want)
				}
			}
			r := serveFrom(t, svc, "127.0.0.1", url)
			if r.status != http.StatusTooManyRequests {
				t.Fatalf("4th request: status %d, want 429", r.status)
			}
			if want := `{"code":8,"message":"api request rate limit exceeded","details":[]}`; string(r.body) != want {
				t.Errorf("429 body = %s, want %s", r.body, want)
			}
			if got := r.header.Get("Ratelimit-Remaining"); got != "0" {
				t.Errorf("429 Ratelimit-Remaining = %q, want 0", got)
			}
			if r.header.Get("X-Block-Height") == "" {
				t.Errorf("429 has no X-Block-Height")
			}
			if svc.RateLimited() != 1 || svc.Bans() != 0 {
				t.Errorf("after one 429: RateLimited %d, Bans %d; want 1, 0", svc.RateLimited(), svc.Bans())
			}
			if r := serveFrom(t, svc, "127.0.0.1", url); r.status != http.StatusTooManyRequests {
				t.Fatalf("5th request: status %d, want 429 (the one that earns the ban)", r.status)
			}
			if svc.Bans() != 1 {
				t.Errorf("Bans = %d after BanAfter consecutive 429s, want 1", svc.Bans())
			}
			r = serveFrom(t, svc, "127.0.0.1", url)
			if r.status != http.StatusForbidden {
				t.Fatalf("6th request: status %d, want 403", r.status)
			}
			if want := `{"code":7,"message":"temporarily banned for continuing to request while rate limited"}`; string(r.body) != want {
				t.Errorf("403 body = %s, want %s", r.body, want)
			}
			if got := r.header.Get("Ratelimit-Retry-After"); got != "1" && got != "2" {
				t.Errorf("Ratelimit-Retry-After = %q, want the seconds left of a 1.5 s ban (1 or 2)", got)
			}
			if got := r.header.Get("Retry-After"); got != "" {
				t.Errorf("403 carries a standard Retry-After %q; the data node sends none", got)
			}

			// Another client IP has its own bucket; the explorer has no limit.
			if r := serveFrom(t, svc, "127.0.0.2", url); r.status != http.StatusOK {
				t.Errorf("another client IP: status %d, want 200", r.status)
			}
			if r := serveFrom(t, svc, "127.0.0.1", "/rest/transactions"); r.status != http.StatusOK {
				t.Errorf("explorer during a ban: status %d, want 200", r.status)
			}

			// The ban ends; the bucket is still nearly empty, so no 403 but
			// not necessarily a 200 either.
			time.Sleep(1600 * time.Millisecond)
			if r := serveFrom(t, svc, "127.0.0.1", url); r.status == http.StatusForbidden || r.header.Get("Ratelimit-Retry-After") != "" {
				t.Errorf("after the ban: status %d, Ratelimit-Retry-After %q; want no ban", r.status, r.header.Get("Ratelimit-Retry-After"))
			}
		})
	})

	t.Run("§7 an allowed request between 429s resets the count towards a ban", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			svc := newFixtureService(t, Config{RateLimit: RateLimitConfig{Enabled: true, Rate: 5, Burst: 1, BanAfter: 3, BanDuration: time.Minute}})
			url := "/api/v2/delegations"
			statuses := func(n int) []int {
				var out []int
				for range n {
					out = append(out, serveFrom(t, svc, "127.0.0.1", url).status)
				}
				return out
			}
			got := statuses(3) // 200, 429, 429
			time.Sleep(300 * time.Millisecond)
			got = append(got, statuses(3)...) // 200, 429, 429: still no ban
			if svc.Bans() != 0 {
				t.Fatalf("statuses %v: banned although an allowed request broke the run of 429s", got)
			}
			got = append(got, statuses(2)...) // 429 (third in a row: ban), 403
			want := []int{200, 429, 429, 200, 429, 429, 429, 403}
			if len(got) != len(want) {
				t.Fatalf("statuses %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("statuses %v, want %v", got, want)
				}
			}
			if svc.Bans() != 1 || svc.RateLimited() != 5 {
				t.Errorf("Bans %d, RateLimited %d; want 1, 5", svc.Bans(), svc.RateLimited())
			}
		})
	})
}
