package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/sampleservice"
)

// rawPOST POSTs a GraphQL query and returns the response and its body as
// sent.
func rawPOST(t *testing.T, base, q, acceptEncoding string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"query": q})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", acceptEncoding)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return testutil.RawDo(t, req)
}

const pageQuery = `{ delegations(first: 500) { edges { cursor node { party { id } nodeId node { id } amount epochSeq } } pageInfo { hasNextPage endCursor } } }`

// TestResponsesAreCompressed: clients that accept zstd or gzip get
// /graphql and /schema.graphql compressed once the body reaches
// COMPRESSION_MIN_BYTES, zstd where both are accepted; the decompressed
// bytes are those other clients get, and the metrics count what was
// compressed, by coding.
func TestResponsesAreCompressed(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{}, nil)
	g := startOpsGateway(t, u.args()...)

	plainResp, plain := rawPOST(t, g.URL, pageQuery, "identity", nil)
	if plainResp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("identity asked for, got Content-Encoding %q", plainResp.Header.Get("Content-Encoding"))
	}
	if !bytes.Contains(plain, []byte(`"hasNextPage":true`)) || bytes.Count(plain, []byte(`"cursor"`)) != 500 {
		t.Fatalf("unexpected page: %.300s", plain)
	}
	sent := map[string]int{}
	for _, tc := range []struct{ acceptEncoding, coding string }{
		{"gzip, deflate, br, zstd", "zstd"}, // Chrome, Edge, Firefox
		{"gzip, deflate, br", "gzip"},       // Safari
	} {
		resp, body := rawPOST(t, g.URL, pageQuery, tc.acceptEncoding, nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != tc.coding {
			t.Fatalf("Accept-Encoding %q: status %d, Content-Encoding %q: want 200, %s", tc.acceptEncoding, resp.StatusCode, resp.Header.Get("Content-Encoding"), tc.coding)
		}
		if !slices.Contains(resp.Header.Values("Vary"), "Accept-Encoding") {
			t.Errorf("%s: Vary = %q, want Accept-Encoding among them", tc.coding, resp.Header.Values("Vary"))
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type = %q, want application/json", tc.coding, ct)
		}
		if got := testutil.Decompress(t, tc.coding, body); !bytes.Equal(got, plain) {
			t.Fatalf("%s: the decompressed response (%d bytes) differs from the uncompressed one (%d bytes)", tc.coding, len(got), len(plain))
		}
		if len(body)*5 > len(plain) {
			t.Errorf("%s: compressed %d bytes to %d: want at least 5× smaller", tc.coding, len(plain), len(body))
		}
		sent[tc.coding] += len(body)
	}

	// A small response goes out as it is, with its length.
	resp, small := rawPOST(t, g.URL, `{ __typename }`, "gzip, zstd", nil)
	if resp.Header.Get("Content-Encoding") != "" || string(small) != `{"data":{"__typename":"Query"}}` || resp.ContentLength != int64(len(small)) {
		t.Errorf("small response: Content-Encoding %q, Content-Length %d, body %q", resp.Header.Get("Content-Encoding"), resp.ContentLength, small)
	}

	// The schema's SDL too.
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/schema.graphql", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, sdl := testutil.RawDo(t, req)
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(testutil.Gunzip(t, sdl), schemaSDL) {
		t.Errorf("schema.graphql: Content-Encoding %q, or the decompressed SDL differs", resp.Header.Get("Content-Encoding"))
	}
	sent["gzip"] += len(sdl)

	m := scrape(t, g.URL)
	for coding, want := range map[string]struct{ responses, in, out int }{
		"zstd": {1, len(plain), sent["zstd"]},
		"gzip": {2, len(plain) + len(schemaSDL), sent["gzip"]},
	} {
		if got := metricValue(m, "gateway_http_compressed_responses_total", map[string]string{"encoding": coding}); got != float64(want.responses) {
			t.Errorf("%s: gateway_http_compressed_responses_total = %v, want %d", coding, got, want.responses)
		}
		if got := metricValue(m, "gateway_http_compressed_response_bytes_total", map[string]string{"encoding": coding, "stage": "in"}); got != float64(want.in) {
			t.Errorf("%s: compressed bytes in = %v, want %d", coding, got, want.in)
		}
		if got := metricValue(m, "gateway_http_compressed_response_bytes_total", map[string]string{"encoding": coding, "stage": "out"}); got != float64(want.out) {
			t.Errorf("%s: compressed bytes out = %v, want %d", coding, got, want.out)
		}
	}
}

// TestCompressionWithCORS: a cross-origin response is compressed and
// varies by both Origin and Accept-Encoding, so caches keep them apart.
func TestCompressionWithCORS(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{}, nil)
	g := startOpsGateway(t, u.args("-cors-origins", "https://app.example")...)
	resp, body := rawPOST(t, g.URL, pageQuery, "gzip", map[string]string{"Origin": "https://app.example"})
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Access-Control-Allow-Origin %q, Content-Encoding %q", resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Content-Encoding"))
	}
	vary := strings.Join(resp.Header.Values("Vary"), ", ")
	if !strings.Contains(vary, "Origin") || !strings.Contains(vary, "Accept-Encoding") {
		t.Errorf("Vary = %q, want Origin and Accept-Encoding", vary)
	}
	if !bytes.Contains(testutil.Gunzip(t, body), []byte(`"delegations"`)) {
		t.Error("the decompressed body is not the page")
	}
}

// TestCompressionSettings: level 0 turns compression off; the threshold
// is the operator's.
func TestCompressionSettings(t *testing.T) {
	u := startUpstream(t, sampleservice.Config{}, nil)
	off := startOpsGateway(t, u.args("-compression-level", "0")...)
	resp, body := rawPOST(t, off.URL, pageQuery, "gzip", nil)
	if resp.Header.Get("Content-Encoding") != "" || !bytes.HasPrefix(body, []byte(`{"data":{"delegations"`)) {
		t.Errorf("COMPRESSION_LEVEL=0: Content-Encoding %q, body %.40q", resp.Header.Get("Content-Encoding"), body)
	}
	low := startOpsGateway(t, u.args("-compression-min-bytes", "10", "-compression-level", "9")...)
	resp, body = rawPOST(t, low.URL, `{ __typename }`, "gzip", nil)
	if resp.Header.Get("Content-Encoding") != "gzip" || string(testutil.Gunzip(t, body)) != `{"data":{"__typename":"Query"}}` {
		t.Errorf("COMPRESSION_MIN_BYTES=10: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
}
