package httpgzip

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tradenet/gateway/internal/testutil"
)

func TestAccepts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip;q=0.5", true},
		{"gzip;q=0", false},
		{"gzip; q=0.0", false},
		{"gzip;Q=0", false},
		{"gzip;q=nonsense", false},
		{"gzip;q=2", false},
		{"br", false},
		{"*", true},
		{"*;q=0", false},
		{"*, gzip;q=0", false},
		{"gzip;q=0, *", false},
		{"identity", false},
		{"x-gzip", true},
		{"gzip, deflate, br, zstd", true},
		{" gzip ; q=0.001 ", true},
	} {
		if got := Accepts([]string{tc.in}); got != tc.want {
			t.Errorf("Accepts(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !Accepts([]string{"br", "gzip"}) {
		t.Error("Accepts over two header lines missed the gzip in the second")
	}
}

type observed struct {
	mu      sync.Mutex
	in, out []int64
}

func (o *observed) observe(in, out int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.in, o.out = append(o.in, in), append(o.out, out)
}

func (o *observed) calls() ([]int64, []int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.in, o.out
}

// serve starts h behind Handler (level 1, 1,024 bytes) on loopback.
func serve(t *testing.T, h http.HandlerFunc) (*httptest.Server, *observed) {
	t.Helper()
	obs := &observed{}
	srv := httptest.NewServer(Handler(h, Options{Level: 1, MinBytes: 1024, Observe: obs.observe}))
	t.Cleanup(srv.Close)
	return srv, obs
}

func get(t *testing.T, url, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	return do(t, http.MethodGet, url, acceptEncoding)
}

func do(t *testing.T, method, url, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	return testutil.RawDo(t, req)
}

// jsonBody is n bytes of compressible JSON.
func jsonBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"data":[`)
	for i := 0; b.Len() < n-2; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"` + strconv.Itoa(i) + `","amount":"1000"}`)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func TestLargeBodyIsCompressedForClientsThatAsk(t *testing.T) {
	want := jsonBody(64 << 10)
	srv, obs := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(want))) // wrong once compressed: dropped
		w.WriteHeader(http.StatusBadRequest)
		w.Write(want)
	})

	resp, body := get(t, srv.URL, "br, gzip")
	if got := resp.Header.Get("Content-Encoding"); got != "gzip" {
		t.Fatalf("Content-Encoding = %q, want gzip", got)
	}
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status = %d, want the handler's 400", resp.StatusCode)
	}
	if resp.ContentLength != -1 && resp.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length = %d for a %d-byte compressed body", resp.ContentLength, len(body))
	}
	if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
		t.Errorf("Vary = %q, want Accept-Encoding", got)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want the handler's", got)
	}
	if !bytes.Equal(testutil.Gunzip(t, body), want) {
		t.Fatal("the decompressed body differs from the handler's")
	}
	if len(body) >= len(want)/4 {
		t.Errorf("compressed to %d of %d bytes: expected far smaller", len(body), len(want))
	}
	in, out := obs.calls()
	if len(in) != 1 || in[0] != int64(len(want)) || out[0] != int64(len(body)) {
		t.Errorf("observed in %v out %v, want [%d] [%d]", in, out, len(want), len(body))
	}

	// The same response for a client that does not ask, or refuses gzip.
	for _, ae := range []string{"", "identity", "gzip;q=0", "br"} {
		resp, body := get(t, srv.URL, ae)
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, %d bytes: want the body as written", ae, resp.Header.Get("Content-Encoding"), len(body))
		}
		if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary = %q, want Accept-Encoding", ae, got)
		}
	}
	if in, _ := obs.calls(); len(in) != 1 {
		t.Errorf("%d compressed responses observed, want 1", len(in))
	}
}

func TestSmallBodyIsSentAsItIs(t *testing.T) {
	want := jsonBody(1000)
	srv, obs := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for chunk := range slices(want, 100) {
			w.Write(chunk)
		}
	})
	resp, body := get(t, srv.URL, "gzip")
	if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) {
		t.Fatalf("Content-Encoding %q, body %q: want the body as written", resp.Header.Get("Content-Encoding"), body)
	}
	if resp.ContentLength != int64(len(want)) {
		t.Errorf("Content-Length = %d, want %d", resp.ContentLength, len(want))
	}
	if in, _ := obs.calls(); len(in) != 0 {
		t.Errorf("observed %d compressed responses, want none", len(in))
	}
}

// slices yields b in pieces of n bytes.
func slices(b []byte, n int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			k := min(n, len(b))
			if !yield(b[:k]) {
				return
			}
			b = b[k:]
		}
	}
}

