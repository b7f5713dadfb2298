package transport

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/upstream"
)

// HTTP caching of queries sent with GET (README, HTTP caching). A GET is a
// URL that browsers and CDNs may keep; how long its answer stays true
// depends on the upstream answers it was made of (upstream.CacheKind). The
// chain has instant finality: committed history never changes, while the
// explorer's newest page and the data node's state change with the next
// block, about a second later.
//
//   - Every request records the answers its upstream calls return, and
//     the shared asset cache's hits as recent data-node answers
//     (graph.ResponseAnswers).
//   - Once a GET's one JSON result is encoded (getTransport, and
//     streamTransport when it answers in JSON), httpCaching derives its
//     Cache-Control from them, and an ETag from its bytes.
//   - conditionalGET, around the whole handler and the compression inside
//     it, answers If-None-Match with 304 Not Modified, comparing the ETag
//     of the response as sent (compressed or not).
//
// POST responses are left as they were: no Cache-Control, no ETag
// (responses to POST are not cached). Streams keep their no-cache.

// DefaultCacheMaxAge is how long a GET response made of answers that hold
// until the next block may be cached: about a block.
const DefaultCacheMaxAge = time.Second

// Cache-Control values.
const (
	// cacheControlImmutable: every part is committed history (a year,
	// the customary longest lifetime; immutable: browsers do not
	// revalidate it on reload).
	cacheControlImmutable = "public, max-age=31536000, immutable"
	// cacheControlRevalidate: may be stored, but not served again without
	// asking (If-None-Match, which the ETag makes cheap).
	cacheControlRevalidate = "public, no-cache"
	// cacheControlNoStore: never kept (errors, answers that may not be
	// served again, request errors).
	cacheControlNoStore = "no-store"
)

// headerNoStore is shared by every response that is not cached; length and
// capacity 1, as the values in accept.go.
var headerNoStore = []string{cacheControlNoStore}

// httpCaching derives the caching headers of GET responses.
type httpCaching struct {
	// maxAge is how long a response made of answers that hold until the
	// next block may be cached, counted from its oldest such answer; 0 or
	// less: never served without revalidation.
	maxAge time.Duration
	// ephemeralCursors: the cursors are signed with a key of this process
	// alone (graph.RandomCursorKeys), so no response carrying them is true for
	// ever: a restart makes them fail. Committed history is then cached as
	// a block-bound response is.
	ephemeralCursors bool
}

// cacheControl is the Cache-Control of a GET response whose operation is
// opCtx, made of a (errs: the response has errors), at now.
//
//   - errors, or any answer that may not be served again: no-store;
//   - every answer committed history (or no answer at all): a year,
//     immutable;
//   - otherwise: maxAge less the age of the oldest answer that holds until
//     the next block, in whole seconds (HTTP's unit), rounded to the
//     nearest; under half a second left, or an answer of unknown age:
//     stored but revalidated (no-cache).
//
// Introspection (the schema, which changes with a deployment) counts as an
// answer that holds until the next block, taken now; so does committed
// history when the cursors are the process's own (ephemeralCursors).
func (c *httpCaching) cacheControl(a graph.Answers, opCtx *graphql.OperationContext, errs bool, now time.Time) string {
	kind := a.Kind
	if !a.Seen {
		// No upstream answer: judged by what it used, nothing that can
		// change (__typename, a party's id).
		kind = upstream.CacheImmutable
	}
	if errs || kind == upstream.CacheNone {
		return cacheControlNoStore
	}
	if kind > upstream.CacheUntilNextBlock && (c.ephemeralCursors || selectsSchema(opCtx)) {
		kind = upstream.CacheUntilNextBlock
	}
	if kind == upstream.CacheImmutable {
		return cacheControlImmutable
	}
	if a.Undated || c.maxAge <= 0 {
		return cacheControlRevalidate
	}
	left := c.maxAge
	if !a.Oldest.IsZero() {
		left -= max(now.Sub(a.Oldest), 0)
	}
	seconds := (left + time.Second/2) / time.Second
	if left <= 0 || seconds < 1 {
		return cacheControlRevalidate
	}
	return "public, max-age=" + strconv.FormatInt(int64(seconds), 10)
}

// selectsSchema reports whether the operation selects __schema or __type
// (introspection).
func selectsSchema(opCtx *graphql.OperationContext) bool {
	if opCtx == nil || opCtx.Operation == nil {
		return false
	}
	for _, f := range graphql.CollectFields(opCtx, opCtx.Operation.SelectionSet, []string{"Query"}) {
		if f.Name == "__schema" || f.Name == "__type" {
			return true
		}
	}
	return false
}

