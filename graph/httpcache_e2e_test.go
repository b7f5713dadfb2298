package graph_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// HTTP caching of GET queries (transport/httpcache.go): the headers follow the kinds
// of the upstream answers a response is made of. The client judges each
// answer's kind (upstream/kinds.go); these tests set the kinds they need
// instead: kindedUpstream reports each method's answers with the kind the
// test gives.

// kinds are the kinds kindedUpstream reports, by method; a method not
// listed keeps the client's own report.
type kinds map[string]upstream.CacheKind

// kindedUpstream passes each call on, and reports the answers it returns
// with the method's kind, their time moved back by age; undated reports
// them without a time; silent reports none of any call (as an answer
// shared with another call is not reported again).
type kindedUpstream struct {
	graph.Upstream
	kinds   kinds
	age     time.Duration
	undated bool
	silent  bool
}

// as is ctx for a call of method: its answers are reported to ctx's
// recorder with the method's kind.
func (u kindedUpstream) as(ctx context.Context, method string) context.Context {
	if u.silent {
		return upstream.WithAnswers(ctx, func(upstream.Answer) {})
	}
	kind, ok := u.kinds[method]
	if !ok {
		return ctx
	}
	return upstream.WithAnswers(ctx, func(a upstream.Answer) {
		a.Kind = kind
		a.FetchedAt = a.FetchedAt.Add(-u.age)
		if u.undated {
			a.FetchedAt = time.Time{}
		}
		upstream.RecordAnswer(ctx, a)
	})
}

func (u kindedUpstream) ListAssets(ctx context.Context, p upstream.AssetsParams) (*upstream.AssetPage, error) {
	return u.Upstream.ListAssets(u.as(ctx, "assets"), p)
}

func (u kindedUpstream) GetAsset(ctx context.Context, id string) (*upstream.Asset, *upstream.Freshness, error) {
	return u.Upstream.GetAsset(u.as(ctx, "asset"), id)
}

func (u kindedUpstream) ListFundingPayments(ctx context.Context, p upstream.FundingPaymentsParams) (*upstream.FundingPaymentPage, error) {
	return u.Upstream.ListFundingPayments(u.as(ctx, "funding"), p)
}

func (u kindedUpstream) ListDelegations(ctx context.Context, p upstream.DelegationsParams) (*upstream.DelegationPage, error) {
	return u.Upstream.ListDelegations(u.as(ctx, "delegations"), p)
}

func (u kindedUpstream) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	return u.Upstream.ListTransactions(u.as(ctx, "transactions"), p)
}

func (u kindedUpstream) GetTransaction(ctx context.Context, hash string) (*upstream.Transaction, error) {
	return u.Upstream.GetTransaction(u.as(ctx, "transaction"), hash)
}

// cachingGateway serves a gateway over the shared sample whose upstream
// reports answers as k says.
func cachingGateway(t *testing.T, k kindedUpstream, opts gatewayOptions) *testGateway {
	t.Helper()
	opts.Wrap = func(u graph.Upstream) graph.Upstream {
		k.Upstream = u
		return k
	}
	return newGateway(t, nil, opts)
}

// getQuery sends query with GET, with the headers given, and returns the
// response and its body.
func getQuery(t *testing.T, base, query string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	return getParams(t, base, url.Values{"query": {query}}, header)
}

func getParams(t *testing.T, base string, params url.Values, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	return testutil.Get(t, base+"?"+params.Encode(), header)
}

const (
	immutable  = "public, max-age=31536000, immutable"
	oneBlock   = "public, max-age=1"
	revalidate = "public, no-cache"
	noStore    = "no-store"
)

// cacheControlIs reports whether got is want, allowing for time: a
// block-bound response's max-age is counted down from its oldest part's
// fetch, rounded to the second, so a machine that stalls for up to a
// second between the fetch and the headers writes one less (at 0: no-cache).
func cacheControlIs(got, want string) bool {
	if got == want {
		return true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(want, "public, max-age="))
	if err != nil || !strings.HasPrefix(want, "public, max-age=") || n >= 31536000 {
		return false
	}
	if n == 1 {
		return got == revalidate
	}
	return got == "public, max-age="+strconv.Itoa(n-1)
}

