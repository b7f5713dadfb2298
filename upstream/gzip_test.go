package upstream

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestClientDecompressesGzip: the client asks for gzip itself and
// decompresses what the server compressed (and only that), success and
// error bodies alike; the body limit applies to the decompressed JSON (a
// compression bomb is refused); a corrupt stream is an unavailable
// upstream, as the transport's own decompression reported it.
func TestClientDecompressesGzip(t *testing.T) {
	body := fixture(t, "assets.json")
	var gotAccept string
	mode := "gzip"
	handler := func(w http.ResponseWriter, r *http.Request) {
		gotAccept = r.Header.Get("Accept-Encoding")
		switch mode {
		case "gzip":
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gzipped(t, body))
		case "plain":
			_, _ = w.Write(body)
		case "corrupt":
			w.Header().Set("Content-Encoding", "gzip")
			z := gzipped(t, body)
			z[len(z)/2] ^= 0xff
			_, _ = w.Write(z)
		case "not gzip":
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(body)
		case "error":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(gzipped(t, []byte(`{"code":3,"message":"invalid argument","details":[]}`)))
		}
	}
	c := setup(t, handler)
	ctx := context.Background()
	want, err := setup(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }).ListAssets(ctx, AssetsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"gzip", "plain"} {
		mode = m
		got, err := c.ListAssets(ctx, AssetsParams{})
		if err != nil || len(got.Edges) != len(want.Edges) || got.Edges[0].Node.ID != want.Edges[0].Node.ID {
			t.Fatalf("%s body: %v, %d assets; want %d", m, err, len(got.Edges), len(want.Edges))
		}
		if gotAccept != "gzip" {
			t.Fatalf("Accept-Encoding %q, want gzip", gotAccept)
		}
	}
	for _, m := range []string{"corrupt", "not gzip"} {
		mode = m
		_, err := c.ListAssets(ctx, AssetsParams{})
		var ue *UnavailableError
		var de *DecodeError
		if !errors.As(err, &ue) && !errors.As(err, &de) {
			t.Fatalf("%s body: %v, want an unavailable or undecodable upstream", m, err)
		}
	}
	mode = "error"
	c = setup(t, handler) // a breaker of its own: the failures above opened c's
	_, err = c.ListAssets(ctx, AssetsParams{})
	var ue *Error
	if !errors.As(err, &ue) || ue.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "invalid argument") {
		t.Fatalf("compressed error body: %v, want the 400 with its message", err)
	}

	// A small compressed body that decompresses past the limit.
	bomb := append([]byte(`{"assets":{"edges":[],"pageInfo":{}},"pad":"`), bytes.Repeat([]byte("a"), 1<<20)...)
	bomb = append(bomb, `"}`...)
	z := gzipped(t, bomb)
	small := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(z)
	}, func(cfg *Config) { cfg.MaxBodyBytes = 64 << 10 })
	_, err = small.ListAssets(ctx, AssetsParams{})
	var de *DecodeError
	if len(z) > 64<<10 || !errors.As(err, &de) || !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("a %d-byte body of %d bytes decompressed: %v, want ErrResponseTooLarge", len(z), len(bomb), err)
	}
}
