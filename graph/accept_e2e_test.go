package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/transport"
)

// accepted is a client's Accept header and the response type it gets.
type accepted struct {
	name, accept string
	// contentType is the response's; "" means 406 Not Acceptable.
	contentType string
}

var acceptCases = []accepted{
	{"no Accept", "", "application/json"},
	{"application/json", "application/json", "application/json"},
	{"graphql-response+json", "application/graphql-response+json", "application/graphql-response+json"},
	{"Apollo Client's", "application/graphql-response+json,application/json;q=0.9", "application/graphql-response+json"},
	{"json preferred by weight", "application/graphql-response+json;q=0.5, application/json", "application/json"},
	{"*/*", "*/*", "application/json"},
	{"a browser's", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "application/json"},
	{"unacceptable", "text/html", ""},
	{"json refused by weight", "application/json;q=0, text/plain", ""},
}

// TestAcceptMatrix: the GraphQL-over-HTTP contract (README, Errors) for
// each Accept header, over GET and POST: a request error (parse,
// validation, variable coercion, a limit, an unknown persisted query)
// answers 200 to application/json and 400 to
// application/graphql-response+json, with no "data" key and its code as
// before; an executed operation answers 200 with its data, field errors
// included; no query is 400 whatever is accepted; an unacceptable Accept
// is 406.
func TestAcceptMatrix(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Limits: graph.Limits{MaxDepth: 3}}})
	const (
		executed = iota
		requestError
		notGraphQL
	)
	operations := []struct {
		name     string
		params   map[string]any
		kind     int
		code     string // of the first error; "" for none
		noGET    bool
		postBody string // instead of params
	}{
		{name: "success", params: map[string]any{"query": `{ __typename }`}, kind: executed},
		{name: "field error with partial data", params: map[string]any{"query": `{ __typename asset(id: "nope") { id } }`}, kind: executed, code: "NOT_FOUND"},
		{name: "parse error", params: map[string]any{"query": `{`}, kind: requestError, code: "BAD_USER_INPUT"},
		{name: "validation error", params: map[string]any{"query": `{ nope }`}, kind: requestError, code: "BAD_USER_INPUT"},
		{name: "variable coercion error", params: map[string]any{"query": `query($id: ID!) { asset(id: $id) { id } }`, "variables": map[string]any{"id": nil}}, kind: requestError, code: "BAD_USER_INPUT"},
		{name: "limit refusal", params: map[string]any{"query": `{ assets { edges { node { id } } } }`}, kind: requestError, code: "QUERY_TOO_COMPLEX"},
		{name: "unknown persisted query", params: map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.Repeat("ab", 32)}}}, kind: requestError, code: "PERSISTED_QUERY_NOT_FOUND"},
		{name: "no query", params: map[string]any{"variables": map[string]any{}}, kind: notGraphQL, code: "BAD_USER_INPUT"},
		{name: "body not JSON", postBody: `{"query": "{`, kind: notGraphQL, code: "BAD_USER_INPUT", noGET: true},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, op := range operations {
			if method == http.MethodGet && op.noGET {
				continue
			}
			for _, a := range acceptCases {
				t.Run(method+"/"+op.name+"/"+a.name, func(t *testing.T) {
					r := acceptRequest(t, g.URL, method, a.accept, op.params, op.postBody)
					wantStatus, wantData := http.StatusOK, op.kind == executed
					switch {
					case a.contentType == "":
						wantStatus, wantData = http.StatusNotAcceptable, false
					case op.kind == notGraphQL:
						wantStatus = http.StatusBadRequest
					case op.kind == requestError && a.contentType == "application/graphql-response+json":
						wantStatus = http.StatusBadRequest
					}
					wantType, wantCode := a.contentType, op.code
					if a.contentType == "" {
						wantType, wantCode = "application/json", "BAD_USER_INPUT"
					}
					if r.status != wantStatus || r.contentType != wantType || r.hasData != wantData || r.code != wantCode {
						t.Errorf("got %d %s, data %t, code %q; want %d %s, data %t, code %q\n%.400s",
							r.status, r.contentType, r.hasData, r.code, wantStatus, wantType, wantData, wantCode, r.body)
					}
					if r.vary != "Accept" {
						t.Errorf("Vary %q, want Accept", r.vary)
					}
				})
			}
		}
	}
}

