package graph

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/tradenet/gateway/upstream"
)

// TestAssetRefsCoverTheSchema: the table of references names every field
// whose resolver turns an object's id into an asset (the methods of the
// generated resolver interfaces returning *upstream.Asset; Query's take
// an argument, not a reference), each once, each an Asset field of the
// schema and a string field of its Go type, so that a new reference
// field cannot miss a page's batch silently.
func TestAssetRefsCoverTheSchema(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	inTable := map[[2]string]int{}
	for _, ref := range assetRefs {
		inTable[[2]string{ref.object, ref.field}]++
		f, ok := ref.goType.FieldByName(ref.goField)
		if !ok || f.Type.Kind() != reflect.String || len(f.Index) != 1 {
			t.Errorf("%s.%s: no string field %s in %s", ref.object, ref.field, ref.goField, ref.goType)
		}
		if def := schema.Types[ref.object]; def == nil || def.Fields.ForName(ref.field) == nil || def.Fields.ForName(ref.field).Type.Name() != "Asset" {
			t.Errorf("%s.%s is no Asset field of the schema", ref.object, ref.field)
		}
	}
	if len(assetRefs) > 64 {
		t.Fatalf("%d references do not fit a refSet", len(assetRefs))
	}
	asset := reflect.TypeFor[*upstream.Asset]()
	root := reflect.TypeFor[ResolverRoot]()
	resolved := 0
	for i := range root.NumMethod() {
		object := root.Method(i)
		if object.Name == "Query" {
			continue
		}
		resolvers := object.Type.Out(0)
		for j := range resolvers.NumMethod() {
			m := resolvers.Method(j)
			if m.Type.NumOut() == 0 || m.Type.Out(0) != asset {
				continue
			}
			resolved++
			field := strings.ToLower(m.Name[:1]) + m.Name[1:]
			if n := inTable[[2]string{object.Name, field}]; n != 1 {
				t.Errorf("%s.%s resolves an asset and is in the table of references %d times, want once", object.Name, field, n)
			}
		}
	}
	if resolved != len(assetRefs) {
		t.Errorf("%d fields resolve assets, the table has %d", resolved, len(assetRefs))
	}
}

// TestAssetRefsOfWalksEveryHolder: the walk finds references behind
// pointers, interfaces, slices and maps, at any depth, only for the
// selected fields, and skips empty ids.
func TestAssetRefsOfWalksEveryHolder(t *testing.T) {
	type holder struct {
		Kind  any
		List  []upstream.Future
		ByKey map[string]*upstream.Spot
		Arr   [1]upstream.UpdateAsset
		Skip  string
	}
	v := holder{
		Kind:  &upstream.Future{SettlementAsset: "a"},
		List:  []upstream.Future{{SettlementAsset: "b"}, {}},
		ByKey: map[string]*upstream.Spot{"k": {BaseAsset: "c", QuoteAsset: "d"}, "nil": nil},
		Arr:   [1]upstream.UpdateAsset{{AssetID: "e"}},
		Skip:  "not an id",
	}
	index := func(object, field string) int {
		for i, r := range assetRefs {
			if r.object == object && r.field == field {
				return i
			}
		}
		t.Fatalf("no %s.%s", object, field)
		return 0
	}
	collect := func(set refSet) map[string]bool {
		got := map[string]bool{}
		assetRefsOf(reflect.ValueOf(&v), set, func(id string) { got[id] = true })
		return got
	}
	every := refSet(1<<len(assetRefs) - 1)
	if got := collect(every); !reflect.DeepEqual(got, map[string]bool{"a": true, "b": true, "c": true, "d": true, "e": true}) {
		t.Fatalf("every reference: %v", got)
	}
	if got := collect(1 << index("Spot", "quoteAsset")); !reflect.DeepEqual(got, map[string]bool{"d": true}) {
		t.Fatalf("Spot.quoteAsset only: %v", got)
	}
	if got := collect(0); len(got) != 0 {
		t.Fatalf("nothing selected: %v", got)
	}
}

