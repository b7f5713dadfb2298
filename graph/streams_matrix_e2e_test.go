package graph_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tradenet/gateway/live"
)

// TestNoRequestEndsTheProcess crosses operation kinds (query,
// subscription), directives (none, @defer, @defer nested, @defer(if:
// false)), transports (POST, GET, Server-Sent Events, WebSocket,
// multipart/mixed) and Accept values. Each cell must answer by its
// protocol (a result, the incremental payloads, the events, or a request
// error without data), leave the process serving (a panic on a goroutine
// nothing recovers would end this test binary), and leave no goroutine
// behind once its client has gone.
func TestNoRequestEndsTheProcess(t *testing.T) {
	g := newLiveGateway(t, liveOptions{Live: live.Config{Linger: time.Millisecond}})
	kinds := []struct {
		name, query  string
		subscription bool
	}{
		{"query", `{ transactions(first: 2) { edges { cursor node { hash submitter { id ${D} { delegations(first: 1) { edges { node { amount party { id ${E} { delegations(first: 1) { edges { cursor } } } } } } } } } } } } }`, false},
		{"subscription", `subscription { transactions { cursor ${D} { node { hash submitter { id ${E} { delegations(first: 1) { edges { node { amount } } } } } } } } }`, true},
	}
	directives := []struct{ name, outer, inner string }{
		{"none", "...", "..."},
		{"defer", `... @defer(label: "d")`, "..."},
		{"defer nested", `... @defer(label: "d")`, `... @defer(label: "e")`},
		{"defer if false", `... @defer(if: false, label: "d")`, "..."},
	}
	transports := []struct {
		name, method, accept string
		kind                 cellTransport
	}{
		{"POST json", http.MethodPost, "application/json", cellJSON},
		{"POST graphql-response+json", http.MethodPost, "application/graphql-response+json", cellJSON},
		{"GET json", http.MethodGet, "application/json", cellJSON},
		{"GET urql", http.MethodGet, "multipart/mixed, application/graphql-response+json, application/graphql+json, application/json, text/event-stream", cellStream},
		{"POST sse", http.MethodPost, "text/event-stream", cellStream},
		{"GET sse", http.MethodGet, "text/event-stream", cellStream},
		{"POST sse or json", http.MethodPost, "text/event-stream, application/json", cellStream},
		{"POST multipart defer", http.MethodPost, "multipart/mixed;deferSpec=20220824, application/json", cellStream},
		{"POST multipart subscription", http.MethodPost, `multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json`, cellStream},
		{"POST multipart only", http.MethodPost, "multipart/mixed", cellStream},
		{"WebSocket", "", "", cellWebSocket},
	}
	for _, k := range kinds {
		for _, d := range directives {
			query := strings.NewReplacer("${D}", d.outer, "${E}", d.inner).Replace(k.query)
			deferred := strings.HasPrefix(d.name, "defer") && d.name != "defer if false"
			for _, tr := range transports {
				t.Run(k.name+"/"+d.name+"/"+tr.name, func(t *testing.T) {
					g.query(t, `{ transactions(first: 1) { edges { cursor } } }`, nil)
					g.closeIdle()
					before := goleak.IgnoreCurrent()
					c := matrixCell{t: t, g: g, query: query, method: tr.method, accept: tr.accept,
						subscription: k.subscription, deferred: deferred}
					switch tr.kind {
					case cellJSON:
						c.overJSON()
					case cellStream:
						c.overStream()
					case cellWebSocket:
						c.overWebSocket()
					}
					if c.transport != nil {
						c.transport.CloseIdleConnections()
					}
					// The process serves, and the cell left nothing running.
					g.query(t, `{ transactions(first: 1) { edges { cursor } } }`, nil)
					g.waitNoGoroutines(t, before)
				})
			}
		}
	}
}

type cellTransport int

const (
	cellJSON cellTransport = iota
	cellStream
	cellWebSocket
)

type matrixCell struct {
	t                                 *testing.T
	g                                 *liveGateway
	query, method, accept             string
	subscription, deferred            bool
	transport                         *http.Transport
	receivedEvent, receivedIncrements bool
}

// refused reports whether the operation never executes: a subscription
// that defers fragments, on any transport.
func (c *matrixCell) refused() bool { return c.subscription && c.deferred }

func (c *matrixCell) do() *http.Response {
	c.transport = &http.Transport{}
	c.t.Cleanup(c.transport.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline)
	c.t.Cleanup(cancel)
	resp := streamRequestWith(c.t, ctx, c.transport, c.g.URL, c.method, c.accept, c.query, nil)
	return resp
}

