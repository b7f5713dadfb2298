package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/graph"
)

// The GET and POST transports follow GraphQL over HTTP
// (https://graphql.github.io/graphql-over-http/draft/), where gqlgen's
// differ: the response type is negotiated by Accept (accept.go);
// a request error (the operation did not execute: parse, validation,
// variable coercion, a limit, an unknown persisted query) answers 200 to a
// client that accepts application/json and 400 to one that accepts
// application/graphql-response+json, where gqlgen answers 422 to both
// for the errors it calls protocol errors; and a request error has no
// "data" key (the GraphQL specification: data is absent when execution
// did not start), where gqlgen writes "data":null. A request that is not a
// GraphQL request at all (a body that is not JSON, no query) answers 400
// whatever the client accepts. Every error's extensions.code is the error
// presenter's (graph's), as before.

// getTransport serves queries sent with GET (the query and its JSON
// parameters in the URL, or a persisted query's hash in its extensions).
// guardRequest has checked that variables and extensions are JSON
// objects. Its responses carry the caching headers (httpcache.go):
// no-store unless the operation executed without errors.
type getTransport struct {
	cache *httpCaching
}

var _ graphql.Transport = getTransport{}

func (getTransport) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Upgrade") == ""
}

func (t getTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	media := negotiate(r.Header.Get("Accept"))
	setContentType(w.Header(), media)
	noStore(w.Header()) // until a result says otherwise
	ctx := r.Context()
	start := graphql.Now()
	params, msg := getParams(r)
	if msg != "" {
		writeRequestError(ctx, w, exec, http.StatusBadRequest, gqlerror.List{inputError(msg)})
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	execute(ctx, w, exec, media, params, t.cache)
}

// readParams reads a request's parameters: a GET's from its URL, a POST's
// from its body. A request that does not read is answered (400, a request
// error) and ok is false.
func readParams(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) (params *graphql.RawParams, ok bool) {
	if r.Method == http.MethodGet {
		params, msg := getParams(r)
		if msg != "" {
			writeRequestError(r.Context(), w, exec, http.StatusBadRequest, gqlerror.List{inputError(msg)})
			return nil, false
		}
		return params, true
	}
	params = &graphql.RawParams{}
	return params, decodePOST(w, r, exec, params)
}

// getParams reads a GET request's parameters from its URL; msg says what
// is wrong when they do not read.
func getParams(r *http.Request) (params *graphql.RawParams, msg string) {
	// The query parameter, the one that grows with the document, is read
	// through getTexts: a text sent before is not unescaped again.
	raw, rest, found := cutQueryParam(r.URL.RawQuery)
	query, err := url.ParseQuery(rest)
	if found && query.Has("query") {
		// Another parameter names query once unescaped: which comes
		// first is url.ParseQuery's to say, over the whole query.
		found = false
		query, err = url.ParseQuery(r.URL.RawQuery)
	}
	if err != nil {
		return nil, "the URL query is malformed: " + err.Error()
	}
	text := query.Get("query")
	if found {
		if text, err = getTexts.unescaped(raw); err != nil {
			return nil, "the URL query is malformed: " + err.Error()
		}
	}
	params = &graphql.RawParams{
		Query:         text,
		OperationName: query.Get("operationName"),
		Headers:       r.Header,
	}
	for _, p := range [...]struct {
		name string
		dst  *map[string]any
	}{{"variables", &params.Variables}, {"extensions", &params.Extensions}} {
		if v := query.Get(p.name); v != "" {
			if err := jsonDecode([]byte(v), p.dst); err != nil {
				return nil, fmt.Sprintf("the %s parameter must be a JSON object", p.name)
			}
		}
	}
	if msg := (documentRef{DocumentID: query.Get("documentId"), DocID: query.Get("doc_id")}).apply(params); msg != "" {
		return nil, msg
	}
	return params, ""
}

// cutQueryParam takes the first "query=" parameter's value out of a URL's
// raw query, as sent (escaped): raw, and the rest of the query. found is
// false, and rest the whole query, when there is none, or when its value
// holds a semicolon (which url.ParseQuery refuses, over the whole query).
func cutQueryParam(rawQuery string) (raw, rest string, found bool) {
	before, after := "", rawQuery
	for after != "" {
		var part string
		part, after, _ = strings.Cut(after, "&")
		value, ok := strings.CutPrefix(part, "query=")
		if !ok {
			before += part + "&"
			continue
		}
		rest = before + after
		if strings.Contains(value, ";") {
			return "", rawQuery, false
		}
		return value, rest, true
	}
	return "", rawQuery, false
}

// getTexts are the query texts of recent GET requests, by their escaped
// bytes (the POST transport's are queryTexts, by their JSON bytes: the same
// bytes mean other texts in the two forms).
var getTexts = newTextCache(textCacheEntries, textCacheBytes)

// rawParamsPool holds the POST transport's parameters, as gqlgen's
// transport pools them: the executor copies what it keeps.
var rawParamsPool = sync.Pool{New: func() any { return new(graphql.RawParams) }}

// postDo serves a POST request: it decodes the body guardRequest read
// (fastParams, else encoding/json as gqlgen decodes it) and executes it.
func postDo(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	media := negotiate(r.Header.Get("Accept"))
	setContentType(w.Header(), media)
	ctx := r.Context()
	start := graphql.Now()
	params := rawParamsPool.Get().(*graphql.RawParams)
	defer func() {
		*params = graphql.RawParams{}
		rawParamsPool.Put(params)
	}()
	if !decodePOST(w, r, exec, params) {
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	execute(ctx, w, exec, media, params, nil)
}

// decodePOST decodes the body of a POST request (the one guardRequest
// read: fastParams, else encoding/json as gqlgen decodes it) into params;
// a body that does not decode is answered as a request error, and false
// returned. The body stays readable for a transport that decodes it again.
func decodePOST(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, params *graphql.RawParams) bool {
	var body []byte
	if rb, ok := r.Body.(*readBody); ok && rb.Len() == len(rb.bytes) {
		body = rb.bytes
	} else {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			// Classified by graph's error presenter (requestErrorMessage).
			writeRequestError(r.Context(), w, exec, http.StatusBadRequest, gqlerror.List{gqlerror.Errorf("could not read request body: %v", err)})
			return false
		}
		r.Body = &readBody{Reader: bytes.NewReader(body), bytes: body}
	}
	if p, ok := fastParams(body); ok {
		*params = p
		return true
	}
	decoded := struct {
		*graphql.RawParams
		documentRef // a persisted document's id (documents.go)
	}{RawParams: params}
	if err := jsonDecode(body, &decoded); err != nil {
		// Classified by graph's error presenter (requestErrorMessage).
		writeRequestError(r.Context(), w, exec, http.StatusBadRequest, gqlerror.List{gqlerror.Errorf("json request body could not be decoded: %v", err)})
		return false
	}
	if msg := decoded.apply(params); msg != "" {
		writeRequestError(r.Context(), w, exec, http.StatusBadRequest, gqlerror.List{inputError(msg)})
		return false
	}
	return true
}

// execute runs the operation, or answers its request error. cache is a
// GET's (only queries, and the result carries the caching headers); nil
// for a POST.
func execute(ctx context.Context, w http.ResponseWriter, exec graphql.GraphExecutor, media mediaType, params *graphql.RawParams, cache *httpCaching) {
	queryOnly := cache != nil
	// No query, no persisted query's hash, no document id: not a GraphQL
	// request.
	noQuery := !graph.NamesDocument(params)
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		status := http.StatusBadRequest
		if media == mediaJSON && !noQuery {
			status = http.StatusOK
		}
		writeRequestError(graphql.WithOperationContext(ctx, opCtx), w, exec, status, errs)
		return
	}
	// Operations one response cannot carry: a request error (its status
	// as for any other).
	refusal := ""
	switch {
	case opCtx.Operation.Operation == ast.Subscription:
		refusal = subscriptionTransportMessage
	case graph.DefersFragments(opCtx):
		// (gqlgen's deferred fragments would also wait forever for a reader.)
		refusal = deferTransportMessage
	}
	if refusal != "" {
		status := http.StatusBadRequest
		if media == mediaJSON {
			status = http.StatusOK
		}
		writeRequestError(graphql.WithOperationContext(ctx, opCtx), w, exec, status, gqlerror.List{inputError(refusal)})
		return
	}
	if queryOnly && opCtx.Operation.Operation != ast.Query {
		w.Header().Set("Allow", "POST")
		writeRequestError(graphql.WithOperationContext(ctx, opCtx), w, exec, http.StatusMethodNotAllowed, gqlerror.List{inputError(fmt.Sprintf("a %s cannot be sent with GET: send it with POST", opCtx.Operation.Operation))})
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	resp := responses(ctx)
	if cache == nil {
		writeResponse(w, resp)
		return
	}
	body := encodeResponse(resp)
	cache.set(ctx, w.Header(), opCtx, body, resp == nil || len(resp.Errors) > 0) // nil: the request ended
	_, _ = w.Write(body)
}

// subscriptionTransportMessage answers a subscription sent as a plain
// request, which has one response where a subscription has many.
const subscriptionTransportMessage = "subscriptions need a stream: a WebSocket (graphql-transport-ws), Server-Sent Events (Accept: text/event-stream) or multipart/mixed (Accept: multipart/mixed;subscriptionSpec=1.0, as Apollo Client sends); a response in JSON carries one result"

// deferTransportMessage answers a query using @defer sent without
// accepting an incremental response.
const deferTransportMessage = "@defer needs an incremental response: send the query (GET or POST) with Accept: multipart/mixed (Apollo Client and urql do) or text/event-stream, or over a WebSocket"

// requestErrorResponse is the response to a request error: no data.
type requestErrorResponse struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// writeRequestError answers a request whose operation did not execute,
// its errors presented by the executor (codes, response extensions).
func writeRequestError(ctx context.Context, w http.ResponseWriter, exec graphql.GraphExecutor, status int, errs gqlerror.List) {
	if !graphql.HasOperationContext(ctx) {
		// A body that did not decode has no operation; response
		// interceptors (telemetry) still look for its context, and
		// gqlgen's GetOperationContext panics without one.
		ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{
			Stats: graphql.Stats{OperationStart: graphql.GetStartTime(ctx)},
		})
	}
	resp := exec.DispatchError(ctx, errs)
	w.WriteHeader(status)
	body, err := json.Marshal(requestErrorResponse{Errors: resp.Errors, Extensions: resp.Extensions})
	if err != nil {
		panic(fmt.Errorf("encode a GraphQL request error: %w", err))
	}
	_, _ = w.Write(body)
}

// writeResponse writes an executed operation's response (status 200).
func writeResponse(w http.ResponseWriter, resp *graphql.Response) {
	_, _ = w.Write(encodeResponse(resp))
}

// encodeResponse is an executed operation's response as JSON.
func encodeResponse(resp *graphql.Response) []byte {
	body, err := json.Marshal(resp)
	if err != nil {
		// As gqlgen's transports: data the executor wrote is valid JSON.
		panic(fmt.Errorf("encode a GraphQL response: %w", err))
	}
	return body
}

// inputError is a BAD_USER_INPUT request error with a message that says
// what to send.
func inputError(msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Err: &graph.Error{Code: graph.CodeBadUserInput, Message: msg}}
}

// jsonDecode decodes a JSON value as gqlgen's transports do: numbers as
// json.Number, anything after the first value ignored.
func jsonDecode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
