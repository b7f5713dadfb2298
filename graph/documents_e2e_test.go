package graph_test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler/lru"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
)

// Trusted documents (documents.go, documents_serve.go) over real
// connections: manifests in both formats loaded from files, documents
// served by id over GET, POST, WebSocket and SSE, the trusted-only mode's
// refusals, the start-up validation, and what the hooks count.

// The documents of the test manifests: a query with a variable, one with
// a fragment and an operation name, and a subscription.
const (
	docAssets = "query TrustedAssets($n: Int!) {\n  assets(first: $n) {\n    edges {\n      node {\n        id\n        details { symbol decimals }\n      }\n    }\n  }\n}\n"
	docTxs    = "query TrustedTxs($n: Int) {\n  transactions(first: $n) {\n    edges { ...Edge }\n  }\n}\n\nfragment Edge on TransactionEdge {\n  cursor\n  node { hash block }\n}\n"
	docLive   = "subscription TrustedLive($after: String) {\n  transactions(after: $after) {\n    " + edgeSelection + "\n  }\n}\n"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// relayManifest is the test documents in Relay's format, with md5 ids as
// relay-compiler writes by default.
func relayManifest() []byte {
	b, _ := json.Marshal(map[string]string{md5Hex(docAssets): docAssets, md5Hex(docTxs): docTxs, md5Hex(docLive): docLive})
	return b
}

// apolloManifest is the test documents in Apollo's format, ids the
// SHA-256 of the body as generate-persisted-query-manifest writes them.
func apolloManifest() []byte {
	type op struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Type string `json:"type"`
		Body string `json:"body"`
	}
	b, _ := json.Marshal(map[string]any{
		"format":  "apollo-persisted-query-manifest",
		"version": 1,
		"operations": []op{
			{sha256Hex(docAssets), "TrustedAssets", "query", docAssets},
			{sha256Hex(docTxs), "TrustedTxs", "query", docTxs},
			{sha256Hex(docLive), "TrustedLive", "subscription", docLive},
		},
	})
	return b
}

// writeManifest writes a manifest file of the test's own.
func writeManifest(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadManifest loads a manifest file as the gateway does at start.
func loadManifest(t *testing.T, path string) *graph.PersistedDocuments {
	t.Helper()
	docs, err := graph.LoadPersistedDocuments(path, graph.PagingConfig{})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return docs
}

// documentCounts records what the handler's document hooks report.
type documentCounts struct {
	mu      sync.Mutex
	served  map[string]int
	refused map[string]int
}

func (c *documentCounts) hooks() graph.Hooks {
	c.served, c.refused = map[string]int{}, map[string]int{}
	return graph.Hooks{
		DocumentServed:  func(s string) { c.mu.Lock(); c.served[s]++; c.mu.Unlock() },
		DocumentRefused: func(r string) { c.mu.Lock(); c.refused[r]++; c.mu.Unlock() },
	}
}

func (c *documentCounts) get() (served, refused string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.served), fmt.Sprint(c.refused)
}

