package httpcompress

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tradenet/gateway/internal/testutil"
)

// TestNegotiation: the coding of a compressible response for each
// Accept-Encoding: the one the client weighs highest, zstd on a tie, none
// where the client refuses both or names neither.
func TestNegotiation(t *testing.T) {
	body := jsonBody(4096)
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}), Options{Level: 1, MinBytes: 1024})
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"gzip", Gzip},
		{"GZIP", Gzip},
		{"zstd", Zstd},
		{"gzip, deflate, br, zstd", Zstd}, // Chrome, Firefox
		{"gzip, deflate, br", Gzip},       // Safari
		{"deflate, gzip;q=0.5", Gzip},
		{"gzip;q=1, zstd;q=0.5", Gzip},
		{"gzip;q=0.5, zstd;q=0.5", Zstd}, // a tie: zstd
		{"zstd;q=0, gzip", Gzip},
		{"gzip;q=0", ""},
		{"gzip; q=0.0", ""},
		{"gzip;q=nonsense", ""},
		{"br", ""},
		{"identity", ""},
		{" gzip ; q=0.001 ", Gzip},
		{"gzip;Q=0", ""},
		{"gzip;q=2", Gzip}, // out of range: the nearest weight
		// Where gzhttp differs from RFC 9110 (README, Compression), the
		// body goes as it is, which every client accepts: a coding listed
		// twice has its first weight; "*" and "x-gzip" are not matched.
		{"gzip;q=0, gzip", ""},
		{"*", ""},
		{"x-gzip", ""},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept-Encoding", tc.in)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Header().Get("Content-Encoding"); got != tc.want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", tc.in, got, tc.want)
		}
		if got := rec.Body.Bytes(); tc.want != "" && !bytes.Equal(testutil.Decompress(t, tc.want, got), body) || tc.want == "" && !bytes.Equal(got, body) {
			t.Errorf("Accept-Encoding %q: the body differs from the handler's", tc.in)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"x-gzip", true},
		{"zstd", false},
		{"gzip, deflate, br, zstd", true},
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
		{"*;q=0.5, gzip", true},
		{"identity", false},
		{" gzip ; q=0.001 ", true},
		{"gzip;q=0, gzip", true}, // listed twice: the higher weight
	} {
		if got := AcceptsGzip([]string{tc.in}); got != tc.want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !AcceptsGzip([]string{"br", "gzip"}) {
		t.Error("over two header lines: want gzip from the second")
	}
	// Every request for a stored asset asks: it must cost no allocation.
	browser := []string{"gzip, deflate, br, zstd"}
	if n := testing.AllocsPerRun(100, func() { AcceptsGzip(browser) }); n != 0 {
		t.Errorf("AcceptsGzip allocates %.0f times, want 0", n)
	}
}

// codings are the content codings Handler writes.
var codings = []string{Zstd, Gzip}

// reader undoes coding as the body arrives.
func reader(t *testing.T, coding string, r io.Reader) io.Reader {
	t.Helper()
	if coding == Gzip {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		return zr
	}
	zr, err := zstd.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zr.Close)
	return zr
}

type observed struct {
	mu      sync.Mutex
	codings []string
	in, out []int64
}

