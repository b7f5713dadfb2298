package sampleservice

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// detail builds the expected vega.ErrorDetail.
func detail(code int, message, inner string) *[]errorDetailJSON {
	return &[]errorDetailJSON{{Type: "type.googleapis.com/vega.ErrorDetail", Code: code, Message: message, Inner: inner}}
}

// noDetails is an empty (but present) details array.
var noDetails = &[]errorDetailJSON{}

type errorCase struct {
	name   string
	method string // GET when empty
	path   string
	status int
	want   errorJSON
	// innerPrefix compares the detail's inner by prefix (Go error texts
	// from encoding/json).
	innerPrefix bool
}

func runErrorCases(t *testing.T, srv *Server, cases []errorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req, err := http.NewRequest(method, srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := fetchReq(t, req)
			if r.status != tc.status {
				t.Errorf("status = %d, want %d; body %s", r.status, tc.status, r.body)
			}
			got := decodeError(t, r)
			want := tc.want
			if tc.innerPrefix && got.Details != nil && want.Details != nil && len(*got.Details) == 1 && len(*want.Details) == 1 {
				g, w := (*got.Details)[0], (*want.Details)[0]
				if strings.HasPrefix(g.Inner, w.Inner) {
					w.Inner = g.Inner
					want.Details = &[]errorDetailJSON{w}
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
			dataNode := strings.HasPrefix(tc.path, "/api/")
			wantCT := []string{"application/json"}
			if dataNode {
				wantCT = []string{"application/json", "application/grpc"}
			}
			if diff := cmp.Diff(wantCT, r.header.Values("Content-Type")); diff != "" {
				t.Errorf("Content-Type headers (-want +got):\n%s", diff)
			}
		})
	}
}

func invalidArgument(d *[]errorDetailJSON) errorJSON {
	return errorJSON{Code: 3, Message: "InvalidArgument error", Details: d}
}