// docRequest is one request to the GraphQL endpoint: a POST of body, or
// a GET with body's members as URL parameters (JSON-encoded when not
// strings).
func docRequest(t *testing.T, base, method string, body map[string]any) (int, gqlResponse) {
	t.Helper()
	var req *http.Request
	if method == http.MethodGet {
		q := url.Values{}
		for k, v := range body {
			if s, ok := v.(string); ok {
				q.Set(k, s)
				continue
			}
			b, _ := json.Marshal(v)
			q.Set(k, string(b))
		}
		req, _ = http.NewRequest(http.MethodGet, base+"?"+q.Encode(), nil)
	} else {
		b, _ := json.Marshal(body)
		req, _ = http.NewRequest(http.MethodPost, base, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, raw := testutil.Do(t, req)
	var out gqlResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: status %d, not GraphQL JSON: %s", method, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// wantData fails unless r has no errors and its data is want's.
func wantData(t *testing.T, what string, r gqlResponse, want json.RawMessage) {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("%s: errors %+v", what, r.Errors)
	}
	if !bytes.Equal(r.Data, want) {
		t.Fatalf("%s: data\n%s\nwant\n%s", what, r.Data, want)
	}
}

// wantRefused fails unless r is one BAD_USER_INPUT request error (no
// data) whose message says each of says.
func wantRefused(t *testing.T, what string, r gqlResponse, says ...string) {
	t.Helper()
	if len(r.Errors) != 1 || r.Errors[0].code() != graph.CodeBadUserInput || r.Data != nil {
		t.Fatalf("%s: data %s, errors %+v; want one BAD_USER_INPUT", what, r.Data, r.Errors)
	}
	for _, s := range says {
		if !strings.Contains(r.Errors[0].Message, s) {
			t.Fatalf("%s: message %q does not say %q", what, r.Errors[0].Message, s)
		}
	}
}

// expected is a document's answer when sent as text.
func expected(t *testing.T, g *testGateway, doc string, vars map[string]any) json.RawMessage {
	t.Helper()
	r := g.query(t, doc, vars)
	if len(r.Errors) > 0 || len(r.Data) < 50 {
		t.Fatalf("as text: %s %+v", r.Data, r.Errors)
	}
	return r.Data
}

// Both manifest formats load from files, and serve their documents by
// id, with variables and operation names, over GET and POST: documentId,
// doc_id, GraphQL over HTTP's sha256: identifier, and Apollo's
// persistedQuery hash alone (for a Relay manifest too: its text's hash).
func TestPersistedDocumentsServedByID(t *testing.T) {
	for _, format := range []struct {
		name, file string
		data       []byte
		id         func(string) string
	}{
		{graph.ManifestRelay, "persisted_queries.json", relayManifest(), md5Hex},
		{graph.ManifestApollo, "persisted-query-manifest.json", apolloManifest(), sha256Hex},
	} {
		t.Run(format.name, func(t *testing.T) {
			docs := loadManifest(t, writeManifest(t, format.file, format.data))
			if docs.Format() != format.name || docs.Len() != 3 {
				t.Fatalf("loaded %s with %d documents, want %s with 3", docs.Format(), docs.Len(), format.name)
			}
			var counts documentCounts
			apq := lru.New[string](100)
			g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Documents: docs, Hooks: counts.hooks(), APQCache: apq}})
			two := map[string]any{"n": 2}
			five := map[string]any{"n": 5}
			wantTwo, wantFive := expected(t, g, docAssets, two), expected(t, g, docAssets, five)
			wantTxs := expected(t, g, docTxs, map[string]any{"n": 3})
			if bytes.Equal(wantTwo, wantFive) {
				t.Fatal("the variables make no difference: the test shows nothing")
			}
			requests := 0
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				for _, tc := range []struct {
					name string
					body map[string]any
					want json.RawMessage
				}{
					{"documentId", map[string]any{"documentId": format.id(docAssets), "variables": two}, wantTwo},
					{"documentId, other variables", map[string]any{"documentId": format.id(docAssets), "variables": five}, wantFive},
					{"doc_id", map[string]any{"doc_id": format.id(docAssets), "variables": five}, wantFive},
					{"documentId and doc_id alike", map[string]any{"documentId": format.id(docAssets), "doc_id": format.id(docAssets), "variables": two}, wantTwo},
					{"operationName, fragment", map[string]any{"documentId": format.id(docTxs), "operationName": "TrustedTxs", "variables": map[string]any{"n": 3}}, wantTxs},
					{"sha256: identifier", map[string]any{"documentId": "sha256:" + sha256Hex(docAssets), "variables": two}, wantTwo},
					{"persistedQuery hash alone", map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(docAssets)}}, "variables": five}, wantFive},
				} {
					status, r := docRequest(t, g.URL, method, tc.body)
					if status != http.StatusOK {
						t.Fatalf("%s %s: status %d", method, tc.name, status)
					}
					wantData(t, method+" "+tc.name, r, tc.want)
					requests++
				}
			}
			// A body that takes encoding/json's path (an escape in the id).
			id := format.id(docAssets)
			escaped := fmt.Sprintf(`{"variables": {"n": 2}, "doc_id": "\u%04x%s"}`, id[0], id[1:])
			resp, err := http.Post(g.URL, "application/json", strings.NewReader(escaped))
			if err != nil {
				t.Fatal(err)
			}
			var r gqlResponse
			if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			wantData(t, "POST with an escaped id", r, wantTwo)
			requests++
			// The manifest served the hashes: nothing went to the APQ cache.
			if _, stored := apq.Get(t.Context(), sha256Hex(docAssets)); stored {
				t.Fatal("a document served from the manifest by its hash was stored as an automatic persisted query")
			}
			if served, refused := counts.get(); served != fmt.Sprintf("map[manifest:%d]", requests) || refused != "map[]" {
				t.Fatalf("hooks: served %s, refused %s; want %d from the manifest, none refused", served, refused, requests)
			}
		})
	}
}