// Queries whose answers come from one method each.
const (
	txPageQuery    = `{ transactions(first: 3) { edges { node { hash block index type } } } }`
	assetPageQuery = `{ assets(first: 2) { edges { node { id status } } } }`
	delegQuery     = `{ delegations(first: 2) { edges { node { nodeId epochSeq amount } } } }`
)

// executors are the two paths a query can take: the direct executor, and
// gqlgen's alone.
var executors = []struct {
	name   string
	gqlgen bool
}{{"direct", false}, {"gqlgen", true}}

// TestCacheControlFollowsTheAnswers: a GET response is immutable only when
// every answer it was made of is; an answer that holds until the next
// block, or a recent data-node answer, makes it a block's worth, less the
// answer's age; an answer that may not be served again, or an error in
// the response, makes it no-store; with both executors.
func TestCacheControlFollowsTheAnswers(t *testing.T) {
	asset := firstAssetID(t)
	for _, ex := range executors {
		t.Run(ex.name, func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				up     kindedUpstream
				maxAge time.Duration
				query  string
				want   string
			}{
				{"history alone", kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable}}, 0, txPageQuery, immutable},
				{"the newest page", kindedUpstream{kinds: kinds{"transactions": upstream.CacheUntilNextBlock}}, 0, txPageQuery, oneBlock},
				{"data-node state", kindedUpstream{kinds: kinds{"assets": upstream.CacheRecent}}, 0, assetPageQuery, oneBlock},
				{"history and data-node state", kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable, "assets": upstream.CacheRecent}},
					0, `{ t: ` + txPageQuery[2:len(txPageQuery)-2] + ` a: ` + assetPageQuery[2:len(assetPageQuery)-2] + ` }`, oneBlock},
				{"history and an answer not to serve again", kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable, "delegations": upstream.CacheNone}},
					0, `{ t: ` + txPageQuery[2:len(txPageQuery)-2] + ` d: ` + delegQuery[2:len(delegQuery)-2] + ` }`, noStore},
				{"the client's own kinds (the newest page)", kindedUpstream{}, 0, txPageQuery, oneBlock},
				{"history with an error", kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable, "transaction": upstream.CacheImmutable}},
					0, `{ ` + txPageQuery[2:len(txPageQuery)-2] + ` transaction(hash: "` + strings.Repeat("0", 64) + `") { hash } }`, noStore},
				{"answers two seconds old", kindedUpstream{kinds: kinds{"assets": upstream.CacheRecent}, age: 2 * time.Second}, 0, assetPageQuery, revalidate},
				{"answers 3 s old, 10 s allowed", kindedUpstream{kinds: kinds{"assets": upstream.CacheRecent}, age: 3 * time.Second}, 10 * time.Second, assetPageQuery, "public, max-age=7"},
				{"answers of unknown age", kindedUpstream{kinds: kinds{"assets": upstream.CacheRecent}, undated: true}, 10 * time.Second, assetPageQuery, revalidate},
				{"old history stays history", kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable}, age: time.Hour}, 0, txPageQuery, immutable},
				{"revalidated every time (HTTP_CACHE_MAX_AGE=0)", kindedUpstream{kinds: kinds{"transactions": upstream.CacheUntilNextBlock}}, -1, txPageQuery, revalidate},
				{"no answer used", kindedUpstream{}, 0, `{ __typename party(id: "` + asset + `") { id } }`, immutable},
				{"the schema", kindedUpstream{}, 0, `{ __schema { queryType { name } } }`, oneBlock},
				{"the schema and history", kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable}}, 0, `{ __type(name: "Asset") { name } ` + txPageQuery[2:], oneBlock},
			} {
				t.Run(tc.name, func(t *testing.T) {
					g := cachingGateway(t, tc.up, gatewayOptions{Executor: graph.ExecutorConfig{GqlgenExecutor: ex.gqlgen}, Transport: transport.Config{CacheMaxAge: tc.maxAge}})
					resp, body := getQuery(t, g.URL, tc.query, nil)
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("status %d: %s", resp.StatusCode, body)
					}
					if got := resp.Header.Get("Cache-Control"); !cacheControlIs(got, tc.want) {
						t.Errorf("Cache-Control %q, want %q (body %.200s)", got, tc.want, body)
					}
					if etag := resp.Header.Get("ETag"); (etag == "") != (tc.want == noStore) {
						t.Errorf("ETag %q with Cache-Control %q: want one exactly when the response may be stored", etag, tc.want)
					}
				})
			}
		})
	}
}

