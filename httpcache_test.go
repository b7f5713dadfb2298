package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/sampleservice"
)

// TestHTTPCachingThroughTheServer: through the whole server (CORS,
// compression), a cacheable GET response carries a Cache-Control, an ETag
// naming its coding, and a Vary of every header it depends on, each once;
// If-None-Match with the tag the client holds answers 304 with the same
// headers and no body, and a tag of another coding does not.
func TestHTTPCachingThroughTheServer(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{}, nil)
	g := startOpsGateway(t, u.args("-cors-origins", "https://app.example")...)
	// The schema: large enough to compress, made of no upstream answer
	// (which all say CacheNone until the upstream cache sets their kinds),
	// and cached for a block (transport/httpcache.go).
	target := g.URL + "/graphql?query=" + url.QueryEscape(`{ __schema { types { name description } } }`)
	get := func(acceptEncoding, ifNoneMatch string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Accept-Encoding", acceptEncoding)
		req.Header.Set("Origin", "https://app.example")
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		return testutil.RawDo(t, req)
	}

	plain, plainBody := get("identity", "")
	etag := plain.Header.Get("ETag")
	if plain.StatusCode != http.StatusOK || plain.Header.Get("Content-Encoding") != "" || len(etag) < 3 || !strings.HasSuffix(etag, `"`) {
		t.Fatalf("identity: status %d, Content-Encoding %q, ETag %q", plain.StatusCode, plain.Header.Get("Content-Encoding"), etag)
	}
	for _, tc := range []struct{ acceptEncoding, coding string }{{"gzip", "gzip"}, {"gzip, deflate, br, zstd", "zstd"}} {
		resp, body := get(tc.acceptEncoding, "")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != tc.coding {
			t.Fatalf("%s: status %d, Content-Encoding %q", tc.coding, resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
		if got := string(testutil.Decompress(t, tc.coding, body)); got != string(plainBody) {
			t.Fatalf("%s: the decompressed body differs from the identity one", tc.coding)
		}
		want := map[string]string{
			"Cache-Control":               "public, max-age=1",
			"ETag":                        strings.TrimSuffix(etag, `"`) + "-" + tc.coding + `"`,
			"Access-Control-Allow-Origin": "https://app.example",
		}
		for h, v := range want {
			if got := resp.Header.Get(h); got != v {
				t.Errorf("%s: %s %q, want %q", tc.coding, h, got, v)
			}
		}
		checkVary(t, tc.coding, resp.Header)

		notModified, none := get(tc.acceptEncoding, want["ETag"])
		if notModified.StatusCode != http.StatusNotModified || len(none) != 0 {
			t.Fatalf("%s, If-None-Match %s: status %d with %d bytes, want 304 with none", tc.coding, want["ETag"], notModified.StatusCode, len(none))
		}
		for _, h := range []string{"ETag", "Cache-Control"} {
			if got := notModified.Header.Get(h); got != want[h] {
				t.Errorf("%s, 304: %s %q, want %q", tc.coding, h, got, want[h])
			}
		}
		if ce := notModified.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("%s, 304: Content-Encoding %q, want none", tc.coding, ce)
		}
		checkVary(t, tc.coding+", 304", notModified.Header)

		// The identity body's tag is another representation's.
		if other, _ := get(tc.acceptEncoding, etag); other.StatusCode != http.StatusOK {
			t.Errorf("%s, If-None-Match of the identity body: status %d, want 200", tc.coding, other.StatusCode)
		}
	}
	if resp, none := get("identity", etag); resp.StatusCode != http.StatusNotModified || len(none) != 0 {
		t.Errorf("identity, If-None-Match %s: status %d, want 304", etag, resp.StatusCode)
	}
}

// checkVary checks that a cross-origin, compressed GET response varies by
// Origin, Accept-Encoding and Accept, each named once.
func checkVary(t *testing.T, name string, h http.Header) {
	t.Helper()
	var names []string
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			names = append(names, strings.TrimSpace(f))
		}
	}
	slices.Sort(names)
	if want := []string{"Accept", "Accept-Encoding", "Origin"}; !slices.Equal(names, want) {
		t.Errorf("%s: Vary %q, want %q each once", name, h.Values("Vary"), want)
	}
}

