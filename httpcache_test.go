package main

import (
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
	// and cached for a block (graph/httpcache.go).
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
