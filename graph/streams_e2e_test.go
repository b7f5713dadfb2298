package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/transport"
)

// Incremental delivery and the multipart/mixed transport over real HTTP
// (docs/transports.md): deferred fields absent from the payloads before
// theirs, @defer over GET, request errors negotiated by Accept,
// subscriptions by Apollo's multipart protocol, and streams whose client
// stops reading.

// streamRequest sends a GraphQL request (POST with a JSON body, or GET
// with the URL parameters) with the Accept header given.
func streamRequest(t *testing.T, ctx context.Context, gatewayURL, method, accept, query string, vars map[string]any) *http.Response {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return streamRequestWith(t, ctx, tr, gatewayURL, method, accept, query, vars)
}

// streamRequestWith is streamRequest over the transport given.
func streamRequestWith(t *testing.T, ctx context.Context, tr *http.Transport, gatewayURL, method, accept, query string, vars map[string]any) *http.Response {
	t.Helper()
	var req *http.Request
	var err error
	if method == http.MethodGet {
		q := url.Values{"query": {query}}
		if vars != nil {
			v, _ := json.Marshal(vars)
			q.Set("variables", string(v))
		}
		req, err = http.NewRequestWithContext(ctx, method, gatewayURL+"?"+q.Encode(), nil)
	} else {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		req, err = http.NewRequestWithContext(ctx, method, gatewayURL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// multipartParts reads a multipart/mixed response's parts, each a JSON
// document, as they arrive.
type multipartParts struct {
	t      *testing.T
	r      *multipart.Reader
	params map[string]string
}

func readMultipart(t *testing.T, resp *http.Response) *multipartParts {
	t.Helper()
	mediaType, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/mixed" || resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	return &multipartParts{t: t, r: multipart.NewReader(resp.Body, params["boundary"]), params: params}
}

// next is the next part's body; false at the close delimiter.
func (m *multipartParts) next() (json.RawMessage, bool) {
	m.t.Helper()
	p, err := m.r.NextPart()
	if err == io.EOF {
		return nil, false
	}
	if err != nil {
		m.t.Fatalf("next part: %v", err)
	}
	if ct := p.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		m.t.Fatalf("part Content-Type %q", ct)
	}
	raw, err := io.ReadAll(p)
	if err != nil || !json.Valid(raw) {
		m.t.Fatalf("part %q: %v", raw, err)
	}
	return raw, true
}

// readIncremental reads an incremental delivery response whole, checking
// its shape: the initial payload with hasNext, then subsequent payloads
// of incremental entries, the last with hasNext false, then the close
// delimiter. It returns the payloads.
func readIncremental(t *testing.T, parts *multipartParts) (initial deferPart, later []deferPart) {
	t.Helper()
	raw, ok := parts.next()
	if !ok {
		t.Fatal("no initial part")
	}
	if err := json.Unmarshal(raw, &initial); err != nil || initial.Data == nil {
		t.Fatalf("initial part %s", raw)
	}
	if !bytes.Contains(raw, []byte(`"hasNext"`)) {
		t.Fatalf("initial part without hasNext: %s", raw)
	}
	for hasNext := initial.HasNext; hasNext; {
		raw, ok := parts.next()
		if !ok {
			t.Fatal("the response ended while hasNext")
		}
		var p deferPart
		if err := json.Unmarshal(raw, &p); err != nil || len(p.Incremental) == 0 || p.Data != nil {
			t.Fatalf("subsequent part %s", raw)
		}
		later = append(later, p)
		hasNext = p.HasNext
	}
	if raw, ok := parts.next(); ok {
		t.Fatalf("a part after hasNext false: %s", raw)
	}
	return initial, later
}

// mergeIncremental applies subsequent payloads to the initial data, as a
// client does: each entry's data merged into the object at its path.
func mergeIncremental(t *testing.T, initial json.RawMessage, later []deferPart) any {
	t.Helper()
	var data any
	if err := json.Unmarshal(initial, &data); err != nil {
		t.Fatal(err)
	}
	for _, p := range later {
		for _, inc := range p.Incremental {
			target := data
			for _, el := range inc.Path {
				switch el := el.(type) {
				case string:
					target = target.(map[string]any)[el]
				case float64:
					target = target.([]any)[int(el)]
				}
			}
			obj, ok := target.(map[string]any)
			if !ok {
				t.Fatalf("path %v is not an object in %s", inc.Path, initial)
			}
			var add map[string]any
			if err := json.Unmarshal(inc.Data, &add); err != nil {
				t.Fatalf("entry data %s", inc.Data)
			}
			for k, v := range add {
				if _, dup := obj[k]; dup {
					t.Fatalf("field %q at %v arrived before its payload", k, inc.Path)
				}
				obj[k] = v
			}
		}
	}
	return data
}

// nestedDeferQuery defers a connection under each party of a page (the
// same party may appear twice), and inside it another.
const nestedDeferQuery = `query($n: Int!) { transactions(first: $n) { edges { node { hash
	submitter { id ... @defer(label: "outer") { delegations(first: 2) { edges { node { amount
		party { id ... @defer(label: "inner") { transactions(first: 1) { edges { node { hash } } } } } } } } } } } } } }`

// TestDeferredFieldsAreAbsentFromEarlierPayloads: with @defer, over POST
// and GET (urql's default), a deferred field appears in no payload before
// its own: not in the initial one, and an inner deferred fragment not in
// its outer one's; the payloads merged equal the same query without
// @defer. A deferred fragment whose `if` is false is not deferred, and a
// client that accepts JSON gets one JSON response.
func TestDeferredFieldsAreAbsentFromEarlierPayloads(t *testing.T) {
	g := newLiveGateway(t, liveOptions{NoFeed: true})
	vars := map[string]any{"n": 6}
	var plain struct{ Data any }
	const plainQuery = `query($n: Int!) { transactions(first: $n) { edges { node { hash
	submitter { id delegations(first: 2) { edges { node { amount
		party { id transactions(first: 1) { edges { node { hash } } } } } } } } } } } }`
	resp := streamRequest(t, context.Background(), g.URL, http.MethodPost, "application/json", plainQuery, vars)
	if err := json.NewDecoder(resp.Body).Decode(&plain); err != nil || plain.Data == nil {
		t.Fatalf("plain query: %v", err)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			accept := "multipart/mixed;deferSpec=20220824, application/json"
			if method == http.MethodGet {
				accept = "multipart/mixed, application/graphql-response+json, application/graphql+json, application/json, text/event-stream" // urql's
			}
			parts := readMultipart(t, streamRequest(t, context.Background(), g.URL, method, accept, nestedDeferQuery, vars))
			if parts.params["deferspec"] != "20220824" {
				t.Fatalf("Content-Type parameters %v", parts.params)
			}
			initial, later := readIncremental(t, parts)
			if bytes.Contains(initial.Data, []byte(`"delegations"`)) || bytes.Contains(initial.Data, []byte(`null`)) {
				t.Fatalf("initial payload holds a deferred field: %s", initial.Data)
			}
			labels := map[string]int{}
			for _, p := range later {
				for _, inc := range p.Incremental {
					labels[inc.Label]++
					if inc.Label == "outer" && bytes.Contains(inc.Data, []byte(`"transactions"`)) {
						t.Fatalf("outer payload holds the inner deferred field: %s", inc.Data)
					}
				}
			}
			if labels["outer"] != 6 || labels["inner"] == 0 {
				t.Fatalf("labels %v", labels)
			}
			if got := mergeIncremental(t, initial.Data, later); !reflect.DeepEqual(got, plain.Data) {
				a, _ := json.Marshal(got)
				b, _ := json.Marshal(plain.Data)
				t.Fatalf("merged:\n%s\nplain:\n%s", a, b)
			}
		})
	}
	t.Run("if false", func(t *testing.T) {
		q := strings.ReplaceAll(nestedDeferQuery, `@defer(label:`, `@defer(if: $d, label:`)
		q = strings.Replace(q, `query($n: Int!)`, `query($n: Int!, $d: Boolean!)`, 1)
		resp := streamRequest(t, context.Background(), g.URL, http.MethodPost, "multipart/mixed;deferSpec=20220824, application/json", q, map[string]any{"n": 6, "d": false})
		var got struct{ Data any }
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("Content-Type %q", ct)
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || !reflect.DeepEqual(got.Data, plain.Data) {
			t.Fatalf("@defer(if: false): %v %v", err, got.Data)
		}
	})
}

