package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const lookupTx = `{
  "transaction": {
    "block": "34514210",
    "index": 3,
    "hash": "7F72A0006409",
    "submitter": "` + testParty + `",
    "type": "Submit Oracle Data",
    "code": 0,
    "cursor": "34514210.3",
    "command": {"nonce": "1", "blockHeight": "34514201", "oracleDataSubmission": {"source": "ORACLE_SOURCE_JSON", "payload": "e30="}}
  }
}`

func TestGetTransaction(t *testing.T) {
	var got *http.Request
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Write([]byte(lookupTx))
	})
	tx, err := c.GetTransaction(context.Background(), "7f72a0006409")
	if err != nil {
		t.Fatal(err)
	}
	if got.Method != http.MethodGet || got.URL.Path != "/rest/transactions/7F72A0006409" || got.URL.RawQuery != "" {
		t.Errorf("request %s %s?%s, want GET /rest/transactions/7F72A0006409 (upper-cased, no query)", got.Method, got.URL.Path, got.URL.RawQuery)
	}
	if tx.Hash != "7F72A0006409" || tx.Block != 34514210 || tx.Index != 3 || tx.Type != "Submit Oracle Data" {
		t.Errorf("decoded %+v", tx)
	}
}

func TestGetTransactionErrors(t *testing.T) {
	tests := []struct {
		name          string
		status        int
		body          string
		wantNotFound  bool
		wantNotUnique bool
	}{
		{name: "unknown hash", status: 404, body: `{"code":5,"message":"transaction not found","details":[]}`, wantNotFound: true},
		{name: "hash stored twice", status: 400, body: `{"code":9,"message":"multiple transactions found","details":[]}`, wantNotUnique: true},
		// A wrong base URL, not a missing transaction: the explorer's
		// plain-text 404 and grpc-gateway's unknown route.
		{name: "plain-text 404", status: 404, body: "404 page not found"},
		{name: "unknown route", status: 404, body: `{"code":5,"message":"Not Found","details":[]}`},
		{name: "200 without a transaction", status: 200, body: `{"transactions":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			tx, err := c.GetTransaction(context.Background(), "ABCDEF")
			if err == nil {
				t.Fatalf("got %+v and no error", tx)
			}
			if IsNotFound(err) != tt.wantNotFound {
				t.Errorf("IsNotFound(%v) = %v, want %v", err, !tt.wantNotFound, tt.wantNotFound)
			}
			if errors.Is(err, ErrHashNotUnique) != tt.wantNotUnique {
				t.Errorf("errors.Is(%v, ErrHashNotUnique) = %v", err, !tt.wantNotUnique)
			}
			var e *Error
			if tt.wantNotUnique && (!errors.As(err, &e) || e.Code != 9) {
				t.Errorf("%v does not carry the explorer's *Error", err)
			}
		})
	}
}

func TestGetTransactionRefusesBeforeSending(t *testing.T) {
	var calls atomic.Int32
	c := setup(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	for _, hash := range []string{"", "7F72/../assets", "7F72?x=1", "ZZ", string(make([]byte, maxHashLength+1))} {
		if _, err := c.GetTransaction(context.Background(), hash); err == nil || IsNotFound(err) {
			t.Errorf("GetTransaction(%q) = %v, want a plain refusal", hash, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests sent for malformed hashes", n)
	}
}

func TestTransactionFilters(t *testing.T) {
	var got url.Values
	c := setup(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		w.Write([]byte(`{"transactions":[]}`))
	})
	height := uint64(34514210)
	_, err := c.ListTransactions(context.Background(), TransactionsParams{First: 5, BlockHeight: &height,
		Submitter: testParty, CmdTypes: []string{"Submit Order"}})
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{"first": {"5"}, "cmdTypes": {"Submit Order"},
		"filters[block.height]": {"34514210"}, "filters[tx.submitter]": {testParty}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters (-want +got)\n%s", diff)
	}
}