func (o *observed) observe(coding string, in, out int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.codings = append(o.codings, coding)
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

	sizes := map[string]int{}
	for _, tc := range []struct{ acceptEncoding, coding string }{
		{"br, gzip", Gzip},
		{"gzip, deflate, br, zstd", Zstd},
	} {
		resp, body := get(t, srv.URL, tc.acceptEncoding)
		if got := resp.Header.Get("Content-Encoding"); got != tc.coding {
			t.Fatalf("Accept-Encoding %q: Content-Encoding = %q, want %s", tc.acceptEncoding, got, tc.coding)
		}
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status = %d, want the handler's 400", tc.coding, resp.StatusCode)
		}
		if resp.ContentLength != -1 && resp.ContentLength != int64(len(body)) {
			t.Errorf("%s: Content-Length = %d for a %d-byte compressed body", tc.coding, resp.ContentLength, len(body))
		}
		if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
			t.Errorf("%s: Vary = %q, want Accept-Encoding", tc.coding, got)
		}
		if got := resp.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("%s: Content-Type = %q, want the handler's", tc.coding, got)
		}
		if !bytes.Equal(testutil.Decompress(t, tc.coding, body), want) {
			t.Fatalf("%s: the decompressed body differs from the handler's", tc.coding)
		}
		if len(body) >= len(want)/4 {
			t.Errorf("%s: compressed to %d of %d bytes: expected far smaller", tc.coding, len(body), len(want))
		}
		sizes[tc.coding] = len(body)
	}
	obs.mu.Lock()
	if len(obs.in) != 2 || obs.codings[0] != Gzip || obs.codings[1] != Zstd ||
		obs.in[0] != int64(len(want)) || obs.in[1] != int64(len(want)) ||
		obs.out[0] != int64(sizes[Gzip]) || obs.out[1] != int64(sizes[Zstd]) {
		t.Errorf("observed %v in %v out %v, want [gzip zstd] [%d %d] [%d %d]", obs.codings, obs.in, obs.out, len(want), len(want), sizes[Gzip], sizes[Zstd])
	}
	obs.mu.Unlock()

	// The same response for a client that does not ask, or refuses both.
	for _, ae := range []string{"", "identity", "gzip;q=0", "br", "zstd;q=0, gzip;q=0"} {
		resp, body := get(t, srv.URL, ae)
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, %d bytes: want the body as written", ae, resp.Header.Get("Content-Encoding"), len(body))
		}
		if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary = %q, want Accept-Encoding", ae, got)
		}
	}
	if in, _ := obs.calls(); len(in) != 2 {
		t.Errorf("%d compressed responses observed, want 2", len(in))
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
		for _, coding := range codings {
			resp, body := get(t, srv.URL, coding)
			if resp.Header.Get("Content-Encoding") != coding {
				t.Fatalf("%s, writes of %d: not compressed", coding, size)
			}
			if !bytes.Equal(testutil.Decompress(t, coding, body), want) {
				t.Fatalf("%s, writes of %d: the decompressed body differs", coding, size)
			}
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

// TestNoBodyStatuses: a 204 or 304 goes out as it is, its status and
// headers kept, without a Content-Encoding.
func TestNoBodyStatuses(t *testing.T) {
	for _, code := range []int{http.StatusNoContent, http.StatusNotModified} {
		srv, obs := serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("ETag", `"abc"`)
			w.WriteHeader(code)
		})
		for _, coding := range codings {
			resp, body := get(t, srv.URL, coding)
			if resp.StatusCode != code || resp.Header.Get("Content-Encoding") != "" || len(body) != 0 || resp.Header.Get("ETag") != `"abc"` {
				t.Errorf("%d, %s: status %d, Content-Encoding %q, ETag %q, %d bytes: want %d, none, \"abc\", none",
					code, coding, resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.Header.Get("ETag"), len(body), code)
			}
		}
		if in, _ := obs.calls(); len(in) != 0 {
			t.Errorf("%d: observed %d compressed responses, want none", code, len(in))
		}
	}
}

// TestFlushStreams checks that a flush reaches the client before the
// handler returns: compressed, even before the threshold (the response is
// taken to continue); an event stream, never compressed, as it is.
func TestFlushStreams(t *testing.T) {
	for _, coding := range codings {
		for _, tc := range []struct {
			name, contentType string
			first             []byte
			wantCompress      bool
		}{
			{"before the threshold", "application/json", []byte(`{"first":true}`), true},
			{"event stream", "text/event-stream", []byte("data: {\"first\":true}\n\n"), false},
			{"after the threshold", "application/json", jsonBody(4096), true},
		} {
			t.Run(coding+" "+tc.name, func(t *testing.T) {
				release := make(chan struct{})
				released := sync.OnceFunc(func() { close(release) })
				defer released()
				srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", tc.contentType)
					w.Write(tc.first)
					http.NewResponseController(w).Flush()
					<-release
					w.Write([]byte(`{"second":true}`))
				})
				req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
				req.Header.Set("Accept-Encoding", coding)
				resp, err := testutil.RawClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if got := resp.Header.Get("Content-Encoding") == coding; got != tc.wantCompress {
					t.Fatalf("compressed = %v, want %v", got, tc.wantCompress)
				}
				var r io.Reader = resp.Body
				if tc.wantCompress {
					r = reader(t, coding, resp.Body)
				}
				// Read the first part while the handler still waits.
				got := make([]byte, len(tc.first))
				if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, tc.first) {
					t.Fatalf("first part: %v, %q", err, got)
				}
				released()
				rest, err := io.ReadAll(r)
				if err != nil || string(rest) != `{"second":true}` {
					t.Fatalf("rest: %v, %q", err, rest)
				}
			})
		}
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
	for _, coding := range codings {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"?panic=1", nil)
		req.Header.Set("Accept-Encoding", coding)
		if resp, err := testutil.RawClient.Do(req); err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil {
				t.Errorf("%s: an aborted response read as complete", coding)
			}
		}
		// The server is still serving, and compresses with a pooled writer.
		resp, body := get(t, srv.URL, coding)
		if resp.Header.Get("Content-Encoding") != coding || !strings.HasPrefix(string(testutil.Decompress(t, coding, body)), `{"data":[`) {
			t.Errorf("%s: the response after a panic is not whole", coding)
		}
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

