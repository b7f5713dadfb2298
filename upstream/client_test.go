package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	testParty = "3b6c2a1f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4da2b3"
	testMkt   = "e63a37edae8b74f1e5ebc6fd55dd5f2e8c7f5b3b0c1d2e3f4a5b6c7d8e9f4d13"
	// A data-node cursor as padded base64 with + / and =.
	testCursor = Cursor("eyJpZCI6Ij4+Pz8/In0+/w==")
)

// setup starts a server running handler and a client whose data node is at
// {server}/dn and explorer at {server}/rest, so that every test also checks
// that path prefixes are kept.
func setup(t *testing.T, handler http.HandlerFunc, opts ...func(*Config)) *Client {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return newTestClient(t, Config{DataNodeURL: srv.URL + "/dn/", ExplorerURL: srv.URL + "/rest"}, opts...)
}

// newTestClient is New(cfg) after opts adjusted cfg.
func newTestClient(t *testing.T, cfg Config, opts ...func(*Config)) *Client {
	t.Helper()
	for _, o := range opts {
		o(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestClientRequests(t *testing.T) {
	assetsBody := fixture(t, "assets.json")
	oneAsset := []byte(`{"assets":{"edges":[{"node":{"id":"a&b=c#d","details":{},"status":"STATUS_ENABLED"},"cursor":"x"}],"pageInfo":{}}}`)
	tests := []struct {
		name      string
		call      func(context.Context, *Client) error
		body      []byte
		wantPath  string
		wantQuery string
		wantParam map[string][]string // the values the server reads back
	}{
		{
			name: "assets, forward after a cursor with + / =",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListAssets(ctx, AssetsParams{Pagination: Pagination{First: ptr(int32(10)), After: testCursor, NewestFirst: ptr(false)}})
				return err
			},
			body:      assetsBody,
			wantPath:  "/dn/api/v2/assets",
			wantQuery: "pagination.after=eyJpZCI6Ij4%2BPz8%2FIn0%2B%2Fw%3D%3D&pagination.first=10&pagination.newestFirst=false",
			wantParam: map[string][]string{"pagination.after": {string(testCursor)}, "pagination.first": {"10"}, "pagination.newestFirst": {"false"}},
		},
		{
			name: "asset by an id that looks like more parameters",
			call: func(ctx context.Context, c *Client) error {
				a, _, err := c.GetAsset(ctx, "a&b=c#d")
				if err == nil && a.ID != "a&b=c#d" {
					err = fmt.Errorf("got asset %q", a.ID)
				}
				return err
			},
			body:      oneAsset,
			wantPath:  "/dn/api/v2/assets",
			wantQuery: "assetId=a%26b%3Dc%23d",
			wantParam: map[string][]string{"assetId": {"a&b=c#d"}},
		},
		{
			name: "funding payments, backward before a cursor",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListFundingPayments(ctx, FundingPaymentsParams{PartyID: testParty, MarketID: testMkt,
					Pagination: Pagination{Last: ptr(int32(5)), Before: testCursor}})
				return err
			},
			body:      fixture(t, "funding_payments.json"),
			wantPath:  "/dn/api/v2/funding-payments",
			wantQuery: "marketId=" + testMkt + "&pagination.before=eyJpZCI6Ij4%2BPz8%2FIn0%2B%2Fw%3D%3D&pagination.last=5&partyId=" + testParty,
		},
		{
			name: "funding payments, party only",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListFundingPayments(ctx, FundingPaymentsParams{PartyID: testParty})
				return err
			},
			body:      fixture(t, "funding_payments.json"),
			wantPath:  "/dn/api/v2/funding-payments",
			wantQuery: "partyId=" + testParty,
		},
		{
			name: "delegations with every filter",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListDelegations(ctx, DelegationsParams{PartyID: testParty, NodeID: "b7c8d9", EpochID: "4821",
					Pagination: Pagination{First: ptr(int32(5000)), NewestFirst: ptr(true)}})
				return err
			},
			body:      fixture(t, "delegations.json"),
			wantPath:  "/dn/api/v2/delegations",
			wantQuery: "epochId=4821&nodeId=b7c8d9&pagination.first=5000&pagination.newestFirst=true&partyId=" + testParty,
		},
		{
			name: "delegations without filters",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListDelegations(ctx, DelegationsParams{})
				return err
			},
			body:     fixture(t, "delegations.json"),
			wantPath: "/dn/api/v2/delegations",
		},
		{
			name: "transactions newer than a position, with repeated filters",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListTransactions(ctx, TransactionsParams{First: 3, After: &TxCursor{Block: 34514203, Index: 2},
					CmdTypes: []string{"Submit Order", "Batch Market Instructions"}, ExcludeCmdTypes: []string{"Chain Event"},
					Parties: []string{testParty, "a&b"}})
				return err
			},
			body:     fixture(t, "transactions_commands.json"),
			wantPath: "/rest/transactions",
			wantQuery: "after=34514203.2&cmdTypes=Submit+Order&cmdTypes=Batch+Market+Instructions&excludeCmdTypes=Chain+Event" +
				"&first=3&parties=" + testParty + "&parties=a%26b",
			wantParam: map[string][]string{"cmdTypes": {"Submit Order", "Batch Market Instructions"}, "parties": {testParty, "a&b"},
				"after": {"34514203.2"}, "excludeCmdTypes": {"Chain Event"}, "first": {"3"}},
		},
		{
			name: "transactions older than a position",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListTransactions(ctx, TransactionsParams{Last: 50, Before: &TxCursor{Block: 7, Index: 0}})
				return err
			},
			body:      fixture(t, "transactions_proposals.json"),
			wantPath:  "/rest/transactions",
			wantQuery: "before=7.0&last=50",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *http.Request
			c := setup(t, func(w http.ResponseWriter, r *http.Request) {
				got = r
				w.Write(tt.body)
			})
			if err := tt.call(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("no request reached the server")
			}
			if got.Method != http.MethodGet || got.URL.Path != tt.wantPath || got.URL.RawQuery != tt.wantQuery {
				t.Errorf("request %s %s?%s\nwant GET %s?%s", got.Method, got.URL.Path, got.URL.RawQuery, tt.wantPath, tt.wantQuery)
			}
			if tt.wantParam != nil {
				if diff := cmp.Diff(url.Values(tt.wantParam), got.URL.Query()); diff != "" {
					t.Errorf("parameters as the server reads them (-want +got)\n%s", diff)
				}
			}
			if a := got.Header.Get("Accept"); a != "application/json" {
				t.Errorf("Accept = %q", a)
			}
			if ua := got.Header.Get("User-Agent"); ua != DefaultUserAgent {
				t.Errorf("User-Agent = %q", ua)
			}
		})
	}
}

