package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

// What a request costs by the length of its text. The same operation is
// sent as the benchmarks' 11 kB transactions query, as a 35 kB text that
// selects the same data three times over (every fragment copied twice
// under other names and spread beside the original: the response is the
// same), by the persisted id of that 35 kB text, and by its APQ hash; and
// a 54 kB query selecting every field of every command kind. Each asks for
// one row (first: 1), so that the text, not the rows, is what differs.
//
//   - prepare: the executor's work before execution (the query cache,
//     the parameter mutators, variables, the limits), for a request whose
//     document was seen before;
//
//   - handler: the whole request in-process, body in, response out, the
//     sample data service over loopback HTTP as upstream.
//
//     go test -run '^$' -bench DocumentText -benchmem ./graph
func BenchmarkDocumentText(b *testing.B) {
	d := newDocumentBench(b)
	for _, c := range d.cases {
		b.Run("prepare/"+c.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				params := c.params()
				rctx, cancel := d.exec.Request(graphql.StartOperationTrace(ctx), false)
				if _, errs := d.exec.CreateOperationContext(rctx, params); errs != nil {
					b.Fatal(errs)
				}
				cancel()
			}
		})
	}
	for _, c := range d.cases {
		b.Run("handler/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				d.serve(b, c.body)
			}
		})
	}
}

// TestDocumentTextBenchmark runs each case of BenchmarkDocumentText once,
// so that the benchmark cannot rot, and checks that its texts do what it
// says: the 11 kB and 35 kB texts and the persisted ones answer the same
// data, with no error.
func TestDocumentTextBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sample service of its own")
	}
	d := newDocumentBench(t)
	var want []byte
	for _, c := range d.cases {
		body := d.serve(t, c.body)
		if bytes.Contains(body, []byte(`"errors"`)) || !bytes.Contains(body, []byte(`"hash"`)) {
			t.Fatalf("%s: %.500s", c.name, body)
		}
		if c.name == "54kB-every-field" {
			continue
		}
		if want == nil {
			want = body
		} else if !bytes.Equal(body, want) {
			t.Errorf("%s answers other data than %s:\n%.300s\n%.300s", c.name, d.cases[0].name, body, want)
		}
	}
	if n := len(d.cases[1].query); 5*n < 14*len(d.cases[0].query) {
		t.Errorf("the long text is %d bytes, not about three times the short one's %d", n, len(d.cases[0].query))
	}
}

// documentBench is BenchmarkDocumentText's gateway and requests.
type documentBench struct {
	exec    *graph.Executor
	handler http.Handler
	cases   []documentCase
}

// documentCase is one way of sending the operation.
type documentCase struct {
	name   string
	query  string // the text the operation runs
	body   []byte // the POST body
	params func() *graphql.RawParams
}

func newDocumentBench(tb testing.TB) *documentBench {
	tb.Helper()
	sample, err := sampleservice.Start(sampleservice.Config{Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: 1}}, "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = sample.Close() })
	client, err := upstream.New(upstream.Config{DataNodeURL: sample.URL, ExplorerURL: sample.URL})
	if err != nil {
		tb.Fatal(err)
	}
	short, err := os.ReadFile("../bench/queries/transactions.graphql")
	if err != nil {
		tb.Fatal(err)
	}
	long := repeatFragments(string(short), 3)
	every := strings.Replace(graph.FullPageQueries()["transactions"], "{ transactions(first: 1000)", "query Every($first: Int!) { transactions(first: $first)", 1)
	manifest, _ := json.Marshal(map[string]string{"long": long})
	docs, err := graph.ParsePersistedDocuments(manifest, graph.PagingConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	exec := graph.NewExecutor(graph.ExecutorConfig{
		Upstream:   client,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		CursorKeys: graph.CursorKeysForTest(),
		Documents:  docs,
		// The copies multiply the aliases of the fragments.
		Limits: graph.Limits{MaxAliases: 1000},
	})
	d := &documentBench{exec: exec, handler: transport.NewHandler(exec, transport.Config{})}
	vars := map[string]any{"first": 1, "cmdTypes": []string{"Batch Market Instructions", "Batch Proposal", "Register New Node", "Apply Referral Code"}}
	apq := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(long)}}
	add := func(name, query string, body map[string]any) {
		raw, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		// As the POST transport reads the body: numbers as json.Number.
		var p struct {
			Query      string         `json:"query"`
			Variables  map[string]any `json:"variables"`
			Extensions map[string]any `json:"extensions"`
			DocumentID string         `json:"documentId"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil {
			tb.Fatal(err)
		}
		d.cases = append(d.cases, documentCase{name: name, query: query, body: raw, params: func() *graphql.RawParams {
			// The executor takes the document id out of the extensions:
			// each request gets maps of its own.
			params := &graphql.RawParams{Query: p.Query, Variables: maps.Clone(p.Variables), Extensions: maps.Clone(p.Extensions)}
			if p.DocumentID != "" {
				graph.SetDocumentID(params, p.DocumentID)
			}
			return params
		}})
	}
	add("11kB", string(short), map[string]any{"query": string(short), "variables": vars})
	add("35kB", long, map[string]any{"query": long, "variables": vars})
	add("35kB-id", long, map[string]any{"documentId": "long", "variables": vars})
	// The first request registers the text with its hash; the rest send
	// the hash alone.
	register, _ := json.Marshal(map[string]any{"query": long, "variables": vars, "extensions": apq})
	d.serve(tb, register)
	add("35kB-apq", long, map[string]any{"variables": vars, "extensions": apq})
	add("54kB-every-field", every, map[string]any{"query": every, "variables": map[string]any{"first": 1}})
	for _, c := range d.cases {
		d.serve(tb, c.body) // the documents seen once
	}
	return d
}

// serve POSTs body to the handler and returns the response body.
func (d *documentBench) serve(tb testing.TB, body []byte) []byte {
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	d.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Fatalf("status %d: %.300s", rec.Code, rec.Body.Bytes())
	}
	return rec.Body.Bytes()
}

var (
	fragmentName = regexp.MustCompile(`fragment ([A-Za-z_][A-Za-z0-9_]*)`)
	spreadName   = regexp.MustCompile(`\.\.\.([A-Za-z_][A-Za-z0-9_]*)`)
)

// repeatFragments returns query with each of its fragments defined n
// times (the copies named with a suffix) and the operation spreading each
// copy beside the original: the same selections, n times the text.
func repeatFragments(query string, n int) string {
	at := fragmentName.FindStringIndex(query)
	op, frags := query[:at[0]], query[at[0]:]
	var b strings.Builder
	b.WriteString(spreadName.ReplaceAllStringFunc(op, func(spread string) string {
		name := spread[3:]
		out := spread
		for i := 2; i <= n; i++ {
			out += " ..." + name + "_" + string(rune('0'+i))
		}
		return out
	}))
	b.WriteString(frags)
	for i := 2; i <= n; i++ {
		suffix := "_" + string(rune('0'+i))
		copied := fragmentName.ReplaceAllString(frags, "fragment ${1}"+suffix)
		copied = spreadName.ReplaceAllString(copied, "...${1}"+suffix)
		b.WriteString("\n" + copied)
	}
	return b.String()
}