// TestListRefs: the references each list of transactions batches for its
// page: those selected under the list's own field, through fields, inline
// fragments and fragment spreads, @skip and @include evaluated with the
// variables; none for a list under another list, and none for references
// selected outside the lists.
func TestListRefs(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	index := map[string]int{}
	for i, r := range assetRefs {
		index[r.object+"."+r.field] = i
	}
	set := func(names ...string) refSet {
		var s refSet
		for _, n := range names {
			s |= 1 << index[n]
		}
		return s
	}
	party := `party(id: "` + strings.Repeat("a", 64) + `")`
	const updates = `command { ... on BatchProposalSubmission { terms { changes { change { ... on UpdateAsset { asset { id status } } } } } } }`
	const spots = `command { ... on BatchProposalSubmission { terms { changes { change { ... on NewSpotMarket { changes { instrument { spot { baseAsset { status } } } } } } } } } }`
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		want        map[string]refSet // by the list's alias
		variable    bool
	}{
		{name: "one list", query: `{ transactions { edges { node { ` + updates + ` } } } }`,
			want: map[string]refSet{"transactions": set("UpdateAsset.asset")}},
		{name: "a party's list", query: `{ ` + party + ` { transactions { edges { node { ` + updates + ` } } } } }`,
			want: map[string]refSet{"transactions": set("UpdateAsset.asset")}},
		{name: "through fragments", query: `query { transactions { ...Page } }
			fragment Page on TransactionConnection { edges { node { command { ...Proposal } } } }
			fragment Proposal on BatchProposalSubmission { terms { changes { change {
				... on NewMarket { changes { instrument { future { settlementAsset { id status } } perpetual { settlementAsset { id status } } } } }
				... on NewSpotMarket { changes { instrument { spot { quoteAsset { id status } } } } }
			} } } }`, want: map[string]refSet{"transactions": set("Future.settlementAsset", "Perpetual.settlementAsset", "Spot.quoteAsset")}},
		{name: "no reference", query: `{ transactions { edges { node { hash } } } }`, want: map[string]refSet{"transactions": 0}},
		{name: "the id alone", query: `{ transactions { edges { node { command { ... on BatchProposalSubmission { terms { changes { change { ... on UpdateAsset { asset { id } } } } } } } } } } }`,
			want: map[string]refSet{"transactions": 0}},
		{name: "no list", query: `{ asset(id: "x") { id } }`, want: map[string]refSet{}},
		{name: "two lists, each its own", query: `{ a: transactions { edges { node { ` + updates + ` } } } b: transactions { edges { node { ` + spots + ` } } } }`,
			want: map[string]refSet{"a": set("UpdateAsset.asset"), "b": set("Spot.baseAsset")}},
		{name: "a lookup's references are its own, not the list's", query: `{ transaction(hash: "` + strings.Repeat("a", 64) + `") { ` + updates + ` } transactions { edges { node { hash } } } }`,
			want: map[string]refSet{"transaction": set("UpdateAsset.asset"), "transactions": 0}},
		{name: "a list inside a list", query: `{ delegations { edges { node { party { transactions { edges { node { ` + updates + ` } } } } } } } }`,
			want: map[string]refSet{}},
		{name: "a fragment with a list, spread under a list and outside", query: `query { ...Txs delegations { edges { node { party { ...PartyTxs } } } } ` + party + ` { ...PartyTxs } }
			fragment Txs on Query { transactions { edges { node { ` + updates + ` } } } }
			fragment PartyTxs on Party { transactions { edges { node { ` + spots + ` } } } }`,
			want: map[string]refSet{"transactions": set("UpdateAsset.asset")}},
		{name: "skipped by a variable", query: `query($s: Boolean!) { transactions { edges { node { command { ... on BatchProposalSubmission { terms { changes { change {
				... on UpdateAsset { asset @skip(if: $s) { status } } ... on NewSpotMarket @include(if: $s) { changes { instrument { spot { baseAsset { status } } } } } } } } } } } } } }`,
			vars: map[string]any{"s": true}, want: map[string]refSet{"transactions": set("Spot.baseAsset")}, variable: true},
		{name: "included by a variable", query: `query($s: Boolean!) { transactions { edges { node { command { ... on BatchProposalSubmission { terms { changes { change {
				... on UpdateAsset { asset @skip(if: $s) { status } } ... on NewSpotMarket @include(if: $s) { changes { instrument { spot { baseAsset { status } } } } } } } } } } } } } }`,
			vars: map[string]any{"s": false}, want: map[string]refSet{"transactions": set("UpdateAsset.asset")}, variable: true},
		{name: "a literal directive", query: `{ transactions { edges { node { command { ... on BatchProposalSubmission { terms { changes { change { ... on UpdateAsset { asset @include(if: false) { status } } } } } } } } } } }`,
			want: map[string]refSet{"transactions": 0}},
	} {
		doc, err := gqlparser.LoadQuery(schema, tc.query)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		refs := walkListRefs(doc, doc.Operations[0], tc.vars)
		got := map[string]refSet{}
		for f, s := range refs.fields {
			got[f.Alias] = s
		}
		if !reflect.DeepEqual(got, tc.want) || refs.variable != tc.variable {
			t.Errorf("%s: refs %v (depending on variables: %v), want %v (%v)", tc.name, got, refs.variable, tc.want, tc.variable)
		}
	}
}

// TestAssetRefsFitTheSet: a refSet is a 64-bit mask of assetRefs indexes,
// so the schema may hold at most 64 asset references before refSet must
// grow (16 once every command kind was typed).
func TestAssetRefsFitTheSet(t *testing.T) {
	if n := len(assetRefs); n > 64 {
		t.Fatalf("%d asset references do not fit refSet's 64 bits: widen refSet", n)
	}
}