// TestStreamRequestErrors: a request error under an Accept that admits
// JSON is answered as any request's (status and type by Accept, no data
// key); under an Accept admitting only a stream, inside the stream. A
// subscription that defers fragments is refused so (the request that
// once crashed the process).
func TestStreamRequestErrors(t *testing.T) {
	g := newLiveGateway(t, liveOptions{})
	const crash = `subscription { transactions { cursor ... @defer(label: "d") { node { hash submitter { delegations(first: 1) { edges { node { amount } } } } } } } }`
	const invalid = `{ transactions(first: 1) { edges { nope } } }`
	for _, c := range []struct {
		name, accept, query string
		status              int
		contentType, code   string
	}{
		{"graphql-response+json", "multipart/mixed, application/graphql-response+json", invalid, 400, "application/graphql-response+json", "BAD_USER_INPUT"},
		{"json", "multipart/mixed;deferSpec=20220824, application/json", invalid, 200, "application/json", "BAD_USER_INPUT"},
		{"defer in a subscription", "multipart/mixed;deferSpec=20220824, application/json", crash, 200, "application/json", "BAD_USER_INPUT"},
		{"defer in a subscription, event stream", "text/event-stream, application/graphql-response+json", crash, 400, "application/graphql-response+json", "BAD_USER_INPUT"},
		{"multipart only", "multipart/mixed", invalid, 200, "multipart/mixed", "BAD_USER_INPUT"},
		{"subscription spec only", `multipart/mixed;subscriptionSpec="1.0"`, crash, 200, "multipart/mixed", "BAD_USER_INPUT"},
		{"event stream only", "text/event-stream", crash, 200, "text/event-stream", "BAD_USER_INPUT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := streamRequest(t, context.Background(), g.URL, http.MethodPost, c.accept, c.query, nil)
			ct := resp.Header.Get("Content-Type")
			if resp.StatusCode != c.status || !strings.HasPrefix(ct, c.contentType) {
				raw, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, ct, raw)
			}
			var body json.RawMessage
			switch {
			case strings.HasPrefix(ct, "multipart/mixed"):
				parts := readMultipart(t, resp)
				body, _ = parts.next()
				if strings.Contains(c.accept, "subscriptionSpec") {
					var wrapped struct{ Payload json.RawMessage }
					if err := json.Unmarshal(body, &wrapped); err != nil || wrapped.Payload == nil {
						t.Fatalf("part %s", body)
					}
					body = wrapped.Payload
				}
				if raw, more := parts.next(); more {
					t.Fatalf("a part after the error: %s", raw)
				}
			case strings.HasPrefix(ct, "text/event-stream"):
				s := &sseStream{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: func() {}}
				name, data := s.mustEvent()
				if name != "next" {
					t.Fatalf("event %s %s", name, data)
				}
				body = data
				if name, _ := s.mustEvent(); name != "complete" {
					t.Fatalf("after the error: %s", name)
				}
			default:
				body, _ = io.ReadAll(resp.Body)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("body %s", body)
			}
			if _, hasData := got["data"]; hasData {
				t.Fatalf("a request error with a data key: %s", body)
			}
			var errs []gqlError
			if err := json.Unmarshal(got["errors"], &errs); err != nil || len(errs) == 0 || errs[0].Extensions["code"] != c.code {
				t.Fatalf("errors %s", body)
			}
		})
	}
	// The process is serving, with no goroutine left behind (noLeaks).
	g.query(t, `{ transactions(first: 1) { edges { cursor } } }`, nil)
}