// overJSON: a plain request carries one result; what needs a stream is a
// request error without data.
func (c *matrixCell) overJSON() {
	resp := c.do()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got map[string]json.RawMessage
	if err := json.Unmarshal(body, &got); err != nil {
		c.t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if c.subscription || c.deferred {
		if _, hasData := got["data"]; hasData || got["errors"] == nil {
			c.t.Fatalf("want a request error without data, got %d %s", resp.StatusCode, body)
		}
		wantCode(c.t, got["errors"], "BAD_USER_INPUT")
		return
	}
	if resp.StatusCode != http.StatusOK || got["errors"] != nil || got["data"] == nil {
		c.t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
}

// overStream reads whatever form the gateway chose, by its Content-Type.
func (c *matrixCell) overStream() {
	if c.subscription && !c.refused() {
		defer c.appendUntilEvent()()
	}
	resp := c.do()
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/"):
		body, _ := io.ReadAll(resp.Body)
		var got map[string]json.RawMessage
		if err := json.Unmarshal(body, &got); err != nil {
			c.t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if c.refused() {
			if _, hasData := got["data"]; hasData {
				c.t.Fatalf("a request error with data: %s", body)
			}
			wantCode(c.t, got["errors"], "BAD_USER_INPUT")
			return
		}
		if c.subscription || c.deferred || resp.StatusCode != http.StatusOK || got["errors"] != nil || got["data"] == nil {
			c.t.Fatalf("a JSON answer to %s: %d %s", c.accept, resp.StatusCode, body)
		}
	case strings.HasPrefix(ct, "text/event-stream"):
		s := &sseStream{t: c.t, resp: resp, r: bufio.NewReader(resp.Body), cancel: func() {}}
		for {
			name, data := s.mustEvent()
			if name == "complete" {
				if c.subscription && !c.refused() {
					c.t.Fatal("the subscription completed")
				}
				return
			}
			if name != "next" {
				c.t.Fatalf("event %q %s", name, data)
			}
			if c.checkResult(data) {
				return // a subscription event: the client goes
			}
		}
	case strings.HasPrefix(ct, "multipart/mixed"):
		parts := readMultipart(c.t, resp)
		for {
			raw, ok := parts.next()
			if !ok {
				if c.subscription && !c.refused() {
					c.t.Fatal("the subscription ended")
				}
				return
			}
			if string(raw) == "{}" {
				continue // heartbeat
			}
			if parts.params["subscriptionspec"] != "" {
				var wrapped struct{ Payload json.RawMessage }
				if err := json.Unmarshal(raw, &wrapped); err != nil || wrapped.Payload == nil {
					c.t.Fatalf("part %s", raw)
				}
				raw = wrapped.Payload
			}
			if c.checkResult(raw) {
				return
			}
		}
	default:
		body, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, ct, body)
	}
}

// checkResult checks one result of a stream; true once a subscription
// has received an event.
func (c *matrixCell) checkResult(raw []byte) bool {
	var got map[string]json.RawMessage
	if err := json.Unmarshal(raw, &got); err != nil {
		c.t.Fatalf("result %s", raw)
	}
	if c.refused() {
		if _, hasData := got["data"]; hasData {
			c.t.Fatalf("a request error with data: %s", raw)
		}
		wantCode(c.t, got["errors"], "BAD_USER_INPUT")
		return false
	}
	if got["errors"] != nil {
		c.t.Fatalf("errors: %s", raw)
	}
	if got["incremental"] != nil {
		c.receivedIncrements = true
		return false
	}
	if got["data"] == nil {
		c.t.Fatalf("a result without data: %s", raw)
	}
	if _, hasNext := got["hasNext"]; hasNext != c.deferred {
		c.t.Fatalf("hasNext present: %v, deferred: %v: %s", hasNext, c.deferred, raw)
	}
	if c.deferred && strings.Contains(string(got["data"]), "delegations") {
		c.t.Fatalf("a deferred field in the initial payload: %s", raw)
	}
	return c.subscription
}

// overWebSocket: graphql-transport-ws; a request error is an `error`
// message, which no `complete` follows.
func (c *matrixCell) overWebSocket() {
	if c.subscription && !c.refused() {
		defer c.appendUntilEvent()()
	}
	ws := connectWS(c.t, c.g.URL)
	defer ws.conn.CloseNow()
	ws.subscribe("1", c.query, nil)
	for {
		m := ws.read()
		if m.ID != "1" {
			c.t.Fatalf("message %+v", m)
		}
		switch m.Type {
		case "error":
			if !c.refused() {
				c.t.Fatalf("error %s", m.Payload)
			}
			wantCode(c.t, m.Payload, "BAD_USER_INPUT")
			// The socket still serves: a query is answered.
			ws.subscribe("2", `{ transactions(first: 1) { edges { cursor } } }`, nil)
			if m := ws.read(); m.ID != "2" || m.Type != "next" {
				c.t.Fatalf("after the error: %+v", m)
			}
			if m := ws.read(); m.ID != "2" || m.Type != "complete" {
				c.t.Fatalf("after the error: %+v", m)
			}
			return
		case "next":
			if c.refused() {
				c.t.Fatalf("next %s", m.Payload)
			}
			if c.checkResult(m.Payload) {
				ws.send(wsMessage{ID: "1", Type: "complete"})
				return
			}
		case "complete":
			if c.subscription {
				c.t.Fatal("the subscription completed")
			}
			return
		default:
			c.t.Fatalf("message %+v", m)
		}
	}
}

// appendUntilEvent appends a transaction every 20 ms until the returned
// function is called, so that a subscription receives an event however
// late it starts.
func (c *matrixCell) appendUntilEvent() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_, _ = c.g.Sample.Service.AppendTransactions(1)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// wantCode checks that errors holds an error of the code.
func wantCode(t *testing.T, raw json.RawMessage, code string) {
	t.Helper()
	var errs []gqlError
	if err := json.Unmarshal(raw, &errs); err != nil || len(errs) == 0 || errs[0].Extensions["code"] != code {
		t.Fatalf("errors %s, want %s", raw, code)
	}
}

// closeIdle closes the idle keep-alive connections of the test's
// clients and of the gateway's upstream client (their goroutines are no
// request's).
func (g *liveGateway) closeIdle() {
	http.DefaultClient.CloseIdleConnections()
	g.upstream.CloseIdleConnections()
}

// waitNoGoroutines waits until every goroutine started since before has
// ended, idle connections closed (bounded by the stream deadline).
func (g *liveGateway) waitNoGoroutines(t *testing.T, before goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(streamDeadline)
	for {
		g.closeIdle()
		err := goleak.Find(before)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left behind: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