// An id the manifest does not list, or sent to a gateway without one, is
// a request error naming it; so is an id sent with a query's text, and
// documentId and doc_id that disagree. Nothing runs.
func TestPersistedDocumentErrors(t *testing.T) {
	var counts documentCounts
	docs := loadManifest(t, writeManifest(t, "m.json", apolloManifest()))
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Documents: docs, Hooks: counts.hooks()}})
	none := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Hooks: counts.hooks()}})
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for _, tc := range []struct {
			name string
			g    *testGateway
			body map[string]any
			says []string
		}{
			{"unknown id", g, map[string]any{"documentId": "no-such-document"}, []string{`unknown document id "no-such-document"`, "manifest does not list it"}},
			{"unknown doc_id", g, map[string]any{"doc_id": "0123abcd"}, []string{`unknown document id "0123abcd"`}},
			{"unknown sha256:", g, map[string]any{"documentId": "sha256:" + sha256Hex("{ assets { edges { cursor } } }")}, []string{"unknown document id", "manifest does not list it"}},
			{"no manifest", none, map[string]any{"documentId": sha256Hex(docAssets)}, []string{"unknown document id", "PERSISTED_DOCUMENTS is unset"}},
			{"id and query", g, map[string]any{"documentId": sha256Hex(docAssets), "query": docAssets}, []string{"not both"}},
			{"id and persistedQuery", g, map[string]any{"documentId": sha256Hex(docAssets), "extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(docAssets)}}}, []string{"not both"}},
			{"documentId and doc_id differ", g, map[string]any{"documentId": sha256Hex(docAssets), "doc_id": sha256Hex(docTxs)}, []string{"name different documents"}},
		} {
			status, r := docRequest(t, tc.g.URL, method, tc.body)
			wantRefused(t, method+" "+tc.name, r, tc.says...)
			if status != http.StatusOK && status != http.StatusBadRequest {
				t.Fatalf("%s %s: status %d", method, tc.name, status)
			}
		}
	}
	// Each unknown id once per method; the other mistakes are not
	// documents refused.
	if served, refused := counts.get(); served != "map[]" || refused != "map[unknown_id:8]" {
		t.Fatalf("hooks: served %s, refused %s; want 8 unknown ids", served, refused)
	}
}

// TRUSTED_DOCUMENTS_ONLY: the manifest's documents are served (by id, by
// hash, and as their text, with other whitespace and comments too); any
// other query, an APQ registration of one, and introspection are refused
// with BAD_USER_INPUT saying how to add a document, and counted.
func TestTrustedDocumentsOnly(t *testing.T) {
	var counts documentCounts
	docs := loadManifest(t, writeManifest(t, "persisted_queries.json", relayManifest()))
	plain := newGateway(t, nil, gatewayOptions{})
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Documents: docs, TrustedDocumentsOnly: true, Hooks: counts.hooks()}})
	two := map[string]any{"n": 2}
	want := expected(t, plain, docAssets, two)

	// Served: by id, by hash, as text.
	reformatted := "# the same document\nquery TrustedAssets( $n : Int! ) { assets(first: $n) { edges { node { id, details { symbol, decimals } } } } }"
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for _, tc := range []struct {
			name string
			body map[string]any
		}{
			{"by id", map[string]any{"doc_id": md5Hex(docAssets), "variables": two}},
			{"by hash", map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(docAssets)}}, "variables": two}},
			{"as its text", map[string]any{"query": docAssets, "variables": two}},
			{"as its text, reformatted", map[string]any{"query": reformatted, "variables": two}},
			{"as its text with its hash", map[string]any{"query": docAssets, "variables": two, "extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(docAssets)}}}},
		} {
			_, r := docRequest(t, g.URL, method, tc.body)
			wantData(t, method+" "+tc.name, r, want)
		}
	}

	// Refused: another query (even the manifest's with a field more), an
	// APQ registration, introspection.
	other := `query Other { assets(first: 1) { edges { cursor } } }`
	longer := strings.Replace(docAssets, "decimals", "decimals quantum", 1)
	register := map[string]any{"query": other, "extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(other)}}}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for _, tc := range []struct {
			name string
			body map[string]any
			says []string
		}{
			{"another query", map[string]any{"query": other}, []string{"only trusted documents are accepted", "generate the manifest again"}},
			{"a manifest document changed", map[string]any{"query": longer, "variables": two}, []string{"only trusted documents are accepted"}},
			{"an APQ registration", register, []string{"only trusted documents are accepted", "automatic persisted queries cannot register"}},
			{"introspection", map[string]any{"query": `{ __schema { queryType { name } } }`}, []string{"only trusted documents are accepted"}},
			{"an unparsable text", map[string]any{"query": `{ assets(`}, []string{"only trusted documents are accepted"}},
		} {
			_, r := docRequest(t, g.URL, method, tc.body)
			wantRefused(t, method+" "+tc.name, r, tc.says...)
		}
		// The registration stored nothing: its hash alone is unknown.
		_, r := docRequest(t, g.URL, method, map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(other)}}})
		if len(r.Errors) != 1 || r.Errors[0].code() != graph.CodePersistedQueryNotFound {
			t.Fatalf("%s: the refused registration's hash: %+v, want PERSISTED_QUERY_NOT_FOUND", method, r.Errors)
		}
	}
	// The same registration on a gateway without the mode is stored and
	// served by hash (what the refusal above prevents).
	if _, r := docRequest(t, plain.URL, http.MethodPost, register); len(r.Errors) > 0 {
		t.Fatalf("registration without the mode: %+v", r.Errors)
	}
	if _, r := docRequest(t, plain.URL, http.MethodGet, map[string]any{"extensions": register["extensions"]}); len(r.Errors) > 0 {
		t.Fatalf("hash alone without the mode: %+v", r.Errors)
	}

	served, refused := counts.get()
	if served != "map[manifest:4]" || refused != "map[apq_registration:2 untrusted:8]" {
		t.Fatalf("hooks: served %s, refused %s", served, refused)
	}
}