// serveFile answers with a fixture and the data node's freshness headers.
func serveFile(t *testing.T, name string) http.HandlerFunc {
	body := fixture(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Block-Height", "34514210")
		w.Header().Set("X-Block-Timestamp", "1710446402123456789")
		w.Write(body)
	}
}

var wantFresh = Freshness{BlockHeight: 34514210, BlockTime: time.Date(2024, 3, 14, 20, 0, 2, 123456789, time.UTC)}

func TestClientPages(t *testing.T) {
	ctx := context.Background()

	t.Run("assets", func(t *testing.T) {
		c := setup(t, serveFile(t, "assets.json"))
		got, err := c.ListAssets(ctx, AssetsParams{})
		if err != nil {
			t.Fatal(err)
		}
		want := &AssetPage{
			Edges: []Edge[Asset]{
				{Cursor: "eyJpZCI6ImZkZjBlYzExIn0=", Node: Asset{ID: "fdf0ec11", Status: AssetStatusEnabled, Details: AssetDetails{
					Name: "Tether USD", Symbol: "USDT", Decimals: 6, Quantum: "1000000",
					ERC20: &ERC20{ContractAddress: "0xdAC17F958D2ee523a2206206994597C13D831ec7", LifetimeLimit: "100000000000", WithdrawThreshold: "1000000000"}}}},
				{Cursor: "eyJpZCI6ImI0ZjI3MjYifQ==", Node: Asset{ID: "b4f2726", Status: AssetStatusPendingListing, Details: AssetDetails{
					Name: "tDAI", Symbol: "tDAI", Decimals: 18, Quantum: "1",
					BuiltinAsset: &BuiltinAsset{MaxFaucetAmountMint: "1000000000000000000000"}}}},
				{Cursor: "eyJpZCI6IjBhMWIifQ==", Node: Asset{ID: "0a1b", Status: AssetStatusProposed, Details: AssetDetails{
					Name: "No source", Symbol: "NONE", Decimals: 0, Quantum: "1"}}},
			},
			PageInfo:  PageBounds{HasNextPage: true, StartCursor: "eyJpZCI6ImZkZjBlYzExIn0=", EndCursor: "eyJpZCI6IjBhMWIifQ=="},
			Freshness: wantFresh,
		}
		if diff := cmp.Diff(want, got, ignoreDerived); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})

	t.Run("asset by id", func(t *testing.T) {
		c := setup(t, serveFile(t, "assets.json"))
		got, fresh, err := c.GetAsset(ctx, "b4f2726")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != "b4f2726" || got.Details.Symbol != "tDAI" {
			t.Errorf("got %+v", got)
		}
		if diff := cmp.Diff(&wantFresh, fresh); diff != "" {
			t.Errorf("freshness (-want +got)\n%s", diff)
		}
		// An answer without the asked id is not found, whatever it holds.
		if _, _, err := c.GetAsset(ctx, "elsewhere"); !IsNotFound(err) {
			t.Errorf("GetAsset of an id missing from the answer: %v, want not found", err)
		}
	})

	t.Run("funding payments", func(t *testing.T) {
		c := setup(t, serveFile(t, "funding_payments.json"))
		got, err := c.ListFundingPayments(ctx, FundingPaymentsParams{PartyID: testParty})
		if err != nil {
			t.Fatal(err)
		}
		want := []Edge[FundingPayment]{
			{Cursor: "eyJ2ZWdhVGltZSI6IjIwMjQtMDMtMTRUMjA6MDA6MDAuMTIzNDU2WiIsIm1hcmtldElEIjoiZTYzYSIsInBhcnR5SUQiOiIzYjZjIn0=",
				Node: FundingPayment{PartyID: testParty, MarketID: testMkt, FundingPeriodSeq: 42, Timestamp: 1710446400123456000, Amount: "-1250"}},
			{Cursor: "eyJ2ZWdhVGltZSI6IjIwMjQtMDMtMTRUMTI6MDA6MDBaIiwibWFya2V0SUQiOiJlNjNhIiwicGFydHlJRCI6IjNiNmMifQ==",
				Node: FundingPayment{PartyID: testParty, MarketID: testMkt, FundingPeriodSeq: 41, Timestamp: 1710417600000000000, Amount: "980"}},
		}
		if diff := cmp.Diff(want, got.Edges); diff != "" {
			t.Errorf("edges (-want +got)\n%s", diff)
		}
		if got.PageInfo.HasNextPage || got.PageInfo.HasPreviousPage || got.PageInfo.EndCursor != want[1].Cursor || got.Freshness != wantFresh {
			t.Errorf("page info %+v, freshness %+v", got.PageInfo, got.Freshness)
		}
	})

	t.Run("delegations", func(t *testing.T) {
		c := setup(t, serveFile(t, "delegations.json"))
		got, err := c.ListDelegations(ctx, DelegationsParams{})
		if err != nil {
			t.Fatal(err)
		}
		want := Delegation{Party: testParty, NodeID: "b7c8d9", EpochSeq: "4821", Amount: "5000000000000000000000"}
		if len(got.Edges) != 1 || got.Edges[0].Node != want || !got.PageInfo.HasPreviousPage {
			t.Errorf("got %+v", got)
		}
	})

	t.Run("empty page", func(t *testing.T) {
		c := setup(t, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"assets":{"edges":[],"pageInfo":{"hasNextPage":false,"hasPreviousPage":false,"startCursor":"","endCursor":""}}}`)
		})
		got, err := c.ListAssets(ctx, AssetsParams{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&AssetPage{Edges: []Edge[Asset]{}}, got, ignoreDerived); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})

	t.Run("transactions", func(t *testing.T) {
		c := setup(t, serveFile(t, "transactions_commands.json"))
		got, err := c.ListTransactions(ctx, TransactionsParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Transactions) != 10 || got.Transactions[3].Position() != (TxCursor{Block: 34514203, Index: 2}) {
			t.Errorf("got %d transactions", len(got.Transactions))
		}
	})
}

func TestClientErrors(t *testing.T) {
	const badParty = `{"code":3,"message":"InvalidArgument error","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":10000,"message":"invalid party id","inner":""}]}`
	tests := []struct {
		name          string
		status        int
		header        http.Header
		body          string
		call          func(context.Context, *Client) error
		want          *Error
		wantNotFound  bool
		wantLimited   bool
		wantRetry     time.Duration
		wantErrString string
	}{
		{
			name: "invalid party id, with the data node's two Content-Type headers", status: 400, body: badParty,
			header: http.Header{"Content-Type": {"application/json", "application/grpc"}},
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointFundingPayments, StatusCode: 400, Code: 3,
				Message: "InvalidArgument error", DetailCode: 10000, DetailMessage: "invalid party id"},
			wantErrString: `list funding payments of party "": data-node funding-payments: HTTP 400: InvalidArgument error: invalid party id (code 10000)`,
		},
		{
			name: "invalid market id", status: 400,
			body: `{"code":3,"message":"InvalidArgument error","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":10000,"message":"invalid market ID","inner":""}]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointFundingPayments, StatusCode: 400, Code: 3,
				Message: "InvalidArgument error", DetailCode: 10000, DetailMessage: "invalid market ID"},
		},
		{
			name: "invalid pagination", status: 400, call: listDelegations,
			body: `{"code":3,"message":"InvalidArgument error","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":10028,"message":"invalid pagination","inner":"cannot use both before and after"}]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointDelegations, StatusCode: 400, Code: 3,
				Message: "InvalidArgument error", DetailCode: 10028, DetailMessage: "invalid pagination", DetailInner: "cannot use both before and after"},
		},
		{
			name: "invalid paging on assets is a 500", status: 500, call: listAssets,
			body: `{"code":13,"message":"Internal error","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":200001,"message":"failed to get assets","inner":"invalid pagination"}]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 500, Code: 13,
				Message: "Internal error", DetailCode: 200001, DetailMessage: "failed to get assets", DetailInner: "invalid pagination"},
		},
		{
			name: "funding payment cursor defect", status: 500,
			body: `{"code":13,"message":"Internal error","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":10028,"message":"invalid pagination","inner":"building cursor predicate: no field matching column name funding_period_seq"}]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointFundingPayments, StatusCode: 500, Code: 13, Message: "Internal error",
				DetailCode: 10028, DetailMessage: "invalid pagination", DetailInner: "building cursor predicate: no field matching column name funding_period_seq"},
		},
		{
			name: "bad epoch id", status: 400, call: listDelegations,
			body: `{"code":3,"message":"InvalidArgument error","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":10036,"message":"failed to parse epoch id","inner":"strconv.ParseInt: parsing \"abc\": invalid syntax"}]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointDelegations, StatusCode: 400, Code: 3, Message: "InvalidArgument error",
				DetailCode: 10036, DetailMessage: "failed to parse epoch id", DetailInner: `strconv.ParseInt: parsing "abc": invalid syntax`},
		},
		{
			name: "unknown asset", status: 404, call: getAsset,
			body: `{"code":5,"message":"NotFound error","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":200002,"message":"failed to get asset for ID","inner":"no resource corresponding to this id"}]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 404, Code: 5, Message: "NotFound error",
				DetailCode: 200002, DetailMessage: "failed to get asset for ID", DetailInner: "no resource corresponding to this id"},
			wantNotFound: true,
		},
		{
			name: "parameter of the wrong type", status: 400, call: listAssets,
			body: `{"code":3,"message":"type mismatch, parameter: pagination.first, error: strconv.ParseInt: parsing \"x\": invalid syntax","details":[]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 400, Code: 3,
				Message: `type mismatch, parameter: pagination.first, error: strconv.ParseInt: parsing "x": invalid syntax`},
		},
		{
			name: "unknown route is a plain-text 404, not a missing record", status: 404, call: listTransactions,
			header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: "404 page not found\n",
			want: &Error{Service: ServiceExplorer, Endpoint: EndpointTransactions, StatusCode: 404, Body: "404 page not found"},
		},
		{
			name: "unknown data-node route is a JSON 404 without detail, not a missing record", status: 404, call: getAsset,
			body: `{"code":5,"message":"Not Found","details":[]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 404, Code: 5, Message: "Not Found"},
		},
		{
			name: "wrong method", status: 501, call: listAssets,
			body: `{"code":12,"message":"Method Not Allowed","details":[]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 501, Code: 12, Message: "Method Not Allowed"},
		},
		{
			name: "rate limited", status: 429, call: listAssets,
			header: http.Header{"Ratelimit-Limit": {"100"}, "Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"1"}},
			body:   `{"code":8,"message":"api request rate limit exceeded","details":[]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 429, Code: 8, Message: "api request rate limit exceeded",
				RateLimitReset: time.Second},
			wantLimited: true,
		},
		{
			name: "rate limited with Ratelimit-Retry-After", status: 429, call: listAssets,
			header: http.Header{"Ratelimit-Retry-After": {"3"}},
			body:   `{"code":8,"message":"api request rate limit exceeded","details":[]}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 429, Code: 8, Message: "api request rate limit exceeded",
				RetryAfter: 3 * time.Second},
			wantLimited: true, wantRetry: 3 * time.Second,
		},
		{
			name: "rate limited with the standard Retry-After", status: 429, call: listAssets,
			header: http.Header{"Retry-After": {"2"}}, body: `too many requests`,
			want:        &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 429, RetryAfter: 2 * time.Second, Body: "too many requests"},
			wantLimited: true, wantRetry: 2 * time.Second,
		},
		{
			name: "banned", status: 403, call: listAssets,
			header: http.Header{"Ratelimit-Retry-After": {"600"}},
			body:   `{"code":7,"message":"temporarily banned for continuing to request while rate limited"}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 403, Code: 7,
				Message: "temporarily banned for continuing to request while rate limited", RetryAfter: 10 * time.Minute},
			wantLimited: true, wantRetry: 10 * time.Minute,
		},
		{
			name: "banned without a retry header waits the documented ban", status: 403, call: listAssets,
			body: `{"code":7,"message":"temporarily banned for continuing to request while rate limited"}`,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 403, Code: 7,
				Message: "temporarily banned for continuing to request while rate limited"},
			wantLimited: true, wantRetry: 10 * time.Minute,
		},
		{
			name: "a proxy's HTML error page", status: 502, call: listTransactions,
			header: http.Header{"Content-Type": {"text/html"}}, body: "<html><body>" + strings.Repeat("Bad gateway. ", 40) + "</body></html>",
			want: &Error{Service: ServiceExplorer, Endpoint: EndpointTransactions, StatusCode: 502,
				Body: ("<html><body>" + strings.Repeat("Bad gateway. ", 40))[:maxSnippet] + "…"},
		},
		{
			name: "an empty error body", status: 503, call: listAssets,
			want: &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 503, Body: "Service Unavailable"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := setup(t, func(w http.ResponseWriter, r *http.Request) {
				for k, vs := range tt.header {
					for _, v := range vs {
						w.Header().Add(k, v)
					}
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			call := tt.call
			if call == nil {
				call = func(ctx context.Context, c *Client) error {
					_, err := c.ListFundingPayments(ctx, FundingPaymentsParams{})
					return err
				}
			}
			err := call(context.Background(), c)
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if IsNotFound(err) != tt.wantNotFound {
				t.Errorf("IsNotFound = %v, want %v", IsNotFound(err), tt.wantNotFound)
			}
			if retry, limited := IsRateLimited(err); limited != tt.wantLimited || retry != tt.wantRetry {
				t.Errorf("IsRateLimited = %v, %v; want %v, %v", retry, limited, tt.wantRetry, tt.wantLimited)
			}
			if tt.wantErrString != "" && err.Error() != tt.wantErrString {
				t.Errorf("Error() = %q\nwant      %q", err.Error(), tt.wantErrString)
			}
		})
	}
}

func listAssets(ctx context.Context, c *Client) error {
	_, err := c.ListAssets(ctx, AssetsParams{})
	return err
}

func getAsset(ctx context.Context, c *Client) error {
	_, _, err := c.GetAsset(ctx, "nope")
	return err
}

func listDelegations(ctx context.Context, c *Client) error {
	_, err := c.ListDelegations(ctx, DelegationsParams{})
	return err
}

func listTransactions(ctx context.Context, c *Client) error {
	_, err := c.ListTransactions(ctx, TransactionsParams{})
	return err
}

func TestClientDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		call    func(context.Context, *Client) error
		body    string
		wantMsg string
	}{
		{"malformed", listAssets, `{"assets":`, "unexpected end of JSON input"},
		{"truncated", listTransactions, `{"transactions":[{"block":"1","index":0,"command":{"nonce":"1"`, "unexpected end of JSON input"},
		{"HTML", listAssets, `<html>maintenance</html>`, "invalid character '<'"},
		{"wrong shape", listAssets, `{"assets":[]}`, "cannot unmarshal array"},
		{"another list", listDelegations, `{"assets":{"edges":[]}}`, "the body is not the expected delegations list"},
		{"null list", listTransactions, `{"transactions":null}`, "the body is not the expected transactions list"},
		{"malformed field", func(ctx context.Context, c *Client) error {
			_, err := c.ListFundingPayments(ctx, FundingPaymentsParams{PartyID: testParty})
			return err
		}, `{"fundingPayments":{"edges":[{"node":{"fundingPeriodSeq":"4.5"}}]}}`,
			`string "4.5" (not an integer)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := setup(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tt.body) })
			err := tt.call(context.Background(), c)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T), want a *DecodeError", err, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestClientMalformedFieldIsNamed(t *testing.T) {
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"fundingPayments":{"edges":[{"node":{"fundingPeriodSeq":"4.5"}}]}}`)
	})
	_, err := c.ListFundingPayments(context.Background(), FundingPaymentsParams{PartyID: testParty})
	want := `list funding payments of party "` + testParty + `": data-node funding-payments: cannot decode response: ` +
		`json: cannot unmarshal string "4.5" (not an integer) into Go struct field FundingPayment.fundingPayments.edges.node.fundingPeriodSeq of type upstream.Uint64`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

func TestClientBodyLimit(t *testing.T) {
	body := fixture(t, "assets.json")
	handler := func(w http.ResponseWriter, r *http.Request) { w.Write(body) }

	c := setup(t, handler, func(cfg *Config) { cfg.MaxBodyBytes = int64(len(body)) })
	if _, err := c.ListAssets(context.Background(), AssetsParams{}); err != nil {
		t.Errorf("a body of exactly the limit: %v", err)
	}
	c = setup(t, handler, func(cfg *Config) { cfg.MaxBodyBytes = int64(len(body)) - 1 })
	_, err := c.ListAssets(context.Background(), AssetsParams{})
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("a body over the limit: %v, want a *DecodeError wrapping ErrResponseTooLarge", err)
	}
}

func TestClientUnavailable(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		c := setup(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			func(cfg *Config) { cfg.Timeout = 50 * time.Millisecond })
		start := time.Now()
		err := listAssets(context.Background(), c)
		var ue *UnavailableError
		if !errors.As(err, &ue) || !errors.Is(err, context.DeadlineExceeded) || !IsUnavailable(err) {
			t.Errorf("error %v (%T), want an *UnavailableError wrapping context.DeadlineExceeded", err, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v despite a 50ms timeout", d)
		}
	})

	t.Run("the caller's earlier deadline wins", func(t *testing.T) {
		c := setup(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := listAssets(ctx, c); !IsUnavailable(err) || time.Since(start) > 2*time.Second {
			t.Errorf("error %v after %v", err, time.Since(start))
		}
	})

	t.Run("timeout while reading the body", func(t *testing.T) {
		c := setup(t, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"assets":{"edges":[`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, func(cfg *Config) { cfg.Timeout = 50 * time.Millisecond })
		if err := listAssets(context.Background(), c); !IsUnavailable(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v (%T), want an *UnavailableError", err, err)
		}
	})

	t.Run("connection refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		c, err := New(Config{DataNodeURL: "http://" + addr})
		if err != nil {
			t.Fatal(err)
		}
		err = listAssets(context.Background(), c)
		var ue *UnavailableError
		if !errors.As(err, &ue) || ue.Service != ServiceDataNode || ue.Endpoint != EndpointAssets {
			t.Errorf("error %v (%T), want an *UnavailableError for data-node assets", err, err)
		}
	})

	t.Run("connection closed mid-body", func(t *testing.T) {
		c := setup(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `{"assets":{"edges":[`)
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		})
		if err := listAssets(context.Background(), c); !IsUnavailable(err) {
			t.Errorf("error %v (%T), want an *UnavailableError", err, err)
		}
	})
}