// TestZstdWindowFitsBrowsers: browsers decode zstd windows of at most
// 8 MB (RFC 8878 §3.1.1.1.2); a response larger than that must not ask
// for more.
func TestZstdWindowFitsBrowsers(t *testing.T) {
	want := jsonBody(12 << 20)
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(want)
	})
	resp, body := get(t, srv.URL, "zstd")
	if resp.Header.Get("Content-Encoding") != Zstd {
		t.Fatalf("Content-Encoding = %q, want zstd", resp.Header.Get("Content-Encoding"))
	}
	var h zstd.Header
	if err := h.Decode(body); err != nil {
		t.Fatal(err)
	}
	if h.WindowSize == 0 || h.WindowSize > 8<<20 {
		t.Errorf("window %d bytes: want at most 8 MB", h.WindowSize)
	}
	if !bytes.Equal(testutil.Decompress(t, Zstd, body), want) {
		t.Error("the decompressed body differs")
	}
}

// slowClient passes writes through once release is closed, closing
// writing at the first: a client that receives slowly.
type slowClient struct {
	http.ResponseWriter
	writing, release chan struct{}
	once             sync.Once
}

func (s *slowClient) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.writing) })
	<-s.release
	return s.ResponseWriter.Write(p)
}

// TestEncoderIsFreeWhileTheResponseIsSent: a response on its way to a
// slow client holds its compressed bytes, not an encoder (1–2 MB each), so
// that memory does not grow with the clients being served.
func TestEncoderIsFreeWhileTheResponseIsSent(t *testing.T) {
	want := jsonBody(256 << 10)
	for _, coding := range codings {
		slow := &slowClient{writing: make(chan struct{}), release: make(chan struct{})}
		h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(want)
		}), Options{Level: 1, MinBytes: 1024})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			slow.ResponseWriter = w
			h.ServeHTTP(slow, r)
		}))
		type result struct {
			resp *http.Response
			body []byte
		}
		done := make(chan result, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept-Encoding", coding)
			resp, body := testutil.RawDo(t, req)
			done <- result{resp, body}
		}()
		<-slow.writing
		if n := encodersInUse.Load(); n != 0 {
			t.Errorf("%s: %d encoders held while the response is being sent, want 0", coding, n)
		}
		close(slow.release)
		r := <-done
		if r.resp.Header.Get("Content-Encoding") != coding || !bytes.Equal(testutil.Decompress(t, coding, r.body), want) {
			t.Errorf("%s: Content-Encoding %q, or the decompressed body differs", coding, r.resp.Header.Get("Content-Encoding"))
		}
		srv.Close()
	}
}

// TestLargeCompressedBodyIsSentAsItIsCompressed: past maxBuffered
// compressed bytes, the response goes out while it is compressed
// (chunked, without a length), whole.
func TestLargeCompressedBodyIsSentAsItIsCompressed(t *testing.T) {
	// Pseudo-random hex compresses to about half: several maxBuffered.
	want := make([]byte, 0, 2<<20)
	want = append(want, `{"data":"`...)
	for x := uint64(1); len(want) < cap(want)-2; x = x*6364136223846793005 + 1442695040888963407 {
		want = strconv.AppendUint(want, x>>32, 16)
	}
	want = append(want, `"}`...)
	srv, obs := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(want)
	})
	for _, coding := range codings {
		resp, body := get(t, srv.URL, coding)
		if resp.Header.Get("Content-Encoding") != coding {
			t.Fatalf("%s: not compressed", coding)
		}
		if len(body) <= maxBuffered {
			t.Fatalf("%s: compressed to %d bytes, not past maxBuffered (%d): the test needs a larger body", coding, len(body), maxBuffered)
		}
		if resp.ContentLength != -1 {
			t.Errorf("%s: Content-Length %d: want none, the body sent as it was compressed", coding, resp.ContentLength)
		}
		if !bytes.Equal(testutil.Decompress(t, coding, body), want) {
			t.Errorf("%s: the decompressed body differs", coding)
		}
	}
	if _, out := obs.calls(); len(out) != 2 {
		t.Errorf("observed %d responses, want 2", len(out))
	}
}

// FuzzNegotiation: any Accept-Encoding gives a response in one of the
// codings or as it is, whole, without panicking; AcceptsGzip does not
// panic either.
func FuzzNegotiation(f *testing.F) {
	for _, s := range []string{"", "gzip", "gzip, deflate, br, zstd", "*;q=0.5, zstd;q=0", "gzip;q=0.001", "x-gzip;q=1.0", ";;,,q=", "zstd;q=nonsense"} {
		f.Add(s)
	}
	body := jsonBody(2048)
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}), Options{Level: 1, MinBytes: 1024})
	f.Fuzz(func(t *testing.T, header string) {
		AcceptsGzip([]string{header})
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept-Encoding", header)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := rec.Body.Bytes()
		switch coding := rec.Header().Get("Content-Encoding"); coding {
		case "":
		case Zstd, Gzip:
			got = testutil.Decompress(t, coding, got)
		default:
			t.Fatalf("Accept-Encoding %q: Content-Encoding %q", header, coding)
		}
		if !bytes.Equal(got, body) {
			t.Fatalf("Accept-Encoding %q: the body differs", header)
		}
	})
}

