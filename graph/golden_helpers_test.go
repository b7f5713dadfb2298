package graph_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
)

// The golden framework: each case runs a whole query through the gateway
// over the shared sample service and compares the response with
// testdata/golden/<name>.json. Queries name the fragments they spread;
// those live in testdata/queries/fragments.graphql and are appended (with
// the fragments they spread in turn) before the query is sent.

var update = flag.Bool("update", false, "rewrite golden files")

const (
	goldenDir     = "testdata/golden"
	fragmentsFile = "testdata/queries/fragments.graphql"
	updateHint    = "if the change is intended, run: go test ./graph -run TestGolden -update (and review the diff of testdata/golden)"
)

// txAt, as a variable value, stands for the cursor that addresses the
// dataset's Notable transaction of that name as the single row of
// `transactions(last: 1, before: $c)`: the cursor of the row just older than
// it, or null when it is the oldest.
type txAt string

// fromDataset, as a variable value, is computed from the sample dataset
// (a party or node id that has rows, for example).
type fromDataset func(ds *sampleservice.Dataset) any

// goldenCase is one whole-query table test.
type goldenCase struct {
	// name names the golden file: testdata/golden/<name>.json.
	name string
	// query is the GraphQL document; fragments it spreads are appended.
	query string
	// variables of the query; txAt and fromDataset values are resolved
	// against the dataset.
	variables map[string]any
	// check asserts key facts in code, so that a blind -update cannot bless
	// a regression of them.
	check func(t *testing.T, r gqlResponse)
}

