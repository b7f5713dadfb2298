package transport

import (
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// streamTransport serves GET and POST requests whose Accept admits a
// streamed response (docs/transports.md):
//
//   - text/event-stream: graphql-sse's distinct connections mode, each
//     result a `next` event, then `complete`;
//   - multipart/mixed: incremental delivery for @defer (each payload a
//     part, deferSpec=20220824), and Apollo's multipart subscription
//     protocol for subscriptions (each event a part {"payload": …},
//     heartbeats {}).
//
// The form is chosen after the operation is parsed: an operation with one
// result (a query without an active @defer) is answered as any request,
// in JSON, when the client accepts JSON (urql and Apollo list both); a
// request error is answered as any request's, by Accept, when the client
// accepts JSON, and otherwise inside the stream it asked for. Among the
// stream forms the one the client weighs highest wins, the first listed
// on a tie.
//
// A GET answered in JSON carries the caching headers as getTransport's
// do (httpcache.go); streams are never cached (no-cache).
type streamTransport struct {
	cfg   SubscriptionConfig
	cache *httpCaching
}

var _ graphql.Transport = streamTransport{}

func (streamTransport) Supports(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodPost) &&
		r.Header.Get("Upgrade") == "" && preferredStream(r.Header.Get("Accept")) != streamNone
}

