package sampleservice

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tradenet/gateway/internal/testutil"
)

func TestWireEncoding(t *testing.T) {
	srv := startFixture(t, Config{})
	node := func(t *testing.T, path, list string) string {
		t.Helper()
		c := decodeConnection(t, fetch(t, srv.URL+path), list)
		if len(c.Edges) == 0 {
			t.Fatalf("%s: no edges", path)
		}
		return string(c.Edges[0].Node)
	}

	t.Run("§1 data-node pages are compact JSON in the exact connection shape", func(t *testing.T) {
		r := fetch(t, srv.URL+"/api/v2/assets?assetId="+asset1)
		c := assetCursorFor(asset1)
		want := `{"assets":{"edges":[{"node":{"id":"` + asset1 + `","details":{"name":"Vega","symbol":"VEGA","decimals":"18","quantum":"1",` +
			`"builtinAsset":{"maxFaucetAmountMint":"10000000000000000000000"}},"status":"STATUS_ENABLED"},"cursor":"` + c + `"}],` +
			`"pageInfo":{"hasNextPage":false,"hasPreviousPage":false,"startCursor":"` + c + `","endCursor":"` + c + `"}}}`
		if string(r.body) != want {
			t.Errorf("body =\n%s\nwant\n%s", r.body, want)
		}
		if ct := r.header.Values("Content-Type"); len(ct) != 1 || ct[0] != "application/json" {
			t.Errorf("Content-Type = %v, want [application/json]", ct)
		}
	})
	t.Run("§1 an empty data-node page: edges [] and empty-string cursors", func(t *testing.T) {
		r := fetch(t, srv.URL+"/api/v2/delegations?partyId="+partyC)
		want := `{"delegations":{"edges":[],"pageInfo":{"hasNextPage":false,"hasPreviousPage":false,"startCursor":"","endCursor":""}}}`
		if string(r.body) != want {
			t.Errorf("body = %s, want %s", r.body, want)
		}
	})
	for _, tc := range []struct {
		name, path, list, want string
	}{
		{"§1 64-bit integers are strings, zero values emitted, a source-less asset has no one-of member",
			"/api/v2/assets?assetId=" + asset5, "assets",
			`{"id":"` + asset5 + `","details":{"name":"<Test & Co>","symbol":"T&C","decimals":"0","quantum":""},"status":"STATUS_PROPOSED"}`},
		{"§1 the erc20 one-of member sits in details; uint64 at its maximum is a string",
			"/api/v2/assets?assetId=" + asset3, "assets",
			`{"id":"` + asset3 + `","details":{"name":"Tether USD","symbol":"USDT","decimals":"6","quantum":"1000000","erc20":{"contractAddress":"0xdac17f958d2ee523a2206206994597c13d831ec7","lifetimeLimit":"18446744073709551615","withdrawThreshold":"0"}},"status":"STATUS_ENABLED"}`},
		{"§1 funding payment: fundingPeriodSeq and timestamp are int64 strings",
			"/api/v2/funding-payments?partyId=" + partyA, "fundingPayments",
			`{"partyId":"` + partyA + `","marketId":"` + market1 + `","fundingPeriodSeq":"5","timestamp":"1710417606123456789","amount":"15"}`},
		{"§1 delegation: party, nodeId, epochSeq (a string), amount; no vegaTime",
			"/api/v2/delegations", "delegations",
			`{"party":"` + partyA + `","nodeId":"` + node1 + `","epochSeq":"11","amount":"5000"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// As JSON values: the order of an object's keys follows
			// package upstream's types (the encoder), which the wire
			// leaves to the encoder too.
			if got := node(t, tc.path, tc.list); !jsonEqual(t, []byte(got), []byte(tc.want)) {
				t.Errorf("node =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}

	t.Run("§1 the data node gzips when the request accepts gzip", func(t *testing.T) {
		plain := fetch(t, srv.URL+"/api/v2/assets")
		r := fetch(t, srv.URL+"/api/v2/assets", "Accept-Encoding", "gzip, deflate")
		if r.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Content-Encoding = %q, want gzip", r.header.Get("Content-Encoding"))
		}
		if got := testutil.Gunzip(t, r.body); !bytes.Equal(got, plain.body) {
			t.Errorf("gunzipped body differs from the plain one")
		}
		if !strings.Contains(r.header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Vary = %q, want Accept-Encoding", r.header.Get("Vary"))
		}
		again := fetch(t, srv.URL+"/api/v2/assets", "Accept-Encoding", "gzip")
		if !bytes.Equal(again.body, r.body) {
			t.Errorf("a cached gzip answer differs from the first")
		}
	})
	t.Run("§1 data-node errors are gzipped too when asked", func(t *testing.T) {
		r := fetch(t, srv.URL+"/api/v2/funding-payments", "Accept-Encoding", "gzip")
		if r.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Content-Encoding = %q, want gzip", r.header.Get("Content-Encoding"))
		}
		if !json.Valid(testutil.Gunzip(t, r.body)) {
			t.Errorf("gunzipped error is not JSON")
		}
	})
	for _, ae := range []string{"", "identity", "gzip;q=0", "br"} {
		t.Run("§1 no gzip unless accepted: Accept-Encoding "+ae, func(t *testing.T) {
			r := fetch(t, srv.URL+"/api/v2/assets", "Accept-Encoding", ae)
			if r.header.Get("Content-Encoding") != "" || !json.Valid(r.body) {
				t.Errorf("Content-Encoding %q, valid JSON %v", r.header.Get("Content-Encoding"), json.Valid(r.body))
			}
		})
	}
	t.Run("§1 the explorer answers plain pretty JSON, never compact", func(t *testing.T) {
		r := fetch(t, srv.URL+"/rest/transactions?first=1", "Accept-Encoding", "gzip")
		if r.header.Get("Content-Encoding") != "" || !bytes.HasPrefix(r.body, []byte("{\n  \"transactions\": [\n    {\n      \"block\": \"105\",")) {
			t.Errorf("Content-Encoding %q, body %s", r.header.Get("Content-Encoding"), r.body)
		}
	})
}
