package graph

import (
	"reflect"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/tradenet/gateway/upstream"
)

// Asset prefetch under the direct executor. The asset references of a
// page of transactions are all in the decoded page, but their resolvers
// only ask for them as the writer reaches them, and their round (one
// batch: single lookups or a listing, assetrounds.go) starts when the writer
// is done with the whole page. The transactions resolver knows the ids as
// soon as the page is decoded: it starts the round then, for the ids of
// the reference fields the operation selects, and the lookups overlap
// with writing the page. The round is the one the resolvers would have
// made: the same ids, the same batch function, one round.
//
// The selected fields are matched by type and field name, not by path: a
// query selecting Future.settlementAsset under new markets but not under
// market updates gets the settlement assets of both looked up (in the
// same one round). Operations whose selections carry directives
// (@skip, @include: their selection depends on variables) get no
// prefetch; nor do operations with more than one list of transactions
// (two fields, or one inside a list: a party's transactions under each of
// a page of delegations), since each list would start a round of its own
// where the fields make one for all. Their assets are looked up as
// before.

// assetRef is one schema field that resolves an asset id held by an
// upstream type. The table of them, assetRefs, is generated from the
// schema (internal/assetrefs, graph/assetrefs_gen.go), with the resolvers
// it describes; TestAssetRefsCoverTheSchema checks that it names every
// field whose resolver turns an object's id into an asset.
type assetRef struct {
	goType  reflect.Type
	goField string // the string field holding the id
	object  string // the GraphQL object
	field   string // and its field
}

// refSet is a set of assetRefs indexes.
type refSet uint64

func (s refSet) has(i int) bool { return s&(1<<i) != 0 }

// selectedAssetRefs returns the asset references the operation selects
// anywhere (fragments included), or none unless the operation has exactly
// one list of transactions, executed once.
func selectedAssetRefs(doc *ast.QueryDocument, op *ast.OperationDefinition) refSet {
	w := refWalk{doc: doc, fragments: map[fragmentUse]refCount{}}
	c := w.selections(op.SelectionSet, false)
	if c.lists != 1 {
		return 0
	}
	return c.refs
}

// refCount is what a selection set holds: the asset references, and the
// lists of transactions (one inside a list counts as two: as many).
type refCount struct {
	refs  refSet
	lists int
}

func (c *refCount) add(o refCount) {
	c.refs |= o.refs
	c.lists = min(c.lists+o.lists, 2) // 2 is already too many
}

type fragmentUse struct {
	name      string
	underList bool
}

// refWalk counts the selections of one document, each fragment once per
// context (a fragment spread many times is not walked many times).
type refWalk struct {
	doc       *ast.QueryDocument
	fragments map[fragmentUse]refCount
}

func (w *refWalk) selections(sel ast.SelectionSet, underList bool) refCount {
	var c refCount
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if s.Definition == nil || s.Definition.Type == nil {
				continue
			}
			switch s.Definition.Type.Name() {
			case "Asset":
				if !selectsBeyondID(w.doc.Fragments, s.SelectionSet) {
					break // the id alone needs no lookup (loadAsset)
				}
				for i, ref := range assetRefs {
					if s.ObjectDefinition != nil && ref.field == s.Name && (ref.object == s.ObjectDefinition.Name || s.ObjectDefinition.Kind != ast.Object) {
						c.refs |= 1 << i
					}
				}
			case "TransactionConnection":
				c.add(refCount{lists: 1})
				if underList {
					c.add(refCount{lists: 1})
				}
			}
			c.add(w.selections(s.SelectionSet, underList || s.Definition.Type.Elem != nil))
		case *ast.InlineFragment:
			c.add(w.selections(s.SelectionSet, underList))
		case *ast.FragmentSpread:
			use := fragmentUse{s.Name, underList}
			fc, done := w.fragments[use]
			if !done {
				w.fragments[use] = refCount{lists: 2} // while walked: a cycle, which validation refuses, counts as too many
				if f := w.doc.Fragments.ForName(s.Name); f != nil {
					fc = w.selections(f.SelectionSet, underList)
				}
				w.fragments[use] = fc
			}
			c.add(fc)
		}
	}
	return c
}

