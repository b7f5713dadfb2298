package graph_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/testutil"
	"github.com/tradenet/gateway/sampleservice"
)

// Hostile numbers in every numeric argument of the schema: block heights
// (Uint64), epochs (ID holding an integer) and page sizes (Int), as
// literals and as variables, on every field that takes them. Each is a
// BAD_USER_INPUT error that names the argument and the range it accepts;
// none is INTERNAL, none panics (gqlparser's ast.arg2map panics on an
// Int or Float literal that does not parse, such as 1e400), nothing is
// logged as an internal error, and the upstream is never asked.

// numericField is a field with numeric arguments; %s is where the
// argument goes.
type numericField struct {
	name, query string
	args        []string
}

var numericFields = []numericField{
	{"Query.assets", `{ assets(%s) { edges { cursor } } }`, []string{"first", "last"}},
	{"Query.fundingPayments", `{ fundingPayments(partyId: "` + partyA + `", %s) { edges { cursor } } }`, []string{"first", "last"}},
	{"Query.delegations", `{ delegations(%s) { edges { cursor } } }`, []string{"first", "last", "epochId"}},
	{"Query.transactions", `{ transactions(%s) { edges { cursor } } }`, []string{"first", "last", "block"}},
	{"Party.fundingPayments", `{ party(id: "` + partyA + `") { fundingPayments(%s) { edges { cursor } } } }`, []string{"first", "last"}},
	{"Party.delegations", `{ party(id: "` + partyA + `") { delegations(%s) { edges { cursor } } } }`, []string{"first", "last", "epochId"}},
	{"Party.transactions", `{ party(id: "` + partyA + `") { transactions(%s) { edges { cursor } } } }`, []string{"first", "last", "block"}},
	{"ValidatorNode.delegations", `{ validatorNode(id: "` + partyA + `") { delegations(%s) { edges { cursor } } } }`, []string{"first", "last", "epochId"}},
}

// numericArg is what an argument accepts: its GraphQL type, the range its
// error messages must state, and hostile values (GraphQL literals and
// JSON variable values).
type numericArg struct {
	typ      string
	rangeMsg string
	literals []string
	vars     []string
}

const (
	maxUint64 = "18446744073709551615"
	maxInt64  = "9223372036854775807"
)

var numericArgs = map[string]numericArg{
	"first": pageSizeArg, "last": pageSizeArg,
	"block": {
		typ: "Uint64", rangeMsg: "from 0 to " + maxUint64,
		literals: []string{`1e400`, `-1e400`, `-1`, `"-1"`, `1.5`, `99999999999999999999999`, `-99999999999999999999999`,
			`"18446744073709551616"`, `18446744073709551616`, `"x"`, `""`, `true`, `FOO`, `[1]`, `{a: 1}`, `1e19`},
		vars: []string{`1e400`, `-1`, `"-1"`, `1.5`, `99999999999999999999999`, `"18446744073709551616"`, `"1e400"`,
			`"abc"`, `""`, `true`, `[1]`, `{"a":1}`, `-0.5`},
	},
	// The data node reads an epoch as an int64.
	"epochId": {
		typ: "ID", rangeMsg: "from 0 to " + maxInt64,
		literals: []string{`1e400`, `99999999999999999999999`, `9223372036854775808`, `"9223372036854775808"`, `-1`, `"-1"`, `1.5`, `"abc"`,
			`"18446744073709551616"`, `true`, `[1]`},
		vars: []string{`"-1"`, `"1e400"`, `"9223372036854775808"`, `"18446744073709551616"`, `-1`, `99999999999999999999999`, `"x"`},
	},
}

// Page sizes within int64 reach the paging check, whose messages say
// "must be at most 1000"; the others say "from 0 to 1000".
var pageSizeArg = numericArg{
	typ: "Int", rangeMsg: "1000",
	literals: []string{`1e400`, `-1e400`, `99999999999999999999999`, `-99999999999999999999999`, `3000000000`, `1.5`, `"5"`, `true`, `FOO`, `[1]`, `{a: 1}`},
	vars:     []string{`1e400`, `1.5`, `99999999999999999999999`, `3000000000`, `"x"`, `true`, `[1]`, `{"a":1}`},
}