func TestErrors(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	fp := func(pairs ...string) string { return "/api/v2/funding-payments" + qstr(pairs...) }
	notJSON := base64.StdEncoding.EncodeToString([]byte("nope"))
	runErrorCases(t, srv, []errorCase{
		{name: "§6 funding payments without partyId → 400 10000 invalid party id", path: fp(),
			status: 400, want: invalidArgument(detail(10000, "invalid party id", ""))},
		{name: "§6 funding payments with a partyId that is not 64 hex → 400 10000", path: fp("partyId", "xyz"),
			status: 400, want: invalidArgument(detail(10000, "invalid party id", ""))},
		{name: "§6 funding payments with an uppercase partyId → 400 10000", path: fp("partyId", strings.ToUpper(partyA)),
			status: 400, want: invalidArgument(detail(10000, "invalid party id", ""))},
		{name: "§6 bad marketId → 400 10000 invalid market ID", path: fp("partyId", partyA, "marketId", "abc"),
			status: 400, want: invalidArgument(detail(10000, "invalid market ID", ""))},
		{name: "§6 an empty marketId is a bad marketId", path: fp("partyId", partyA, "marketId", ""),
			status: 400, want: invalidArgument(detail(10000, "invalid market ID", ""))},
		{name: "§6 funding payments size above 5000 → 400 10028", path: fp("partyId", partyA, "pagination.first", "5001"),
			status: 400, want: invalidArgument(detail(10028, "invalid pagination", "pagination limit must be in range 0-5000"))},
		{name: "§6 funding payments size 0 → 400 10028", path: fp("partyId", partyA, "pagination.first", "0"),
			status: 400, want: invalidArgument(detail(10028, "invalid pagination", "pagination limit must be in range 0-5000"))},
		{name: "§6 funding payments negative last → 400 10028", path: fp("partyId", partyA, "pagination.last", "-1"),
			status: 400, want: invalidArgument(detail(10028, "invalid pagination", "pagination limit must be in range 0-5000"))},
		{name: "§6 funding payments before and after together → 400 10028", path: fp("partyId", partyA, "pagination.before", "a", "pagination.after", "b"),
			status: 400, want: invalidArgument(detail(10028, "invalid pagination", "cannot set both a before and after cursor"))},
		{name: "§6 funding payments bad cursor → 400 10028", path: fp("partyId", partyA, "pagination.after", "!!!"),
			status: 400, want: invalidArgument(detail(10028, "invalid pagination", "failed to decode after cursor: failed to decode cursor: illegal base64 data at input byte 0"))},
		{name: "§6 delegations size above 5000 → 400 10028", path: "/api/v2/delegations" + qstr("pagination.last", "6000"),
			status: 400, want: invalidArgument(detail(10028, "invalid pagination", "pagination limit must be in range 0-5000"))},
		{name: "§6 delegations before and after together → 400 10028", path: "/api/v2/delegations" + qstr("pagination.first", "1", "pagination.before", "a", "pagination.after", "b"),
			status: 400, want: invalidArgument(detail(10028, "invalid pagination", "cannot set both a before and after cursor"))},
		{name: "§6 delegations unpadded cursor → 400 10028", path: "/api/v2/delegations" + qstr("pagination.before", "eyJpZCI6IjEifQ"),
			status: 400, want: invalidArgument(detail(10028, "invalid pagination", "failed to decode before cursor: failed to decode cursor: illegal base64 data at input byte 12"))},
		{name: "§6 delegations cursor that is base64 but not JSON → 400 10028", path: "/api/v2/delegations" + qstr("pagination.after", notJSON),
			status: 400, innerPrefix: true, want: invalidArgument(detail(10028, "invalid pagination", "failed to decode after cursor: parsing cursor: "))},
		{name: "§6 an empty cursor → 400 10028 cursor is empty", path: "/api/v2/delegations" + qstr("pagination.after", ""),
			status: 400, want: invalidArgument(detail(10028, "invalid pagination", "failed to decode after cursor: cursor is empty"))},
		{name: "§6 invalid paging on assets → 500 200001 failed to get assets", path: "/api/v2/assets" + qstr("pagination.first", "0"),
			status: 500, want: errorJSON{Code: 13, Message: "Internal error",
				Details: detail(200001, "failed to get assets", "rpc error: code = InvalidArgument desc = InvalidArgument error")}},
		{name: "§6 epochId=abc → 400 10036 failed to parse epoch id", path: "/api/v2/delegations" + qstr("epochId", "abc"),
			status: 400, want: invalidArgument(detail(10036, "failed to parse epoch id", `epochID: abc: strconv.ParseInt: parsing "abc": invalid syntax`))},
		{name: "§6 unknown asset id → 404 200002 failed to get asset for ID", path: "/api/v2/assets" + qstr("assetId", "nope"),
			status: 404, want: errorJSON{Code: 5, Message: "NotFound error",
				Details: detail(200002, "failed to get asset for ID", "failed to get asset by ID: nope: no resource corresponding to this id")}},
		{name: "§6 a parameter of the wrong type → 400, no details, message names the field (int)", path: "/api/v2/assets" + qstr("pagination.first", "abc"),
			status: 400, want: errorJSON{Code: 3, Message: `type mismatch, parameter: pagination.first, error: strconv.ParseInt: parsing "abc": invalid syntax`, Details: noDetails}},
		{name: "§6 a parameter of the wrong type → 400, no details, message names the field (int32 overflow)", path: "/api/v2/delegations" + qstr("pagination.last", "99999999999"),
			status: 400, want: errorJSON{Code: 3, Message: `type mismatch, parameter: pagination.last, error: strconv.ParseInt: parsing "99999999999": value out of range`, Details: noDetails}},
		{name: "§6 a parameter of the wrong type → 400, no details, message names the field (bool)", path: fp("partyId", partyA, "pagination.newestFirst", "maybe"),
			status: 400, want: errorJSON{Code: 3, Message: `type mismatch, parameter: pagination.newestFirst, error: strconv.ParseBool: parsing "maybe": invalid syntax`, Details: noDetails}},
		{name: "§6 a wrong-type parameter is reported before a missing partyId", path: fp("pagination.first", "x"),
			status: 400, want: errorJSON{Code: 3, Message: `type mismatch, parameter: pagination.first, error: strconv.ParseInt: parsing "x": invalid syntax`, Details: noDetails}},
		{name: "§6 a parameter of the wrong type on the explorer → 400, no details", path: "/rest/transactions" + qstr("first", "-1"),
			status: 400, want: errorJSON{Code: 3, Message: `type mismatch, parameter: first, error: strconv.ParseUint: parsing "-1": invalid syntax`, Details: noDetails}},
		{name: "§6 unknown data-node route → 404", path: "/api/v2/orders",
			status: 404, want: errorJSON{Code: 5, Message: "Not Found", Details: noDetails}},
		{name: "§6 unknown route → 404", path: "/nope",
			status: 404, want: errorJSON{Code: 5, Message: "Not Found", Details: noDetails}},
		{name: "§6 wrong method on the data node → 501", method: http.MethodPost, path: "/api/v2/assets",
			status: 501, want: errorJSON{Code: 12, Message: "Method Not Allowed", Details: noDetails}},
		{name: "§6 wrong method on the explorer → 501", method: http.MethodDelete, path: "/rest/transactions",
			status: 501, want: errorJSON{Code: 12, Message: "Method Not Allowed", Details: noDetails}},
		{name: "§6 an unparsable query string → 400", path: "/api/v2/assets?pagination.first=%zz",
			status: 400, want: errorJSON{Code: 3, Message: `invalid URL escape "%zz"`, Details: noDetails}},
	})
}

// TestErrorEncoding checks the bytes, not just the values: details always
// present, compact on the data node, pretty on the explorer.
func TestErrorEncoding(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	t.Run("§6 data-node error body is compact with details first-class", func(t *testing.T) {
		r := fetch(t, srv.URL+"/api/v2/funding-payments")
		want := `{"code":3,"message":"InvalidArgument error","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":10000,"message":"invalid party id","inner":""}]}`
		if string(r.body) != want {
			t.Errorf("body = %s\nwant   %s", r.body, want)
		}
	})
	t.Run("§6 details is an empty array, not absent, when there are none", func(t *testing.T) {
		r := fetch(t, srv.URL+"/api/v2/nothing")
		if want := `{"code":5,"message":"Not Found","details":[]}`; string(r.body) != want {
			t.Errorf("body = %s, want %s", r.body, want)
		}
	})
	t.Run("§6 explorer error body is pretty-printed", func(t *testing.T) {
		r := fetch(t, srv.URL+"/rest/transactions?first=1&last=1")
		want := "{\n  \"code\": 3,\n  \"message\": \"InvalidArgument error\",\n  \"details\": [\n    {\n" +
			"      \"@type\": \"type.googleapis.com/vega.ErrorDetail\",\n      \"code\": 10000,\n" +
			"      \"message\": \"cannot use both limits `first` and `last` within the same query\",\n      \"inner\": \"\"\n    }\n  ]\n}"
		if string(r.body) != want {
			t.Errorf("body =\n%s\nwant\n%s", r.body, want)
		}
	})
}
