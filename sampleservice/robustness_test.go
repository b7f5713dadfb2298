package sampleservice

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Every parameter any endpoint reads, and values that break parsers.
var (
	garbageParams = []string{
		"assetId", "asset_id", "partyId", "party_id", "marketId", "market_id", "nodeId", "node_id", "epochId", "epoch_id",
		"pagination.first", "pagination.last", "pagination.after", "pagination.before", "pagination.newestFirst",
		"pagination.newest_first", "first", "last", "after", "before", "cmdTypes", "cmd_types", "excludeCmdTypes",
		"exclude_cmd_types", "parties", "filters[tx.submitter]", "filters[block.height]", "filters[cmd.type]", "filters[",
		"filters[]", "pagination", "pagination.", "",
	}
	garbageValues = []string{
		"", "0", "-1", "1", "2", "5000", "5001", "2147483647", "2147483648", "-2147483649", "18446744073709551616",
		"9223372036854775807", "abc", "true", "false", "1.5", "1e3", " 1", "０", "null", "\x00", "💥", "%", "..", "1.", ".1",
		"1.2.3", "105.1", "18446744073709551615.4294967295", "18446744073709551616.0", "1.4294967296",
		strings.Repeat("9", 400), strings.Repeat("a", 64), partyA, market1, asset3, node1,
		base64.StdEncoding.EncodeToString([]byte(`{"id":1}`)),
		base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"not a time"}`)),
		base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"9999-12-31T23:59:59Z","epochId":"x"}`)),
		base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"0001-01-01T00:00:00Z","epochId":-9223372036854775808}`)),
		base64.StdEncoding.EncodeToString([]byte(`[]`)),
		base64.StdEncoding.EncodeToString([]byte(`null`)),
		base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe}),
		assetCursorFor(asset2), fundingCursorFor(t0, market1, partyA), delegationCursorFor(t0, partyA, node1, 3),
	}
	garbagePaths = []string{"/api/v2/assets", "/api/v2/funding-payments", "/api/v2/delegations", "/transactions", "/rest/transactions"}
)

// checkSane fails on a response that a panic or a broken encoder could
// have produced.
func checkSane(t *testing.T, target string, status int, body []byte) {
	t.Helper()
	switch status {
	case http.StatusOK, http.StatusBadRequest, http.StatusNotFound, http.StatusInternalServerError:
	default:
		t.Fatalf("%s: unexpected status %d: %s", target, status, body)
	}
	if !json.Valid(body) {
		t.Fatalf("%s: body is not JSON: %q", target, body)
	}
	if strings.Contains(string(body), "internal error:") {
		t.Fatalf("%s: the handler panicked: %s", target, body)
	}
}

func TestGarbageInputNeverBreaksTheService(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	t.Run("every parameter with every garbage value, one at a time, over HTTP", func(t *testing.T) {
		for _, path := range garbagePaths {
			for _, p := range garbageParams {
				for _, v := range garbageValues {
					target := srv.URL + path + "?" + url.QueryEscape(p) + "=" + url.QueryEscape(v)
					if strings.Contains(path, "funding") {
						target += "&partyId=" + partyA
					}
					r := fetch(t, target)
					checkSane(t, target, r.status, r.body)
				}
			}
		}
	})
	t.Run("random combinations", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		h := srv.Service.Handler()
		for i := range 3000 {
			q := url.Values{}
			for range 1 + rng.IntN(5) {
				q.Add(garbageParams[rng.IntN(len(garbageParams))], garbageValues[rng.IntN(len(garbageValues))])
			}
			if rng.IntN(2) == 0 {
				q.Set("partyId", partyA)
			}
			target := garbagePaths[i%len(garbagePaths)] + "?" + q.Encode()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
			checkSane(t, target, rec.Code, rec.Body.Bytes())
		}
	})
	t.Run("raw query strings that are not well formed", func(t *testing.T) {
		for _, raw := range []string{"%", "a=%zz", "=", "&&&", "a;b", "pagination.first=1&pagination.first=x", "first=1&first=2&last"} {
			for _, path := range garbagePaths {
				r := fetch(t, srv.URL+path+"?"+raw)
				checkSane(t, path+"?"+raw, r.status, r.body)
			}
		}
	})
}

// FuzzQuery throws arbitrary query strings at every endpoint; `go test`
// runs the seeds, `go test -fuzz FuzzQuery` explores.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"", "pagination.first=2&pagination.after=eyJpZCI6IjEifQ==", "first=1&after=100.0",
		"before=1.1&after=2.2", "cmdTypes=Submit+Order&parties=x", "epochId=-1", "assetId=x", "filters[block.height]=103"} {
		f.Add(s)
	}
	svc, err := New(Config{Data: fixtureDataset(), Defects: DefaultDefects(), CacheEntries: -1})
	if err != nil {
		f.Fatal(err)
	}
	h := svc.Handler()
	f.Fuzz(func(t *testing.T, raw string) {
		for _, path := range garbagePaths {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.URL.RawQuery = raw
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			checkSane(t, path+"?"+raw, rec.Code, rec.Body.Bytes())
		}
	})
}