// firstAssetID is an asset of the shared sample.
func firstAssetID(t *testing.T) string {
	t.Helper()
	var d struct {
		Assets struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	newGateway(t, nil, gatewayOptions{}).query(t, `{ assets(first: 1) { edges { node { id } } } }`, nil).mustData(t, &d)
	if len(d.Assets.Edges) != 1 {
		t.Fatal("the sample has no asset")
	}
	return d.Assets.Edges[0].Node.ID
}

// TestAssetCacheHitsCountAsRecentAnswers: an asset served from the shared
// cache, which no upstream call reports, makes the response a recent
// data-node answer as old as the cached lookup, though the lookup itself
// was (here) reported immutable.
func TestAssetCacheHitsCountAsRecentAnswers(t *testing.T) {
	asset := firstAssetID(t)
	query := `{ asset(id: "` + asset + `") { id details { symbol } } }`
	for _, ex := range executors {
		t.Run(ex.name, func(t *testing.T) {
			g := cachingGateway(t, kindedUpstream{kinds: kinds{"asset": upstream.CacheImmutable}, age: 20 * time.Second},
				gatewayOptions{Executor: graph.ExecutorConfig{GqlgenExecutor: ex.gqlgen}, Transport: transport.Config{CacheMaxAge: 30 * time.Second}})
			resp, body := getQuery(t, g.URL, query, nil)
			if got := resp.Header.Get("Cache-Control"); got != immutable {
				t.Fatalf("the lookup: Cache-Control %q, want %q (%s)", got, immutable, body)
			}
			resp, body = getQuery(t, g.URL, query, nil)
			// 30 s allowed, less the 20 s the lookup's answer is old (the
			// cache keeps its time): 10, or 9 on a slow machine.
			got := resp.Header.Get("Cache-Control")
			n, err := strconv.Atoi(strings.TrimPrefix(got, "public, max-age="))
			if err != nil || n < 9 || n > 10 {
				t.Errorf("the cache hit: Cache-Control %q, want public, max-age=10 (%s)", got, body)
			}

			// A lookup whose answer nobody reported is cached as of now.
			g = cachingGateway(t, kindedUpstream{silent: true}, gatewayOptions{Executor: graph.ExecutorConfig{GqlgenExecutor: ex.gqlgen}, Transport: transport.Config{CacheMaxAge: 30 * time.Second}})
			getQuery(t, g.URL, query, nil)
			resp, body = getQuery(t, g.URL, query, nil)
			if got := resp.Header.Get("Cache-Control"); !cacheControlIs(got, "public, max-age=30") {
				t.Errorf("the cache hit of an unreported lookup: Cache-Control %q, want public, max-age=30 (%s)", got, body)
			}
		})
	}
}

// etagPattern is the form of the gateway's ETags: 128 bits in base64url,
// quoted (strong).
var etagPattern = regexp.MustCompile(`^"[A-Za-z0-9_-]{22}"$`)

// TestETagAndIfNoneMatch: a cacheable GET response carries a strong ETag
// of its bytes, the same for the same body and another for another body
// (or the other response type); If-None-Match naming it (alone, in a
// list, weak, or *) answers 304 with no body and the same Cache-Control,
// ETag and Vary; any other tag gets the response.
func TestETagAndIfNoneMatch(t *testing.T) {
	for _, ex := range executors {
		t.Run(ex.name, func(t *testing.T) {
			g := cachingGateway(t, kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable, "assets": upstream.CacheImmutable}},
				gatewayOptions{Executor: graph.ExecutorConfig{GqlgenExecutor: ex.gqlgen}})
			first, body := getQuery(t, g.URL, txPageQuery, nil)
			etag := first.Header.Get("ETag")
			if !etagPattern.MatchString(etag) {
				t.Fatalf("ETag %q, want a quoted base64url SHA-256 prefix", etag)
			}
			again, body2 := getQuery(t, g.URL, txPageQuery, nil)
			if !bytes.Equal(body, body2) || again.Header.Get("ETag") != etag {
				t.Errorf("the same response twice: ETags %q and %q (bodies equal: %v)", etag, again.Header.Get("ETag"), bytes.Equal(body, body2))
			}
			other, _ := getQuery(t, g.URL, assetPageQuery, nil)
			if e := other.Header.Get("ETag"); e == etag || !etagPattern.MatchString(e) {
				t.Errorf("another body: ETag %q, want another than %q", e, etag)
			}
			typed, typedBody := getQuery(t, g.URL, txPageQuery, map[string]string{"Accept": "application/graphql-response+json"})
			if e := typed.Header.Get("ETag"); !bytes.Equal(typedBody, body) || e == etag || !etagPattern.MatchString(e) {
				t.Errorf("application/graphql-response+json: ETag %q (application/json's %q), same body: %v; want the same body under another tag", e, etag, bytes.Equal(typedBody, body))
			}

			for _, inm := range []string{etag, `"elsewhere", ` + etag + `, "more"`, "W/" + etag, "*", `W/"x,y", ` + etag} {
				resp, got := getQuery(t, g.URL, txPageQuery, map[string]string{"If-None-Match": inm})
				if resp.StatusCode != http.StatusNotModified || len(got) != 0 {
					t.Errorf("If-None-Match %s: status %d with %d bytes, want 304 with none", inm, resp.StatusCode, len(got))
					continue
				}
				for _, h := range []string{"ETag", "Cache-Control", "Vary"} {
					if a, b := resp.Header.Values(h), first.Header.Values(h); strings.Join(a, "|") != strings.Join(b, "|") {
						t.Errorf("If-None-Match %s: 304's %s %q, the response's %q", inm, h, a, b)
					}
				}
				if ct := resp.Header.Get("Content-Type"); ct != "" {
					t.Errorf("If-None-Match %s: 304 with Content-Type %q", inm, ct)
				}
			}
			for _, inm := range []string{`"elsewhere"`, `W/"elsewhere", "more"`, strings.Trim(etag, `"`), etag[:len(etag)-2] + `"`} {
				resp, got := getQuery(t, g.URL, txPageQuery, map[string]string{"If-None-Match": inm})
				if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) || resp.Header.Get("ETag") != etag {
					t.Errorf("If-None-Match %s: status %d, ETag %q; want 200 with the response", inm, resp.StatusCode, resp.Header.Get("ETag"))
				}
			}
		})
	}
}

