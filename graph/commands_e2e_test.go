package graph_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// brokenCommandExplorer is an explorer whose newest page holds two
// transactions, the newer with an order submission that does not decode
// (a size that is no number) and the older a team joining that does; it
// answers every older page empty, and a lookup of either hash.
func brokenCommandExplorer(t *testing.T) string {
	t.Helper()
	broken := `{"block":"7","index":1,"hash":"` + strings.Repeat("AB", 32) + `","submitter":"ab","type":"Submit Order","code":0,` +
		`"command":{"nonce":"1","blockHeight":"6","orderSubmission":{"marketId":"m","size":"many"}},"createdAt":"2024-03-14T12:00:02Z"}`
	good := `{"block":"7","index":0,"hash":"` + strings.Repeat("CD", 32) + `","submitter":"ab","type":"Join Team","code":0,` +
		`"command":{"nonce":"2","blockHeight":"6","joinTeam":{"id":"team"}},"createdAt":"2024-03-14T12:00:01Z"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/transactions/"+strings.Repeat("AB", 32):
			io.WriteString(w, `{"transaction":`+broken+`}`)
		case r.URL.Path == "/transactions/"+strings.Repeat("CD", 32):
			io.WriteString(w, `{"transaction":`+good+`}`)
		case r.URL.Path == "/transactions" && r.URL.Query().Get("before") == "" && r.URL.Query().Get("after") == "":
			io.WriteString(w, `{"transactions":[`+broken+`,`+good+`]}`)
		case r.URL.Path == "/transactions":
			io.WriteString(w, `{"transactions":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A command is decoded as far as the operation reads it: a page whose
// broken command is not read, or read only for its type, succeeds; where
// its fields are read, the list (or the lookup) fails with the error the
// whole page's decoding gave, at the same place.
func TestBrokenCommandFailsOnlyWhereItsFieldsAreRead(t *testing.T) {
	g := newGatewayURL(t, brokenCommandExplorer(t))
	const unreadable = "the explorer sent a response the gateway could not read (transactions)"
	for _, tt := range []struct {
		name, query string
		want        string // a fragment of the data; "" when the list fails
	}{
		{"hashes", `{ transactions(first: 2) { edges { node { hash } } } }`, `"hash":"` + strings.Repeat("CD", 32) + `"`},
		{"types", `{ transactions(first: 2) { edges { node { command { __typename } } } } }`,
			`[{"node":{"command":{"__typename":"OrderSubmission"}}},{"node":{"command":{"__typename":"JoinTeam"}}}]`},
		{"typename in a fragment on the broken kind", `{ transactions(first: 2) { edges { node { command { ... on OrderSubmission { __typename } } } } } }`,
			`{"node":{"command":{"__typename":"OrderSubmission"}}}`},
		{"nonces", `{ transactions(first: 2) { edges { node { commandNonce commandBlockHeight } } } }`,
			`[{"node":{"commandNonce":"1","commandBlockHeight":"6"}},{"node":{"commandNonce":"2","commandBlockHeight":"6"}}]`},
		{"another kind's fields", `{ transactions(first: 2) { edges { node { command { __typename ... on JoinTeam { id } } } } } }`,
			`[{"node":{"command":{"__typename":"OrderSubmission"}}},{"node":{"command":{"__typename":"JoinTeam","id":"team"}}}]`},
		{"the broken kind's fields", `{ transactions(first: 2) { edges { node { hash command { ... on OrderSubmission { size } } } } } }`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := g.query(t, tt.query, nil)
			if tt.want == "" {
				expectError(t, r, "transactions", "UPSTREAM_ERROR", unreadable)
				if len(r.Errors) != 1 || r.Errors[0].Message != unreadable || string(r.Data) != `{"transactions":null}` {
					t.Fatalf("errors %+v, data %s; want the one error %q and no list", r.Errors, r.Data, unreadable)
				}
				return
			}
			if len(r.Errors) > 0 || !strings.Contains(string(r.Data), tt.want) {
				t.Fatalf("data %s, errors %+v; want data containing %s", r.Data, r.Errors, tt.want)
			}
		})
	}

	// A lookup reads its one command the same way.
	r := g.query(t, `{ transaction(hash: "`+strings.Repeat("ab", 32)+`") { command { __typename } } }`, nil)
	if len(r.Errors) > 0 || string(r.Data) != `{"transaction":{"command":{"__typename":"OrderSubmission"}}}` {
		t.Fatalf("lookup of the type: data %s, errors %+v", r.Data, r.Errors)
	}
	r = g.query(t, `{ transaction(hash: "`+strings.Repeat("ab", 32)+`") { command { ... on OrderSubmission { size } } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].code() != "UPSTREAM_ERROR" ||
		r.Errors[0].Message != "the explorer sent a response the gateway could not read (transaction)" || string(r.Data) != `{"transaction":null}` {
		t.Fatalf("lookup of the fields: data %s, errors %+v", r.Data, r.Errors)
	}
	r = g.query(t, `{ transaction(hash: "`+strings.Repeat("cd", 32)+`") { command { ... on JoinTeam { id } } } }`, nil)
	if len(r.Errors) > 0 || string(r.Data) != `{"transaction":{"command":{"id":"team"}}}` {
		t.Fatalf("lookup of a good command: data %s, errors %+v", r.Data, r.Errors)
	}
}