// set sets the caching headers of a GET response whose one result, of
// operation opCtx, is body (errs: it has errors): Cache-Control, and an
// ETag unless it is no-store. ctx is the request's.
func (c *httpCaching) set(ctx context.Context, h http.Header, opCtx *graphql.OperationContext, body []byte, errs bool) {
	cc := cacheControlNoStore
	if a, ok := graph.ResponseAnswers(ctx); c != nil && ok {
		cc = c.cacheControl(a, opCtx, errs, time.Now())
	}
	if cc == cacheControlNoStore {
		h["Cache-Control"] = headerNoStore
		delete(h, "Etag")
		return
	}
	h.Set("Cache-Control", cc)
	h.Set("Etag", entityTag(h.Get("Content-Type"), body))
}

// noStore marks a GET response that is not cached (a request error, a
// refusal): no-store.
func noStore(h http.Header) { h["Cache-Control"] = headerNoStore }

// entityTag is a strong ETag of a response: the first 128 bits of the
// SHA-256 of its Content-Type and body, in base64url, quoted. The type is
// hashed with the body since both types of Accept answer the same bytes,
// and a cache holding both must tell them apart.
func entityTag(contentType string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(contentType))
	h.Write([]byte{0})
	h.Write(body)
	var sum [sha256.Size]byte
	const n = 16
	out := make([]byte, 0, 2+base64.RawURLEncoding.EncodedLen(n))
	out = append(out, '"')
	out = base64.RawURLEncoding.AppendEncode(out, h.Sum(sum[:0])[:n])
	return string(append(out, '"'))
}

// conditionalGET answers a GET's If-None-Match when the response carries
// an ETag, that is when it may be cached: a 200 whose ETag matches one
// the request lists (weak comparison: W/"x" matches "x"), or any ETag for
// *, becomes 304 Not Modified with no body and the same Cache-Control,
// ETag and Vary. It looks at the response as it leaves next, after
// compression, whose ETag carries the coding (httpcompress), so the tags
// compared are those the client holds. Other requests, and responses
// without an ETag, pass as they are.
func conditionalGET(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tags := r.Header["If-None-Match"]
		if r.Method != http.MethodGet || len(tags) == 0 || r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r) // an upgrade needs the connection's own writer
			return
		}
		next.ServeHTTP(&conditionalWriter{ResponseWriter: w, ifNoneMatch: tags}, r)
	})
}

// conditionalWriter turns a 200 whose ETag the request's If-None-Match
// matches into a 304.
type conditionalWriter struct {
	http.ResponseWriter
	ifNoneMatch []string
	// started: the status is written; notModified: it was 304, and the
	// body is dropped.
	started, notModified bool
}

func (w *conditionalWriter) WriteHeader(code int) {
	if w.started || (code >= 100 && code < 200) {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.started = true
	h := w.Header()
	if etag := h.Get("Etag"); code == http.StatusOK && etag != "" && noneMatchFails(w.ifNoneMatch, etag) {
		w.notModified = true
		code = http.StatusNotModified
		// A 304 carries the metadata that guides caches (validator,
		// Cache-Control, Vary), not the body's.
		for _, k := range [...]string{"Content-Type", "Content-Length", "Content-Encoding"} {
			delete(h, k)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *conditionalWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if w.notModified {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *conditionalWriter) Flush() {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.notModified {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer (its
// deadlines).
func (w *conditionalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// noneMatchFails reports whether the If-None-Match field values list etag,
// or are "*": the condition is false, and a GET answers 304. Entity tags
// compare weakly (their opaque parts); a malformed member is skipped.
func noneMatchFails(values []string, etag string) bool {
	opaque := strings.TrimPrefix(etag, "W/")
	for _, v := range values {
		for rest := v; ; {
			rest = strings.TrimLeft(rest, " \t,")
			if rest == "" {
				break
			}
			if rest[0] == '*' {
				return true
			}
			rest = strings.TrimPrefix(rest, "W/")
			if rest == "" {
				break
			}
			if rest[0] != '"' {
				// Not an entity tag: skip to the next member.
				i := strings.IndexByte(rest, ',')
				if i < 0 {
					break
				}
				rest = rest[i:]
				continue
			}
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				break
			}
			if tag := rest[:end+2]; tag == opaque {
				return true
			}
			rest = rest[end+2:]
		}
	}
	return false
}
