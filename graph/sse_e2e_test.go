package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/transport"
)

// graphql-sse's single connection mode (transport/sse.go), spoken by hand
// over real HTTP as graphql-sse 2.6.1's client speaks it: PUT for a
// reservation, GET accepting text/event-stream with the token for the
// stream, POST with the token and extensions.operationId for each
// operation, DELETE ?operationId= to stop one. One row per behaviour the
// protocol requires or the gateway promises; each row runs against a
// gateway of its own, which checks at its end that no goroutine is left.
// Waits are for events or responses, bounded by streamDeadline; the few
// waits for a state with no event to wait on (a stream the server
// closed, an expired reservation) poll it, bounded too.

const sseTokenHeader = "X-GraphQL-Event-Stream-Token"

// sseResult is a response read whole.
type sseResult struct {
	status int
	header http.Header
	body   []byte
}

// errors decodes the body's GraphQL errors; it fails unless there is at
// least one, each with a code, and no data key.
func (r sseResult) errors(t *testing.T) []gqlError {
	t.Helper()
	var body map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("status %d: body is not JSON: %v\n%s", r.status, err, r.body)
	}
	if _, ok := body["data"]; ok {
		t.Fatalf("status %d: a request error with a data key: %s", r.status, r.body)
	}
	var errs []gqlError
	if err := json.Unmarshal(body["errors"], &errs); err != nil || len(errs) == 0 {
		t.Fatalf("status %d: no errors: %s", r.status, r.body)
	}
	for _, e := range errs {
		if e.code() == "" {
			t.Fatalf("an error without a code: %s", r.body)
		}
	}
	return errs
}

// want fails unless the response has the status and one error with the
// code, whose message contains parts.
func (r sseResult) want(t *testing.T, status int, code string, parts ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	errs := r.errors(t)
	if len(errs) != 1 {
		t.Fatalf("errors %s", r.body)
	}
	wantError(t, errs[0], code, parts...)
}

// sseSend makes a request and reads its response.
func sseSend(t *testing.T, method, target string, header http.Header, body []byte) sseResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	sseCopyHeader(req.Header, header)
	resp, raw := testutil.Do(t, req)
	return sseResult{status: resp.StatusCode, header: resp.Header, body: raw}
}

func sseCopyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = v
	}
}