// assetRefsOf calls add with every asset id v holds in a reference field
// of set (empty ids are no reference).
func assetRefsOf(v reflect.Value, set refSet, add func(id string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			assetRefsOf(v.Elem(), set, add)
		}
	case reflect.Struct:
		p := refPlanFor(v.Type())
		if !p.contains {
			return
		}
		for _, t := range p.targets {
			if set.has(t.ref) {
				if id := v.Field(t.index).String(); id != "" {
					add(id)
				}
			}
		}
		for _, i := range p.children {
			assetRefsOf(v.Field(i), set, add)
		}
	case reflect.Slice, reflect.Array:
		if !refPlanFor(v.Type().Elem()).contains {
			return
		}
		for i := range v.Len() {
			assetRefsOf(v.Index(i), set, add)
		}
	case reflect.Map:
		if !refPlanFor(v.Type().Elem()).contains {
			return
		}
		for it := v.MapRange(); it.Next(); {
			assetRefsOf(it.Value(), set, add)
		}
	}
}

// refPlan is what the walk looks at in values of one type.
type refPlan struct {
	contains bool        // a value of the type may hold a reference
	targets  []refTarget // the type's own reference fields
	children []int       // fields that may hold references (structs)
}

type refTarget struct{ index, ref int }

var refPlans sync.Map // reflect.Type → *refPlan

// refPlanFor returns the plan of t, computing it (and those of the types
// it holds) on first use.
func refPlanFor(t reflect.Type) *refPlan {
	if p, ok := refPlans.Load(t); ok {
		return p.(*refPlan)
	}
	plans := map[reflect.Type]*refPlan{}
	p := buildRefPlan(t, plans)
	for typ, plan := range plans {
		refPlans.LoadOrStore(typ, plan)
	}
	return p
}

// buildRefPlan computes the plan of t into plans. A type met again while
// its own plan is being built (a recursive type) counts as containing
// references for now: the walk then looks, and finds what is there.
func buildRefPlan(t reflect.Type, plans map[reflect.Type]*refPlan) *refPlan {
	if p, ok := plans[t]; ok {
		return p
	}
	if p, ok := refPlans.Load(t); ok {
		return p.(*refPlan)
	}
	p := &refPlan{contains: true}
	plans[t] = p
	switch t.Kind() {
	case reflect.Interface:
		return p // the value's own type decides
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		p.contains = buildRefPlan(t.Elem(), plans).contains
	case reflect.Struct:
		contains := false
		for i := range t.NumField() {
			f := t.Field(i)
			for r, ref := range assetRefs {
				if ref.goType == t && ref.goField == f.Name {
					p.targets = append(p.targets, refTarget{index: i, ref: r})
					contains = true
				}
			}
			if buildRefPlan(f.Type, plans).contains {
				p.children = append(p.children, i)
				contains = true
			}
		}
		p.contains = contains
	default:
		p.contains = false
	}
	return p
}

// prefetchAssets starts the round of the asset references the operation
// selects in rows (listTransactions), under the direct executor.
func prefetchAssets(r *assetRounds, rows []upstream.Transaction) {
	if r == nil || r.selected == 0 {
		return
	}
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for i := range rows {
		assetRefsOf(reflect.ValueOf(&rows[i]), r.selected, add)
		// The command is decoded as far as the operation reads it
		// (commanduse.go), which the walk does not see into: its member,
		// decoded where the operation reads its fields, is walked here.
		if member, err := rows[i].CommandMember(); err == nil {
			assetRefsOf(reflect.ValueOf(member), r.selected, add)
		}
	}
	r.prefetch(ids)
}
