package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// directPOST is the POST transport (transport_http.go), with one thing
// more: the data the direct executor wrote is not encoded a second time.
// Encoding the response with json.Marshal validates and compacts the data
// (already compact, valid JSON) byte by byte: a tenth of the request's CPU
// for a large page. Here the executor hands its data to the transport and
// puts a marker in the response instead; the writer puts the data in the
// marker's place, escaped as json.Marshal would have escaped it (<, >, &,
// U+2028, U+2029), so the bytes on the wire are the same as before. It
// also decodes the request body itself when it can (transport_body.go).
type directPOST struct{}

var _ graphql.Transport = directPOST{}

// Supports accepts POST requests: guardRequest, in front, has refused
// upgrades and every body that is not application/json, so the type is
// not parsed a second time here.
func (directPOST) Supports(r *http.Request) bool { return r.Method == http.MethodPost }

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
func (directPOST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	s := &splice{}
	sw := &spliceWriter{ResponseWriter: w, s: s}
	postDo(sw, r.WithContext(context.WithValue(r.Context(), spliceKey{}, s)), exec)
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
//
// It looks for each of the four bytes that can start an escape with
// bytes.IndexByte (vector instructions), keeping the next occurrence of
// each: every byte of b is looked at once per special byte, and a
// response with none of them, the usual case, costs four fast scans and a
// copy.
func appendHTMLEscaped(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	var next [len(htmlSpecial)]int
	for k, c := range htmlSpecial {
		next[k] = indexFrom(b, 0, c)
	}
	start := 0
	for {
		k := 0
		for j := 1; j < len(next); j++ {
			if next[j] < next[k] {
				k = j
			}
		}
		i := next[k]
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c != 0xE2:
			dst = append(dst, b[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8:
			// U+2028 and U+2029
			dst = append(dst, b[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[b[i+2]&0xF])
			start = i + 3
		}
		next[k] = indexFrom(b, i+1, htmlSpecial[k])
	}
	return append(dst, b[start:]...)
}

// htmlSpecial are the bytes an HTML escape starts with: '<', '>', '&',
// and the first byte of U+2028 and U+2029.
var htmlSpecial = [...]byte{'<', '>', '&', 0xE2}

// indexFrom is the index of the first c in b at or after from, or len(b).
func indexFrom(b []byte, from int, c byte) int {
	if j := bytes.IndexByte(b[from:], c); j >= 0 {
		return from + j
	}
	return len(b)
}