// sseReserve PUTs a reservation, as graphql-sse's client does (fetch's
// Accept, */*), and returns its token.
func sseReserve(t *testing.T, gatewayURL string) string {
	t.Helper()
	r := sseSend(t, http.MethodPut, gatewayURL, http.Header{"Accept": {"*/*"}}, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("PUT: status %d: %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("PUT: Content-Type %q", ct)
	}
	return string(r.body)
}

// ssePost POSTs an operation of the stream token, named id ("" sends no
// operationId), accepting accept ("" for */*, as fetch sends).
func ssePost(t *testing.T, gatewayURL, token, id, query string, vars map[string]any, accept string) sseResult {
	t.Helper()
	req := map[string]any{"query": query, "variables": vars}
	if id != "" {
		req["extensions"] = map[string]any{"operationId": id}
	}
	body, _ := json.Marshal(req)
	if accept == "" {
		accept = "*/*"
	}
	return sseSend(t, http.MethodPost, gatewayURL, http.Header{
		sseTokenHeader: {token},
		"Content-Type": {"application/json; charset=utf-8"},
		"Accept":       {accept},
	}, body)
}

// sseAccepted POSTs an operation that must be accepted: 202, empty.
func sseAccepted(t *testing.T, gatewayURL, token, id, query string, vars map[string]any) {
	t.Helper()
	if r := ssePost(t, gatewayURL, token, id, query, vars, ""); r.status != http.StatusAccepted || len(r.body) != 0 {
		t.Fatalf("operation %s: status %d: %s", id, r.status, r.body)
	}
}

// sseDelete stops an operation (id "" sends no operationId).
func sseDelete(t *testing.T, gatewayURL, token, id string) sseResult {
	t.Helper()
	target := gatewayURL
	if id != "" {
		target += "?operationId=" + url.QueryEscape(id)
	}
	h := http.Header{}
	if token != "" {
		h.Set(sseTokenHeader, token)
	}
	return sseSend(t, http.MethodDelete, target, h, nil)
}

// sseDial opens the stream of token (in the URL when param, as
// EventSource must, else in the header): the stream when the status is
// 200, else the response read whole.
func sseDial(t *testing.T, gatewayURL, token string, param bool) (*sseStream, sseResult) {
	t.Helper()
	target, h := gatewayURL, http.Header{"Accept": {"text/event-stream"}}
	if param {
		target += "?token=" + url.QueryEscape(token)
	} else {
		h.Set(sseTokenHeader, token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET the stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer tr.CloseIdleConnections()
		raw, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return nil, sseResult{status: resp.StatusCode, header: resp.Header, body: raw}
	}
	s := &sseStream{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(func() {
		s.close()
		tr.CloseIdleConnections()
	})
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream Content-Type %q", ct)
	}
	return s, sseResult{status: resp.StatusCode, header: resp.Header}
}

// sseConnect opens the stream of token; it must open.
func sseConnect(t *testing.T, gatewayURL, token string) *sseStream {
	t.Helper()
	s, r := sseDial(t, gatewayURL, token, false)
	if s == nil {
		t.Fatalf("stream: status %d: %s", r.status, r.body)
	}
	return s
}

// opEvent is an event of a reserved stream.
type opEvent struct {
	name    string
	id      string
	payload json.RawMessage
	data    string
}

// opEvent reads the next event and checks its form: `next` with data
// {"id", "payload"}, `complete` with data {"id"}, nothing else.
func (s *sseStream) opEvent() opEvent {
	s.t.Helper()
	name, data := s.mustEvent()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		s.t.Fatalf("event %s: data %q: %v", name, data, err)
	}
	e := opEvent{name: name, payload: fields["payload"], data: string(data)}
	if err := json.Unmarshal(fields["id"], &e.id); err != nil || e.id == "" {
		s.t.Fatalf("event %s without an id: %s", name, data)
	}
	switch {
	case name == "next" && len(fields) == 2 && e.payload != nil:
	case name == "complete" && len(fields) == 1:
	default:
		s.t.Fatalf("event %q, data %s", name, data)
	}
	return e
}

// rawEvent reads the lines of the next event that is not only comments.
func (s *sseStream) rawEvent() []string {
	s.t.Helper()
	var lines []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.t.Fatalf("read: %v (after %q)", err, lines)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && len(lines) > 0:
			return lines
		case line == "", strings.HasPrefix(line, ":"):
		default:
			lines = append(lines, line)
		}
	}
}

// comments reads n keep-alive comments before any event.
func (s *sseStream) comments(n int) {
	s.t.Helper()
	for got := 0; got < n; {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.t.Fatalf("read: %v", err)
		}
		switch line {
		case ":\n":
			got++
		case "\n":
		default:
			s.t.Fatalf("%q before %d comments", line, n)
		}
	}
}

// ended fails unless the stream ends (EOF) before another event.
func (s *sseStream) ended() {
	s.t.Helper()
	if name, data, err := s.event(); err == nil {
		s.t.Fatalf("event %s %s, want the end of the stream", name, data)
	} else if !errors.Is(err, io.EOF) {
		s.t.Fatalf("the stream ended with %v, want EOF", err)
	}
}

// sseEventually polls cond until it holds, within streamDeadline.
func sseEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(streamDeadline)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("never: %s", what)
		}
	}
}

// streamGoroutines counts the goroutines of event streams (their writer,
// their operations' and those operations' pumps) in the process.
func streamGoroutines() int {
	count := 0
	for _, g := range allStacks() {
		if strings.Contains(g, "transport.(*eventStreams).serve(") || strings.Contains(g, "transport.(*eventStream).run(") || strings.Contains(g, "transport.pump[") {
			count++
		}
	}
	return count
}

// sseGone reports that the stream of token no longer exists (DELETE 404).
func sseGone(t *testing.T, gatewayURL, token string) bool {
	t.Helper()
	return sseDelete(t, gatewayURL, token, "probe").status == http.StatusNotFound
}

const sseTxQuery = `{ transactions(first: 1) { edges { cursor } } }`

