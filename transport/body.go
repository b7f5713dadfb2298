package transport

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/internal/jsonscan"
	"github.com/tradenet/gateway/internal/swar"
)

// Decoding the POST body. gqlgen's POST transport decodes it with
// encoding/json's Decoder, which scans the whole body byte by byte before
// decoding it: for the query text of a large explorer query (11 kB) a
// tenth of a millisecond, as much as the rest of the request handling.
// fastParams decodes the bodies clients send, to the same values, with
// the query text unquoted in place. Any other body is decoded by
// encoding/json, as gqlgen's transport decodes it, so every decoding error
// is encoding/json's.

// fastParams decodes body as encoding/json's Decoder (numbers as
// json.Number) decodes it into graphql.RawParams, when body is one JSON
// object whose members are "query", "operationName", "variables" and
// "extensions", and a persisted document's "documentId" or "doc_id"
// (documentRef, applied to p), each at most once, the keys written
// plainly, with only whitespace around it. ok is false for any other
// body, and for anything it leaves to encoding/json: a \u escape or
// invalid UTF-8 in a string, a syntax error, document ids that disagree.
func fastParams(body []byte) (p graphql.RawParams, ok bool) {
	i := jsonscan.SkipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return p, false
	}
	i = jsonscan.SkipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return p, jsonscan.SkipSpace(body, i+1) == len(body)
	}
	var seen [6]bool
	var ref documentRef
	for {
		key, next, ok := plainKey(body, i)
		if !ok {
			return p, false
		}
		i = jsonscan.SkipSpace(body, next)
		if i >= len(body) || body[i] != ':' {
			return p, false
		}
		i = jsonscan.SkipSpace(body, i+1)
		var member int
		switch string(key) {
		case "query":
			member = 0
			p.Query, i, ok = queryTexts.read(body, i)
		case "operationName":
			member = 1
			p.OperationName, i, ok = stringOrNull(body, i)
		case "variables":
			member = 2
			p.Variables, i, ok = objectOrNull(body, i)
		case "extensions":
			member = 3
			p.Extensions, i, ok = objectOrNull(body, i)
		case "documentId":
			member = 4
			ref.DocumentID, i, ok = stringOrNull(body, i)
		case "doc_id":
			member = 5
			ref.DocID, i, ok = stringOrNull(body, i)
		default:
			return p, false
		}
		if !ok || seen[member] {
			return p, false
		}
		seen[member] = true
		i = jsonscan.SkipSpace(body, i)
		if i >= len(body) {
			return p, false
		}
		switch body[i] {
		case ',':
			i = jsonscan.SkipSpace(body, i+1)
		case '}':
			return p, jsonscan.SkipSpace(body, i+1) == len(body) && ref.apply(&p) == ""
		default:
			return p, false
		}
	}
}

// plainKey reads the key at b[i], a string of printable ASCII without
// escapes.
func plainKey(b []byte, i int) (key []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// unicodeEscape decodes the \uXXXX escape at the start of b as
// encoding/json does: a surrogate pair written as two escapes is one
// rune; a surrogate alone is U+FFFD (and the escape after it, if any, is
// read on its own). size is the bytes read, 0 if b starts with no valid
// escape.
func unicodeEscape(b []byte) (r rune, size int) {
	r = hex4(b)
	if r < 0 {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if dec := utf16.DecodeRune(r, hex4(b[6:])); dec != unicode.ReplacementChar {
			return dec, 12
		}
		r = unicode.ReplacementChar
	}
	return r, 6
}

// hex4 reads the \uXXXX at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// stringOrNull reads the string or null at b[i] (null is "", as
// encoding/json leaves a string it decodes null into).
func stringOrNull(b []byte, i int) (string, int, bool) {
	if bytes.HasPrefix(b[i:], []byte("null")) {
		return "", i + 4, true
	}
	return unquote(b, i)
}

// The query texts of recent bodies, by their bytes as sent. A client sends
// the same few documents again and again: a text seen before is found by
// its bytes (one pass to find its end, one to hash it) instead of being
// unquoted and copied again, and every request of it gets the same
// string, which the executor's document cache then finds by its address
// (graph's documentCache) without reading it again.
var queryTexts = newTextCache(textCacheEntries, textCacheBytes)

// Bounds of queryTexts: how many texts, and how many bytes of them and
// their quoted forms together. A text shorter than minCachedText is
// unquoted each time: it costs less than its entry.
const (
	textCacheEntries = 1000
	textCacheBytes   = 32 << 20
	minCachedText    = 512
)

// textCache maps quoted strings (the bytes between the quotes, as sent)
// to their unquoted text, the oldest evicted first beyond its bounds. It
// is safe for concurrent use.
type textCache struct {
	mu      sync.Mutex
	texts   map[string]string
	order   []string // keys, oldest first
	size    int      // bytes of keys and texts
	entries int
	max     int
	// unquoted counts the texts unquoted (not found), for tests.
	unquoted atomic.Int64
}

// newTextCache keeps up to entries texts, and bytes of them and their
// quoted forms together.
func newTextCache(entries, bytes int) *textCache {
	return &textCache{texts: map[string]string{}, entries: entries, max: bytes}
}

// read reads the string or null at b[i] as stringOrNull does, from the
// cache when its bytes were read before.
func (c *textCache) read(b []byte, i int) (string, int, bool) {
	end := stringEnd(b, i)
	if end < 0 || end-i-1 < minCachedText {
		return stringOrNull(b, i)
	}
	raw := b[i+1 : end]
	c.mu.Lock()
	text, ok := c.texts[string(raw)]
	c.mu.Unlock()
	if ok {
		return text, end + 1, true
	}
	c.unquoted.Add(1)
	text, next, ok := unquote(b, i)
	if ok && next == end+1 {
		c.add(string(raw), text)
	}
	return text, next, ok
}

// unescaped returns a URL query value as url.QueryUnescape reads raw,
// from the cache when raw was read before.
func (c *textCache) unescaped(raw string) (string, error) {
	if len(raw) < minCachedText {
		return url.QueryUnescape(raw)
	}
	c.mu.Lock()
	text, ok := c.texts[raw]
	c.mu.Unlock()
	if ok {
		return text, nil
	}
	c.unquoted.Add(1)
	text, err := url.QueryUnescape(raw)
	if err == nil {
		c.add(raw, text)
	}
	return text, err
}

// add keeps the text of key, evicting the oldest texts beyond the bounds.
func (c *textCache) add(key, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.texts[key]; ok {
		return
	}
	c.texts[key] = text
	c.order = append(c.order, key)
	c.size += len(key) + len(text)
	for len(c.order) > c.entries || c.size > c.max {
		old := c.order[0]
		c.order[0] = ""
		c.order = c.order[1:]
		c.size -= len(old) + len(c.texts[old])
		delete(c.texts, old)
	}
	if cap(c.order) > 4*c.entries {
		c.order = append([]string(nil), c.order...) // let go of the evicted keys' slots
	}
}

// len is the number of texts kept and their bytes (quoted and not).
func (c *textCache) len() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.texts), c.size
}

