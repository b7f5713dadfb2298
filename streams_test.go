package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEventStreamOutlivesTheServerTimeouts: an SSE subscription, and one
// over multipart/mixed (Apollo's multipart subscriptions), last longer
// than the server's ReadTimeout and WriteTimeout, which bound ordinary
// requests (a read deadline passing would cancel the request, a write
// deadline fail its writes): the stream keeps its keep-alive messages
// coming past both, through the whole middleware chain, then delivers a
// transaction appended after them.
func TestEventStreamOutlivesTheServerTimeouts(t *testing.T) {
	t.Parallel() // a second of keep-alives for each kind of stream
	for _, c := range []struct{ accept, keepAlive string }{
		{"text/event-stream", ":"},
		{`multipart/mixed;subscriptionSpec="1.0", application/json`, "{}"},
	} {
		t.Run(c.accept, func(t *testing.T) { testStreamOutlivesTheServerTimeouts(t, c.accept, c.keepAlive) })
	}
}

func testStreamOutlivesTheServerTimeouts(t *testing.T, accept, keepAlive string) {
	cfg, err := parseConfig([]string{"-ws-keepalive", "50ms"}, testEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := newGateway(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	const timeout = 200 * time.Millisecond
	srv := gw.server(gw.handler)
	srv.ReadTimeout, srv.WriteTimeout = timeout, timeout
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ln.Addr().String()+"/graphql",
		strings.NewReader(`{"query":"subscription { transactions { cursor node { hash } } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	readLine := func() string {
		t.Helper()
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended: %v", err)
		}
		return strings.TrimRight(line, "\r\n")
	}
	// 20 pings at 50ms: a second, five times the server's timeouts.
	for pings := 0; pings < 20; {
		if readLine() == keepAlive {
			pings++
		}
	}
	appended, err := gw.sample.Service.AppendBlockOf(1)
	if err != nil {
		t.Fatal(err)
	}
	for {
		line := readLine()
		if strings.Contains(line, appended[0].Hash) {
			return
		}
		if strings.HasPrefix(line, "data:") || strings.HasPrefix(line, `{"payload"`) {
			t.Fatalf("unexpected event: %s", line)
		}
	}
}