// TestSubscriptionOverMultipart: a subscription POSTed as Apollo Client's
// HttpLink sends it is answered by Apollo's multipart subscription
// protocol: each event its own part {"payload": …}, distinct and in
// chain order even when a block's transactions are written together, no
// hasNext, heartbeats {} while idle, and the close delimiter when the
// feed ends the subscription.
func TestSubscriptionOverMultipart(t *testing.T) {
	g := newLiveGateway(t, liveOptions{Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{KeepAlive: 50 * time.Millisecond}}})
	head := g.headCursor(t)
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	defer cancel()
	resp := streamRequest(t, ctx, g.URL, http.MethodPost, `multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json`,
		`subscription($after: String) { transactions(after: $after) { cursor node { hash } } }`, map[string]any{"after": head})
	parts := readMultipart(t, resp)
	if parts.params["subscriptionspec"] != "1.0" {
		t.Fatalf("Content-Type parameters %v", parts.params)
	}
	g.waitSubscribed(t, 1)
	txs := g.appendTxs(t, 3) // one block: the feed hands them out together
	var got []edge
	heartbeats := 0
	for len(got) < len(txs) || heartbeats == 0 {
		raw, ok := parts.next()
		if !ok {
			t.Fatal("the stream ended")
		}
		if string(raw) == "{}" {
			heartbeats++
			continue
		}
		var part struct {
			Payload json.RawMessage
			Errors  json.RawMessage
		}
		if err := json.Unmarshal(raw, &part); err != nil || part.Payload == nil || part.Errors != nil ||
			bytes.Contains(raw, []byte("hasNext")) {
			t.Fatalf("part %s", raw)
		}
		got = append(got, eventEdge(t, part.Payload))
	}
	checkHashes(t, "multipart", got, txs)
	// The feed ends the subscription: the stream ends with the close
	// delimiter (after any heartbeat).
	g.Live.Close()
	for {
		raw, ok := parts.next()
		if !ok {
			break
		}
		if string(raw) != "{}" {
			t.Fatalf("after the end: %s", raw)
		}
	}
}