// A hash alone served from the APQ cache is counted as such; in
// trusted-only mode a text the cache holds (stored before, or by a
// replica without the mode, through Redis) is refused unless it is a
// manifest document.
func TestTrustedDocumentsOnlyChecksAPQCache(t *testing.T) {
	cache := lru.New[string](100)
	other := `query Other { assets(first: 1) { edges { cursor } } }`
	cache.Add(t.Context(), sha256Hex(other), other)
	cache.Add(t.Context(), sha256Hex(docAssets+" "), docAssets+" ") // the manifest's text, but another hash
	var counts documentCounts
	docs := loadManifest(t, writeManifest(t, "m.json", apolloManifest()))
	open := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Documents: docs, APQCache: cache, Hooks: counts.hooks()}})
	byHash := func(g *testGateway, text string) gqlResponse {
		_, r := docRequest(t, g.URL, http.MethodGet, map[string]any{"variables": map[string]any{"n": 1},
			"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(text)}}})
		return r
	}
	if r := byHash(open, other); len(r.Errors) > 0 {
		t.Fatalf("from the APQ cache: %+v", r.Errors)
	}
	if served, _ := counts.get(); served != "map[apq:1]" {
		t.Fatalf("served %s, want one from apq", served)
	}
	trusted := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Documents: docs, TrustedDocumentsOnly: true, APQCache: cache}})
	wantRefused(t, "cached text not in the manifest", byHash(trusted, other), "only trusted documents are accepted")
	if r := byHash(trusted, docAssets+" "); len(r.Errors) > 0 {
		t.Fatalf("cached text of a manifest document: %+v", r.Errors)
	}
}