// goldenDoc is what a golden file holds: the response without
// extensions.freshness (the block height and time vary with the data the
// request touched), errors in a stable order and without locations (which
// only repeat the query's layout).
type goldenDoc struct {
	Data       json.RawMessage `json:"data"`
	Errors     []gqlError      `json:"errors,omitempty"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}

// goldenSuites are the case lists of every golden test (TestGolden and
// the per-domain ones), each registered by its file's init function: the
// orphan check knows the files of all of them, so that running one test
// neither flags nor, under -update, deletes another's files.
var goldenSuites []func() []goldenCase

// runGolden runs the cases in parallel against one gateway.
func runGolden(t *testing.T, cases []goldenCase) {
	t.Helper()
	gw := newGateway(t, nil, gatewayOptions{})
	ds := gw.Sample.Service.Dataset()
	fragments := loadFragments(t)
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate golden case %q", tc.name)
		}
		seen[tc.name] = true
	}
	known := maps.Clone(seen)
	for _, suite := range goldenSuites {
		for _, tc := range suite() {
			known[tc.name] = true
		}
	}
	checkOrphans(t, known)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := withFragments(t, tc.query, fragments)
			r := gw.query(t, doc, resolveVars(t, ds, tc.variables))
			compareGolden(t, tc.name, r)
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// checkOrphans reports golden files that no case writes (a case renamed or
// removed), and deletes them under -update. It looks in the directories of
// the cases' files only: a test whose case names have a directory of their
// own ("validator/command.nodeVote") owns that directory, so several golden
// tests can each check their own files.
func checkOrphans(t *testing.T, names map[string]bool) {
	t.Helper()
	dirs := map[string]bool{}
	for name := range names {
		dirs[filepath.Dir(filepath.Join(goldenDir, name))] = true
	}
	var files []string
	for dir := range dirs {
		matches, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	for _, f := range files {
		rel, err := filepath.Rel(goldenDir, f)
		if err != nil {
			t.Fatal(err)
		}
		if names[strings.TrimSuffix(filepath.ToSlash(rel), ".json")] {
			continue
		}
		if *update {
			if err := os.Remove(f); err != nil {
				t.Error(err)
			}
			continue
		}
		t.Errorf("golden file %s belongs to no case; %s", f, updateHint)
	}
}

// resolveVars replaces txAt and fromDataset placeholders by their values.
func resolveVars(t *testing.T, ds *sampleservice.Dataset, vars map[string]any) map[string]any {
	t.Helper()
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		switch v := v.(type) {
		case txAt:
			out[k] = txCursorOf(t, ds, string(v))
		case fromDataset:
			out[k] = v(ds)
		default:
			out[k] = v
		}
	}
	return out
}

// txCursorOf is the `before` cursor that makes `transactions(last: 1,
// before: …)` return exactly the Notable transaction name (nil for the
// oldest transaction, where `last: 1` alone does).
func txCursorOf(t *testing.T, ds *sampleservice.Dataset, name string) any {
	t.Helper()
	p, ok := ds.Notable[name]
	if !ok {
		t.Fatalf("dataset has no Notable transaction %q", name)
	}
	if p == 0 {
		return nil
	}
	m := ds.Transactions.Meta(p - 1)
	return graph.TxCursorAt(m.Block, m.Index)
}

// notableMeta is the block and index of a Notable transaction.
func notableMeta(t *testing.T, name string) sampleservice.TxMeta {
	t.Helper()
	s, err := sharedSample()
	if err != nil {
		t.Fatal(err)
	}
	ds := s.Service.Dataset()
	p, ok := ds.Notable[name]
	if !ok {
		t.Fatalf("dataset has no Notable transaction %q", name)
	}
	return ds.Transactions.Meta(p)
}

// compareGolden compares a response with its golden file, or rewrites the
// file under -update.
func compareGolden(t *testing.T, name string, r gqlResponse) {
	t.Helper()
	got := goldenJSON(t, r)
	path := filepath.Join(goldenDir, name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file: %v\n%s", err, updateHint)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("response differs from %s (-want +got):\n%s\n%s", path, cmp.Diff(string(want), string(got)), updateHint)
	}
}

// goldenJSON is the response as stored in a golden file: pretty-printed
// with two spaces, data in response order, errors sorted by path then
// message, non-ASCII and HTML characters left readable.
func goldenJSON(t *testing.T, r gqlResponse) []byte {
	t.Helper()
	doc := goldenDoc{Data: r.Data, Errors: slices.Clone(r.Errors)}
	slices.SortStableFunc(doc.Errors, func(a, b gqlError) int {
		if c := strings.Compare(pathString(a.Path), pathString(b.Path)); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	for k, v := range r.Extensions {
		if k == "freshness" {
			continue
		}
		if doc.Extensions == nil {
			doc.Extensions = map[string]any{}
		}
		doc.Extensions[k] = v
	}
	encoded, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("encode response: %v", err)
	}
	// The gateway (and encoding/json) escape &, < and > in strings; undo
	// that so text reads as sent.
	compact, err := reencodeStrings(encoded)
	if err != nil {
		t.Fatalf("re-encode response: %v", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		t.Fatalf("indent response: %v", err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// reencodeStrings rewrites compact JSON token by token, keeping the order
// of object members and the text of numbers, with strings encoded without
// HTML escaping.
func reencodeStrings(src []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	// One frame per open container: whether it is an object, and how many
	// tokens (keys and values) it has had.
	type frame struct {
		object bool
		n      int
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
		delim, isDelim := tok.(json.Delim)
		closing := isDelim && (delim == '}' || delim == ']')
		if len(stack) > 0 && !closing {
			f := &stack[len(stack)-1]
			switch {
			case f.object && f.n%2 == 1:
				out.WriteByte(':')
			case f.n > 0:
				out.WriteByte(',')
			}
			f.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			out.WriteByte(byte(v))
			if closing {
				stack = stack[:len(stack)-1]
			} else {
				stack = append(stack, frame{object: v == '{'})
			}
		case string:
			if err := enc.Encode(v); err != nil {
				return nil, err
			}
			out.Truncate(out.Len() - 1) // Encode's newline
		case json.Number:
			out.WriteString(v.String())
		case bool:
			out.WriteString(strconv.FormatBool(v))
		case nil:
			out.WriteString("null")
		}
	}
}

// pathString renders an error path as a.b[2].c, for sorting and messages.
func pathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		case float64:
			fmt.Fprintf(&b, "[%d]", int(p))
		default:
			fmt.Fprintf(&b, "[%v]", p)
		}
	}
	return b.String()
}

var (
	fragmentStart  = regexp.MustCompile(`(?m)^fragment\s+(\w+)\s+on\s`)
	fragmentSpread = regexp.MustCompile(`\.\.\.\s*(\w+)`)
)

// loadFragments reads the shared fragments file into name → definition.
func loadFragments(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile(fragmentsFile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	locs := fragmentStart.FindAllStringSubmatchIndex(text, -1)
	out := make(map[string]string, len(locs))
	for i, loc := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name := text[loc[2]:loc[3]]
		if _, dup := out[name]; dup {
			t.Fatalf("%s: fragment %s defined twice", fragmentsFile, name)
		}
		out[name] = strings.TrimSpace(text[loc[0]:end])
	}
	return out
}

// withFragments appends to query the fragments it spreads, transitively,
// each once (GraphQL rejects unused fragments, so only those are sent).
func withFragments(t *testing.T, query string, fragments map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(query)
	added := map[string]bool{}
	queue := []string{query}
	for len(queue) > 0 {
		text := queue[0]
		queue = queue[1:]
		for _, m := range fragmentSpread.FindAllStringSubmatch(text, -1) {
			name := m[1]
			if name == "on" || added[name] {
				continue
			}
			def, ok := fragments[name]
			if !ok {
				if strings.Contains(query, "fragment "+name+" ") {
					continue // defined in the query itself
				}
				t.Fatalf("unknown fragment %s", name)
			}
			added[name] = true
			b.WriteString("\n\n")
			b.WriteString(def)
			queue = append(queue, def)
		}
	}
	return b.String()
}

// errorsAt returns the errors whose path renders as path.
func errorsAt(r gqlResponse, path string) []gqlError {
	var out []gqlError
	for _, e := range r.Errors {
		if pathString(e.Path) == path {
			out = append(out, e)
		}
	}
	return out
}

// expectError asserts exactly one error at path, with code, whose message
// contains each of the fragments given.
func expectError(t *testing.T, r gqlResponse, path, code string, contains ...string) {
	t.Helper()
	errs := errorsAt(r, path)
	if len(errs) != 1 {
		var all []string
		for _, e := range r.Errors {
			all = append(all, fmt.Sprintf("%s: %s (%s)", pathString(e.Path), e.Message, e.code()))
		}
		t.Errorf("want one error at %s, got %d; all errors:\n%s", path, len(errs), strings.Join(all, "\n"))
		return
	}
	e := errs[0]
	if e.code() != code {
		t.Errorf("error at %s: code %q, want %q (message %q)", path, e.code(), code, e.Message)
	}
	for _, s := range contains {
		if !strings.Contains(e.Message, s) {
			t.Errorf("error at %s: message %q does not contain %q", path, e.Message, s)
		}
	}
}

// expectErrorCount asserts the number of errors in the response.
func expectErrorCount(t *testing.T, r gqlResponse, n int) {
	t.Helper()
	if len(r.Errors) != n {
		t.Errorf("got %d errors, want %d: %+v", len(r.Errors), n, r.Errors)
	}
}

// dataAt decodes data and walks a path of keys and indexes into it.
func dataAt(t *testing.T, r gqlResponse, path ...any) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatalf("decode data: %v", err)
	}
	for i, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("data%s: not an object", pathString(path[:i+1]))
			}
			if v, ok = m[p]; !ok {
				t.Fatalf("data: no field %s", pathString(path[:i+1]))
			}
		case int:
			l, ok := v.([]any)
			if !ok || p >= len(l) {
				t.Fatalf("data: no element %s", pathString(path[:i+1]))
			}
			v = l[p]
		}
	}
	return v
}

