// Package httpcompress configures the gateway's response compression:
// github.com/CAFxX/httpcompression (negotiation, the size threshold, Vary,
// the response writer) over klauspost/compress's zstd and gzip encoders,
// zstd (RFC 8878) for clients that accept it, as current Chrome, Edge and
// Firefox do, else gzip. It also tells the handlers that store their
// bodies gzipped whether a client accepts gzip (AcceptsGzip).
//
// The gateway's JSON compresses well. On the benchmark machine, at the
// fastest levels, 50 transactions with every command field (135 kB)
// become 26 kB of zstd in 0.20 ms or 31 kB of gzip in 0.30 ms, and a page
// of 1,000 delegations (442 kB) 19.5 kB of zstd or 31 kB of gzip, in
// 0.32 ms either way; zstd also decodes several times faster (2.3 GB/s in
// Go, against 0.3 GB/s for compress/gzip). Bodies smaller than a threshold
// go out as they are: below a packet or two, compressing saves no round
// trip.
package httpcompress

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/CAFxX/httpcompression"
	cgzip "github.com/CAFxX/httpcompression/contrib/klauspost/gzip"
	czstd "github.com/CAFxX/httpcompression/contrib/klauspost/zstd"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// The content codings Handler writes.
const (
	Zstd = "zstd"
	Gzip = "gzip"
)

// DefaultLevel and DefaultMinBytes are the gateway's defaults.
const (
	DefaultLevel    = gzip.BestSpeed
	DefaultMinBytes = 1024
)

// Options configure Handler.
type Options struct {
	// Level is 1 (fastest) to 9 (smallest); 0 leaves every response as it
	// is. It is gzip's level as it stands; zstd's speeds follow it: 1–2
	// fastest, 3–5 default, 6–8 better, 9 best compression.
	Level int
	// MinBytes is the smallest body compressed; smaller ones are sent as
	// they are.
	MinBytes int
	// Observe, if set, is called for each compressed response, before its
	// last bytes are sent, with its coding and its body's size before and
	// after compression.
	Observe func(coding string, in, out int64)
}

// compressible are the media types compressed (any parameters): what the
// routes behind Handler send. Others (event streams, which their clients
// read event by event; images; archives) go out as they are.
var compressible = []string{
	"application/json",
	"application/graphql-response+json",
	"text/plain",
}

// zstdLevel maps a level of 1–9 to one of zstd's speeds.
func zstdLevel(level int) zstd.EncoderLevel {
	switch {
	case level <= 2:
		return zstd.SpeedFastest
	case level <= 5:
		return zstd.SpeedDefault
	case level <= 8:
		return zstd.SpeedBetterCompression
	}
	return zstd.SpeedBestCompression
}

// zstdWindow is the largest window the zstd encoders use: browsers decode
// windows of up to 8 MB (RFC 8878 §3.1.1.1.2's recommendation for HTTP),
// and a smaller one keeps each pooled encoder's memory small.
const zstdWindow = 1 << 20

// Handler compresses next's responses for clients that accept zstd or
// gzip: the coding the client weighs highest, zstd on a tie. A response
// is compressed once its body reaches o.MinBytes, unless it already has a
// Content-Encoding or its Content-Type is not one of compressible (one
// left unset is sniffed from the body first). Every response varies by
// Accept-Encoding.
//
// The compressed bytes collect in memory and go to the connection when
// the response ends, at a flush, or once maxBuffered of them have
// collected (collecting): an encoder (1–2 MB of state) is held while it
// compresses, not for as long as a slow client takes to receive the
// response.
//
// It panics if o.Level is outside 0–9 or o.MinBytes is negative.
func Handler(next http.Handler, o Options) http.Handler {
	if o.Level == 0 {
		return next
	}
	if o.Level < gzip.BestSpeed || o.Level > gzip.BestCompression {
		panic("httpcompress: level " + strconv.Itoa(o.Level) + " is outside 0–9")
	}
	// One goroutine per zstd encoder (the default is one per CPU), so that
	// each response is compressed on its handler's goroutine.
	zstdEncoders, err := czstd.New(zstd.WithEncoderLevel(zstdLevel(o.Level)), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(zstdWindow), zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic("httpcompress: zstd: " + err.Error()) // the options are valid
	}
	gzipEncoders, err := cgzip.New(cgzip.Options{Level: o.Level})
	if err != nil {
		panic("httpcompress: gzip: " + err.Error()) // the level is checked
	}
	adapter, err := httpcompression.Adapter(
		httpcompression.Prefer(httpcompression.PreferClient), // the client's weights first, then zstd
		httpcompression.MinSize(o.MinBytes),
		httpcompression.ContentTypes(compressible, false),
		httpcompression.ZstandardCompressor(&collecting{coding: Zstd, encoders: zstdEncoders, observe: o.Observe}),
		httpcompression.GzipCompressor(&collecting{coding: Gzip, encoders: gzipEncoders, observe: o.Observe}),
	)
	if err != nil {
		panic("httpcompress: " + err.Error())
	}
	decide := max(o.MinBytes, sniffLen)
	return adapter(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&deciding{ResponseWriter: w, decide: decide}, r)
	}))
}