// TestUncachedResponsesIgnoreIfNoneMatch: a response that is not stored
// (an answer not to serve again, an error, a request error) has no ETag,
// and If-None-Match: * does not turn it into a 304.
func TestUncachedResponsesIgnoreIfNoneMatch(t *testing.T) {
	g := cachingGateway(t, kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable, "delegations": upstream.CacheNone}}, gatewayOptions{})
	for _, query := range []string{delegQuery, `{ transaction(hash: "` + strings.Repeat("0", 64) + `") { hash } }`, `{ assets(first: 1 { id }`} {
		resp, body := getQuery(t, g.URL, query, map[string]string{"If-None-Match": "*"})
		if resp.StatusCode != http.StatusOK || len(body) == 0 || resp.Header.Get("Cache-Control") != noStore || resp.Header.Get("ETag") != "" {
			t.Errorf("%s: status %d, Cache-Control %q, ETag %q, %d bytes; want 200, no-store, no ETag, the body", query, resp.StatusCode, resp.Header.Get("Cache-Control"), resp.Header.Get("ETag"), len(body))
		}
	}
	// A refusal before the operation too (406).
	resp, _ := getQuery(t, g.URL, txPageQuery, map[string]string{"Accept": "text/html"})
	if resp.StatusCode != http.StatusNotAcceptable || resp.Header.Get("Cache-Control") != noStore {
		t.Errorf("a refused GET: status %d, Cache-Control %q; want 406, no-store", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
}

// TestCachingVaries: a cacheable GET response varies by Accept (the
// response type, and the status of request errors, depend on it) and by
// nothing else here: the handler alone does not compress, and answers
// every origin alike.
func TestCachingVaries(t *testing.T) {
	g := cachingGateway(t, kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable}}, gatewayOptions{})
	for _, accept := range []string{"", "application/json", "application/graphql-response+json"} {
		resp, _ := getQuery(t, g.URL, txPageQuery, map[string]string{"Accept": accept})
		if got := resp.Header.Values("Vary"); len(got) != 1 || got[0] != "Accept" {
			t.Errorf("Accept %q: Vary %q, want [Accept]", accept, got)
		}
	}
}

