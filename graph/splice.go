package graph

import (
	"bytes"
	"context"
	"encoding/json"
)

// The direct executor's data, handed to the POST transport without being
// encoded a second time. Encoding the response with json.Marshal validates
// and compacts the data (already compact, valid JSON) byte by byte: a
// tenth of the request's CPU for a large page. So the transport puts a
// Splice in the request's context (WithSplice); the direct executor (Exec,
// fastexec.go) hands its data to it and returns SpliceMarker as the
// response's data instead; the transport writes the data in the marker's
// place, escaped as json.Marshal would have escaped it (<, >, &, U+2028,
// U+2029), so the bytes on the wire are the same as without the splice.

// SpliceMarker is the data a response carries when the real data waits in
// its request's Splice: a number no Go value marshals to, so it cannot be
// anything else.
var SpliceMarker = json.RawMessage("1e999")

// Splice holds the data the direct executor wrote for one request, until
// the transport writes it. It is for the request's goroutines, one at a
// time.
type Splice struct {
	data escapedAppender
}

// escapedAppender appends a response's data, escaped for HTML as
// json.Marshal would (directData).
type escapedAppender interface {
	appendEscaped(dst []byte) []byte
	size() int
}

// WithSplice returns ctx carrying a new, empty Splice, and the Splice: the
// direct executor hands the data of the operation run under ctx to it.
func WithSplice(ctx context.Context) (context.Context, *Splice) {
	s := &Splice{}
	return withValue(ctx, s), s
}

// spliceFor is the request's splice, or nil when its transport set none.
func spliceFor(ctx context.Context) *Splice {
	return valueOf[Splice](ctx)
}

// Pending reports data waiting to be written.
func (s *Splice) Pending() bool { return s.data != nil }

// Size is the length of the pending data before escaping.
func (s *Splice) Size() int { return s.data.size() }

// AppendTo appends the pending data to dst, escaped for HTML as
// json.Marshal escapes a json.RawMessage, and empties the splice (the
// data's buffers go back to their pool).
func (s *Splice) AppendTo(dst []byte) []byte {
	data := s.data
	s.data = nil
	return data.appendEscaped(dst)
}

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