// TestEventStreamSingleConnection is graphql-sse's single connection mode,
// one row per behaviour.
func TestEventStreamSingleConnection(t *testing.T) {
	rec := &headerRecorder{}
	rows := []struct {
		name string
		opts liveOptions
		run  func(t *testing.T, g *liveGateway)
	}{
		{name: "PUT reserves: 201, a text/plain token of 128 bits or more, another each time", run: func(t *testing.T, g *liveGateway) {
			seen := map[string]bool{}
			for range 20 {
				token := sseReserve(t, g.URL)
				if len(token) < 26 || seen[token] {
					t.Fatalf("token %q (seen: %v)", token, seen[token])
				}
				seen[token] = true
			}
			// No Accept, text/plain, a wildcard: as graphql-sse's handler.
			for _, accept := range []string{"", "text/plain", "text/*;q=0.5"} {
				h := http.Header{}
				if accept != "" {
					h.Set("Accept", accept)
				}
				if r := sseSend(t, http.MethodPut, g.URL, h, nil); r.status != http.StatusCreated {
					t.Fatalf("Accept %q: %d %s", accept, r.status, r.body)
				}
			}
		}},
		{name: "PUT accepting neither text/plain nor */*: 406", run: func(t *testing.T, g *liveGateway) {
			sseSend(t, http.MethodPut, g.URL, http.Header{"Accept": {"application/json"}}, nil).
				want(t, http.StatusNotAcceptable, "BAD_USER_INPUT", "text/plain")
		}},
		{name: "the stream with the token in the header", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			s, _ := sseDial(t, g.URL, token, false)
			sseAccepted(t, g.URL, token, "q", sseTxQuery, nil)
			if e := s.opEvent(); e.name != "next" || e.id != "q" || !strings.Contains(string(e.payload), `"cursor"`) {
				t.Fatalf("%+v", e)
			}
			if e := s.opEvent(); e.name != "complete" || e.id != "q" {
				t.Fatalf("%+v", e)
			}
		}},
		{name: "the stream with the token in the URL (EventSource)", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			s, r := sseDial(t, g.URL, token, true)
			if s == nil {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			sseAccepted(t, g.URL, token, "q", sseTxQuery, nil)
			if e := s.opEvent(); e.name != "next" || e.id != "q" {
				t.Fatalf("%+v", e)
			}
			if e := s.opEvent(); e.name != "complete" || e.id != "q" {
				t.Fatalf("%+v", e)
			}
		}},
		{name: "a second stream on a reservation: 409, the first keeps its results", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			first := sseConnect(t, g.URL, token)
			for _, param := range []bool{false, true} {
				s, r := sseDial(t, g.URL, token, param)
				if s != nil {
					t.Fatal("a second stream opened")
				}
				r.want(t, http.StatusConflict, "BAD_USER_INPUT", "already connected")
			}
			sseAccepted(t, g.URL, token, "q", sseTxQuery, nil)
			if e := first.opEvent(); e.name != "next" || e.id != "q" {
				t.Fatalf("%+v", e)
			}
		}},
		{name: "a query: 202 and an empty body, then next {id, payload} and complete {id}, exactly", run: func(t *testing.T, g *liveGateway) {
			var want struct {
				Data json.RawMessage `json:"data"`
			}
			g.query(t, sseTxQuery, nil).mustData(t, &want.Data)
			wantPayload, _ := json.Marshal(want)
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			sseAccepted(t, g.URL, token, `a "quoted" id`, sseTxQuery, nil)
			if lines := s.rawEvent(); !slices.Equal(lines, []string{"event: next", `data: {"id":"a \"quoted\" id","payload":` + string(wantPayload) + `}`}) {
				t.Fatalf("next: %q", lines)
			}
			if lines := s.rawEvent(); !slices.Equal(lines, []string{"event: complete", `data: {"id":"a \"quoted\" id"}`}) {
				t.Fatalf("complete: %q", lines)
			}
		}},
		{name: "a query over GET with the token: 202, results on the stream", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			q := url.Values{"query": {sseTxQuery}, "extensions": {`{"operationId":"g"}`}}
			r := sseSend(t, http.MethodGet, g.URL+"?"+q.Encode(), http.Header{sseTokenHeader: {token}, "Accept": {"application/json"}}, nil)
			if r.status != http.StatusAccepted {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if e := s.opEvent(); e.name != "next" || e.id != "g" {
				t.Fatalf("%+v", e)
			}
			if e := s.opEvent(); e.name != "complete" || e.id != "g" {
				t.Fatalf("%+v", e)
			}
		}},
		{name: "a subscription and queries interleaved on one stream", run: func(t *testing.T, g *liveGateway) {
			head := g.headCursor(t)
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			sseAccepted(t, g.URL, token, "sub", txSubscription, map[string]any{"after": head})
			g.waitSubscribed(t, 1)
			sseAccepted(t, g.URL, token, "q1", sseTxQuery, nil)
			txs := g.appendTxs(t, 3)
			sseAccepted(t, g.URL, token, "q2", sseTxQuery, nil)
			txs = append(txs, g.appendTxs(t, 2)...)
			var edges []edge
			done := map[string]int{}
			for len(edges) < len(txs) || done["q1"] != 2 || done["q2"] != 2 {
				e := s.opEvent()
				switch {
				case e.id == "sub" && e.name == "next":
					edges = append(edges, eventEdge(t, e.payload))
				case (e.id == "q1" || e.id == "q2") && done[e.id] == 0 && e.name == "next":
					if !strings.Contains(string(e.payload), `"cursor"`) {
						t.Fatalf("%s: %s", e.id, e.payload)
					}
					done[e.id]++
				case (e.id == "q1" || e.id == "q2") && done[e.id] == 1 && e.name == "complete":
					done[e.id]++
				default:
					t.Fatalf("unexpected %s of %s: %s (done %v, %d edges)", e.name, e.id, e.data, done, len(edges))
				}
			}
			checkHashes(t, "sub", edges, txs)
		}},
		{name: "a request error is answered on the POST, by Accept, and nothing goes on the stream", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			ssePost(t, g.URL, token, "bad", `{ nope }`, nil, "application/json").want(t, http.StatusOK, "BAD_USER_INPUT", "nope")
			r := ssePost(t, g.URL, token, "bad2", `{ nope }`, nil, "application/graphql-response+json")
			r.want(t, http.StatusBadRequest, "BAD_USER_INPUT", "nope")
			if ct := r.header.Get("Content-Type"); ct != "application/graphql-response+json" {
				t.Fatalf("Content-Type %q", ct)
			}
			ssePost(t, g.URL, token, "deep", `subscription { transactions { node { submitter { transactions { edges { node { submitter { transactions { edges { node { submitter { transactions { edges { cursor } } } } } } } } } } } } } }`, nil, "").
				want(t, http.StatusOK, "QUERY_TOO_COMPLEX")
			// Not a GraphQL request: 400 whatever the client accepts.
			sseSend(t, http.MethodPost, g.URL, http.Header{sseTokenHeader: {token}, "Content-Type": {"application/json"}}, []byte(`{"extensions":{"operationId":"none"}}`)).
				want(t, http.StatusBadRequest, "BAD_USER_INPUT")
			// The ids of refused operations are free: they never started.
			sseAccepted(t, g.URL, token, "bad", sseTxQuery, nil)
			if e := s.opEvent(); e.name != "next" || e.id != "bad" || strings.Contains(string(e.payload), "errors") {
				t.Fatalf("%+v", e)
			}
		}},
		{name: "no operationId, or not a string: 400", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			ssePost(t, g.URL, token, "", sseTxQuery, nil, "").want(t, http.StatusBadRequest, "BAD_USER_INPUT", "operationId")
			body := []byte(`{"query":"{ __typename }","extensions":{"operationId":7}}`)
			sseSend(t, http.MethodPost, g.URL, http.Header{sseTokenHeader: {token}, "Content-Type": {"application/json"}}, body).
				want(t, http.StatusBadRequest, "BAD_USER_INPUT", "operationId")
		}},
		{name: "the id of an operation under way: 409; free again after its complete", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			sseAccepted(t, g.URL, token, "dup", txSubscription, nil)
			g.waitSubscribed(t, 1)
			ssePost(t, g.URL, token, "dup", sseTxQuery, nil, "").want(t, http.StatusConflict, "BAD_USER_INPUT", `"dup"`, "unique")
			if r := sseDelete(t, g.URL, token, "dup"); r.status != http.StatusOK {
				t.Fatalf("DELETE: %d %s", r.status, r.body)
			}
			if e := s.opEvent(); e.name != "complete" || e.id != "dup" {
				t.Fatalf("%+v", e)
			}
			sseAccepted(t, g.URL, token, "dup", sseTxQuery, nil)
			if e := s.opEvent(); e.name != "next" || e.id != "dup" {
				t.Fatalf("%+v", e)
			}
		}},
		{name: "DELETE stops a subscription: 200, its complete, nothing after", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			sseAccepted(t, g.URL, token, "stop", txSubscription, nil)
			sseAccepted(t, g.URL, token, "keep", txSubscription, nil)
			g.waitSubscribed(t, 2)
			first := g.appendTxs(t, 1)
			got := map[string][]edge{}
			for len(got["stop"]) < 1 || len(got["keep"]) < 1 {
				e := s.opEvent()
				if e.name != "next" {
					t.Fatalf("%+v", e)
				}
				got[e.id] = append(got[e.id], eventEdge(t, e.payload))
			}
			checkHashes(t, "stop", got["stop"], first)
			if r := sseDelete(t, g.URL, token, "stop"); r.status != http.StatusOK || len(r.body) != 0 {
				t.Fatalf("DELETE: %d %s", r.status, r.body)
			}
			if e := s.opEvent(); e.name != "complete" || e.id != "stop" {
				t.Fatalf("%+v", e)
			}
			sseEventually(t, "the stopped subscription leaves the feed", func() bool { return g.Live.Stats().Subscriptions == 1 })
			marker := g.appendTxs(t, 1)
			e := s.opEvent()
			if e.id != "keep" || e.name != "next" {
				t.Fatalf("after DELETE: %+v", e)
			}
			checkHashes(t, "keep", []edge{eventEdge(t, e.payload)}, marker)
			// An id not under way: 200 all the same (graphql-sse's handler).
			if r := sseDelete(t, g.URL, token, "never"); r.status != http.StatusOK {
				t.Fatalf("DELETE of an unknown id: %d %s", r.status, r.body)
			}
		}},
		{name: "an operation sees its POST's headers, Accept made text/event-stream (telemetry's transport: sse)", opts: liveOptions{Executor: graph.ExecutorConfig{Extensions: []graphql.HandlerExtension{rec}}}, run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			body, _ := json.Marshal(map[string]any{"query": sseTxQuery, "extensions": map[string]any{"operationId": "h"}})
			r := sseSend(t, http.MethodPost, g.URL, http.Header{sseTokenHeader: {token}, "Content-Type": {"application/json"}, "Accept": {"application/json"}, "X-Client": {"app"}}, body)
			if r.status != http.StatusAccepted {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if e := s.opEvent(); e.name != "next" || e.id != "h" {
				t.Fatalf("%+v", e)
			}
			if h := rec.get(); h.Get("Accept") != "text/event-stream" || h.Get("X-Client") != "app" || h.Get(sseTokenHeader) != token {
				t.Fatalf("the operation's headers: %v", h)
			}
		}},
		{name: "a subscription outlives its POST and the request deadline", opts: liveOptions{Executor: graph.ExecutorConfig{RequestTimeout: time.Millisecond}}, run: func(t *testing.T, g *liveGateway) {
			head := g.headByAppend(t)
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			sseAccepted(t, g.URL, token, "sub", txSubscription, map[string]any{"after": head})
			g.waitSubscribed(t, 1)
			txs := g.appendTxs(t, 3)
			var edges []edge
			for len(edges) < len(txs) {
				e := s.opEvent()
				if e.name != "next" || e.id != "sub" {
					t.Fatalf("%+v", e)
				}
				edges = append(edges, eventEdge(t, e.payload))
			}
			checkHashes(t, "sub", edges, txs)
		}},
		{name: "DELETE without operationId: 400; without a token: 400", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			sseDelete(t, g.URL, token, "").want(t, http.StatusBadRequest, "BAD_USER_INPUT", "operationId")
			sseDelete(t, g.URL, "", "x").want(t, http.StatusBadRequest, "BAD_USER_INPUT", sseTokenHeader)
		}},
		{name: "an unknown token: 404 for the stream, an operation, DELETE", run: func(t *testing.T, g *liveGateway) {
			for _, param := range []bool{false, true} {
				s, r := sseDial(t, g.URL, "not-a-token", param)
				if s != nil {
					t.Fatal("a stream opened")
				}
				r.want(t, http.StatusNotFound, "BAD_USER_INPUT", "PUT")
			}
			ssePost(t, g.URL, "not-a-token", "x", sseTxQuery, nil, "").want(t, http.StatusNotFound, "BAD_USER_INPUT", "PUT")
			sseDelete(t, g.URL, "not-a-token", "x").want(t, http.StatusNotFound, "BAD_USER_INPUT", "PUT")
		}},
		{
			name: "a stream holds MaxPerConnection operations: 429 RATE_LIMITED past it",
			opts: liveOptions{Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{MaxPerConnection: 2}}},
			run: func(t *testing.T, g *liveGateway) {
				token := sseReserve(t, g.URL)
				s := sseConnect(t, g.URL, token)
				sseAccepted(t, g.URL, token, "1", txSubscription, nil)
				sseAccepted(t, g.URL, token, "2", txSubscription, nil)
				g.waitSubscribed(t, 2)
				ssePost(t, g.URL, token, "3", sseTxQuery, nil, "").want(t, http.StatusTooManyRequests, "RATE_LIMITED", "2 operations")
				sseDelete(t, g.URL, token, "1")
				if e := s.opEvent(); e.name != "complete" || e.id != "1" {
					t.Fatalf("%+v", e)
				}
				sseAccepted(t, g.URL, token, "3", sseTxQuery, nil)
				// Another stream has its own.
				other := sseReserve(t, g.URL)
				sseAccepted(t, g.URL, other, "1", sseTxQuery, nil)
				sseAccepted(t, g.URL, other, "2", sseTxQuery, nil)
			},
		},
		{name: "operations sent before the stream connects are delivered once it does", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			sseAccepted(t, g.URL, token, "early", sseTxQuery, nil)
			s := sseConnect(t, g.URL, token)
			if e := s.opEvent(); e.name != "next" || e.id != "early" {
				t.Fatalf("%+v", e)
			}
			if e := s.opEvent(); e.name != "complete" || e.id != "early" {
				t.Fatalf("%+v", e)
			}
		}},
		{name: "keep-alive comments every KeepAlive", opts: liveOptions{Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{KeepAlive: 20 * time.Millisecond}}}, run: func(t *testing.T, g *liveGateway) {
			s := sseConnect(t, g.URL, sseReserve(t, g.URL))
			s.comments(4) // the first at once, then one per KeepAlive
		}},
		{name: "closing the stream ends its operations and the reservation", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			sseAccepted(t, g.URL, token, "1", txSubscription, nil)
			sseAccepted(t, g.URL, token, "2", txSubscription, nil)
			g.waitSubscribed(t, 2)
			// Its writer, and each operation's goroutine and its pump.
			sseEventually(t, "the stream's 5 goroutines run", func() bool { return streamGoroutines() == 5 })
			s.close()
			sseEventually(t, "the reservation is gone", func() bool { return sseGone(t, g.URL, token) })
			sseEventually(t, "the subscriptions end", func() bool { return g.Live.Stats().Subscriptions == 0 })
			sseEventually(t, "the stream's goroutines return", func() bool { return streamGoroutines() == 0 })
			if s, r := sseDial(t, g.URL, token, false); s != nil || r.status != http.StatusNotFound {
				t.Fatalf("reconnect: %d %s", r.status, r.body)
			}
		}},
		{
			name: "a stream that does not read is closed after WriteTimeout",
			opts: liveOptions{Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{WriteTimeout: 500 * time.Millisecond, KeepAlive: time.Hour, MaxPerConnection: 4}}},
			run: func(t *testing.T, g *liveGateway) {
				const writeTimeout = 500 * time.Millisecond
				token := sseReserve(t, g.URL)
				stalled := stalledStream(t, g.URL, token)
				defer stalled.Close()
				// Large results, until the stream's writes block (the
				// operations pile up: 429), then until it is gone (404).
				start := time.Now()
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for i := 0; ; i++ {
					r := ssePost(t, g.URL, token, fmt.Sprint(i), sseBigQuery, nil, "")
					if r.status == http.StatusNotFound {
						break
					}
					if r.status != http.StatusAccepted && r.status != http.StatusTooManyRequests {
						t.Fatalf("status %d: %s", r.status, r.body)
					}
					if time.Since(start) > streamDeadline {
						t.Fatal("the stream was never closed")
					}
					if r.status == http.StatusTooManyRequests {
						<-tick.C
					}
				}
				if d := time.Since(start); d < writeTimeout || d > writeTimeout+10*time.Second {
					t.Fatalf("closed after %v; WriteTimeout is %v", d, writeTimeout)
				}
			},
		},
		{
			name: "a reservation no stream fulfils within InitTimeout expires, with its operations",
			opts: liveOptions{Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{InitTimeout: 300 * time.Millisecond}}},
			run: func(t *testing.T, g *liveGateway) {
				const initTimeout = 300 * time.Millisecond
				start := time.Now()
				token := sseReserve(t, g.URL)
				sseAccepted(t, g.URL, token, "sub", txSubscription, nil)
				g.waitSubscribed(t, 1)
				sseEventually(t, "the reservation expires", func() bool { return sseGone(t, g.URL, token) })
				if d := time.Since(start); d < initTimeout {
					t.Fatalf("expired after %v, before InitTimeout", d)
				}
				if s, r := sseDial(t, g.URL, token, false); s != nil || r.status != http.StatusNotFound {
					t.Fatalf("stream after expiry: %d %s", r.status, r.body)
				}
				sseEventually(t, "its subscription ends", func() bool { return g.Live.Stats().Subscriptions == 0 })
			},
		},
		{name: "pending reservations are bounded: 429 RATE_LIMITED with Retry-After", run: func(t *testing.T, g *liveGateway) {
			const bound = 10_000
			var wg sync.WaitGroup
			errs := make(chan string, 8)
			for w := range 8 {
				wg.Go(func() {
					tr := &http.Transport{}
					defer tr.CloseIdleConnections()
					client := &http.Client{Transport: tr, Timeout: streamDeadline}
					for i := w; i < bound; i += 8 {
						req, _ := http.NewRequest(http.MethodPut, g.URL, nil)
						resp, err := client.Do(req)
						if err != nil {
							errs <- err.Error()
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						_ = resp.Body.Close()
						if resp.StatusCode != http.StatusCreated {
							errs <- fmt.Sprintf("PUT %d: status %d", i, resp.StatusCode)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Fatal(e)
			}
			r := sseSend(t, http.MethodPut, g.URL, nil, nil)
			r.want(t, http.StatusTooManyRequests, "RATE_LIMITED", "10000")
			if ra := r.header.Get("Retry-After"); ra != "10" {
				t.Fatalf("Retry-After %q", ra)
			}
		}},
		{name: "shutdown: each subscription completes, then the stream ends; no new reservation", run: func(t *testing.T, g *liveGateway) {
			token := sseReserve(t, g.URL)
			s := sseConnect(t, g.URL, token)
			sseAccepted(t, g.URL, token, "1", txSubscription, nil)
			sseAccepted(t, g.URL, token, "2", txSubscription, nil)
			g.waitSubscribed(t, 2)
			pending := sseReserve(t, g.URL)
			done := make(chan error, 1)
			go func() { done <- g.Live.Shutdown(context.Background()) }()
			completed := map[string]bool{}
			for len(completed) < 2 {
				e := s.opEvent()
				if e.name != "complete" || completed[e.id] {
					t.Fatalf("%+v", e)
				}
				completed[e.id] = true
			}
			s.ended()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			sseEventually(t, "the pending reservation ends", func() bool { return sseGone(t, g.URL, pending) })
			sseSend(t, http.MethodPut, g.URL, nil, nil).want(t, http.StatusServiceUnavailable, "UPSTREAM_UNAVAILABLE", "shutting down")
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			row.run(t, newLiveGateway(t, row.opts))
		})
	}
}

// headerRecorder records the headers of the last operation it saw.
type headerRecorder struct {
	mu      sync.Mutex
	headers http.Header
}

func (*headerRecorder) ExtensionName() string                   { return "headerRecorder" }
func (*headerRecorder) Validate(graphql.ExecutableSchema) error { return nil }

func (h *headerRecorder) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	h.mu.Lock()
	h.headers = graphql.GetOperationContext(ctx).Headers
	h.mu.Unlock()
	return next(ctx)
}

func (h *headerRecorder) get() http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.headers
}

// sseBigQuery's result is large (the schema's types, their fields and
// descriptions): a few fill a socket's buffers.
const sseBigQuery = `{ __schema { types { name description fields { name description args { name description } type { name } } } } }`

// stalledStream opens the stream of token over a connection whose
// receive buffer is small, reads the response's header, and never reads
// more.
func stalledStream(t *testing.T, gatewayURL, token string) net.Conn {
	t.Helper()
	u, err := url.Parse(gatewayURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, streamDeadline)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	_ = conn.SetDeadline(time.Now().Add(streamDeadline))
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n%s: %s\r\n\r\n", u.Host, sseTokenHeader, token)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 64), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: status %d", resp.StatusCode)
	}
	return conn
}