// expectData asserts the value at a data path.
func expectData(t *testing.T, r gqlResponse, want any, path ...any) {
	t.Helper()
	got := dataAt(t, r, path...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("data at %v (-want +got):\n%s", path, diff)
	}
}

// notableTxs builds a case whose query fetches, under each alias, the
// Notable transaction txs[alias] (as the single row of `transactions(last:
// 1, before: …)`) and applies selection to it. Its check first asserts that
// each alias holds exactly that transaction, then runs check.
func notableTxs(name, selection string, txs map[string]string, check func(*testing.T, gqlResponse)) goldenCase {
	aliases := slices.Sorted(maps.Keys(txs))
	var params, fields []string
	vars := map[string]any{}
	for _, a := range aliases {
		params = append(params, "$"+a+": String")
		fields = append(fields, fmt.Sprintf("  %s: transactions(last: 1, before: $%s) {\n    edges {\n      node {\n        block\n        index\n        %s\n      }\n    }\n  }", a, a, selection))
		vars[a] = txAt(txs[a])
	}
	query := fmt.Sprintf("query (%s) {\n%s\n}", strings.Join(params, ", "), strings.Join(fields, "\n"))
	return goldenCase{
		name:      name,
		query:     query,
		variables: vars,
		check: func(t *testing.T, r gqlResponse) {
			t.Helper()
			for _, a := range aliases {
				edges, _ := dataAt(t, r, a, "edges").([]any)
				if len(edges) != 1 {
					t.Fatalf("%s: %d edges, want 1 (the transaction %q)", a, len(edges), txs[a])
				}
				m := notableMeta(t, txs[a])
				expectData(t, r, strconv.FormatUint(m.Block, 10), a, "edges", 0, "node", "block")
				expectData(t, r, float64(m.Index), a, "edges", 0, "node", "index")
			}
			if check != nil {
				check(t, r)
			}
		},
	}
}

// oneTx is notableTxs of a single transaction, under the alias tx.
func oneTx(name, selection, notable string, check func(*testing.T, gqlResponse)) goldenCase {
	return notableTxs(name, selection, map[string]string{"tx": notable}, check)
}

// txNode is the data path of the transaction under alias.
func txNode(alias string, rest ...any) []any {
	// Clipped, so that appending to the result never shares memory.
	return slices.Clip(append([]any{alias, "edges", 0, "node"}, rest...))
}