// sniffLen is as much of a body as http.DetectContentType reads.
const sniffLen = 512

// deciding gives the library's writer a body's first bytes apart from
// the rest: the library copies what it is given into a buffer until it
// has decided whether to compress, so a response written whole (as the
// gateway writes its responses) would be copied whole, 135–450 kB for
// the benchmark's pages, allocated anew each time (BENCHMARKS.md,
// Compression). Given decide bytes first, it decides on those and the
// rest goes straight to the encoder.
type deciding struct {
	http.ResponseWriter
	decide, written int
}

func (w *deciding) Write(p []byte) (int, error) {
	if k := w.decide - w.written; k > 0 && len(p) > k {
		w.written = w.decide
		n, err := w.ResponseWriter.Write(p[:k])
		if err != nil {
			return n, err
		}
		m, err := w.ResponseWriter.Write(p[k:])
		return n + m, err
	}
	w.written += len(p)
	return w.ResponseWriter.Write(p)
}

// Flush and Unwrap reach the library's writer (http.Flusher,
// http.ResponseController).
func (w *deciding) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *deciding) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// maxBuffered is the most compressed bytes held before they are sent: a
// response larger than this compressed (some megabytes as written) is
// sent as it is compressed, holding its encoder until it ends.
const maxBuffered = 256 << 10

// maxPooledOut is the largest output buffer kept for another response.
const maxPooledOut = 1 << 20

// encodersInUse counts the encoders taken and not yet given back (tests
// check that a response being sent holds none).
var encodersInUse atomic.Int64

// collecting provides writers whose encoder's output collects in memory
// until the response ends, is flushed, or reaches maxBuffered; the
// encoder goes back to its pool before the last bytes are sent, so that
// a slow client holds only the compressed bytes.
type collecting struct {
	coding   string
	encoders httpcompression.CompressorProvider
	observe  func(coding string, in, out int64)
	writers  sync.Pool // of *collector
}

// Get implements httpcompression.CompressorProvider: parent is the
// response.
func (c *collecting) Get(parent io.Writer) io.WriteCloser {
	w, _ := c.writers.Get().(*collector)
	if w == nil {
		w = &collector{c: c}
	}
	w.parent, w.in, w.sent = parent, 0, 0
	w.out.Reset()
	w.enc = c.encoders.Get((*sink)(w))
	encodersInUse.Add(1)
	return w
}

// collector is one response's writer: plain bytes in, to the encoder;
// compressed bytes out, to out and then parent.
type collector struct {
	c      *collecting
	parent io.Writer
	enc    io.WriteCloser
	out    bytes.Buffer // compressed, not yet sent
	in     int64        // bytes given to the encoder
	sent   int64        // compressed bytes sent
}

func (w *collector) Write(p []byte) (int, error) {
	w.in += int64(len(p))
	return w.enc.Write(p)
}

// Flush sends what is compressed so far (the library then flushes the
// connection).
func (w *collector) Flush() error {
	if f, ok := w.enc.(httpcompression.Flusher); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	return w.send()
}

// Close ends the compressed stream, gives back the encoder, and sends
// the rest.
func (w *collector) Close() error {
	err := w.enc.Close() // back to its pool
	w.enc = nil
	encodersInUse.Add(-1)
	if err == nil {
		// Observed before the last bytes go: once they are sent, the
		// client may act on the response (scrape the metrics, say).
		if w.c.observe != nil {
			w.c.observe(w.c.coding, w.in, w.sent+int64(w.out.Len()))
		}
		err = w.send()
	}
	w.parent = nil
	if w.out.Cap() <= maxPooledOut {
		w.c.writers.Put(w)
	}
	return err
}

// send writes the compressed bytes collected so far to the response.
func (w *collector) send() error {
	if w.out.Len() == 0 {
		return nil
	}
	n, err := w.parent.Write(w.out.Bytes())
	w.sent += int64(n)
	w.out.Reset()
	return err
}

// sink is the encoder's output: into out, sent once maxBuffered have
// collected.
type sink collector

func (s *sink) Write(p []byte) (int, error) {
	w := (*collector)(s)
	w.out.Write(p)
	if w.out.Len() >= maxBuffered {
		if err := w.send(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// AcceptsGzip reports whether the Accept-Encoding values allow gzip
// (RFC 9110 §12.5.3), for handlers that have a body stored gzipped: gzip
// or x-gzip with a weight above 0, or, unlisted, "*" with one. A weight
// that does not parse counts as 0.
func AcceptsGzip(values []string) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			var at *float64
			switch coding = strings.TrimSpace(coding); {
			case strings.EqualFold(coding, Gzip), strings.EqualFold(coding, "x-gzip"):
				at = &gzipQ
			case coding == "*":
				at = &starQ
			default:
				continue
			}
			*at = max(*at, weight(params)) // listed twice: the higher weight
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// weight is the q parameter among an Accept-Encoding element's
// parameters: 1 if absent, 0 if it does not parse.
func weight(params string) float64 {
	q := 1.0
	for p := range strings.SplitSeq(params, ";") {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if err != nil || f < 0 || f > 1 {
				f = 0
			}
			q = f
		}
	}
	return q
}
