// Package httpcompress configures the gateway's response compression:
// klauspost/compress's gzhttp (negotiation, the size threshold, Vary, the
// response writer) over the same library's zstd and gzip encoders, zstd
// (RFC 8878) for clients that accept it, as current Chrome, Edge and
// Firefox do, else gzip. It also tells the handlers that store their
// bodies gzipped whether a client accepts gzip (AcceptsGzip).
//
// The gateway's JSON compresses well. On the benchmark machine, at the
// fastest levels, 50 transactions with every command field (135 kB)
// become 27 kB of zstd in 0.27 ms or 32 kB of gzip in 0.33 ms, and a page
// of 1,000 delegations (452 kB) 29 kB of zstd in 0.37 ms or 46 kB of gzip
// in 0.44 ms; zstd also decodes several times faster (2.3 GB/s in Go, against
// 0.3 GB/s for compress/gzip). Bodies smaller than a threshold go out as
// they are: below a packet or two, compressing saves no round trip.
package httpcompress

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzhttp/writer"
	"github.com/klauspost/compress/gzhttp/writer/gzkp"
	"github.com/klauspost/compress/gzhttp/writer/zstdkp"
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

// Handler compresses next's responses for clients that accept zstd or
// gzip: the coding the client weighs highest, zstd on a tie. A response
// is compressed once its body reaches o.MinBytes, unless it already has a
// Content-Encoding, is partial content (a Content-Range), or has a
// Content-Type that does not compress (compressible; one left unset is
// sniffed from the body first). Every response varies by Accept-Encoding;
// HEAD requests are left alone. A compressed response's ETag gets the
// coding's suffix ("x" becomes "x-gzip" or "x-zstd").
//
// The compressed bytes collect in memory and go to the connection when
// the response ends, at a flush, or once maxBuffered of them have
// collected (collector): an encoder (about 1 MB of state) is held while it
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
	wrap, err := gzhttp.NewWrapper(
		gzhttp.MinSize(o.MinBytes),
		gzhttp.ContentTypeFilter(compressible),
		gzhttp.CompressionLevel(o.Level),
		gzhttp.Implementation(writer.GzipWriterFactory{Levels: gzkp.Levels, New: func(w io.Writer, level int) writer.GzipWriter {
			return collect(Gzip, w, o.Observe, func(out io.Writer) encoder { return gzkp.NewWriter(out, level) })
		}}),
		gzhttp.ZstdCompressionLevel(int(zstdLevel(o.Level))),
		// A strong ETag names one representation: a compressed body gets
		// its own, the coding added inside the quotes ("…-gzip",
		// "…-zstd"; gzhttp swaps the one for the other), so that a 304
		// compared with it is about the bytes the client holds.
		gzhttp.SuffixETag("-gzip"),
		// zstdkp's encoders: one goroutine each, so that each response is
		// compressed on its handler's goroutine, and a 128 kB window (a 1 MB
		// one makes the benchmark's pages no smaller).
		gzhttp.ZstdImplementation(writer.ZstdWriterFactory{Levels: zstdkp.Levels, New: func(w io.Writer, level int) writer.ZstdWriter {
			return collect(Zstd, w, o.Observe, func(out io.Writer) encoder { return zstdkp.NewWriter(out, level) })
		}}),
	)
	if err != nil {
		panic("httpcompress: " + err.Error()) // MinBytes < 0
	}
	return wrap(next)
}

// compressible reports whether a media type is worth compressing: text
// and JSON, XML and JavaScript of every kind, but not event streams,
// which their clients read event by event.
func compressible(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "text/event-stream":
		return false
	case strings.HasPrefix(mt, "text/"):
		return true
	case strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/javascript", "application/xml", "application/graphql":
		return true
	}
	return false
}

// maxBuffered is the most compressed bytes held before they are sent: a
// response larger than this compressed (some megabytes as written) is
// sent as it is compressed, holding its encoder until it ends.
const maxBuffered = 256 << 10

// maxPooledOut is the largest output buffer kept for another response.
const maxPooledOut = 1 << 20

// encodersInUse counts the encoders taken and not yet given back (tests
// check that a response being sent holds none).
var encodersInUse atomic.Int64

// encoder is what gzhttp's writers of either coding do.
type encoder interface {
	Write(p []byte) (int, error)
	Flush() error
	Close() error
}

// collector is one response's writer: plain bytes in, to a pooled
// encoder; compressed bytes out, collected in out and sent to the
// response when it ends, is flushed, or reaches maxBuffered. The encoder
// goes back to its pool before the last bytes are sent, so that a slow
// client holds only the compressed bytes.
type collector struct {
	coding  string
	parent  io.Writer // the response
	observe func(coding string, in, out int64)
	enc     encoder
	out     bytes.Buffer // compressed, not yet sent
	in      int64        // bytes given to the encoder
	sent    int64        // compressed bytes sent
}

var collectors = sync.Pool{New: func() any { return new(collector) }}

// collect returns a collector for a response (parent) whose encoder
// newEncoder makes.
func collect(coding string, parent io.Writer, observe func(string, int64, int64), newEncoder func(io.Writer) encoder) *collector {
	w := collectors.Get().(*collector)
	w.coding, w.parent, w.observe, w.in, w.sent = coding, parent, observe, 0, 0
	w.out.Reset()
	w.enc = newEncoder((*sink)(w))
	encodersInUse.Add(1)
	return w
}

func (w *collector) Write(p []byte) (int, error) {
	w.in += int64(len(p))
	return w.enc.Write(p)
}

// Flush sends what is compressed so far (gzhttp then flushes the
// connection).
func (w *collector) Flush() error {
	if err := w.enc.Flush(); err != nil {
		return err
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
		if w.observe != nil {
			w.observe(w.coding, w.in, w.sent+int64(w.out.Len()))
		}
		err = w.send()
	}
	w.parent, w.observe = nil, nil
	if w.out.Cap() <= maxPooledOut {
		collectors.Put(w)
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
