package graph_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// The tests of signed cursors: a cursor the gateway did not issue, under
// the key it holds, is BAD_USER_INPUT and never reaches the data service.

// otherKeys are the keys of another gateway (another deployment, or this
// one before a key change).
func otherKeys(t *testing.T) *graph.CursorKeys {
	t.Helper()
	k, err := graph.NewCursorKeys("a-different-gateway-key-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// upstreamRequests counts the sample service's requests to every endpoint.
func upstreamRequests(s *sampleservice.Server) int64 {
	var n int64
	for _, e := range []sampleservice.Endpoint{sampleservice.EndpointAssets, sampleservice.EndpointFundingPayments, sampleservice.EndpointDelegations, sampleservice.EndpointTransactions} {
		n += s.Service.Requests(e)
	}
	return n
}

func b64(raw string) string { return base64.RawURLEncoding.EncodeToString([]byte(raw)) }

// packedDataNodeCursor is the packed payload of a data-node cursor over
// the JSON js, as the gateway's cursors carry it.
func packedDataNodeCursor(js string) string {
	return string(upstream.Cursor(base64.StdEncoding.EncodeToString([]byte(js))).Pack())
}

// cursorCase is one connection whose cursors are checked.
type cursorCase struct {
	name string
	// query declares $first, $after, $last, $before; the connection is
	// at path.
	query string
	path  []string
	vars  map[string]any
	// forged are cursors in the gateway's formats, made up.
	forged map[string]string
}

func cursorCases(ds *sampleservice.Dataset) []cursorCase {
	party := ds.Parties[0]
	paging := `(first: $first, after: $after, last: $last, before: $before)`
	selection := `{ edges { cursor } pageInfo { startCursor endCursor } }`
	fakeMAC := "\x01\x02\x03\x04\x05\x06\x07\x08"
	assetsJSON := `{"id":"` + strings.Repeat("f", 64) + `"}`
	delegationJSON := `{"vegaTime":"2024-03-14T04:00:00Z","partyId":"` + party + `","nodeId":"` + ds.Nodes[0] + `","epochId":1}`
	funding := `{"k":{"t":1,"m":"m","s":2,"p":"` + party + `"},"h":true,"d":9223372036854775807}`
	dataNodeForged := func(list, js string) map[string]string {
		return map[string]string{
			"v1 JSON":         b64("v1:" + list + `:{"c":"` + base64.StdEncoding.EncodeToString([]byte(js)) + `"}`),
			"v2 packed":       b64("v2:" + list + ":" + packedDataNodeCursor(js)),
			"v3 made-up MAC":  b64("v3:" + list + ":" + packedDataNodeCursor(js) + fakeMAC),
			"v3 without MAC":  b64("v3:" + list + ":" + packedDataNodeCursor(js)),
			"upstream cursor": base64.StdEncoding.EncodeToString([]byte(js)),
		}
	}
	fundingForged := map[string]string{
		"v1 JSON":        b64("v1:funding-payments:" + funding),
		"v2 packed":      b64("v2:funding-payments:\x02s\x01m\x04s\x01p\x01\x06"),
		"v3 made-up MAC": b64("v3:funding-payments:\x02s\x01m\x04s\x01p\x01\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01" + fakeMAC),
	}
	txForged := map[string]string{
		"v1 JSON":        b64(`v1:transactions:{"b":1,"i":0}`),
		"v3 made-up MAC": b64(`v3:transactions:{"b":1,"i":0}` + fakeMAC),
	}
	vars := `query(` + pagingVars + `, $party: ID!)`
	return []cursorCase{
		{name: "assets", query: `query(` + pagingVars + `) { assets` + paging + selection + ` }`, path: []string{"assets"}, forged: dataNodeForged("assets", assetsJSON)},
		{name: "delegations", query: `query(` + pagingVars + `) { delegations` + paging + selection + ` }`, path: []string{"delegations"}, forged: dataNodeForged("delegations", delegationJSON)},
		{name: "funding payments", query: vars + ` { fundingPayments(partyId: $party, first: $first, after: $after, last: $last, before: $before)` + selection + ` }`,
			path: []string{"fundingPayments"}, vars: map[string]any{"party": party}, forged: fundingForged},
		{name: "transactions", query: `query(` + pagingVars + `) { transactions` + paging + selection + ` }`, path: []string{"transactions"}, forged: txForged},
		{name: "party's delegations", query: vars + ` { party(id: $party) { delegations` + paging + selection + ` } }`,
			path: []string{"party", "delegations"}, vars: map[string]any{"party": party}, forged: dataNodeForged("delegations", delegationJSON)},
		{name: "party's funding payments", query: vars + ` { party(id: $party) { fundingPayments` + paging + selection + ` } }`,
			path: []string{"party", "fundingPayments"}, vars: map[string]any{"party": party}, forged: fundingForged},
		{name: "party's transactions", query: vars + ` { party(id: $party) { transactions` + paging + selection + ` } }`,
			path: []string{"party", "transactions"}, vars: map[string]any{"party": party}, forged: txForged},
	}
}

// page runs the case's query; the connection's start and end cursors.
func (c cursorCase) page(t *testing.T, g *testGateway, more map[string]any) (gqlResponse, string, string) {
	t.Helper()
	vars := map[string]any{}
	for k, v := range c.vars {
		vars[k] = v
	}
	for k, v := range more {
		vars[k] = v
	}
	r := g.query(t, c.query, vars)
	var data map[string]any
	_ = json.Unmarshal(r.Data, &data)
	var conn any = data
	for _, k := range c.path {
		m, _ := conn.(map[string]any)
		conn = m[k]
	}
	m, _ := conn.(map[string]any)
	info, _ := m["pageInfo"].(map[string]any)
	start, _ := info["startCursor"].(string)
	end, _ := info["endCursor"].(string)
	return r, start, end
}

// tamper changes one character in the middle of a cursor.
func tamper(c string) string {
	i := len(c) / 2
	with := byte('A')
	if c[i] == 'A' {
		with = 'B'
	}
	return c[:i] + string(with) + c[i+1:]
}

// TestForeignCursorsNeverReachTheUpstream: on every list, root and
// nested, forged cursors (the gateway's unsigned formats of old, the
// signed format with a made-up MAC, the upstream's own), a genuine
// cursor with one character changed or cut short, and a cursor another
// gateway signed under another key are each BAD_USER_INPUT that tells
// the client to start again, echo nothing of the cursor, and cost no
// upstream request; a genuine cursor pages both ways.
func TestForeignCursorsNeverReachTheUpstream(t *testing.T) {
	sample := startSample(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()})
	g := newGateway(t, sample, gatewayOptions{})
	other := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{CursorKeys: otherKeys(t)}})
	for _, c := range cursorCases(sample.Service.Dataset()) {
		t.Run(c.name, func(t *testing.T) {
			r, start, end := c.page(t, g, map[string]any{"first": 3})
			if len(r.Errors) > 0 || end == "" {
				t.Fatalf("first page: %+v", r)
			}
			// A genuine cursor pages forwards, and back to where it was.
			r, nextStart, _ := c.page(t, g, map[string]any{"first": 3, "after": end})
			if len(r.Errors) > 0 || nextStart == "" {
				t.Fatalf("next page: %+v", r)
			}
			if r, _, back := c.page(t, g, map[string]any{"last": 1, "before": nextStart}); len(r.Errors) > 0 || back != end {
				t.Fatalf("back from the next page: %q, want %q (%+v)", back, end, r.Errors)
			}
			_, _, foreign := c.page(t, other, map[string]any{"first": 3})
			bad := map[string]string{
				"tampered":          tamper(end),
				"truncated":         end[:len(end)-4],
				"cut by one":        end[:len(end)-1],
				"another key":       foreign,
				"start, tampered":   tamper(start),
				"with a line break": end[:8] + "\n" + end[8:],
			}
			for name, f := range c.forged {
				bad["forged "+name] = f
			}
			for name, cursor := range bad {
				for _, dir := range []map[string]any{{"first": 2, "after": cursor}, {"last": 2, "before": cursor}} {
					before := upstreamRequests(sample)
					r, _, _ := c.page(t, g, dir)
					if len(r.Errors) != 1 || r.Errors[0].code() != "BAD_USER_INPUT" {
						t.Fatalf("%s %v: %+v, want one BAD_USER_INPUT", name, dir, r.Errors)
					}
					msg := r.Errors[0].Message
					if !strings.Contains(msg, "start again from the first page") && !strings.Contains(msg, "pass a cursor from edges.cursor") {
						t.Errorf("%s: %q does not say what to do", name, msg)
					}
					if strings.Contains(msg, cursor[:8]) {
						t.Errorf("%s: %q echoes the cursor", name, msg)
					}
					if n := upstreamRequests(sample) - before; n != 0 {
						t.Fatalf("%s %v: %d upstream requests, want none", name, dir, n)
					}
				}
			}
		})
	}
}

