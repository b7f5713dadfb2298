package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/redisstate/redistest"
	"github.com/tradenet/gateway/sampleservice"
)

// apqGet asks for a persisted query by its hash alone, as an APQ client's
// first try does.
func apqGet(t *testing.T, base, hash string) gqlResult {
	t.Helper()
	ext := fmt.Sprintf(`{"persistedQuery":{"version":1,"sha256Hash":%q}}`, hash)
	resp, err := http.Get(base + "/graphql?" + url.Values{"extensions": {ext}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return decodeResult(t, resp)
}

// apqRegister sends the query with its hash, which stores it.
func apqRegister(t *testing.T, base, q string) gqlResult {
	t.Helper()
	return postGraphQL(t, base, map[string]any{
		"query":      q,
		"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(q)}},
	}, nil)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

const persistedQuery = `query Persisted { assets(first: 3) { edges { node { id details { symbol } } } } }`

// Without Redis, persisted queries live in the gateway's memory.
func TestAPQInMemory(t *testing.T) {
	g := startOpsGateway(t)
	hash := sha256Hex(persistedQuery)
	if r := apqGet(t, g.URL, hash); fmt.Sprint(r.codes()) != "[PERSISTED_QUERY_NOT_FOUND]" || r.Errors[0].Message != "PersistedQueryNotFound" {
		t.Fatalf("unknown hash: %+v", r)
	}
	registered := apqRegister(t, g.URL, persistedQuery)
	if len(registered.Errors) > 0 || registered.Data["assets"] == nil {
		t.Fatalf("register: %+v", registered)
	}
	byHash := apqGet(t, g.URL, hash)
	if len(byHash.Errors) > 0 || fmt.Sprint(byHash.Data) != fmt.Sprint(registered.Data) {
		t.Fatalf("by hash: %+v, want %+v", byHash, registered)
	}
	// A hash that is not the query's is refused.
	r := postGraphQL(t, g.URL, map[string]any{"query": persistedQuery,
		"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex("other")}}}, nil)
	if len(r.Errors) == 0 || r.Data != nil {
		t.Fatalf("mismatched hash accepted: %+v", r)
	}

	// A very long query runs but is not kept (it would fill the cache).
	long := persistedQuery + "\n# " + strings.Repeat("x", graph.MaxPersistedQueryBytes)
	if r := apqRegister(t, g.URL, long); len(r.Errors) > 0 || r.Data["assets"] == nil {
		t.Fatalf("a long query: %+v", r)
	}
	if r := apqGet(t, g.URL, sha256Hex(long)); fmt.Sprint(r.codes()) != "[PERSISTED_QUERY_NOT_FOUND]" {
		t.Fatalf("a query over %d bytes was kept: %+v", graph.MaxPersistedQueryBytes, r)
	}

	// APQ_CACHE_SIZE=0 keeps none: clients always send the full query.
	none := startOpsGateway(t, "-apq-cache-size", "0")
	if r := apqRegister(t, none.URL, persistedQuery); len(r.Errors) > 0 {
		t.Fatalf("register without a cache: %+v", r)
	}
	if r := apqGet(t, none.URL, hash); fmt.Sprint(r.codes()) != "[PERSISTED_QUERY_NOT_FOUND]" {
		t.Fatalf("APQ_CACHE_SIZE=0 kept a query: %+v", r)
	}
}

// Two replicas sharing one Redis (each with its own process state): a
// query persisted through one is served by hash by the other; an asset
// one fetched is served by the other without an upstream request; and
// under load together, with the data node's rate limit on, they stay
// inside it: no 429, no ban.
func TestReplicasShareStateThroughRedis(t *testing.T) {
	t.Parallel() // waits on the budget's rate; a Redis and a data node of its own
	redisURL := redistest.Start(t)
	u := startUpstream(t, sampleservice.Config{
		Defects:   sampleservice.DefaultDefects(),
		RateLimit: sampleservice.RateLimitConfig{Enabled: true, Rate: 20, Burst: 100},
	}, nil)
	// The budget is the whole fleet's: 18/s with bursts of 80, inside the
	// data node's 20/s and 100 for both replicas together.
	// The upstream cache serves no data-node answer here (max age 0): the
	// load below must reach the data node (upstreamcache_test.go tests
	// the cache the replicas share).
	args := u.args("-redis-url", redisURL, "-upstream-rate", "18", "-upstream-burst", "80", "-cursor-key", cursorKeyA, "-upstream-cache-max-age", "0")
	a, b := startOpsGateway(t, args...), startOpsGateway(t, args...)

	t.Run("a cursor from one replica pages on the other", func(t *testing.T) {
		pageOnOther(t, a.URL, b.URL)
	})

	t.Run("a persisted query registered on one replica runs by hash on the other", func(t *testing.T) {
		hash := sha256Hex(persistedQuery)
		if r := apqGet(t, b.URL, hash); fmt.Sprint(r.codes()) != "[PERSISTED_QUERY_NOT_FOUND]" {
			t.Fatalf("before registering: %+v", r)
		}
		registered := apqRegister(t, a.URL, persistedQuery)
		if len(registered.Errors) > 0 {
			t.Fatalf("register on a: %+v", registered)
		}
		byHash := apqGet(t, b.URL, hash)
		if len(byHash.Errors) > 0 || byHash.Data["assets"] == nil || fmt.Sprint(byHash.Data) != fmt.Sprint(registered.Data) {
			t.Fatalf("by hash on b: %+v, want %+v", byHash, registered.Data)
		}
	})

	t.Run("the asset cache is shared, negative entries too", func(t *testing.T) {
		id := u.Sample.Dataset().Assets[1].ID
		const q = `query OneAsset($id: ID!) { asset(id: $id) { id details { symbol } } }`
		fromA := postGraphQL(t, a.URL, query(q, map[string]any{"id": id}), nil)
		if len(fromA.Errors) > 0 {
			t.Fatalf("a: %+v", fromA)
		}
		missing := postGraphQL(t, a.URL, query(q, map[string]any{"id": "no-such-asset"}), nil)
		if fmt.Sprint(missing.codes()) != "[NOT_FOUND]" {
			t.Fatalf("a, missing asset: %+v", missing)
		}
		before := u.Sample.Requests(sampleservice.EndpointAssets)
		fromB := postGraphQL(t, b.URL, query(q, map[string]any{"id": id}), nil)
		if len(fromB.Errors) > 0 || fmt.Sprint(fromB.Data) != fmt.Sprint(fromA.Data) {
			t.Fatalf("b: %+v, want %+v", fromB, fromA.Data)
		}
		if r := postGraphQL(t, b.URL, query(q, map[string]any{"id": "no-such-asset"}), nil); fmt.Sprint(r.codes()) != "[NOT_FOUND]" {
			t.Fatalf("b, missing asset: %+v", r)
		}
		if after := u.Sample.Requests(sampleservice.EndpointAssets); after != before {
			t.Fatalf("replica b sent %d asset requests, want none (shared cache)", after-before)
		}
		if hits := metricValue(scrape(t, b.URL), "gateway_asset_cache_lookups_total", map[string]string{"result": "hit"}); hits != 2 {
			t.Fatalf("b counted %v cache hits, want 2", hits)
		}
	})

	t.Run("together under load they stay inside the data node's rate limit", func(t *testing.T) {
		u.Sample.ResetCounters()
		// 200 distinct list requests (no coalescing, no cache: the
		// replicas serve no data-node answer from it, see args): far over
		// the data node's burst of 100, as fast as two replicas go. Under
		// -short, 120: still over the data node's burst (each replica
		// alone would send its 60 at once, 120 in all), and 2 s at the
		// rate instead of 7.
		total := int64(200)
		if testing.Short() {
			total = 120
		}
		var next, failed atomic.Int64
		var wg sync.WaitGroup
		var firstErr sync.Once
		for w := range 16 {
			base := a.URL
			if w%2 == 1 {
				base = b.URL
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n := next.Add(1)
					if n > total {
						return
					}
					r := postGraphQLNoFatal(base, query(`query Load($n: Int) { assets(first: $n) { edges { cursor } } }`, map[string]any{"n": n}))
					if r.Status != 200 || len(r.Errors) > 0 {
						failed.Add(1)
						firstErr.Do(func() { t.Errorf("request %d: %d %+v", n, r.Status, r.Errors) })
					}
				}
			}()
		}
		wg.Wait()
		if got := u.Sample.Requests(sampleservice.EndpointAssets); got < total {
			t.Errorf("the data node got %d asset requests, want at least %d", got, total)
		}
		if limited, bans := u.Sample.RateLimited(), u.Sample.Bans(); limited != 0 || bans != 0 || failed.Load() != 0 {
			t.Fatalf("429s %d, bans %d, failed requests %d: want none", limited, bans, failed.Load())
		}
		for name, g := range map[string]*opsGateway{"a": a, "b": b} {
			m := scrape(t, g.URL)
			if up := metricValue(m, "gateway_upstream_budget_up", nil); up != 1 {
				t.Errorf("%s: shared budget not readable (up %v)", name, up)
			}
			if tokens := metricValue(m, "gateway_upstream_budget_tokens", nil); tokens > 80 {
				t.Errorf("%s: budget tokens %v over the burst", name, tokens)
			}
			if errs := metricValue(m, "gateway_redis_errors_total", nil); errs > 0 {
				t.Errorf("%s: %v Redis errors", name, errs)
			}
		}
	})
}

// A ban one replica meets stops every replica: the others answer
// RATE_LIMITED without calling the data node (calling on while banned
// lengthens a real ban).
func TestReplicasShareABan(t *testing.T) {
	redisURL := redistest.Start(t)
	// A data node far stricter than the gateways' budget: its second
	// request in a second is limited, and that strike bans.
	u := startUpstream(t, sampleservice.Config{
		Defects:   sampleservice.DefaultDefects(),
		RateLimit: sampleservice.RateLimitConfig{Enabled: true, Rate: 1, Burst: 1, BanAfter: 1},
	}, nil)
	args := u.args("-redis-url", redisURL, "-upstream-rate", "100", "-upstream-burst", "100")
	a, b := startOpsGateway(t, args...), startOpsGateway(t, args...)

	if r := postGraphQL(t, a.URL, query(`{ assets(first: 1) { edges { cursor } } }`, nil), nil); len(r.Errors) > 0 {
		t.Fatalf("first request: %+v", r.Errors)
	}
	if r := postGraphQL(t, a.URL, query(`{ assets(first: 2) { edges { cursor } } }`, nil), nil); fmt.Sprint(r.codes()) != "[RATE_LIMITED]" {
		t.Fatalf("a over the limit: %+v", r)
	}
	if u.Sample.Bans() != 1 {
		t.Fatalf("the data node issued %d bans, want 1", u.Sample.Bans())
	}
	before := u.Sample.Requests(sampleservice.EndpointAssets)
	r := postGraphQL(t, b.URL, query(`{ assets(first: 3) { edges { cursor } } }`, nil), nil)
	if fmt.Sprint(r.codes()) != "[RATE_LIMITED]" {
		t.Fatalf("b during a's ban: %+v", r)
	}
	if after := u.Sample.Requests(sampleservice.EndpointAssets); after != before {
		t.Fatalf("b called the data node %d times during the ban", after-before)
	}
	if banned := metricValue(scrape(t, b.URL), "gateway_upstream_budget_banned", nil); banned != 1 {
		t.Fatalf("b's budget metrics say banned=%v", banned)
	}
}

// Two cursor keys, as `openssl rand -hex 32` makes them.
const (
	cursorKeyA = "3f9c1e0b7a5d4c2e8f6a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"
	cursorKeyB = "b1d2c3e4f5a6978812345678909abcdef0fedcba0987654321a1b2c3d4e5f607"
)

// pageOnOther reads the first page of assets and of delegations on one
// gateway and the next page, from its end cursor, on the other: the same
// rows as one page of both read on the first (the first key of each
// gateway's CURSOR_KEY must be among the other's).
func pageOnOther(t *testing.T, from, to string) {
	t.Helper()
	// Rows by their identity: the cursors of gateways with different
	// signing keys differ.
	for list, row := range map[string]string{"assets": "id", "delegations": "nodeId epochSeq party { id }"} {
		q := fmt.Sprintf(`query Page($n: Int, $after: String) { %s(first: $n, after: $after) { edges { node { %s } } pageInfo { endCursor } } }`, list, row)
		first := postGraphQL(t, from, query(q, map[string]any{"n": 2}), nil)
		both := postGraphQL(t, from, query(q, map[string]any{"n": 4}), nil)
		end := dig(first.Data, list, "pageInfo", "endCursor")
		next := postGraphQL(t, to, query(q, map[string]any{"n": 2, "after": end}), nil)
		if len(first.Errors)+len(both.Errors)+len(next.Errors) > 0 || end == nil {
			t.Fatalf("%s: %+v / %+v / %+v", list, first, both, next)
		}
		want := fmt.Sprint(dig(both.Data, list, "edges").([]any)[2:])
		if got := fmt.Sprint(dig(next.Data, list, "edges")); got != want {
			t.Fatalf("%s: next page on the other gateway %s, want %s", list, got, want)
		}
	}
}

// dig walks a decoded JSON value by object keys.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// Gateways with different cursor keys refuse each other's cursors as
// BAD_USER_INPUT, without calling the data node; a gateway that holds the
// other's key second in its list (rotation) accepts them; one without
// CURSOR_KEY says in its log that its cursors are its own; no log holds
// a key.
func TestReplicasWithDifferentCursorKeys(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()}, nil)
	a := startOpsGateway(t, u.args("-cursor-key", cursorKeyA)...)
	b := startOpsGateway(t, u.args("-cursor-key", cursorKeyB)...)
	rotated := startOpsGateway(t, u.args("-cursor-key", cursorKeyB+","+cursorKeyA)...)
	unset := startOpsGateway(t, u.args()...)

	const q = `query Page($after: String) { assets(first: 2, after: $after) { edges { cursor } pageInfo { endCursor } } }`
	first := postGraphQL(t, a.URL, query(q, nil), nil)
	end, _ := dig(first.Data, "assets", "pageInfo", "endCursor").(string)
	if len(first.Errors) > 0 || end == "" {
		t.Fatalf("first page on a: %+v", first)
	}
	for name, g := range map[string]*opsGateway{"b": b, "unset": unset} {
		before := u.Sample.Requests(sampleservice.EndpointAssets)
		r := postGraphQL(t, g.URL, query(q, map[string]any{"after": end}), nil)
		if fmt.Sprint(r.codes()) != "[BAD_USER_INPUT]" || !strings.Contains(r.Errors[0].Message, "another cursor key") {
			t.Fatalf("%s given a's cursor: %+v", name, r)
		}
		if after := u.Sample.Requests(sampleservice.EndpointAssets); after != before {
			t.Fatalf("%s sent %d asset requests for a cursor it did not issue", name, after-before)
		}
	}
	pageOnOther(t, a.URL, rotated.URL)
	pageOnOther(t, rotated.URL, b.URL) // the first key signs

	if !strings.Contains(unset.logs.String(), "no CURSOR_KEY configured") {
		t.Errorf("a gateway without CURSOR_KEY does not say so:\n%s", unset.logs.String())
	}
	for name, g := range map[string]*opsGateway{"a": a, "b": b, "rotated": rotated} {
		if l := g.logs.String(); strings.Contains(l, cursorKeyA) || strings.Contains(l, cursorKeyB) || strings.Contains(l, "no CURSOR_KEY") {
			t.Errorf("%s's log:\n%s", name, l)
		}
	}
	for _, bad := range []string{"short", cursorKeyA + ",short", cursorKeyA + ","} {
		_, err := parseConfig([]string{"-cursor-key", bad}, func(string) string { return "" }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "CURSOR_KEY") || strings.Contains(err.Error(), "short") || strings.Contains(err.Error(), cursorKeyA) {
			t.Errorf("-cursor-key %q: %v, want an error naming CURSOR_KEY and not quoting it", bad, err)
		}
	}
}
