package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/clip"
)

// guardRequest answers the requests that gqlgen's transports would
// answer without an error code, or not at all, before they reach gqlgen:
// every refusal is a JSON GraphQL response whose error has
// extensions.code BAD_USER_INPUT and a message that says what to send.
//
//   - methods other than GET, POST, PUT, DELETE (graphql-sse's single
//     connection mode) and OPTIONS: 405;
//   - an Accept header that admits neither application/json nor
//     application/graphql-response+json: 406 (GraphQL over HTTP allows
//     this or answering in application/json regardless), except one that
//     accepts a stream, text/event-stream or multipart/mixed;
//   - WebSocket upgrades, streams (SSE, multipart/mixed) and graphql-sse's
//     reservations from an origin the CORS settings do not allow: 403,
//     before anything starts (SubscriptionConfig.AllowedOrigins); other
//     WebSocket upgrades go to the WebSocket transport, with no other check;
//   - upgrades to other protocols: 400;
//   - POST bodies that are not application/json: 415 (which also keeps
//     CORS "simple" form and text posts out);
//   - bodies over the size limit: 413;
//   - batched operations (a JSON array body): 400, one operation per
//     request;
//   - GET variables or extensions that are not a JSON object: 400.
func guardRequest(maxBody int64, subs SubscriptionConfig, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			switch {
			case !isWebSocketUpgrade(r):
				refuse(w, r, http.StatusBadRequest, "the only protocol upgrade served is WebSocket (GET with Upgrade: websocket, subprotocol graphql-transport-ws); send queries with POST or GET")
			case !subs.originAllowed(r):
				refuse(w, r, http.StatusForbidden, fmt.Sprintf("WebSocket connections from origin %q are not allowed (the CORS allowed origins apply)", clip.Cut(r.Header.Get("Origin"), 128)))
			default:
				next.ServeHTTP(w, r)
			}
			return
		}
		if (isStream(r) || r.Method == http.MethodPut || r.Method == http.MethodDelete) && !subs.originAllowed(r) {
			// A page of another origin cannot read a stream (CORS), but
			// its request would still open one: a subscription held for
			// nobody. Refused as WebSocket upgrades are.
			refuse(w, r, http.StatusForbidden, fmt.Sprintf("streams from origin %q are not allowed (the CORS allowed origins apply)", clip.Cut(r.Header.Get("Origin"), 128)))
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodPost {
			if accept := r.Header.Get("Accept"); negotiate(accept) == mediaNone && preferredStream(accept) == streamNone {
				refuse(w, r, http.StatusNotAcceptable, fmt.Sprintf("the Accept header %q admits no type the gateway answers in: accept application/graphql-response+json or application/json", clip.Cut(accept, 128)))
				return
			}
		}
		switch r.Method {
		case http.MethodGet:
			if msg := checkGET(r.URL.RawQuery); msg != "" {
				refuse(w, r, http.StatusBadRequest, msg)
				return
			}
		case http.MethodPost:
			mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mediaType != "application/json" {
				refuse(w, r, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported Content-Type %q: send the request as application/json ({\"query\": …, \"variables\": {…}})", clip.Cut(r.Header.Get("Content-Type"), 64)))
				return
			}
			body, err := readRequestBody(r.Body, r.ContentLength, maxBody)
			if err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes (the body size limit)", tooLarge.Limit))
					return
				}
				refuse(w, r, http.StatusBadRequest, "could not read the request body")
				return
			}
			if int64(len(body)) > maxBody {
				refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes (the body size limit)", maxBody))
				return
			}
			if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
				refuse(w, r, http.StatusBadRequest, "batched operations are not supported: send one operation per request, as a JSON object")
				return
			}
			r.Body = &readBody{Reader: bytes.NewReader(body), bytes: body}
		case http.MethodOptions, http.MethodPut, http.MethodDelete:
			// PUT and DELETE: graphql-sse's single connection mode
			// (sse.go), which answers them itself.
		default:
			w.Header().Set("Allow", "GET, POST, PUT, DELETE, OPTIONS")
			refuse(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed: send queries with POST (application/json) or GET", r.Method))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkGET checks the JSON parameters of a GET request.
func checkGET(rawQuery string) string {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "the URL query is malformed: " + err.Error()
	}
	for _, name := range []string{"variables", "extensions"} {
		v := q.Get(name)
		if v == "" || v == "null" {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(v), &obj); err != nil || obj == nil {
			return fmt.Sprintf("the %s parameter must be a JSON object", name)
		}
	}
	return ""
}

// refuse writes a GraphQL error response with extensions.code
// BAD_USER_INPUT, in the type the request accepts (application/json when
// it accepts neither).
func refuse(w http.ResponseWriter, r *http.Request, status int, message string) {
	setContentType(w.Header(), negotiate(r.Header.Get("Accept")))
	if r.Method == http.MethodGet {
		noStore(w.Header()) // a refusal is not kept by caches (httpcache.go)
	}
	w.WriteHeader(status)
	body, _ := json.Marshal(map[string]any{"errors": gqlerror.List{{
		Message:    message,
		Extensions: map[string]any{"code": graph.CodeBadUserInput},
	}}})
	_, _ = w.Write(body)
}

// readBody is a request body guardRequest has read: its bytes, for the
// POST transport to decode without reading them again (directPOST), and a
// reader of them for anything else.
type readBody struct {
	*bytes.Reader
	bytes []byte
}

func (*readBody) Close() error { return nil }

// readRequestBody reads body up to limit bytes and one more (which tells a body
// over the limit), into a buffer made once of the size the request
// declares (Content-Length), so that a large query is not copied as the
// buffer grows, as io.ReadAll's does by doubling. The declared size is
// trusted up to maxBodyPrealloc only: a client declaring a large body and
// sending a few bytes costs no more memory than that.
func readRequestBody(body io.Reader, declared, limit int64) ([]byte, error) {
	size := min(max(declared, 0), limit, maxBodyPrealloc) + bytes.MinRead
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	return buf.Bytes(), err
}

// maxBodyPrealloc bounds the buffer readRequestBody makes before reading: larger
// bodies grow it as they arrive.
const maxBodyPrealloc = 256 << 10