// TestForgedCursorsCannotOpenTheBreaker is the attack of the finding:
// forged assets cursors in the gateway's format, two aliased fields a
// query, sent again and again, reached the data node (whose answer to bad
// asset paging is a 500, retried and counted as a failure) and opened the
// circuit breaker for every client. Now the data node never sees them;
// the breaker stays closed and the next client is served. A genuinely
// signed cursor with a bad upstream cursor inside (the control) shows the
// same query would reach the data node, and open the breaker, had the MAC
// not stopped it.
func TestForgedCursorsCannotOpenTheBreaker(t *testing.T) {
	sample := startSample(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()})
	g := newGateway(t, sample, gatewayOptions{Client: upstream.Config{Breaker: upstream.BreakerConfig{Failures: 2}}})
	bogus := string(upstream.Cursor("not a data-node cursor").Pack())
	const attack = `query($a: String, $b: String) { a: assets(first: 1, after: $a) { edges { cursor } } b: assets(first: 1, after: $b) { edges { cursor } } }`
	forgeries := []string{
		b64("v2:assets:" + bogus),
		b64("v3:assets:" + bogus + "\x00\x00\x00\x00\x00\x00\x00\x00"),
		graph.SignedCursorForTest(otherKeys(t), "v3:assets:"+bogus),
	}
	for i := range 5 {
		f := forgeries[i%len(forgeries)]
		r := g.query(t, attack, map[string]any{"a": f, "b": f})
		if len(r.Errors) != 2 || r.Errors[0].code() != "BAD_USER_INPUT" || r.Errors[1].code() != "BAD_USER_INPUT" {
			t.Fatalf("attack %d: %+v", i, r.Errors)
		}
	}
	if n := sample.Service.Requests(sampleservice.EndpointAssets); n != 0 {
		t.Fatalf("the forged cursors cost %d asset requests, want none", n)
	}
	if s := g.Client.BreakerState(upstream.ServiceDataNode); s != upstream.BreakerClosed {
		t.Fatalf("breaker %s after the attack", s)
	}
	var data struct {
		Assets struct{ Edges []struct{ Cursor string } }
	}
	g.query(t, `{ assets(first: 2) { edges { cursor } } }`, nil).mustData(t, &data)
	if len(data.Assets.Edges) != 2 {
		t.Fatalf("a normal query after the attack: %+v", data)
	}

	// The control: signed with the gateway's key, the bad upstream cursor
	// goes through and costs the data node requests (a 500).
	before := sample.Service.Requests(sampleservice.EndpointAssets)
	signed := graph.SignedCursorForTest(graph.CursorKeysForTest(), "v3:assets:"+bogus)
	if r := g.query(t, attack, map[string]any{"a": signed, "b": signed}); len(r.Errors) == 0 {
		t.Fatalf("control: a bad upstream cursor was served: %s", r.Data)
	}
	if n := sample.Service.Requests(sampleservice.EndpointAssets) - before; n == 0 {
		t.Fatalf("control: no asset request; the test above would pass without its setup")
	}
	// The data node's 500 for bad asset paging is its answer to the
	// request, not a failure of the service: it neither opens the
	// breaker nor is retried (upstream.Error.causedByRequest).
	if s := g.Client.BreakerState(upstream.ServiceDataNode); s != upstream.BreakerClosed {
		t.Fatalf("control: breaker %s after the data node's answers to bad paging, want closed", s)
	}
}
