package sampleservice

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWireBodiesFromTheDocumentation compares the service's answers for a
// few transactions and data-node rows of the default dataset with bodies
// written by hand from the wire documentation (testdata/wire/README.md), as
// JSON values: keys, and every value with its JSON type (a number is not a
// string holding it), null is not absent. It checks the one wire model,
// package upstream's types encoding themselves, against the documentation
// rather than against itself.
func TestWireBodiesFromTheDocumentation(t *testing.T) {
	srv, err := Start(Config{}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	files, err := filepath.Glob("testdata/wire/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("wire bodies: %v, %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := decodeExact(t, b)
			path := wireBodyRequest(t, want)
			got := decodeExact(t, fetch(t, srv.URL+path).body)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				t.Errorf("GET %s differs from %s:\n%s", path, file, g)
			}
		})
	}
}

// decodeExact decodes a JSON value keeping numbers as written
// (json.Number), so that a number and a string never compare equal.
func decodeExact(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// wireBodyRequest is the request whose answer body is: a transaction by
// its hash, an asset by its id, a party's first funding payment or
// delegation.
func wireBodyRequest(t *testing.T, body any) string {
	t.Helper()
	top := body.(map[string]any)
	node := func(list string) map[string]any {
		return genDig(top, list, "edges", "0", "node").(map[string]any)
	}
	switch {
	case top["transaction"] != nil:
		return "/rest/transactions/" + genDig(top, "transaction", "hash").(string)
	case top["assets"] != nil:
		return "/api/v2/assets?assetId=" + node("assets")["id"].(string)
	case top["fundingPayments"] != nil:
		return "/api/v2/funding-payments?pagination.first=1&partyId=" + node("fundingPayments")["partyId"].(string)
	case top["delegations"] != nil:
		return "/api/v2/delegations?pagination.first=1&partyId=" + node("delegations")["party"].(string)
	}
	t.Fatalf("no request answers %v", top)
	return ""
}
