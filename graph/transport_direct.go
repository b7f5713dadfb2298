package graph

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// directPOST is gqlgen's POST transport, except that the data the direct
// executor wrote is not encoded a second time. gqlgen's transport
// json.Marshals the whole response, which validates and compacts the data
// (already compact, valid JSON) byte by byte: a tenth of the request's CPU
// for a large page. Here the executor hands its data to the transport and
// puts a marker in the response instead; the writer puts the data in the
// marker's place, escaped as json.Marshal would have escaped it (<, >, &,
// U+2028, U+2029), so the bytes on the wire are the same as before.
// Everything else (headers, status codes, errors, extensions) is gqlgen's.
type directPOST struct {
	transport.POST
}

// spliceMarker is the data the response carries instead of the real data:
// a number no Go value marshals to, so it cannot be anything else.
var spliceMarker = json.RawMessage("1e999")

var spliceNeedle = []byte(`"data":1e999`)

type splice struct {
	data escapedAppender
}

// escapedAppender appends a response's data, escaped for HTML as
// json.Marshal would (fxData).
type escapedAppender interface {
	appendEscaped(dst []byte) []byte
	size() int
}

type spliceKey struct{}

// spliceFor is the request's splice, or nil outside directPOST.
func spliceFor(ctx context.Context) *splice {
	s, _ := ctx.Value(spliceKey{}).(*splice)
	return s
}

// Do implements graphql.Transport.
func (t directPOST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	s := &splice{}
	t.POST.Do(&spliceWriter{ResponseWriter: w, s: s}, r.WithContext(context.WithValue(r.Context(), spliceKey{}, s)), exec)
}

type spliceWriter struct {
	http.ResponseWriter
	s *splice
}

func (w *spliceWriter) Write(b []byte) (int, error) {
	if w.s.data == nil {
		return w.ResponseWriter.Write(b)
	}
	i := bytes.Index(b, spliceNeedle)
	if i < 0 {
		return w.ResponseWriter.Write(b)
	}
	data := w.s.data
	w.s.data = nil
	buf := spliceBuffers.Get().(*[]byte)
	if need := len(b) + data.size() + data.size()/32; cap(*buf) < need {
		*buf = make([]byte, 0, need) // at once, rather than by doubling
	}
	out := append((*buf)[:0], b[:i+len(`"data":`)]...)
	out = data.appendEscaped(out)
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

// appendHTMLEscaped appends the JSON document b with the characters
// json.Marshal escapes for HTML replaced by their \u escapes (valid
// anywhere they can occur in JSON: inside strings).
func appendHTMLEscaped(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(b); i++ {
		// Eight bytes at a time while none of them can start an escape.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			if hasByte(x, '<') || hasByte(x, '>') || hasByte(x, '&') || hasByte(x, 0xE2) {
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, b[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8:
			// U+2028 and U+2029
			dst = append(dst, b[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[b[i+2]&0xF])
			i += 2
			start = i + 1
		}
	}
	return append(dst, b[start:]...)
}

// hasByte reports whether any byte of x is b (the classic test for a zero
// byte, applied to x with b's bits flipped: exact, no false positives).
func hasByte(x uint64, b byte) bool {
	y := x ^ (lsbs * uint64(b))
	return (y-lsbs)&^y&msbs != 0
}

// hasLess reports whether any byte of x is less than n (n <= 128).
func hasLess(x uint64, n byte) bool {
	return (x-lsbs*uint64(n))&^x&msbs != 0
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)