// TestPOSTIsNotCached: POST responses are as they were, whatever they are
// made of: no Cache-Control, no ETag, and If-None-Match changes nothing.
func TestPOSTIsNotCached(t *testing.T) {
	for _, ex := range executors {
		g := cachingGateway(t, kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable}}, gatewayOptions{Executor: graph.ExecutorConfig{GqlgenExecutor: ex.gqlgen}})
		get, getBody := getQuery(t, g.URL, txPageQuery, nil)
		b, _ := json.Marshal(map[string]any{"query": txPageQuery})
		req, _ := http.NewRequest(http.MethodPost, g.URL, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("If-None-Match", get.Header.Get("ETag"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, getBody) {
			t.Errorf("%s: POST: status %d, body %.100s; want 200 and the GET's body", ex.name, resp.StatusCode, body)
		}
		if cc, etag := resp.Header.Get("Cache-Control"), resp.Header.Get("ETag"); cc != "" || etag != "" {
			t.Errorf("%s: POST: Cache-Control %q, ETag %q; want neither", ex.name, cc, etag)
		}
	}
}

// TestPersistedQueryOverGETIsCached: a persisted query sent by its hash
// alone over GET gets the headers of the same query sent in full; an
// unknown hash (PERSISTED_QUERY_NOT_FOUND) is never stored, or the client
// would never get past it.
func TestPersistedQueryOverGETIsCached(t *testing.T) {
	g := cachingGateway(t, kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable}}, gatewayOptions{})
	sum := sha256.Sum256([]byte(txPageQuery))
	ext := func(hash string) string {
		b, _ := json.Marshal(map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}})
		return string(b)
	}
	hash := hex.EncodeToString(sum[:])

	unknown, body := getParams(t, g.URL, url.Values{"extensions": {ext(hash)}}, nil)
	if !bytes.Contains(body, []byte("PERSISTED_QUERY_NOT_FOUND")) || unknown.Header.Get("Cache-Control") != noStore || unknown.Header.Get("ETag") != "" {
		t.Fatalf("unknown hash: Cache-Control %q, ETag %q, body %s; want no-store, no ETag, PERSISTED_QUERY_NOT_FOUND", unknown.Header.Get("Cache-Control"), unknown.Header.Get("ETag"), body)
	}
	full, fullBody := getParams(t, g.URL, url.Values{"query": {txPageQuery}, "extensions": {ext(hash)}}, nil) // registers it
	byHash, hashBody := getParams(t, g.URL, url.Values{"extensions": {ext(hash)}}, nil)
	if !bytes.Equal(fullBody, hashBody) {
		t.Fatalf("by hash: %s\nin full: %s", hashBody, fullBody)
	}
	for _, h := range []string{"Cache-Control", "ETag", "Vary"} {
		if a, b := byHash.Header.Get(h), full.Header.Get(h); a != b || a == "" {
			t.Errorf("%s: by hash %q, in full %q; want the same", h, a, b)
		}
	}
	if byHash.Header.Get("Cache-Control") != immutable {
		t.Errorf("by hash: Cache-Control %q, want %q", byHash.Header.Get("Cache-Control"), immutable)
	}
	notModified, _ := getParams(t, g.URL, url.Values{"extensions": {ext(hash)}}, map[string]string{"If-None-Match": full.Header.Get("ETag")})
	if notModified.StatusCode != http.StatusNotModified {
		t.Errorf("by hash with If-None-Match: status %d, want 304", notModified.StatusCode)
	}
}