// TestStreamOfAClientThatStopsReading: an SSE or multipart subscription
// whose client stops reading is closed once a write has waited
// WriteTimeout, and its subscription ends (its slot freed), while the
// process serves others.
func TestStreamOfAClientThatStopsReading(t *testing.T) {
	for _, accept := range []string{"text/event-stream", `multipart/mixed;subscriptionSpec=1.0`} {
		t.Run(accept, func(t *testing.T) {
			g := newLiveGateway(t, liveOptions{
				Live:      live.Config{Buffer: 100_000},
				Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{WriteTimeout: 200 * time.Millisecond}},
			})
			u, _ := url.Parse(g.URL)
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// A large selection, so that few events fill the socket's buffers.
			body, _ := json.Marshal(map[string]any{"query": `subscription { transactions { cursor node { hash block index type submitter { id } command { __typename } } a: node { hash block index type } b: node { hash block index type } c: node { hash block index type } } }`})
			req := "POST / HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\nAccept: " + accept +
				"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body)
			if _, err := conn.Write([]byte(req)); err != nil {
				t.Fatal(err)
			}
			g.waitSubscribed(t, 1)
			// The client reads nothing: append until the feed has ended
			// the subscription (the write deadline closed the stream).
			deadline := time.Now().Add(streamDeadline)
			for g.Live.Stats().Subscriptions > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the stream of a client that does not read is still open: %+v", g.Live.Stats())
				}
				g.appendTxs(t, 200)
			}
			g.query(t, `{ transactions(first: 1) { edges { cursor } } }`, nil)
		})
	}
}