// TestLevelSetsBothCodings: COMPRESSION_LEVEL reaches zstd as well as
// gzip: level 9 writes fewer bytes than level 1, in either coding, on a
// page like the gateway's (ids from a small set, varied amounts).
func TestLevelSetsBothCodings(t *testing.T) {
	want := delegationsLike(2000)
	size := map[int]map[string]int{}
	for _, level := range []int{1, 9} {
		size[level] = map[string]int{}
		srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(want)
		}), Options{Level: level, MinBytes: 1024}))
		for _, coding := range codings {
			resp, body := get(t, srv.URL, coding)
			if resp.Header.Get("Content-Encoding") != coding || !bytes.Equal(testutil.Decompress(t, coding, body), want) {
				t.Fatalf("level %d, %s: not compressed, or the decompressed body differs", level, coding)
			}
			size[level][coding] = len(body)
		}
		srv.Close()
	}
	for _, coding := range codings {
		if size[9][coding] >= size[1][coding] {
			t.Errorf("%s: level 9 wrote %d bytes, level 1 %d: want fewer at 9", coding, size[9][coding], size[1][coding])
		}
	}
}

// TestWriteHeaderAfterBodyIsIgnored: once the body has started, a status
// given later is superfluous, as net/http treats it, even though the
// compressed response's status goes out only at its end.
func TestWriteHeaderAfterBodyIsIgnored(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(jsonBody(4096))
		w.WriteHeader(http.StatusInternalServerError)
	})
	for _, coding := range codings {
		resp, body := get(t, srv.URL, coding)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != coding {
			t.Errorf("%s: status %d, Content-Encoding %q: want 200, %s", coding, resp.StatusCode, resp.Header.Get("Content-Encoding"), coding)
		}
		testutil.Decompress(t, coding, body)
	}
}

// delegationsLike is a page of n rows shaped as the gateway's delegations:
// 64-hex ids drawn from a few parties and nodes, pseudo-random amounts.
func delegationsLike(n int) []byte {
	x := uint64(88172645463325252)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	id := func(seed uint64) string {
		return fmt.Sprintf("%016x%016x%016x%016x", seed*0x9e3779b97f4a7c15, seed*0xbf58476d1ce4e5b9, seed*0x94d049bb133111eb, seed+1)
	}
	var b bytes.Buffer
	b.WriteString(`{"data":{"delegations":{"edges":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"node":{"party":{"id":"%s"},"nodeId":"%s","amount":"%d","epochSeq":"%d"}}`,
			id(next()%40), id(1000+next()%12), next()%1_000_000_000_000, 1000+i/20)
	}
	b.WriteString(`]}}}`)
	return b.Bytes()
}

// TestLargeBodyIsNotCopiedWhole: a response written in one piece, as the
// gateway writes its responses, is not copied into a buffer of its size
// on its way to the encoder (a middleware that holds what it is given
// until it has decided to compress would: CAFxX/httpcompression does,
// BENCHMARKS.md, Compression).
func TestLargeBodyIsNotCopiedWhole(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops encoders at random")
	}
	body := delegationsLike(4000) // about 0.6 MB
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	}), Options{Level: 1, MinBytes: 1024})
	for _, coding := range codings {
		req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
		req.Header.Set("Accept-Encoding", coding)
		serveOnce := func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Header().Get("Content-Encoding") != coding {
				t.Fatalf("%s: not compressed", coding)
			}
		}
		serveOnce() // the pools filled
		// The least any of a few responses allocates: a copy of the body
		// is in every one, while a pooled encoder is missed now and then
		// (a GC empties the pools; a goroutine moved to another P does
		// not see what it put in its old P's private slot), and the
		// encoder made anew then weighs 250 kB. Over 5 responses
		// together, such misses failed 1 run in 5 under -count.
		var before, after runtime.MemStats
		least := uint64(math.MaxUint64)
		for range 5 {
			runtime.ReadMemStats(&before)
			serveOnce()
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		// The recorder keeps the compressed body (tens of kB); a copy of
		// the body would be 0.6 MB a response.
		if least > uint64(len(body)/4) {
			t.Errorf("%s: %d bytes allocated by each of 5 %d-byte responses at least: the body is copied", coding, least, len(body))
		}
	}
}
