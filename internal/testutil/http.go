package testutil

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// RawClient sends requests as given and reads bodies as sent: its
// transport neither asks for gzip nor decompresses. A request gives up
// after 30 s.
var RawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}

// RawDo sends req with RawClient and returns the response and its body as
// sent.
func RawDo(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	return do(t, RawClient, req)
}

// Do sends req with http.DefaultClient (which asks for gzip and undoes
// it, as a browser does) and returns the response and its body.
func Do(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	return do(t, http.DefaultClient, req)
}

func do(t testing.TB, client *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", req.URL, err)
	}
	return resp, body
}

// Get sends a GET of url with the headers given, with Do.
func Get(t testing.TB, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return Do(t, req)
}

// Decompress undoes a content coding, "gzip" or "zstd", failing the test
// if b is not a whole stream of it.
func Decompress(t testing.TB, coding string, b []byte) []byte {
	t.Helper()
	switch coding {
	case "gzip":
		return Gunzip(t, b)
	case "zstd":
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		out, err := d.DecodeAll(b, nil)
		if err != nil {
			t.Fatalf("not zstd: %v", err)
		}
		return out
	}
	t.Fatalf("unknown content coding %q", coding)
	return nil
}

// Gunzip undoes gzip, failing the test if b is not a whole gzip stream.
func Gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}