func TestHostileNumericArguments(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	logs := &testutil.LockedBuffer{}
	g := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Logger: slog.New(slog.NewTextHandler(logs, nil))}})
	sample.Service.ResetCounters()

	check := func(t *testing.T, arg string, spec numericArg, resp gqlResponse) {
		t.Helper()
		if len(resp.Errors) == 0 {
			t.Fatalf("no error; data %s", resp.Data)
		}
		for _, e := range resp.Errors {
			if e.code() != "BAD_USER_INPUT" {
				t.Fatalf("error %+v, want BAD_USER_INPUT", e)
			}
		}
		e := resp.Errors[0]
		if !strings.HasPrefix(e.Message, arg) {
			t.Errorf("message %q does not start with the argument's name %q", e.Message, arg)
		}
		if !strings.Contains(e.Message, spec.rangeMsg) {
			t.Errorf("message %q does not state the range %q", e.Message, spec.rangeMsg)
		}
	}
	for _, f := range numericFields {
		for _, arg := range f.args {
			spec := numericArgs[arg]
			for _, lit := range spec.literals {
				t.Run(fmt.Sprintf("%s/%s:%s", f.name, arg, lit), func(t *testing.T) {
					check(t, arg, spec, g.query(t, fmt.Sprintf(f.query, arg+": "+lit), nil))
				})
			}
			// As a variable: the operation declares it with the
			// argument's type.
			q := "query($v: " + spec.typ + ") " + fmt.Sprintf(f.query, arg+": $v")
			for _, v := range spec.vars {
				t.Run(fmt.Sprintf("%s/%s:$v=%s", f.name, arg, v), func(t *testing.T) {
					check(t, arg, spec, g.query(t, q, map[string]any{"v": json.RawMessage(v)}))
				})
			}
			// A default value of the variable, unset.
			for _, lit := range spec.literals {
				if strings.ContainsAny(lit, "[{") || lit == "FOO" {
					continue // not a value of the variable's type: the same rule as above
				}
				t.Run(fmt.Sprintf("%s/%s:$v=%s by default", f.name, arg, lit), func(t *testing.T) {
					q := "query($v: " + spec.typ + " = " + lit + ") " + fmt.Sprintf(f.query, arg+": $v")
					check(t, arg, spec, g.query(t, q, nil))
				})
			}
		}
	}
	for _, e := range []sampleservice.Endpoint{sampleservice.EndpointAssets, sampleservice.EndpointFundingPayments, sampleservice.EndpointDelegations, sampleservice.EndpointTransactions} {
		if n := sample.Service.Requests(e); n != 0 {
			t.Errorf("the upstream received %d %s requests for invalid input", n, e)
		}
	}
	if s := logs.String(); strings.Contains(s, "panic") || strings.Contains(s, "goroutine") || strings.Contains(s, "internal error") {
		t.Errorf("hostile numbers were logged as internal errors:\n%.3000s", s)
	}
}

// The edges of the ranges are accepted, as literals and as variables: a
// Uint64 literal above the int64 range once panicked too.
func TestNumericArgumentsAtTheirLimits(t *testing.T) {
	logs := &testutil.LockedBuffer{}
	g := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Logger: slog.New(slog.NewTextHandler(logs, nil))}})
	ok := []struct {
		query string
		vars  map[string]any
	}{
		{`{ transactions(block: ` + maxUint64 + `) { edges { cursor } } }`, nil},
		{`{ transactions(block: "` + maxUint64 + `") { edges { cursor } } }`, nil},
		{`{ transactions(block: 0) { edges { cursor } } }`, nil},
		{`{ party(id: "` + partyA + `") { transactions(block: ` + maxUint64 + `) { edges { cursor } } } }`, nil},
		{`query($b: Uint64) { transactions(block: $b) { edges { cursor } } }`, map[string]any{"b": json.RawMessage(maxUint64)}},
		{`query($b: Uint64) { transactions(block: $b) { edges { cursor } } }`, map[string]any{"b": maxUint64}},
		{`query($b: Uint64 = ` + maxUint64 + `) { transactions(block: $b) { edges { cursor } } }`, nil},
		{`{ delegations(epochId: "` + maxInt64 + `") { edges { cursor } } }`, nil},
		{`{ delegations(epochId: ` + maxInt64 + `) { edges { cursor } } }`, nil},
		{`{ delegations(epochId: 0) { edges { cursor } } }`, nil},
		{`{ transactions(first: 0) { edges { cursor } } }`, nil},
		{`{ assets(last: 1000) { edges { cursor } } }`, nil},
	}
	for _, c := range ok {
		resp := g.query(t, c.query, c.vars)
		if len(resp.Errors) > 0 {
			t.Errorf("%s %v: %+v", c.query, c.vars, resp.Errors)
		}
	}
	if s := logs.String(); strings.Contains(s, "panic") || strings.Contains(s, "internal error") {
		t.Errorf("logged:\n%.3000s", s)
	}
}

// The same in fragments, under aliases, and for a variable passed to two
// arguments: the message names the argument as written.
func TestHostileNumbersInFragments(t *testing.T) {
	g := newGateway(t, nil, gatewayOptions{})
	cases := []struct {
		query string
		vars  map[string]any
		want  string
	}{
		{`{ ...F } fragment F on Query { t: transactions(block: 1e400) { edges { cursor } } }`, nil,
			"block: 1e400 is not a block height: an integer from 0 to " + maxUint64},
		{`{ party(id: "` + partyA + `") { ... on Party { transactions(first: 99999999999999999999999) { edges { cursor } } } } }`, nil,
			"first: 99999999999999999999999 is not a page size: an integer from 0 to 1000"},
		{`query($n: Int) { ...F } fragment F on Query { assets(last: $n) { edges { cursor } } }`, map[string]any{"n": json.RawMessage(`1e400`)},
			"last: the value of $n is not a page size: an integer from 0 to 1000"},
		{`query($b: Uint64 = -1) { a: transactions(block: $b) { edges { cursor } } }`, nil,
			"block: -1 (the default value of $b) is not a block height: an integer from 0 to " + maxUint64},
	}
	for _, c := range cases {
		resp := g.query(t, c.query, c.vars)
		if len(resp.Errors) != 1 || resp.Errors[0].code() != "BAD_USER_INPUT" || !strings.HasPrefix(resp.Errors[0].Message, c.want) {
			t.Errorf("%s: %+v\nwant one BAD_USER_INPUT %q…", c.query, resp.Errors, c.want)
		}
	}
}