func TestClientOnResponse(t *testing.T) {
	var mu sync.Mutex
	var infos []RequestInfo
	body := fixture(t, "assets.json")
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/rest/transactions" {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write(body)
	}, func(cfg *Config) {
		cfg.OnResponse = func(i RequestInfo) {
			mu.Lock()
			defer mu.Unlock()
			infos = append(infos, i)
		}
	})
	listAssets(context.Background(), c)
	listTransactions(context.Background(), c)
	if len(infos) != 2 {
		t.Fatalf("OnResponse called %d times, want 2", len(infos))
	}
	if i := infos[0]; i.Service != ServiceDataNode || i.Endpoint != EndpointAssets || i.StatusCode != 200 ||
		i.Bytes != int64(len(body)) || i.Err != nil || i.Duration <= 0 {
		t.Errorf("success: %+v", i)
	}
	var e *Error
	if i := infos[1]; i.Service != ServiceExplorer || i.Endpoint != EndpointTransactions || i.StatusCode != 429 || !errors.As(i.Err, &e) {
		t.Errorf("failure: %+v", i)
	}
}

func TestClientRefusesBeforeSending(t *testing.T) {
	requests := 0
	c := setup(t, func(w http.ResponseWriter, r *http.Request) { requests++ })
	ctx := context.Background()
	pos := &TxCursor{Block: 1, Index: 1}
	for _, p := range []TransactionsParams{
		{First: 1, Last: 1}, {First: 1, Before: pos}, {Last: 1, After: pos}, {Before: pos, After: pos}, {First: -1},
	} {
		if _, err := c.ListTransactions(ctx, p); err == nil {
			t.Errorf("ListTransactions(%+v) succeeded", p)
		}
	}
	if _, _, err := c.GetAsset(ctx, ""); !IsNotFound(err) {
		t.Errorf("GetAsset(\"\") = %v, want not found", err)
	}
	if requests != 0 {
		t.Errorf("%d requests sent, want none", requests)
	}
}

