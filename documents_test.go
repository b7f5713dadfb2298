package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tradenet/gateway/internal/testutil"
)

// Trusted documents, wired as `go run .` wires them: PERSISTED_DOCUMENTS
// and TRUSTED_DOCUMENTS_ONLY, the manifest checked at start-up, the
// documents served and refused, and their metrics on /metrics.

const manifestQuery = "query ManifestAssets($n: Int!) {\n  assets(first: $n) {\n    edges { node { id details { symbol } } }\n  }\n}\n"

// apolloManifestFile writes an Apollo persisted query manifest of the
// given bodies (ids their SHA-256) and returns its path.
func apolloManifestFile(t *testing.T, bodies ...string) string {
	t.Helper()
	ops := []map[string]any{}
	for i, b := range bodies {
		ops = append(ops, map[string]any{"id": sha256Hex(b), "name": fmt.Sprint("Op", i), "type": "query", "body": b})
	}
	data, _ := json.Marshal(map[string]any{"format": "apollo-persisted-query-manifest", "version": 1, "operations": ops})
	path := filepath.Join(t.TempDir(), "persisted-query-manifest.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TRUSTED_DOCUMENTS_ONLY needs a manifest; a manifest with a document
// the schema refuses fails start-up, its id and the setting named, before
// anything starts.
func TestPersistedDocumentsFailStartUp(t *testing.T) {
	if _, err := parseConfig([]string{"-trusted-documents-only"}, testEnv, io.Discard); err == nil || !strings.Contains(err.Error(), "TRUSTED_DOCUMENTS_ONLY=true needs PERSISTED_DOCUMENTS") {
		t.Fatalf("trusted-only without a manifest: %v", err)
	}
	bad := "query Broken { assets { edges { node { price } } } }"
	path := apolloManifestFile(t, manifestQuery, bad)
	env := map[string]string{"PERSISTED_DOCUMENTS": path, "TRUSTED_DOCUMENTS_ONLY": "true"}
	cfg, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testutil.LockedBuffer{}
	gw, err := newGateway(context.Background(), cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err == nil {
		gw.Close()
		t.Fatal("the gateway started with an invalid document")
	}
	for _, want := range []string{"PERSISTED_DOCUMENTS", path, fmt.Sprintf("document %q", sha256Hex(bad)), "does not validate", "price"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(logs.String(), "sample data service") {
		t.Fatalf("started the sample service before checking the manifest:\n%s", logs)
	}
}

// A gateway with TRUSTED_DOCUMENTS_ONLY serves its manifest's documents
// by id over GET and POST and refuses other queries and APQ
// registrations; gateway_persisted_documents_served_total and
// gateway_documents_refused_total count them.
func TestTrustedDocumentsMetrics(t *testing.T) {
	g := startOpsGateway(t, "-persisted-documents", apolloManifestFile(t, manifestQuery), "-trusted-documents-only")
	if !strings.Contains(g.logs.String(), "persisted documents loaded") || !strings.Contains(g.logs.String(), "format=apollo documents=1 trusted_only=true") {
		t.Fatalf("start-up log:\n%s", g.logs)
	}
	id := sha256Hex(manifestQuery)
	vars := map[string]any{"n": 2}
	wantAssets := func(what string, r gqlResult) {
		t.Helper()
		edges, _ := r.Data["assets"].(map[string]any)["edges"].([]any)
		if len(r.Errors) > 0 || len(edges) != 2 {
			t.Fatalf("%s: %+v", what, r)
		}
	}
	wantAssets("POST documentId", postGraphQL(t, g.URL, map[string]any{"documentId": id, "variables": vars}, nil))
	wantAssets("POST doc_id", postGraphQL(t, g.URL, map[string]any{"doc_id": id, "variables": vars}, nil))
	resp, err := http.Get(g.URL + "/graphql?" + url.Values{"documentId": {id}, "variables": {`{"n":2}`}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	wantAssets("GET documentId", decodeResult(t, resp))
	resp.Body.Close()
	wantAssets("GET hash", apqGetVars(t, g.URL, id, `{"n":2}`))

	// The manifest's text with other whitespace registers as an APQ (it is
	// trusted), and its hash alone is then served from the APQ cache.
	spaced := strings.ReplaceAll(manifestQuery, "\n", " \n")
	wantAssets("APQ registration of the text", postGraphQL(t, g.URL, map[string]any{"query": spaced, "variables": vars,
		"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(spaced)}}}, nil))
	wantAssets("APQ hash alone", apqGetVars(t, g.URL, sha256Hex(spaced), `{"n":2}`))

	refused := func(what string, r gqlResult, says string) {
		t.Helper()
		if fmt.Sprint(r.codes()) != "[BAD_USER_INPUT]" || r.Data != nil || !strings.Contains(r.Errors[0].Message, says) {
			t.Fatalf("%s: %+v, want BAD_USER_INPUT saying %q", what, r, says)
		}
	}
	refused("free-form query", postGraphQL(t, g.URL, query(`{ assets(first: 1) { edges { cursor } } }`, nil), nil), "only trusted documents are accepted")
	refused("APQ registration", apqRegister(t, g.URL, persistedQuery), "automatic persisted queries cannot register")
	refused("unknown id", postGraphQL(t, g.URL, map[string]any{"documentId": "abc"}, nil), `unknown document id "abc"`)

	m := scrape(t, g.URL)
	for _, tc := range []struct {
		metric, label, value string
		want                 float64
	}{
		{"gateway_persisted_documents_served_total", "source", "manifest", 4},
		{"gateway_persisted_documents_served_total", "source", "apq", 1},
		{"gateway_documents_refused_total", "reason", "untrusted", 1},
		{"gateway_documents_refused_total", "reason", "apq_registration", 1},
		{"gateway_documents_refused_total", "reason", "unknown_id", 1},
	} {
		if got := metricValue(m, tc.metric, map[string]string{tc.label: tc.value}); got != tc.want {
			t.Errorf("%s{%s=%q} = %v, want %v", tc.metric, tc.label, tc.value, got, tc.want)
		}
	}
}

// apqGetVars GETs a persisted query by its hash alone, with variables.
func apqGetVars(t *testing.T, base, hash, vars string) gqlResult {
	t.Helper()
	ext := fmt.Sprintf(`{"persistedQuery":{"version":1,"sha256Hash":%q}}`, hash)
	resp, err := http.Get(base + "/graphql?" + url.Values{"extensions": {ext}, "variables": {vars}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return decodeResult(t, resp)
}
