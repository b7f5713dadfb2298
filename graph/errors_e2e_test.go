package graph_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

var (
	partyA  = strings.Repeat("a1", 32)
	marketA = strings.Repeat("b2", 32)
)

func TestBadUserInputIsNeverForwarded(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	assetCursor := func() string {
		var page map[string]connectionPage
		g.query(t, `{ assets(first: 1) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage } } }`, nil).mustData(t, &page)
		return page["assets"].Edges[0].Cursor
	}()
	sample.Service.ResetCounters()
	cases := []struct {
		name, query, want string
	}{
		{"negative first", `{ assets(first: -1) { edges { cursor } } }`, "first must not be negative (got -1)"},
		{"negative last", `{ assets(last: -5) { edges { cursor } } }`, "last must not be negative (got -5)"},
		{"first over the maximum", `{ transactions(first: 1001) { edges { cursor } } }`, "first must be at most 1000 (got 1001); page through larger lists"},
		{"first with last", `{ delegations(first: 1, last: 1) { edges { cursor } } }`, "pass either first (page forwards) or last (page backwards), not both"},
		{"after with before", `{ assets(after: "x", before: "y") { edges { cursor } } }`, "pass either after (with first) or before (with last), not both"},
		{"first with before", `{ assets(first: 2, before: "y") { edges { cursor } } }`, "first pages forwards and goes with after; to page backwards from before, use last"},
		{"last with after", `{ assets(last: 2, after: "y") { edges { cursor } } }`, "last pages backwards and goes with before; to page forwards from after, use first"},
		{"malformed cursor", `{ assets(after: "not a cursor") { edges { cursor } } }`, `after: not a cursor issued by this gateway; pass a cursor from edges.cursor or pageInfo`},
		{"upstream cursor", `{ transactions(after: "34514203.2") { edges { cursor } } }`, `after: not a cursor issued by this gateway; pass a cursor from edges.cursor or pageInfo`},
		{"cursor of another list", fmt.Sprintf(`{ delegations(after: %q) { edges { cursor } } }`, assetCursor), "after: this cursor belongs to the assets list, not to delegations; cursors only page the list that issued them"},
		{"unknown cursor version", fmt.Sprintf(`{ assets(after: %q) { edges { cursor } } }`, base64.RawURLEncoding.EncodeToString([]byte(`v9:assets:{}`))), `after: this cursor was not issued by this gateway, or was issued under another cursor key (cursors from before a key change are refused); start again from the first page`},
		{"malformed party id", `{ fundingPayments(partyId: "xyz") { edges { cursor } } }`, `partyId: "xyz" is not a party id; party ids are 64 hexadecimal characters`},
		{"malformed market id", fmt.Sprintf(`{ fundingPayments(partyId: %q, marketId: "m&x=1") { edges { cursor } } }`, partyA), `marketId: "m&x=1" is not a market id; market ids are 64 hexadecimal characters`},
		{"malformed node id", `{ delegations(nodeId: "n1") { edges { cursor } } }`, `nodeId: "n1" is not a node id; node ids are 64 hexadecimal characters`},
		{"malformed epoch", `{ delegations(epochId: "abc") { edges { cursor } } }`, `epochId: "abc" is not an epoch; epochs are integers from 0 to 9223372036854775807 such as "42"`},
		{"malformed party filter", `{ transactions(parties: ["nope"]) { edges { cursor } } }`, `parties[0]: "nope" is not a party id; party ids are 64 hexadecimal characters`},
		{"empty command type", `{ transactions(cmdTypes: [""]) { edges { cursor } } }`, `cmdTypes[0]: "" is not a transaction type; use ` + "`types`" + ` (enum TransactionType) or one of the explorer's type strings, matched exactly: ` + validTypeStrings},
		{"malformed party", `{ party(id: "p") { id } }`, `id: "p" is not a party id; party ids are 64 hexadecimal characters`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := g.query(t, tc.query, nil)
			if len(resp.Errors) != 1 || resp.Errors[0].code() != "BAD_USER_INPUT" || resp.Errors[0].Message != tc.want {
				t.Fatalf("errors = %+v\nwant one BAD_USER_INPUT %q", resp.Errors, tc.want)
			}
		})
	}
	for _, e := range []sampleservice.Endpoint{sampleservice.EndpointAssets, sampleservice.EndpointFundingPayments, sampleservice.EndpointDelegations, sampleservice.EndpointTransactions} {
		if n := sample.Service.Requests(e); n != 0 {
			t.Errorf("the upstream received %d %s requests for invalid input", n, e)
		}
	}
}