type acceptResponse struct {
	status                  int
	contentType, vary, code string
	hasData                 bool
	body                    []byte
}

func acceptRequest(t *testing.T, base, method, accept string, params map[string]any, postBody string) acceptResponse {
	t.Helper()
	var req *http.Request
	var err error
	if method == http.MethodGet {
		q := url.Values{}
		for k, v := range params {
			if s, ok := v.(string); ok {
				q.Set(k, s)
				continue
			}
			b, _ := json.Marshal(v)
			q.Set(k, string(b))
		}
		req, err = http.NewRequest(method, base+"?"+q.Encode(), nil)
	} else {
		body := postBody
		if body == "" {
			b, _ := json.Marshal(params)
			body = string(b)
		}
		req, err = http.NewRequest(method, base, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, raw := testutil.Do(t, req)
	var body struct {
		Data   *json.RawMessage `json:"data"`
		Errors []gqlError       `json:"errors"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("status %d: body is not JSON: %v\n%.300s", resp.StatusCode, err, raw)
	}
	out := acceptResponse{
		status:      resp.StatusCode,
		contentType: resp.Header.Get("Content-Type"),
		vary:        resp.Header.Get("Vary"),
		hasData:     body.Data != nil || strings.Contains(string(raw), `"data":null`),
		body:        raw,
	}
	if len(body.Errors) > 0 {
		out.code = body.Errors[0].code()
	}
	return out
}

// operationReader is a response interceptor that reads each response's
// operation context, as the telemetry extension does.
type operationReader struct{}

func (operationReader) ExtensionName() string                   { return "operationReader" }
func (operationReader) Validate(graphql.ExecutableSchema) error { return nil }
func (operationReader) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	_ = graphql.GetOperationContext(ctx) // panics when there is none
	return next(ctx)
}

// TestRequestErrorBeforeAnOperation: a body that does not decode has no
// operation yet; a response interceptor that reads the operation context
// (telemetry) must not turn its BAD_USER_INPUT into a recovered panic's
// INTERNAL.
func TestRequestErrorBeforeAnOperation(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Extensions: []graphql.HandlerExtension{operationReader{}}}})
	if r := acceptRequest(t, g.URL, http.MethodPost, "", nil, ``); r.status != http.StatusBadRequest || r.code != "BAD_USER_INPUT" || r.hasData {
		t.Errorf("null: %d %q data %t: %.300s", r.status, r.code, r.hasData, r.body)
	}
	// The stream transports (SSE, @defer's multipart) answer it as any POST.
	for _, accept := range []string{"", "text/event-stream", "multipart/mixed;deferSpec=20220824, application/json"} {
		for _, body := range []string{`{"query": "{`, ` `, `{"query": 1}`} {
			r := acceptRequest(t, g.URL, http.MethodPost, accept, nil, body)
			if r.status != http.StatusBadRequest || r.code != "BAD_USER_INPUT" || r.hasData ||
				!strings.Contains(string(r.body), "not a GraphQL request in JSON") {
				t.Errorf("Accept %q, %q: %d %q data %t: %.300s", accept, body, r.status, r.code, r.hasData, r.body)
			}
		}
	}
}

// BenchmarkPOSTByAccept: the whole handler for a small query, by Accept
// header, to compare the cost of negotiation with the request's.
func BenchmarkPOSTByAccept(b *testing.B) {
	h := transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{}), transport.Config{})
	body := []byte(`{"query":"{ __typename }"}`)
	for _, accept := range []string{"", "application/json", "application/graphql-response+json,application/json;q=0.9"} {
		b.Run("Accept="+accept, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if accept != "" {
					req.Header.Set("Accept", accept)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