func TestSmallWritesCrossingTheThreshold(t *testing.T) {
	want := jsonBody(20 << 10)
	for _, size := range []int{1, 7, 1023, 1024, 5000} {
		srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			for chunk := range slices(want, size) {
				if n, err := w.Write(chunk); n != len(chunk) || err != nil {
					t.Errorf("Write = %d, %v; want %d, nil", n, err, len(chunk))
				}
			}
		})
		resp, body := get(t, srv.URL, "gzip")
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("writes of %d: not compressed", size)
		}
		if !bytes.Equal(testutil.Gunzip(t, body), want) {
			t.Fatalf("writes of %d: the decompressed body differs", size)
		}
	}
}

func TestResponsesLeftAlone(t *testing.T) {
	big := jsonBody(8 << 10)
	for name, h := range map[string]http.HandlerFunc{
		"already encoded": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "br")
			w.Header().Set("Content-Type", "application/json")
			w.Write(big)
		},
		"not compressible": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Write(big)
		},
		"event stream": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(big)
		},
		"partial content": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Range", "bytes 0-8191/9000")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(big)
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv, obs := serve(t, h)
			resp, body := get(t, srv.URL, "gzip")
			if !bytes.Equal(body, big) {
				t.Errorf("the body was changed (Content-Encoding %q)", resp.Header.Get("Content-Encoding"))
			}
			if in, _ := obs.calls(); len(in) != 0 {
				t.Errorf("observed %d compressed responses, want none", len(in))
			}
		})
	}
}

func TestHEADIsLeftAlone(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "9000")
		w.WriteHeader(http.StatusOK)
	})
	resp, _ := do(t, http.MethodHead, srv.URL, "gzip")
	if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Content-Length") != "9000" {
		t.Errorf("HEAD: Content-Encoding %q, Content-Length %q; want none and the handler's 9000", resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Length"))
	}
}

func TestUntypedBodyIsSniffedBeforeCompression(t *testing.T) {
	want := bytes.Repeat([]byte("plain text, sniffed from the bytes as written. "), 100)
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { w.Write(want) })
	resp, body := get(t, srv.URL, "gzip")
	if got := resp.Header.Get("Content-Type"); got != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q, want the plain body's (not the gzip stream's)", got)
	}
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(testutil.Gunzip(t, body), want) {
		t.Error("not compressed, or the decompressed body differs")
	}
}

func TestStrongETagBecomesWeak(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"abc"`)
		w.Write(jsonBody(4096))
	})
	resp, _ := get(t, srv.URL, "gzip")
	if got := resp.Header.Get("ETag"); got != `W/"abc"` {
		t.Errorf("ETag = %q, want W/\"abc\"", got)
	}
}

// TestFlushStreams checks that a flush reaches the client before the
// handler returns: compressed once the threshold was reached, as it is
// before.
func TestFlushStreams(t *testing.T) {
	for _, tc := range []struct {
		name     string
		first    []byte
		wantGzip bool
	}{
		{"before the threshold", []byte(`{"first":true}`), false},
		{"after the threshold", jsonBody(4096), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(tc.first)
				http.NewResponseController(w).Flush()
				<-release
				w.Write([]byte(`{"second":true}`))
			})
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := testutil.RawClient.Do(req)
			if err != nil {
				close(release)
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tc.wantGzip {
				close(release)
				t.Fatalf("compressed = %v, want %v", got, tc.wantGzip)
			}
			var r io.Reader = resp.Body
			if tc.wantGzip {
				zr, err := gzip.NewReader(resp.Body)
				if err != nil {
					close(release)
					t.Fatal(err)
				}
				r = zr
			}
			// Read the first part while the handler still waits.
			got := make([]byte, len(tc.first))
			if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, tc.first) {
				close(release)
				t.Fatalf("first part: %v, %q", err, got)
			}
			close(release)
			rest, err := io.ReadAll(r)
			if err != nil || string(rest) != `{"second":true}` {
				t.Fatalf("rest: %v, %q", err, rest)
			}
		})
	}
}

func TestPanickingHandlerReleasesItsWriter(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(jsonBody(4096))
		if r.URL.Query().Get("panic") != "" {
			panic(http.ErrAbortHandler)
		}
	})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"?panic=1", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	if resp, err := testutil.RawClient.Do(req); err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Error("an aborted response read as complete")
		}
	}
	// The server is still serving, and compresses with a pooled writer.
	resp, body := get(t, srv.URL, "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(string(testutil.Gunzip(t, body)), `{"data":[`) {
		t.Error("the response after a panic is not whole")
	}
}

func TestLevelZeroLeavesResponsesAlone(t *testing.T) {
	want := jsonBody(8 << 10)
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(want)
	}), Options{Level: 0, MinBytes: 1}))
	defer srv.Close()
	resp, body := get(t, srv.URL, "gzip")
	if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Vary") != "" || !bytes.Equal(body, want) {
		t.Errorf("level 0: Content-Encoding %q, Vary %q: want the response untouched", resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
	}
	defer func() {
		if recover() == nil {
			t.Error("level 10 did not panic")
		}
	}()
	Handler(srv.Config.Handler, Options{Level: 10})
}