// stringEnd returns the index of the quote that ends the JSON string at
// b[i] == '"' (the first one not escaped: preceded by an even number of
// backslashes), or -1 when b[i] starts no string or it has no end. It
// checks nothing else: unquote does, the first time.
func stringEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(b); {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1
		}
		q += j
		n := 0
		for k := q - 1; k > i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		j = q + 1
	}
	return -1
}

// unquote reads the JSON string at b[i] == '"' as encoding/json decodes
// it, leaving to it (ok false) invalid UTF-8, which it replaces, and
// refusing what it refuses (a control character, a bad escape, no end).
//
// It reads the text once: eight bytes at a time while none is special
// (a quote, a backslash, a control character, a byte of a multi-byte
// rune), and an escaped string is built in one buffer of its final
// capacity, which becomes the string without another copy.
func unquote(b []byte, i int) (s string, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	var out []byte // the string so far, once it has an escape
	start := i + 1
	grow := func() {
		if out == nil {
			out = make([]byte, 0, len(b)-start) // room for the rest: no regrowth
		}
	}
	for j := start; j < len(b); {
		for j+8 <= len(b) {
			x := swar.Load(b, j)
			if x&highBits != 0 || swar.HasLess(x, 0x20) || swar.HasByte(x, '"') || swar.HasByte(x, '\\') {
				break
			}
			j += 8
		}
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			if out == nil {
				return string(b[start:j]), j + 1, true
			}
			out = append(out, b[start:j]...)
			// out is this function's alone, and written no more.
			return unsafe.String(unsafe.SliceData(out), len(out)), j + 1, true
		case c == '\\':
			if j+1 >= len(b) {
				return "", 0, false
			}
			var r byte
			switch b[j+1] {
			case '"', '\\', '/':
				r = b[j+1]
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				rn, size := unicodeEscape(b[j:])
				if size == 0 {
					return "", 0, false
				}
				grow()
				out = utf8.AppendRune(append(out, b[start:j]...), rn)
				j += size
				start = j
				continue
			default:
				return "", 0, false
			}
			grow()
			out = append(append(out, b[start:j]...), r)
			j += 2
			start = j
		case c < 0x20:
			return "", 0, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return "", 0, false
			}
			j += size
		default:
			j++
		}
	}
	return "", 0, false
}

// highBits are the high bits of a uint64's eight bytes: set in a byte of
// a multi-byte UTF-8 rune.
const highBits = 0x8080808080808080

// objectOrNull decodes the object or null at b[i] as encoding/json does
// into a map[string]any, numbers as json.Number.
func objectOrNull(b []byte, i int) (map[string]any, int, bool) {
	if bytes.HasPrefix(b[i:], []byte("null")) {
		return nil, i + 4, true
	}
	if i >= len(b) || b[i] != '{' {
		return nil, 0, false
	}
	d := json.NewDecoder(bytes.NewReader(b[i:]))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, 0, false
	}
	return m, i + int(d.InputOffset()), true
}
