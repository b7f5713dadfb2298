package transport

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/graph"
)

// directPOST is the POST transport (http.go), with one thing more: the
// data the direct executor wrote is not encoded a second time. Encoding
// the response with json.Marshal validates and compacts the data (already
// compact, valid JSON) byte by byte: a tenth of the request's CPU for a
// large page. Here the executor hands its data to the transport
// (graph.WithSplice) and puts a marker in the response instead
// (graph.SpliceMarker); the writer puts the data in the marker's place,
// escaped as json.Marshal would have escaped it (<, >, &, U+2028, U+2029),
// so the bytes on the wire are the same as before. It also decodes the
// request body itself when it can (body.go).
type directPOST struct{}

var _ graphql.Transport = directPOST{}

// Supports accepts POST requests: guardRequest, in front, has refused
// upgrades and every body that is not application/json, so the type is
// not parsed a second time here.
func (directPOST) Supports(r *http.Request) bool { return r.Method == http.MethodPost }

// spliceNeedle is where the data goes: the marker the direct executor
// returns as the response's data.
var spliceNeedle = append([]byte(`"data":`), graph.SpliceMarker...)

// Do implements graphql.Transport.
func (directPOST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx, s := graph.WithSplice(r.Context())
	sw := &spliceWriter{ResponseWriter: w, s: s}
	postDo(sw, r.WithContext(ctx), exec)
}

type spliceWriter struct {
	http.ResponseWriter
	s *graph.Splice
}

func (w *spliceWriter) Write(b []byte) (int, error) {
	if !w.s.Pending() {
		return w.ResponseWriter.Write(b)
	}
	i := bytes.Index(b, spliceNeedle)
	if i < 0 {
		return w.ResponseWriter.Write(b)
	}
	size := w.s.Size()
	buf := spliceBuffers.Get().(*[]byte)
	if need := len(b) + size + size/32; cap(*buf) < need {
		*buf = make([]byte, 0, need) // at once, rather than by doubling
	}
	out := append((*buf)[:0], b[:i+len(`"data":`)]...)
	out = w.s.AppendTo(out)
	out = append(out, b[i+len(spliceNeedle):]...)
	_, err := w.ResponseWriter.Write(out)
	if cap(out) <= maxPooledSplice {
		*buf = out[:0]
		spliceBuffers.Put(buf)
	}
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// spliceBuffers hold responses being written; ones larger than
// maxPooledSplice are left to the garbage collector.
var spliceBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledSplice = 8 << 20