// fakeUpstream answers every request with one canned response and records
// the raw queries it received.
type fakeUpstream struct {
	status  int
	headers map[string][]string
	body    string

	mu      sync.Mutex
	queries []string
}

func (f *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.queries = append(f.queries, r.URL.Path+"?"+r.URL.RawQuery)
	f.mu.Unlock()
	for k, vs := range f.headers {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(f.status)
	_, _ = w.Write([]byte(f.body))
}

func (f *fakeUpstream) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queries...)
}

// gatewayOver serves a gateway whose data node and explorer are fake.
func gatewayOver(t *testing.T, f http.Handler) *testGateway {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return newGatewayURL(t, srv.URL)
}

const dataNodeJSON = "application/json"

func TestUpstreamErrorRows(t *testing.T) {
	detail := func(code int, msg, inner string) string {
		return fmt.Sprintf(`{"@type":"type.googleapis.com/vega.ErrorDetail","code":%d,"message":%q,"inner":%q}`, code, msg, inner)
	}
	twoTypes := map[string][]string{"Content-Type": {dataNodeJSON, "application/grpc"}}
	rows := []struct {
		name     string
		query    string
		status   int
		headers  map[string][]string
		body     string
		wantCode string
		wantUp   map[string]any // extensions.upstream
	}{
		{"invalid party id", fmt.Sprintf(`{ fundingPayments(partyId: %q) { edges { cursor } } }`, partyA), 400, twoTypes,
			`{"code":3,"message":"InvalidArgument error","details":[` + detail(10000, "invalid party id", "") + `]}`,
			"UPSTREAM_ERROR", map[string]any{"service": "data-node", "status": 400.0, "code": 3.0, "message": "invalid party id", "detailCode": 10000.0}},
		{"invalid market ID", fmt.Sprintf(`{ fundingPayments(partyId: %q, marketId: %q) { edges { cursor } } }`, partyA, marketA), 400, twoTypes,
			`{"code":3,"message":"InvalidArgument error","details":[` + detail(10000, "invalid market ID", "") + `]}`,
			"UPSTREAM_ERROR", map[string]any{"service": "data-node", "status": 400.0, "code": 3.0, "message": "invalid market ID", "detailCode": 10000.0}},
		{"invalid pagination", `{ delegations(first: 5) { edges { cursor } } }`, 400, twoTypes,
			`{"code":3,"message":"InvalidArgument error","details":[` + detail(10028, "invalid pagination", "cursor is invalid") + `]}`,
			"UPSTREAM_ERROR", map[string]any{"service": "data-node", "status": 400.0, "code": 3.0, "message": "invalid pagination", "detailCode": 10028.0}},
		{"failed to get assets", `{ assets(first: 5) { edges { cursor } } }`, 500, twoTypes,
			`{"code":13,"message":"Internal error","details":[` + detail(200001, "failed to get assets", "invalid pagination") + `]}`,
			"UPSTREAM_ERROR", map[string]any{"service": "data-node", "status": 500.0, "code": 13.0, "message": "failed to get assets", "detailCode": 200001.0}},
		{"failed to parse epoch id", `{ delegations(epochId: "7") { edges { cursor } } }`, 400, twoTypes,
			`{"code":3,"message":"InvalidArgument error","details":[` + detail(10036, "failed to parse epoch id", "") + `]}`,
			"UPSTREAM_ERROR", map[string]any{"service": "data-node", "status": 400.0, "code": 3.0, "message": "failed to parse epoch id", "detailCode": 10036.0}},
		{"unknown asset id", `{ asset(id: "abc") { id } }`, 404, twoTypes,
			`{"code":5,"message":"Not Found","details":[` + detail(200002, "failed to get asset for ID", "") + `]}`,
			"NOT_FOUND", nil},
		{"wrong parameter type", `{ assets(first: 5) { edges { cursor } } }`, 400, twoTypes,
			`{"code":3,"message":"type mismatch, parameter: pagination.first, error: strconv.ParseInt: parsing \"x\": invalid syntax","details":[]}`,
			"UPSTREAM_ERROR", map[string]any{"service": "data-node", "status": 400.0, "code": 3.0, "message": "type mismatch, parameter: pagination.first, error: strconv.ParseInt: parsing \"x\": invalid syntax"}},
		{"unknown route", `{ assets(first: 5) { edges { cursor } } }`, 404, map[string][]string{"Content-Type": {"text/plain"}},
			// A body that is not a JSON error reaches the client as the
			// status line only (upstream_bodies_e2e_test.go).
			"404 page not found\n", "UPSTREAM_ERROR", map[string]any{"service": "data-node", "status": 404.0, "code": 0.0, "message": "404 Not Found"}},
		{"wrong method", `{ assets(first: 5) { edges { cursor } } }`, 501, twoTypes,
			`{"code":12,"message":"Method Not Allowed","details":[]}`,
			"UPSTREAM_ERROR", map[string]any{"service": "data-node", "status": 501.0, "code": 12.0, "message": "Method Not Allowed"}},
		{"rate limited", `{ assets(first: 5) { edges { cursor } } }`, 429, map[string][]string{"Content-Type": {dataNodeJSON}},
			`{"code":8,"message":"api request rate limit exceeded","details":[]}`,
			"RATE_LIMITED", map[string]any{"service": "data-node", "status": 429.0, "code": 8.0, "message": "api request rate limit exceeded"}},
		{"banned", `{ assets(first: 5) { edges { cursor } } }`, 403, map[string][]string{"Content-Type": {dataNodeJSON}, "Ratelimit-Retry-After": {"600"}},
			`{"code":7,"message":"temporarily banned for continuing to request while rate limited"}`,
			"RATE_LIMITED", map[string]any{"service": "data-node", "status": 403.0, "code": 7.0, "message": "temporarily banned for continuing to request while rate limited"}},
		{"explorer bad request", `{ transactions(first: 5) { edges { cursor } } }`, 400, map[string][]string{"Content-Type": {dataNodeJSON}},
			`{"code":3,"message":"first and last cannot be used together","details":[]}`,
			"UPSTREAM_ERROR", map[string]any{"service": "explorer", "status": 400.0, "code": 3.0, "message": "first and last cannot be used together"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			g := gatewayOver(t, &fakeUpstream{status: row.status, headers: row.headers, body: row.body})
			resp := g.query(t, row.query, nil)
			if len(resp.Errors) != 1 {
				t.Fatalf("errors = %+v, want one", resp.Errors)
			}
			e := resp.Errors[0]
			if e.code() != row.wantCode {
				t.Fatalf("code = %q (%s), want %q", e.code(), e.Message, row.wantCode)
			}
			if row.wantUp != nil {
				up, _ := e.Extensions["upstream"].(map[string]any)
				if fmt.Sprint(up) != fmt.Sprint(row.wantUp) {
					t.Fatalf("extensions.upstream = %v\nwant %v", up, row.wantUp)
				}
				if !strings.Contains(e.Message, fmt.Sprint(row.wantUp["message"])) && row.wantCode == "UPSTREAM_ERROR" {
					t.Fatalf("message %q does not carry the upstream's detail", e.Message)
				}
			}
		})
	}
}