// TestStreamsAreNotCached: a GET answered as a stream keeps its no-cache
// and has no ETag; a GET that accepts a stream and JSON, answered in JSON
// (urql's), is cached as any GET.
func TestStreamsAreNotCached(t *testing.T) {
	g := cachingGateway(t, kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable}}, gatewayOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	for _, accept := range []string{"text/event-stream", "multipart/mixed"} {
		resp := streamRequest(t, ctx, g.URL, http.MethodGet, accept, txPageQuery, nil)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("ETag") != "" {
			t.Errorf("%s: Cache-Control %q, ETag %q; want no-cache and none", accept, resp.Header.Get("Cache-Control"), resp.Header.Get("ETag"))
		}
	}
	plain, body := getQuery(t, g.URL, txPageQuery, nil)
	resp, urqlBody := getQuery(t, g.URL, txPageQuery, map[string]string{"Accept": "multipart/mixed, application/graphql-response+json, application/json"})
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/graphql-response+json") || !bytes.Equal(body, urqlBody) {
		t.Fatalf("urql's GET: Content-Type %q, body %.100s", resp.Header.Get("Content-Type"), urqlBody)
	}
	if resp.Header.Get("Cache-Control") != immutable || !etagPattern.MatchString(resp.Header.Get("ETag")) || resp.Header.Get("ETag") == plain.Header.Get("ETag") {
		t.Errorf("urql's GET: Cache-Control %q, ETag %q; want %q and the tag of its type", resp.Header.Get("Cache-Control"), resp.Header.Get("ETag"), immutable)
	}
	again, none := getQuery(t, g.URL, txPageQuery, map[string]string{"Accept": "multipart/mixed, application/graphql-response+json, application/json", "If-None-Match": resp.Header.Get("ETag")})
	if again.StatusCode != http.StatusNotModified || len(none) != 0 {
		t.Errorf("urql's GET with If-None-Match: status %d, %d bytes; want 304", again.StatusCode, len(none))
	}
}

// TestProcessCursorKeysAreNotImmutable: without a key of the operator's
// (a random key, valid for this process only), the cursors in committed
// history fail after a restart, so it is not cached as immutable.
func TestProcessCursorKeysAreNotImmutable(t *testing.T) {
	g := cachingGateway(t, kindedUpstream{kinds: kinds{"transactions": upstream.CacheImmutable}}, gatewayOptions{Executor: graph.ExecutorConfig{CursorKeys: graph.RandomCursorKeys()}})
	resp, body := getQuery(t, g.URL, `{ transactions(first: 2) { edges { cursor } } }`, nil)
	if got := resp.Header.Get("Cache-Control"); !cacheControlIs(got, oneBlock) {
		t.Errorf("Cache-Control %q, want %q (%.100s)", got, oneBlock, body)
	}
}