// TestEventStreamDistinctConnections is graphql-sse's distinct connections
// mode (transport/streaming.go), where the single connection mode's rows
// do not reach.
func TestEventStreamDistinctConnections(t *testing.T) {
	stream := func(t *testing.T, g *liveGateway, accept, query string) *http.Response {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": query})
		ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		tr := &http.Transport{}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cancel()
			_ = resp.Body.Close()
			tr.CloseIdleConnections()
		})
		return resp
	}
	sse := func(t *testing.T, resp *http.Response) *sseStream {
		t.Helper()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("status %d, Content-Type %q", resp.StatusCode, ct)
		}
		return &sseStream{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: func() {}}
	}
	rows := []struct {
		name string
		opts liveOptions
		run  func(t *testing.T, g *liveGateway)
	}{
		{name: "complete has a data line (EventSource dispatches no event without one)", run: func(t *testing.T, g *liveGateway) {
			s := sse(t, stream(t, g, "text/event-stream", sseTxQuery))
			if lines := s.rawEvent(); len(lines) != 2 || lines[0] != "event: next" || !strings.HasPrefix(lines[1], `data: {"data":`) {
				t.Fatalf("next: %q", lines)
			}
			if lines := s.rawEvent(); !slices.Equal(lines, []string{"event: complete", "data:"}) {
				t.Fatalf("complete: %q", lines)
			}
			s.ended()
		}},
		{name: "a request error, accepting only text/event-stream: a next with errors and no data key, then complete", run: func(t *testing.T, g *liveGateway) {
			s := sse(t, stream(t, g, "text/event-stream", `{ nope }`))
			name, data := s.mustEvent()
			if name != "next" {
				t.Fatalf("%s %s", name, data)
			}
			sseResult{status: 200, body: data}.want(t, 200, "BAD_USER_INPUT", "nope")
			if name, data := s.mustEvent(); name != "complete" {
				t.Fatalf("%s %s", name, data)
			}
			s.ended()
		}},
		{name: "a request error, accepting text/event-stream and application/json: a JSON response", run: func(t *testing.T, g *liveGateway) {
			resp := stream(t, g, "text/event-stream, application/json", `subscription { nope }`)
			raw, _ := io.ReadAll(resp.Body)
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q: %s", ct, raw)
			}
			sseResult{status: resp.StatusCode, body: raw}.want(t, http.StatusOK, "BAD_USER_INPUT", "nope")
		}},
		{name: "keep-alive comments every KeepAlive", opts: liveOptions{Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{KeepAlive: 20 * time.Millisecond}}}, run: func(t *testing.T, g *liveGateway) {
			s := sse(t, stream(t, g, "text/event-stream", txSubscription))
			s.comments(4)
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			row.run(t, newLiveGateway(t, row.opts))
		})
	}
}

// allStacks are the stacks of every goroutine of the process, one each.
func allStacks() []string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}