func (t streamTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	accept := r.Header.Get("Accept")
	media := negotiate(accept)
	kind := preferredStream(accept)
	setContentType(w.Header(), media) // until a stream sets its own
	if r.Method == http.MethodGet {
		noStore(w.Header()) // until a result says otherwise
	}
	ctx := r.Context()
	start := graphql.Now()
	params, ok := readParams(w, r, exec)
	if !ok {
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	op, fail := startOperation(ctx, exec, params)
	if fail != nil {
		t.fail(w, r, kind, media, fail)
		return
	}
	defer op.Close()
	if r.Method == http.MethodGet && op.Kind() == ast.Mutation {
		op.Close()
		w.Header().Set("Allow", "POST")
		writeRequestError(op.Context(), w, exec, http.StatusMethodNotAllowed, gqlerror.List{inputError("a mutation cannot be sent with GET: send it with POST")})
		return
	}
	if !op.Streams() && media != mediaNone {
		// One result: answered as any request.
		payload, ok := op.Next()
		if !ok {
			payload = internalErrorJSON
		}
		for _, more := op.Next(); more; _, more = op.Next() {
		}
		if r.Method == http.MethodGet {
			t.cache.set(ctx, w.Header(), op.opCtx, payload, !ok || op.errored)
		}
		_, _ = w.Write(payload)
		return
	}
	switch kind {
	case streamSSE:
		serveEventStream(w, op, t.cfg)
	case streamMultipart:
		serveMultipart(w, op, t.cfg, mediaParam(accept, contentTypeMultipart, "subscriptionSpec") != "" || op.Kind() == ast.Subscription)
	}
}

// fail answers a request error: as any request's when the client accepts
// JSON (or the request was not GraphQL at all), else in the stream.
func (t streamTransport) fail(w http.ResponseWriter, r *http.Request, kind streamKind, media mediaType, fail *requestFailure) {
	if media != mediaNone || fail.NotGraphQL {
		fail.write(w, media)
		return
	}
	sw := startStreamResponse(w, kind, t.cfg, mediaParam(r.Header.Get("Accept"), contentTypeMultipart, "subscriptionSpec") != "")
	if kind == streamSSE {
		_ = sw.write(sseEvent("next", fail.JSON()), sseComplete)
		return
	}
	if sw.subscriptionSpec {
		_ = sw.write(multipartOpen(multipartSubscriptionBoundary), multipartPart(multipartSubscriptionBoundary, wrapPayload(fail.JSON()), true))
		return
	}
	_ = sw.write(multipartOpen(multipartDeferBoundary), multipartPart(multipartDeferBoundary, fail.JSON(), true))
}

// Multipart boundaries: Apollo's clients read any; these are the ones its
// own servers send.
const (
	multipartDeferBoundary        = "-"
	multipartSubscriptionBoundary = "graphql"
)

// streamResponse is a stream's writer, with what its form needs.
type streamResponse struct {
	*streamWriter
	subscriptionSpec bool
}

// startStreamResponse writes the headers of a streamed response (status
// 200) and returns its writer.
func startStreamResponse(w http.ResponseWriter, kind streamKind, cfg SubscriptionConfig, subscriptionSpec bool) streamResponse {
	h := w.Header()
	switch {
	case kind == streamSSE:
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
	case subscriptionSpec:
		h.Set("Content-Type", `multipart/mixed; boundary="`+multipartSubscriptionBoundary+`"; subscriptionSpec="1.0"`)
	default:
		h.Set("Content-Type", `multipart/mixed; boundary="`+multipartDeferBoundary+`"; deferSpec=20220824`)
	}
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies must not hold parts back
	w.WriteHeader(http.StatusOK)
	return streamResponse{streamWriter: newStreamWriter(w, cfg.WriteTimeout), subscriptionSpec: subscriptionSpec}
}

// serveEventStream streams an operation's results as graphql-sse's
// distinct connections mode: a `next` event per result, a comment every
// KeepAlive, and `complete` (with a data line, so that every EventSource
// parser dispatches it) at the end. A write that fails (the client left,
// or did not read within WriteTimeout) ends the operation.
func serveEventStream(w http.ResponseWriter, op *streamOperation, cfg SubscriptionConfig) {
	sw := startStreamResponse(w, streamSSE, cfg, false)
	results := op.Pump()
	keepAlive := time.NewTicker(cfg.KeepAlive)
	defer keepAlive.Stop()
	if sw.write(sseKeepAlive) != nil { // the headers go now: EventSource opens
		return
	}
	for {
		select {
		case payload, ok := <-results:
			if !ok {
				_ = sw.write(sseComplete)
				return
			}
			if sw.write(sseEvent("next", payload)) != nil {
				return
			}
		case <-keepAlive.C:
			if sw.write(sseKeepAlive) != nil {
				return
			}
		}
	}
}

// sseEvent is one event of a stream whose data is one line of JSON.
func sseEvent(event string, data []byte) []byte {
	b := make([]byte, 0, len(event)+len(data)+16)
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// sseComplete ends a distinct connection's stream.
var sseComplete = []byte("event: complete\ndata:\n\n")

// serveMultipart streams an operation's results as multipart/mixed parts:
// incremental delivery's payloads for @defer, or (subscriptionSpec)
// Apollo's multipart subscription protocol: each event {"payload": …}, an
// empty object every KeepAlive as heartbeat.
//
// Each part is followed at once by the delimiter of the next, so that a
// reader knows the part ended without waiting for the next event: after
// incremental delivery's last payload (hasNext false) comes the close
// delimiter; a subscription, whose end is not known in advance, ends with
// a heartbeat part and the close delimiter.
func serveMultipart(w http.ResponseWriter, op *streamOperation, cfg SubscriptionConfig, subscriptionSpec bool) {
	sw := startStreamResponse(w, streamMultipart, cfg, subscriptionSpec)
	boundary := multipartDeferBoundary
	if subscriptionSpec {
		boundary = multipartSubscriptionBoundary
	}
	if sw.write(multipartOpen(boundary)) != nil {
		return
	}
	results := op.Parts()
	var heartbeat <-chan time.Time
	if subscriptionSpec {
		t := time.NewTicker(cfg.KeepAlive)
		defer t.Stop()
		heartbeat = t.C
	}
	for {
		select {
		case part, ok := <-results:
			if !ok {
				// No part was the last: close with an empty one.
				_ = sw.write(multipartPart(boundary, []byte("{}"), true))
				return
			}
			payload, last := part.payload, false
			if subscriptionSpec {
				payload = wrapPayload(payload)
			} else {
				last = !op.Incremental() || part.last
			}
			if sw.write(multipartPart(boundary, payload, last)) != nil || last {
				return
			}
		case <-heartbeat:
			if sw.write(multipartPart(boundary, []byte("{}"), false)) != nil {
				return
			}
		}
	}
}

// multipartOpen opens the first part.
func multipartOpen(boundary string) []byte {
	return []byte("\r\n--" + boundary + "\r\n")
}

// multipartPart is one part (the delimiter before it already written):
// its header, its JSON body, and the delimiter after it: the close
// delimiter when last, else the next part's.
func multipartPart(boundary string, body []byte, last bool) []byte {
	b := make([]byte, 0, len(body)+len(boundary)+64)
	b = append(b, "Content-Type: application/json; charset=utf-8\r\n\r\n"...)
	b = append(b, body...)
	b = append(b, "\r\n--"...)
	b = append(b, boundary...)
	if last {
		return append(b, "--\r\n"...)
	}
	return append(b, "\r\n"...)
}

// wrapPayload is an execution result as Apollo's multipart subscription
// protocol carries it.
func wrapPayload(result []byte) []byte {
	b := make([]byte, 0, len(result)+12)
	b = append(b, `{"payload":`...)
	b = append(b, result...)
	return append(b, '}')
}