// Over the streaming transports, a subscribe payload (WebSocket) or a
// request (SSE, GET and POST) may name a document by id; in trusted-only
// mode a subscription sent as other text is refused there too.
func TestPersistedDocumentsOverStreams(t *testing.T) {
	docs := loadManifest(t, writeManifest(t, "m.json", relayManifest()))
	g := newLiveGateway(t, liveOptions{Executor: graph.ExecutorConfig{Documents: docs, TrustedDocumentsOnly: true}})
	var newest struct {
		Transactions struct{ Edges []struct{ Cursor string } }
	}
	_, r := docRequest(t, g.URL, http.MethodPost, map[string]any{"documentId": md5Hex(docTxs), "variables": map[string]any{"n": 1}})
	r.mustData(t, &newest)
	head := newest.Transactions.Edges[0].Cursor
	c := connectWS(t, g.URL)
	payload, _ := json.Marshal(map[string]any{"doc_id": md5Hex(docLive), "variables": map[string]any{"after": head}})
	c.send(wsMessage{ID: "live", Type: "subscribe", Payload: payload})
	g.waitSubscribed(t, 1)
	sse := subscribeSSERequest(t, g.URL, map[string]any{"documentId": md5Hex(docLive), "variables": map[string]any{"after": head}})
	g.waitSubscribed(t, 1)
	txs := g.appendTxs(t, 3)
	checkHashes(t, "WebSocket by id", c.collect(map[string]int{"live": 3})["live"], txs)
	checkHashes(t, "SSE by id", sse.edges(3), txs)

	// A query by id over the socket: its answer, then complete.
	payload, _ = json.Marshal(map[string]any{"documentId": md5Hex(docTxs), "variables": map[string]any{"n": 2}})
	c.send(wsMessage{ID: "q", Type: "subscribe", Payload: payload})
	if m := c.read(); m.ID != "q" || m.Type != "next" || strings.Count(string(m.Payload), `"hash"`) != 2 {
		t.Fatalf("query by id over WebSocket: %+v %s", m, m.Payload)
	}
	if m := c.read(); m.ID != "q" || m.Type != "complete" {
		t.Fatalf("got %+v, want complete", m)
	}
	// Other text: the operation's error message, and the socket serves on.
	c.subscribe("other", txSubscription, nil)
	m := c.read()
	if m.ID != "other" || m.Type != "error" || !strings.Contains(string(m.Payload), "only trusted documents are accepted") {
		t.Fatalf("untrusted subscription over WebSocket: %+v %s", m, m.Payload)
	}
	// An unknown id too.
	payload, _ = json.Marshal(map[string]any{"documentId": "nope"})
	c.send(wsMessage{ID: "unknown", Type: "subscribe", Payload: payload})
	if m := c.read(); m.ID != "unknown" || m.Type != "error" || !strings.Contains(string(m.Payload), `unknown document id \"nope\"`) {
		t.Fatalf("unknown id over WebSocket: %+v %s", m, m.Payload)
	}
	// SSE over GET (EventSource's way): a query by id.
	resp, err := http.Get(g.URL + "?" + url.Values{"documentId": {md5Hex(docTxs)}, "variables": {`{"n":1}`}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Count(string(body), `"hash"`) != 1 {
		t.Fatalf("GET by id: %d %s", resp.StatusCode, body)
	}
}

// A manifest that does not read, or a document that does not parse or
// validate, or whose SHA-256 id is not its text's, fails the load with an
// error naming the file and the document's id.
func TestPersistedDocumentsStartUpValidation(t *testing.T) {
	apollo := func(id, body string) []byte {
		b, _ := json.Marshal(map[string]any{"format": "apollo-persisted-query-manifest", "version": 1,
			"operations": []map[string]any{{"id": sha256Hex(docAssets), "name": "TrustedAssets", "type": "query", "body": docAssets}, {"id": id, "name": "X", "type": "query", "body": body}}})
		return b
	}
	relay := func(id, body string) []byte {
		b, _ := json.Marshal(map[string]string{md5Hex(docAssets): docAssets, id: body})
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		says []string
	}{
		{"Relay: a field the schema lacks", relay("bad-field", `query X { assets { edges { node { noSuchField } } } }`), []string{`document "bad-field"`, "does not validate", "noSuchField"}},
		{"Relay: does not parse", relay("unparsable", `query X { assets(`), []string{`document "unparsable"`, "does not parse"}},
		{"Relay: a page size out of range", relay("big-page", `query X { assets(first: 99999999999) { edges { cursor } } }`), []string{`document "big-page"`, "does not validate", "first"}},
		{"Relay: fragments only", relay("fragment", `fragment F on Asset { id }`), []string{`document "fragment"`, "no operation"}},
		{"Relay: not a string", []byte(`{"abc": 5}`), []string{`document "abc"`, "must be a string"}},
		{"Relay: an id twice", []byte(`{"abc": "{ assets { edges { cursor } } }", "abc": "{ assets { edges { cursor } } }"}`), []string{`document "abc" is listed twice`}},
		{"Apollo: a variable of an unknown type", apollo("e1", `query X($a: Nope) { assets { edges { cursor } } }`), []string{`document "e1"`, "does not validate"}},
		{"Apollo: a SHA-256 id that is not the body's", apollo(sha256Hex("something else"), `query X { assets { edges { cursor } } }`), []string{"its id is a SHA-256 but not its text's", "generate it again"}},
		{"Apollo: no body", apollo("e2", ""), []string{`document "e2"`, "no body"}},
		{"Apollo: another format", []byte(`{"format": "other", "version": 1, "operations": []}`), []string{`format "other"`}},
		{"Apollo: version 2", []byte(`{"format": "apollo-persisted-query-manifest", "version": 2, "operations": []}`), []string{"version 2"}},
		{"not JSON", []byte(`operations:`), []string{"not a manifest"}},
		{"empty", []byte(`{}`), []string{"no documents"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeManifest(t, "manifest.json", tc.data)
			_, err := graph.LoadPersistedDocuments(path, graph.PagingConfig{})
			if err == nil {
				t.Fatal("loaded")
			}
			for _, s := range append(tc.says, path) {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not say %q", err, s)
				}
			}
		})
	}
	if _, err := graph.LoadPersistedDocuments(filepath.Join(t.TempDir(), "missing.json"), graph.PagingConfig{}); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("missing file: %v", err)
	}
}
