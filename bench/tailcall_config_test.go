package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tradenet/gateway/sampleservice"
)

// TestTailcallConfig checks that bench/tailcall/ holds what
// tailcallConfig infers today from the sample service's bodies
// (-update-cost rewrites it): the configuration and the Tailcall side of
// the cost section's queries.
func TestTailcallConfig(t *testing.T) {
	sample := startDefaultSample(t)
	party, _ := busiestParty(sample.Service.Dataset())
	bodies := map[string]any{}
	for root, path := range map[string]string{
		"transactions": "/rest/transactions?first=1000000",
		// Funding payments are listed by party only: the party page's.
		"fundingPayments":  "/api/v2/funding-payments?pagination.first=1000&partyId=" + party,
		"delegations":      "/api/v2/delegations?pagination.first=1000",
		"partyDelegations": "/api/v2/delegations?pagination.first=1000&partyId=" + party,
	} {
		resp, err := http.Get(sample.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		bodies[root] = v
	}
	files, err := tailcallConfig(bodies)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		path := "tailcall/" + name
		if *updateCost {
			if err := os.MkdirAll("tailcall/queries", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := os.ReadFile(path); string(got) != text {
			t.Errorf("bench/%s is not what the sample service's bodies give today; run go test ./bench -run TestTailcallConfig -update-cost", path)
		}
	}
}

// jsonShape is what the bodies showed at one place: the kinds of value
// seen, and for objects their keys' shapes, for arrays their elements'.
type jsonShape struct {
	null, str, boolean, integer, float, object, array bool
	// bigInt: a whole number beyond GraphQL's 32-bit Int.
	bigInt bool
	fields map[string]*jsonShape
	keys   []string // in the order first seen
	elem   *jsonShape
}

// observe adds v to the shape.
func (s *jsonShape) observe(v any) {
	switch x := v.(type) {
	case nil:
		s.null = true
	case string:
		s.str = true
	case bool:
		s.boolean = true
	case float64:
		switch {
		case x != math.Trunc(x):
			s.float = true
		case x > math.MaxInt32 || x < math.MinInt32:
			s.bigInt = true
		default:
			s.integer = true
		}
	case map[string]any:
		s.object = true
		if s.fields == nil {
			s.fields = map[string]*jsonShape{}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			f := s.fields[k]
			if f == nil {
				f = &jsonShape{}
				s.fields[k] = f
				s.keys = append(s.keys, k)
			}
			f.observe(x[k])
		}
	case []any:
		s.array = true
		if s.elem == nil {
			s.elem = &jsonShape{}
		}
		for _, e := range x {
			s.elem.observe(e)
		}
	}
}

// graphqlName is what a GraphQL name may be.
var graphqlName = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]*$`)

// tailcallTypes writes GraphQL object types for shapes: each object shape
// a type named after its path, each field typed by what it held (strings
// String, whole numbers Int, others Float, booleans Boolean; anything
// mixed, or only ever null, JSON, Tailcall's scalar that passes a value
// through).
type tailcallTypes struct {
	b     strings.Builder
	names map[*jsonShape]string
	// queries renders each type's every-field selection.
	sel map[string]string
}

// typeRef names the GraphQL type of a shape seen at name, writing the
// object types it needs.
func (w *tailcallTypes) typeRef(s *jsonShape, name string) string {
	kinds := 0
	for _, k := range []bool{s.str, s.boolean, s.integer || s.float || s.bigInt, s.object, s.array} {
		if k {
			kinds++
		}
	}
	if kinds != 1 {
		return "JSON"
	}
	switch {
	case s.str:
		return "String"
	case s.boolean:
		return "Boolean"
	case s.float || s.bigInt:
		return "Float"
	case s.integer:
		return "Int"
	case s.array:
		if s.elem == nil || s.elem.null {
			return "[JSON]"
		}
		return "[" + w.typeRef(s.elem, name) + "]"
	}
	if len(s.keys) == 0 {
		return "JSON" // an object only ever empty: no fields to declare
	}
	if n, ok := w.names[s]; ok {
		return n
	}
	w.names[s] = name
	var fields, sel strings.Builder
	for _, k := range s.keys {
		if !graphqlName.MatchString(k) {
			continue
		}
		f := s.fields[k]
		ref := w.typeRef(f, name+strings.ToUpper(k[:1])+k[1:])
		fmt.Fprintf(&fields, "  %s: %s\n", k, ref)
		base := strings.Trim(ref, "[]")
		if inner, ok := w.sel[base]; ok {
			fmt.Fprintf(&sel, "%s { %s } ", k, inner)
		} else {
			sel.WriteString(k + " ")
		}
	}
	fmt.Fprintf(&w.b, "\ntype %s {\n%s}\n", name, fields.String())
	w.sel[name] = strings.TrimSpace(sel.String())
	return name
}

// tailcallConfigHeader opens the generated configuration; SAMPLE_URL is
// the sample service's base URL, from Tailcall's environment.
const tailcallConfigHeader = `# Generated by TestTailcallConfig (go test ./bench -run TestTailcallConfig -update-cost) from the
# sample service's bodies; do not edit. Tailcall's side of the cost section: the sample service's
# endpoints as GraphQL, every object type named after its path and typed by what the bodies hold.
# A transaction's command is one object with one nullable field per wire member (nonce and
# blockHeight beside them), as the wire has it: Tailcall's unions read an object whose only key
# names the member's type, or one with a field naming it, and the wire's command is neither (its
# member key is lowerCamelCase, beside nonce and blockHeight). Identical upstream requests in flight are made once (dedupe), as the gateway's client
# coalesces them. The harness replaces the port and sets SAMPLE_URL in Tailcall's environment.
schema @server(port: 8000) @upstream(poolMaxIdlePerHost: 256) {
  query: Query
}

type Query {
  transactions(first: Int!): Transactions
    @http(url: "{{.env.SAMPLE_URL}}/rest/transactions", query: [{key: "first", value: "{{.args.first}}"}], dedupe: true)
  fundingPayments(partyId: String!, first: Int!): FundingPayments
    @http(
      url: "{{.env.SAMPLE_URL}}/api/v2/funding-payments"
      query: [{key: "partyId", value: "{{.args.partyId}}"}, {key: "pagination.first", value: "{{.args.first}}"}]
      dedupe: true
    )
  delegations(partyId: String!, first: Int!): Delegations
    @http(
      url: "{{.env.SAMPLE_URL}}/api/v2/delegations"
      query: [{key: "partyId", value: "{{.args.partyId}}"}, {key: "pagination.first", value: "{{.args.first}}"}]
      dedupe: true
    )
}
`

// tailcallConfig infers the configuration and the Tailcall side of the
// cost section's queries from the sample service's bodies of each root
// field (transactions, fundingPayments, delegations; partyDelegations adds
// to the last). It returns the files by name.
func tailcallConfig(bodies map[string]any) (map[string]string, error) {
	shapes := map[string]*jsonShape{}
	for _, root := range []string{"transactions", "fundingPayments", "delegations"} {
		s := &jsonShape{}
		shapes[root] = s
		s.observe(bodies[root])
	}
	shapes["delegations"].observe(bodies["partyDelegations"])
	w := &tailcallTypes{names: map[*jsonShape]string{}, sel: map[string]string{}}
	for _, root := range []string{"transactions", "fundingPayments", "delegations"} {
		name := strings.ToUpper(root[:1]) + root[1:]
		if ref := w.typeRef(shapes[root], name); ref != name {
			return nil, fmt.Errorf("%s: the body is not one JSON object (%s)", root, ref)
		}
	}
	// Every transaction has a command and every command a member: the
	// one-kind query selects one member, every field.
	tx := shapes["transactions"].fields["transactions"]
	if tx == nil || tx.elem == nil || tx.elem.fields["command"] == nil || tx.elem.fields["command"].fields["batchMarketInstructions"] == nil {
		return nil, fmt.Errorf("no batch of market instructions in the sample's transactions")
	}
	bmi := w.names[tx.elem.fields["command"].fields["batchMarketInstructions"]]
	party := `fundingPayments(partyId: $id, first: $first) { ` + w.sel["FundingPayments"] + ` }
  delegations(partyId: $id, first: $first) { ` + w.sel["Delegations"] + ` }`
	const gen = "# Generated by TestTailcallConfig (go test ./bench -run TestTailcallConfig -update-cost); do not edit.\n"
	return map[string]string{
		"tailcall.graphql": tailcallConfigHeader + w.b.String(),
		"queries/every-field-50.graphql": gen + "# Every field of the 50 newest transactions, every command member included.\n" +
			"query EveryField($first: Int!) {\n  transactions(first: $first) { " + w.sel["Transactions"] + " }\n}\n",
		"queries/hashes-50.graphql": gen + "query Hashes($first: Int!) {\n  transactions(first: $first) { transactions { hash } }\n}\n",
		"queries/one-kind-50.graphql": gen + "# Each transaction's hash and, for batches of market instructions, every field of the command.\n" +
			"query OneKind($first: Int!) {\n  transactions(first: $first) { transactions { hash command { batchMarketInstructions { " + w.sel[bmi] + " } } } }\n}\n",
		"queries/party-page.graphql": gen + "# A party's first page of funding payments and of delegations, every field.\n" +
			"query Party($id: String!, $first: Int!) {\n  " + party + "\n}\n",
	}, nil
}

// startDefaultSample starts the sample service on the default dataset
// (seed 1, scale 1) with its defects, closed with the test.
func startDefaultSample(t *testing.T) *sampleservice.Server {
	t.Helper()
	sample, err := sampleservice.Start(sampleservice.Config{
		Dataset: sampleservice.DatasetOptions{Seed: 1, Scale: 1},
		Defects: sampleservice.DefaultDefects(),
	}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sample.Close() })
	return sample
}