func TestNew(t *testing.T) {
	for _, bad := range []string{"", "ftp://host", "host:8080", "http://", "http://host/?x=1", "http://host/#top", "http://host:bad"} {
		if _, err := New(Config{DataNodeURL: bad}); err == nil {
			t.Errorf("New accepted data node URL %q", bad)
		}
	}
	if _, err := New(Config{DataNodeURL: "http://host", ExplorerURL: "nope"}); err == nil {
		t.Error("New accepted explorer URL \"nope\"")
	}
	c, err := New(Config{DataNodeURL: "https://host"})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{c.assets.url, c.fundingPayments.url, c.delegations.url, c.transactions.url}
	want := []string{"https://host/api/v2/assets", "https://host/api/v2/funding-payments", "https://host/api/v2/delegations", "https://host/transactions"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("routes without an explorer URL (-want +got)\n%s", diff)
	}
	if c.httpClient == http.DefaultClient || c.timeout != DefaultTimeout || c.maxBody != DefaultMaxBodyBytes {
		t.Errorf("defaults: client %p, timeout %v, max body %d", c.httpClient, c.timeout, c.maxBody)
	}
	c, _ = New(Config{DataNodeURL: "https://host/dn", ExplorerURL: "https://other:3009/rest/"})
	if c.assets.url != "https://host/dn/api/v2/assets" || c.transactions.url != "https://other:3009/rest/transactions" {
		t.Errorf("routes with prefixes: %s, %s", c.assets.url, c.transactions.url)
	}
}