// TestHTTPCachingFollowsTheUpstreamCache: with the upstream cache judging
// the answers, a GET of committed history is cacheable for a year, and
// stays the same (same ETag, 304 on revalidation) after new blocks; the
// newest page and data-node answers are cacheable for about a block; a
// response with an error is not cacheable at all.
func TestHTTPCachingFollowsTheUpstreamCache(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{}, nil)
	g := startOpsGateway(t, u.args("-cursor-key", strings.Repeat("k", 32))...)
	get := func(query, ifNoneMatch string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/graphql?query="+url.QueryEscape(query), nil)
		req.Header.Set("Accept-Encoding", "identity")
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		return testutil.RawDo(t, req)
	}
	blockBound := func(name string, resp *http.Response) {
		t.Helper()
		// About a block, less the answers' age (no-cache when little is
		// left: a loaded machine may take half a second).
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=1" && cc != "public, no-cache" {
			t.Errorf("%s: Cache-Control %q, want about a block", name, cc)
		}
	}

	newest, body := get(`{ transactions(first: 3) { edges { cursor node { hash } } } }`, "")
	if newest.StatusCode != http.StatusOK {
		t.Fatalf("newest page: %d %s", newest.StatusCode, body)
	}
	blockBound("the newest page", newest)
	var page struct {
		Data struct {
			Transactions struct{ Edges []struct{ Cursor string } }
		}
	}
	if err := json.Unmarshal(body, &page); err != nil || len(page.Data.Transactions.Edges) != 3 {
		t.Fatalf("newest page %s: %v", body, err)
	}

	history := fmt.Sprintf(`{ transactions(first: 5, after: %q) { edges { node { hash block } } } }`, page.Data.Transactions.Edges[2].Cursor)
	first, firstBody := get(history, "")
	const year = "public, max-age=31536000, immutable"
	if cc := first.Header.Get("Cache-Control"); first.StatusCode != http.StatusOK || cc != year {
		t.Fatalf("a history page: %d, Cache-Control %q, want %q: %s", first.StatusCode, cc, year, firstBody)
	}
	etag := first.Header.Get("ETag")

	// New blocks: the history page is the same page, with the same tag.
	for range 3 {
		if _, err := u.Sample.AppendBlock(); err != nil {
			t.Fatal(err)
		}
	}
	again, againBody := get(history, "")
	if again.Header.Get("ETag") != etag || string(againBody) != string(firstBody) || again.Header.Get("Cache-Control") != year {
		t.Fatalf("after new blocks: ETag %q (was %q), Cache-Control %q, body changed: %v", again.Header.Get("ETag"), etag, again.Header.Get("Cache-Control"), string(againBody) != string(firstBody))
	}
	if nm, none := get(history, etag); nm.StatusCode != http.StatusNotModified || len(none) != 0 || nm.Header.Get("Cache-Control") != year {
		t.Fatalf("revalidation: status %d, %d bytes, Cache-Control %q; want 304, none, %q", nm.StatusCode, len(none), nm.Header.Get("Cache-Control"), year)
	}

	// History beside a data-node answer: as cacheable as its least part.
	mixed, _ := get(`{ assets(first: 1) { edges { node { id } } } h: transactions(first: 1, after: "`+page.Data.Transactions.Edges[2].Cursor+`") { edges { node { hash } } } }`, "")
	blockBound("history and assets", mixed)

	// An error: not cacheable.
	bad, _ := get(`{ asset(id: "`+strings.Repeat("0", 64)+`") { id } }`, "")
	if cc := bad.Header.Get("Cache-Control"); cc != "no-store" || bad.Header.Get("ETag") != "" {
		t.Errorf("a response with an error: Cache-Control %q, ETag %q; want no-store and none", cc, bad.Header.Get("ETag"))
	}
}
