package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/upstream"
)

// Subscriptions cost the upstream per event, not per subscriber: the same
// selection of the same transaction is fetched once for all of them, a
// subscription's requests per event are bounded before it starts, and
// they count against its client's share.

// submitterPage selects, on each event, the submitter's newest
// transactions: one explorer request per event.
const submitterPage = `subscription { transactions { cursor node { hash
	submitter { id transactions(first: 2) { edges { node { hash } } } } } } }`

// countingUpstream counts the resolvers' explorer list requests.
type countingUpstream struct {
	graph.Upstream
	lists atomic.Int64
}

func (u *countingUpstream) ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error) {
	u.lists.Add(1)
	return u.Upstream.ListTransactions(ctx, p)
}

func TestSubscribersShareAnEventsRequests(t *testing.T) {
	counter := &countingUpstream{}
	g := newLiveGateway(t, liveOptions{Wrap: func(u graph.Upstream) graph.Upstream {
		counter.Upstream = u
		return counter
	}})
	const subscribers = 20
	c := connectWS(t, g.URL)
	want := map[string]int{}
	for i := range subscribers {
		id := fmt.Sprint("s", i)
		c.subscribe(id, submitterPage, nil)
		want[id] = 3
	}
	g.waitSubscribed(t, subscribers)
	txs, err := g.Sample.Service.AppendBlockOf(3) // one block: the answers are shared per block
	if err != nil {
		t.Fatal(err)
	}
	got := c.collect(want)

	// Every subscriber received the same events, with the submitter's
	// page as the connection shows it now.
	for i, tx := range txs {
		var q struct {
			Party struct{ Transactions json.RawMessage }
		}
		g.query(t, `query($id: ID!) { party(id: $id) { transactions(first: 2) { edges { node { hash } } } } }`,
			map[string]any{"id": tx.Submitter}).mustData(t, &q)
		for id, events := range got {
			var e struct {
				Node struct {
					Hash      string
					Submitter struct{ Transactions json.RawMessage }
				}
			}
			if err := json.Unmarshal(events[i].raw, &e); err != nil {
				t.Fatal(err)
			}
			if e.Node.Hash != tx.Hash || string(e.Node.Submitter.Transactions) != string(q.Party.Transactions) {
				t.Fatalf("%s event %d: %s\nwant %s with the submitter's page %s", id, i, events[i].raw, tx.Hash, q.Party.Transactions)
			}
		}
	}
	// One request per distinct submitter and block, not one per
	// subscriber: 60 without sharing. (The three queries above made 3.)
	distinct := map[string]bool{}
	for _, tx := range txs {
		distinct[tx.Submitter] = true
	}
	if n := counter.lists.Load() - int64(len(txs)); n < 1 || n > int64(len(txs)) {
		t.Errorf("%d subscribers of 3 transactions (%d submitters) made %d explorer requests, want at most one per transaction", subscribers, len(distinct), n)
	}
}

// TestSubscriptionRequestsPerEventAreBounded: a subscription whose
// selection could make more upstream requests per transaction than
// Limits.MaxCallsPerEvent is refused before it starts, naming the limit.
func TestSubscriptionRequestsPerEventAreBounded(t *testing.T) {
	g := newLiveGateway(t, liveOptions{Executor: graph.ExecutorConfig{Limits: graph.Limits{MaxCallsPerEvent: 3}}})
	var aliases []string
	for i := range 4 {
		aliases = append(aliases, fmt.Sprintf("t%d: transactions(first: %d) { edges { node { hash } } }", i, i+1))
	}
	c := connectWS(t, g.URL)
	c.subscribe("wide", `subscription { transactions { node { submitter { `+strings.Join(aliases, " ")+` } } } }`, nil)
	m := c.read()
	if m.ID != "wide" || m.Type != "error" {
		t.Fatalf("got %s %s, want the subscription's error", m.Type, m.Payload)
	}
	var errs []gqlError
	if err := json.Unmarshal(m.Payload, &errs); err != nil || len(errs) != 1 {
		t.Fatalf("payload %s: %v", m.Payload, err)
	}
	if errs[0].code() != "QUERY_TOO_COMPLEX" || !strings.Contains(errs[0].Message, "4 upstream requests for each transaction") || !strings.Contains(errs[0].Message, "limit of 3") {
		t.Errorf("error %+v", errs[0])
	}
	// Three are admitted.
	c.subscribe("three", `subscription { transactions { node { submitter { `+strings.Join(aliases[:3], " ")+` } } } }`, nil)
	g.waitSubscribed(t, 1)
}

// TestSubscriptionRequestsCountAgainstTheirClient: a client's
// subscriptions' requests per event add up against its share
// (live.Config.MaxCallsPerClient); subscriptions selecting only the
// transaction cost nothing there, and other clients are not held back.
func TestSubscriptionRequestsCountAgainstTheirClient(t *testing.T) {
	g := newLiveGateway(t, liveOptions{
		Live: live.Config{MaxCallsPerClient: 3},
		Server: func(srv *httptest.Server) {
			next := srv.Config.Handler
			srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// The client key, as the gateway's middleware sets it.
				next.ServeHTTP(w, r.WithContext(upstream.WithClient(r.Context(), r.Header.Get("X-Test-Client"))))
			})
		},
	})
	const two = `subscription { transactions { node { submitter {
		a: transactions(first: 1) { edges { node { hash } } } b: transactions(first: 2) { edges { node { hash } } } } } } }`
	dial := func(client string) *wsClient {
		t.Helper()
		return connectWSHeader(t, g.URL, http.Header{"X-Test-Client": {client}})
	}
	a := dial("198.51.100.7")
	a.subscribe("1", two, nil)
	g.waitSubscribed(t, 1)
	a.subscribe("2", two, nil)
	m := a.read()
	var errs []gqlError
	if m.ID != "2" || m.Type != "next" || json.Unmarshal(m.Payload, &struct{ Errors *[]gqlError }{&errs}) != nil || len(errs) != 1 {
		t.Fatalf("got %s %s, want the refusal of the second", m.Type, m.Payload)
	}
	if errs[0].code() != "RATE_LIMITED" || !strings.Contains(errs[0].Message, "make 2 upstream requests for each transaction, and this one would add 2") ||
		!strings.Contains(errs[0].Message, "is 3") {
		t.Errorf("error %+v", errs[0])
	}
	if m := a.read(); m.ID != "2" || m.Type != "complete" {
		t.Fatalf("got %s %s, want complete", m.Type, m.Payload)
	}
	a.subscribe("plain", txSubscription, nil)
	b := dial("198.51.100.8")
	b.subscribe("1", two, nil)
	g.waitSubscribed(t, 2)
	if st := g.Live.Stats(); st.RefusedCalls != 1 || st.Subscriptions != 3 {
		t.Errorf("stats %+v", st)
	}
}