// TestStreamsFromAnotherOrigin: a page of an origin the CORS settings do
// not allow cannot open a stream (it could not read it, but the
// subscription would run for nobody): SSE, multipart and graphql-sse's
// reservation are refused with 403 before anything starts; the allowed
// origin and the gateway's own are served.
func TestStreamsFromAnotherOrigin(t *testing.T) {
	g := newLiveGateway(t, liveOptions{Transport: transport.Config{Subscriptions: transport.SubscriptionConfig{
		AllowedOrigins: []string{"https://app.example"},
	}}})
	const sub = `{"query":"subscription { transactions { cursor } }"}`
	send := func(method, accept, origin string) *http.Response {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
		t.Cleanup(cancel)
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(sub)
		}
		req, _ := http.NewRequestWithContext(ctx, method, g.URL, body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		req.Header.Set("Origin", origin)
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	for _, c := range []struct{ method, accept string }{
		{http.MethodPost, "text/event-stream"},
		{http.MethodPost, "multipart/mixed;subscriptionSpec=1.0, application/json"},
		{http.MethodPut, "*/*"},
	} {
		resp := send(c.method, c.accept, "https://evil.example")
		var body struct{ Errors []gqlError }
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusForbidden ||
			len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != "BAD_USER_INPUT" {
			t.Fatalf("%s %s from another origin: %d %+v", c.method, c.accept, resp.StatusCode, body)
		}
	}
	if n := g.Live.Stats().Subscriptions; n != 0 {
		t.Fatalf("%d subscriptions opened from another origin", n)
	}
	u, _ := url.Parse(g.URL)
	for _, origin := range []string{"https://app.example", "http://" + u.Host} {
		resp := send(http.MethodPost, "text/event-stream", origin)
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("from %s: %d %q", origin, resp.StatusCode, ct)
		}
		g.waitSubscribed(t, 1)
	}
}

// TestPanicsInStreamsEndOnlyTheirField: a resolver that panics under a
// deferred fragment, or in each event of a subscription, gives that
// payload or event an INTERNAL error while the stream goes on to its
// end; the process serves; the panic's stack is logged once, later ones
// at the same place as one line.
func TestPanicsInStreamsEndOnlyTheirField(t *testing.T) {
	logs := &testutil.LockedBuffer{}
	g := newLiveGateway(t, liveOptions{
		Wrap:     func(u graph.Upstream) graph.Upstream { return panicky{Upstream: u, listDelegations: true} },
		Executor: graph.ExecutorConfig{Logger: slog.New(slog.NewTextHandler(logs, nil))},
	})
	parts := readMultipart(t, streamRequest(t, context.Background(), g.URL, http.MethodPost, "multipart/mixed;deferSpec=20220824, application/json",
		`{ transactions(first: 2) { edges { node { hash submitter { id ... @defer { delegations(first: 1) { edges { cursor } } } } } } } }`, nil))
	initial, later := readIncremental(t, parts)
	if len(initial.Errors) != 0 || len(later) != 2 {
		t.Fatalf("initial %+v, %d later payloads", initial, len(later))
	}
	for _, p := range later {
		if errs := p.Incremental[0].Errors; len(errs) != 1 || errs[0].Extensions["code"] != "INTERNAL" || errs[0].Message != "internal error" {
			t.Fatalf("deferred payload %+v", p.Incremental[0])
		}
	}

	head := g.headCursor(t)
	s := subscribeSSE(t, g.URL, `subscription($after: String) { transactions(after: $after) { cursor node { hash submitter { delegations(first: 1) { edges { cursor } } } } } }`, map[string]any{"after": head})
	g.waitSubscribed(t, 1)
	g.appendTxs(t, 3)
	for range 3 {
		name, data := s.mustEvent()
		var resp struct {
			Data   map[string]json.RawMessage
			Errors []gqlError
		}
		if err := json.Unmarshal(data, &resp); name != "next" || err != nil || len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "INTERNAL" {
			t.Fatalf("event %s %s", name, data)
		}
	}
	s.close()
	g.query(t, `{ transactions(first: 1) { edges { cursor } } }`, nil)
	out := logs.String()
	if n := strings.Count(out, "assignment to entry in nil map"); n < 5 {
		t.Fatalf("%d panics logged, want one per panic (5):\n%s", n, out)
	}
	if n := strings.Count(out, "stack="); n != 1 {
		t.Fatalf("%d stacks logged, want the first panic's only:\n%s", n, out)
	}
}
