package sampleservice

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// fixtureHash is the hash sliceSource gives transaction block.index.
func fixtureHash(block, index uint64) string { return fmt.Sprintf("%064X", block*1000+index) }

func TestExplorerLookup(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	src := fixtureTxs()
	// Position 7 is 103.1.
	var want bytes.Buffer
	if err := json.Indent(&want, append(append([]byte(`{"transaction":`), src.AppendJSON(nil, 7)...), '}'), "", "  "); err != nil {
		t.Fatal(err)
	}
	hash := fixtureHash(103, 1)
	for _, path := range []string{"/rest/transactions/", "/transactions/"} {
		for _, h := range []string{hash, strings.ToLower(hash)} {
			r := fetch(t, srv.URL+path+h)
			if r.status != 200 {
				t.Fatalf("GET %s%s: status %d: %s", path, h, r.status, r.body)
			}
			if string(r.body) != want.String() {
				t.Errorf("GET %s%s =\n%s\nwant (§5: {\"transaction\": …}, pretty-printed)\n%s", path, h, r.body, want.String())
			}
		}
	}
	if n := srv.Service.Requests(EndpointTransaction); n != 4 {
		t.Errorf("lookup requests counted = %d, want 4", n)
	}
	if n := srv.Service.Requests(EndpointTransactions); n != 0 {
		t.Errorf("list requests counted = %d, want 0", n)
	}
}

func TestExplorerLookupErrors(t *testing.T) {
	dup := fixtureTxs()
	// Two transactions with the same hash, in different letter case.
	dup[3].raw = `{"block":"101","index":1,"hash":"ABCDEF","submitter":"` + partyB + `","type":"Vote on Proposal","code":0,"cursor":"101.1","command":{"nonce":"1","blockHeight":"100"}}`
	dup[4].raw = `{"block":"101","index":2,"hash":"abcdef","submitter":"` + partyA + `","type":"Batch Market Instructions","code":0,"cursor":"101.2","command":{"nonce":"1","blockHeight":"100"}}`
	data := fixtureDataset()
	data.Transactions = dup
	srv := startFixture(t, Config{Data: data, Defects: DefaultDefects()})
	runErrorCases(t, srv, []errorCase{
		{name: "§5 unknown hash → 404 NotFound", path: "/rest/transactions/" + fixtureHash(99, 0),
			status: 404, want: errorJSON{Code: 5, Message: "NotFound error", Details: detail(10000, "transaction not found", "")}},
		{name: "§5 a hash stored twice → 400 FailedPrecondition", path: "/rest/transactions/AbCdEf",
			status: 400, want: errorJSON{Code: 9, Message: "FailedPrecondition error", Details: detail(10000, "multiple transactions found for the hash", "")}},
		{name: "the lookup route without a hash is an unknown route", path: "/rest/transactions/",
			status: 404, want: errorJSON{Code: 5, Message: "Not Found", Details: noDetails}},
		{name: "a path below a hash is an unknown route", path: "/rest/transactions/ABCDEF/x",
			status: 404, want: errorJSON{Code: 5, Message: "Not Found", Details: noDetails}},
		{name: "wrong method on the lookup → 501", method: "POST", path: "/rest/transactions/ABCDEF",
			status: 501, want: errorJSON{Code: 12, Message: "Method Not Allowed", Details: noDetails}},
	})
	// The other rows are still found.
	if r := fetch(t, srv.URL+"/rest/transactions/"+fixtureHash(100, 1)); r.status != 200 {
		t.Errorf("lookup of a unique hash beside a duplicate: status %d: %s", r.status, r.body)
	}
}

// hashedSource is a source that gives its hashes without encoding.
type hashedSource struct {
	sliceSource
	encoded *int
}

func (s hashedSource) Hash(i int) string {
	return fixtureHash(s.sliceSource[i].block, uint64(s.sliceSource[i].index))
}

func (s hashedSource) AppendJSON(dst []byte, i int) []byte {
	*s.encoded++
	return s.sliceSource.AppendJSON(dst, i)
}

func TestExplorerLookupUsesTxHasher(t *testing.T) {
	encoded := 0
	x, err := newTxIndex(hashedSource{fixtureTxs(), &encoded})
	if err != nil {
		t.Fatal(err)
	}
	body, apiErr := x.getTransaction(strings.ToLower(fixtureHash(105, 1)))
	if apiErr != nil {
		t.Fatalf("lookup: %+v", apiErr.body)
	}
	if !bytes.Contains(body, []byte(`"cursor": "105.1"`)) {
		t.Errorf("found the wrong transaction:\n%s", body)
	}
	if encoded != 1 {
		t.Errorf("%d transactions encoded, want 1 (the one returned): the index should use Hash", encoded)
	}
}
