package transport_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/transport"
)

// The transports over an executor without upstream, answering
// { __typename }: each transport's wire form, on its own. The transports
// against the sample data service and the live feed are tested end to end
// in package graph.

// newServer serves NewHandler over an executor with no upstream (only
// __typename answers), with cursor keys of its own.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	keys, err := graph.NewCursorKeys("transport-tests-cursor-key-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{CursorKeys: keys}), transport.Config{}))
	t.Cleanup(srv.Close)
	return srv
}

const typename = `{"data":{"__typename":"Query"}}`

func do(t *testing.T, method, target, accept, contentType, body string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, b := testutil.Do(t, req)
	return resp, string(b)
}

// TestHandlerAnswersEachForm: JSON over POST and GET (with its caching
// headers and 304), SSE and multipart/mixed over GET and POST, and the
// refusals before any transport.
func TestHandlerAnswersEachForm(t *testing.T) {
	srv := newServer(t)
	get := srv.URL + "?query=" + url.QueryEscape("{ __typename }")
	const post = `{"query":"{ __typename }"}`

	t.Run("POST", func(t *testing.T) {
		resp, body := do(t, http.MethodPost, srv.URL, "", "application/json", post, nil)
		if resp.StatusCode != http.StatusOK || body != typename || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "" {
			t.Errorf("a POST response carries Cache-Control %q", cc)
		}
	})
	t.Run("GET, then 304", func(t *testing.T) {
		resp, body := do(t, http.MethodGet, get, "application/graphql-response+json", "", "", nil)
		etag := resp.Header.Get("Etag")
		if resp.StatusCode != http.StatusOK || body != typename || etag == "" ||
			resp.Header.Get("Content-Type") != "application/graphql-response+json" ||
			resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, body)
		}
		resp, body = do(t, http.MethodGet, get, "application/graphql-response+json", "", "", http.Header{"If-None-Match": {etag}})
		if resp.StatusCode != http.StatusNotModified || body != "" || resp.Header.Get("Etag") != etag {
			t.Fatalf("If-None-Match: %d %v %q", resp.StatusCode, resp.Header, body)
		}
	})
	t.Run("SSE", func(t *testing.T) {
		resp, body := do(t, http.MethodGet, get, "text/event-stream", "", "", nil)
		want := ":\n\nevent: next\ndata: " + typename + "\n\nevent: complete\ndata:\n\n"
		if resp.StatusCode != http.StatusOK || body != want || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
			t.Fatalf("%d %q %q, want %q", resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
		}
	})
	t.Run("multipart/mixed", func(t *testing.T) {
		resp, body := do(t, http.MethodPost, srv.URL, "multipart/mixed;deferSpec=20220824", "application/json", post, nil)
		want := "\r\n---\r\nContent-Type: application/json; charset=utf-8\r\n\r\n" + typename + "\r\n-----\r\n"
		if resp.StatusCode != http.StatusOK || body != want {
			t.Fatalf("%d %q %q, want %q", resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
		}
	})
	for _, tc := range []struct {
		name, method, accept, contentType, body string
		status                                  int
	}{
		{"a method no transport serves", http.MethodPatch, "", "application/json", post, http.StatusMethodNotAllowed},
		{"nothing acceptable", http.MethodPost, "text/html", "application/json", post, http.StatusNotAcceptable},
		{"a body not JSON", http.MethodPost, "", "text/plain", post, http.StatusUnsupportedMediaType},
		{"a batch", http.MethodPost, "", "application/json", "[" + post + "]", http.StatusBadRequest},
		{"no query", http.MethodPost, "application/json", "application/json", `{}`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, tc.method, srv.URL, tc.accept, tc.contentType, tc.body, nil)
			if resp.StatusCode != tc.status || !strings.Contains(body, `"code":"BAD_USER_INPUT"`) {
				t.Fatalf("%d %s, want %d BAD_USER_INPUT", resp.StatusCode, body, tc.status)
			}
		})
	}
}

// TestHandlerWebSocket: graphql-transport-ws's handshake, and a query's
// next and complete.
func TestHandlerWebSocket(t *testing.T) {
	srv := newServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.CloseNow() }()
	for _, step := range []struct{ send, want string }{
		{`{"type":"connection_init"}`, `{"type":"connection_ack"}`},
		{`{"type":"subscribe","id":"1","payload":{"query":"{ __typename }"}}`, `{"type":"next","id":"1","payload":` + typename + `}`},
		{"", `{"type":"complete","id":"1"}`},
	} {
		if step.send != "" {
			if err := conn.Write(ctx, websocket.MessageText, []byte(step.send)); err != nil {
				t.Fatal(err)
			}
		}
		_, got, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != step.want {
			t.Fatalf("after %s: %s, want %s", step.send, got, step.want)
		}
	}
	if err := conn.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
}

// TestHandlerEventStreamReservation: graphql-sse's single connection mode:
// a reservation (PUT), its stream (GET), an operation (POST, 202) whose
// result and completion arrive on the stream.
func TestHandlerEventStreamReservation(t *testing.T) {
	srv := newServer(t)
	resp, token := do(t, http.MethodPut, srv.URL, "", "", "", nil)
	if resp.StatusCode != http.StatusCreated || token == "" {
		t.Fatalf("PUT: %d %q", resp.StatusCode, token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-GraphQL-Event-Stream-Token", token)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", stream.StatusCode)
	}
	resp, body := do(t, http.MethodPost, srv.URL, "", "application/json", `{"query":"{ __typename }","extensions":{"operationId":"op"}}`,
		http.Header{"X-Graphql-Event-Stream-Token": {token}})
	if resp.StatusCode != http.StatusAccepted || body != "" {
		t.Fatalf("operation: %d %q", resp.StatusCode, body)
	}
	var events []string
	lines := bufio.NewScanner(stream.Body)
	for lines.Scan() && len(events) < 4 {
		if line := lines.Text(); line != "" && line != ":" {
			events = append(events, line)
		}
	}
	want := []string{"event: next", `data: {"id":"op","payload":` + typename + `}`, "event: complete", `data: {"id":"op"}`}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
}