func TestParametersCannotBeInjected(t *testing.T) {
	f := &fakeUpstream{status: 404, headers: map[string][]string{"Content-Type": {dataNodeJSON}}, body: `{"code":5,"message":"Not Found","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":200002,"message":"failed to get asset for ID","inner":""}]}`}
	g := gatewayOver(t, f)
	hostile := "x&assetId=y#frag&pagination.first=5000"
	resp := g.query(t, `query($id: ID!) { asset(id: $id) { id } }`, map[string]any{"id": hostile})
	if len(resp.Errors) != 1 || resp.Errors[0].code() != "NOT_FOUND" {
		t.Fatalf("errors = %+v", resp.Errors)
	}
	// A forged cursor whose upstream part tries the same never leaves the
	// gateway; signed (as by a gateway with a bug), it is escaped.
	forged := base64.RawURLEncoding.EncodeToString([]byte(`v1:assets:{"c":"abc=&pagination.first=5000#x"}`))
	g.query(t, `query($c: String) { assets(first: 2, after: $c) { edges { cursor } } }`, map[string]any{"c": forged})
	signed := graph.SignedCursorForTest(graph.CursorKeysForTest(), "v3:assets:"+string(upstream.Cursor("abc=&pagination.first=5000#x").Pack()))
	g.query(t, `query($c: String) { assets(first: 2, after: $c) { edges { cursor } } }`, map[string]any{"c": signed})

	got := f.received()
	if len(got) != 2 {
		t.Fatalf("upstream received %d requests: %q", len(got), got)
	}
	for i, want := range []url.Values{
		{"assetId": {hostile}},
		{"pagination.after": {"abc=&pagination.first=5000#x"}, "pagination.first": {"2"}},
	} {
		_, raw, _ := strings.Cut(got[i], "?")
		q, err := url.ParseQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(q) != fmt.Sprint(want) {
			t.Errorf("request %d query = %v, want exactly %v", i, q, want)
		}
		if strings.ContainsAny(raw, "#") {
			t.Errorf("request %d: raw query %q carries an unescaped #", i, raw)
		}
	}
}
