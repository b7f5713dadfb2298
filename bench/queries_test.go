package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/httpcompress"
)

// TestQueriesSelectEveryField checks that each benchmark query is valid
// against the schema and selects every field of the types it lists, down
// to the leaves: the transactions query every field of every command kind.
// References (Asset, Party, ValidatorNode) need only be resolved: their id
// and, for assets, what the query shows of them.
func TestQueriesSelectEveryField(t *testing.T) {
	schema := loadSchema(t)
	references := []string{"Asset", "Party", "ValidatorNode"}
	for _, tc := range []struct {
		file  string
		roots []string
		stops []string
		// only, per union, the members the query's filter can return
		// (transactions: its cmdTypes, the four kinds the interface
		// describes, kept so that the common page stays comparable with
		// earlier benchmark rounds).
		only map[string][]string
	}{
		{"transactions", []string{"Transaction"}, references, map[string][]string{
			"Command": {"AnnounceNode", "ApplyReferralCode", "BatchMarketInstructions", "BatchProposalSubmission", "UnknownCommand"},
			// NewAsset occurs in single proposals only.
			"ProposalChangeKind": {"CancelTransfer", "NewFreeform", "NewMarket", "NewSpotMarket", "NewTransfer", "UpdateAsset",
				"UpdateMarket", "UpdateMarketState", "UpdateNetworkParameter", "UpdateReferralProgram", "UpdateSpotMarket",
				"UpdateVolumeDiscountProgram", "UnknownProposalChange"},
		}},
		{"assets", []string{"Asset"}, nil, nil},
		{"delegations", []string{"Delegation"}, references, nil},
		{"party", []string{"FundingPayment", "Delegation"}, references, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(schema, queryText(tc.file))
			if errs != nil {
				t.Fatalf("invalid query: %v", errs)
			}
			selected := map[string]bool{}
			for _, op := range doc.Operations {
				collectSelected(op.SelectionSet, selected)
			}
			var missing []string
			for _, f := range requiredFields(schema, tc.roots, tc.stops, tc.only) {
				if !selected[f] {
					missing = append(missing, f)
				}
			}
			if len(missing) > 0 {
				t.Errorf("queries/%s.graphql does not select %d fields:\n%s", tc.file, len(missing), strings.Join(missing, "\n"))
			}
			if tc.file == "transactions" && !selected["Asset.details"] {
				t.Error("the transactions query does not resolve asset references (Asset.details)")
			}
		})
	}
}

// collectSelected records "Type.field" for every field selected, through
// inline fragments and fragment spreads.
func collectSelected(set ast.SelectionSet, into map[string]bool) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.ObjectDefinition != nil {
				into[s.ObjectDefinition.Name+"."+s.Name] = true
			}
			collectSelected(s.SelectionSet, into)
		case *ast.InlineFragment:
			collectSelected(s.SelectionSet, into)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				collectSelected(s.Definition.SelectionSet, into)
			}
		}
	}
}

// requiredFields lists "Type.field" for every field of the object types
// reachable from roots (through unions and interfaces too); a stop type
// contributes its id only and is not followed.
func requiredFields(schema *ast.Schema, roots, stops []string, only map[string][]string) []string {
	var out []string
	seen := map[string]bool{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		def := schema.Types[name]
		switch {
		case def == nil:
			continue
		case def.Kind == ast.Union || def.Kind == ast.Interface:
			for _, p := range schema.GetPossibleTypes(def) {
				if members, ok := only[name]; !ok || slices.Contains(members, p.Name) {
					queue = append(queue, p.Name)
				}
			}
			continue
		case def.Kind != ast.Object:
			continue
		case slices.Contains(stops, name):
			out = append(out, name+".id")
			continue
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			out = append(out, name+"."+f.Name)
			queue = append(queue, f.Type.Name())
		}
	}
	slices.Sort(out)
	return out
}

// TestVerifyCatchesDifferences checks that the harness's comparison is not
// vacuous: both paths agree on each query of the headline, and a gateway
// answer that differs from the direct one (fewer rows, other rows) fails.
func TestVerifyCatchesDifferences(t *testing.T) {
	e, err := newEnv(envOptions{scale: 1, loaderWait: graph.DefaultLoaderConfig.Wait, genericDirect: true, compression: httpcompress.DefaultLevel})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	party, n := busiestParty(e.sample.Service.Dataset())
	if n < 10 {
		t.Fatalf("the busiest party has %d funding payments or delegations; the party query needs more", n)
	}
	for _, q := range []query{transactionsQuery(10), assetsQuery(10), partyQuery(party, 10), delegationsQuery(10)} {
		rows, err := verify(ctx, e, e.uncached, q)
		if err != nil {
			t.Errorf("%s: %v", q.name, err)
		}
		if want := q.rows; rows != want {
			t.Errorf("%s: %d rows, want %d", q.name, rows, want)
		}
	}

	fewer := delegationsQuery(10)
	fewer.vars = map[string]any{"first": 9}
	if _, err := verify(ctx, e, e.uncached, fewer); err == nil || !strings.Contains(err.Error(), "direct returned 10 rows, gateway 9") {
		t.Errorf("a gateway page one row short: got %v", err)
	}
	other := transactionsQuery(10)
	other.vars = map[string]any{"first": 10, "cmdTypes": []string{"Batch Market Instructions"}}
	if _, err := verify(ctx, e, e.uncached, other); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("a gateway page of other transactions: got %v", err)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 200; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tc := range []struct {
		p    int
		want time.Duration
	}{{50, 100}, {99, 198}, {100, 200}, {1, 2}} {
		if got := percentile(d, tc.p); got != tc.want {
			t.Errorf("p%d of 1..200 = %d, want %d", tc.p, got, tc.want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one sample = %d, want 7", got)
	}
}

func TestGroupMedian(t *testing.T) {
	g := group{cells: []cell{{Direct: stats{P50: 3}}, {Direct: stats{P50: 1}}, {Direct: stats{P50: 2}}, {Direct: stats{P50: 10}}}}
	if got := g.median(func(c cell) float64 { return float64(c.Direct.P50) }); got != 2.5 {
		t.Errorf("median of 3, 1, 2, 10 = %v, want 2.5", got)
	}
	g.cells = g.cells[:3]
	if got := g.median(func(c cell) float64 { return float64(c.Direct.P50) }); got != 2 {
		t.Errorf("median of 3, 1, 2 = %v, want 2", got)
	}
}

func TestParseOptions(t *testing.T) {
	for _, args := range [][]string{
		{"-sections", "headline,nonsense"},
		{"-duration", "0s"},
		{"-runs", "0"},
		{"-large-scale", "0"},
		{"-distances", "1ms,soon"},
		{"-distances", "0s"},
		{"extra"},
	} {
		if _, err := parseOptions(args, &strings.Builder{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	o, err := parseOptions([]string{"-smoke"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if o.runs != 1 || o.duration > time.Second || len(o.sections) != len(allSections) {
		t.Errorf("-smoke: %+v", o)
	}
	o, err = parseOptions([]string{"-distances", "1ms"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.distances) != 1 || o.distances[0] != time.Millisecond {
		t.Errorf("-distances 1ms: %v", o.distances)
	}
}
