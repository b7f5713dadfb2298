package graph

import (
	"context"
	"reflect"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/tradenet/gateway/upstream"
)

// party serves Query.party. A party is its public key: the object only
// groups the lists filtered by it, so no upstream call is needed.
func (r *Resolver) party(id string) (*upstream.Party, error) {
	if err := checkID("id", "party", &id); err != nil {
		return nil, err
	}
	return &upstream.Party{ID: id}, nil
}

// validatorNode serves Query.validatorNode, like party.
func (r *Resolver) validatorNode(id string) (*upstream.ValidatorNode, error) {
	if err := checkID("id", "node", &id); err != nil {
		return nil, err
	}
	return &upstream.ValidatorNode{ID: id}, nil
}

// loadAsset resolves an asset reference (the resolvers internal/assetrefs
// writes call it): the asset with the wire id, whether or not the data
// service knows it (docs/contracts.md's rule for a reference named without
// the "Id" suffix, applied to every asset reference). A selection of `id`
// (and `__typename`) alone needs no lookup. An asset the data service does
// not know is upstream.MissingAsset: its `id` still answers, its other
// fields are null with the NOT_FOUND error. An empty id (unset upstream) is
// null.
func loadAsset(ctx context.Context, id string) (*upstream.Asset, error) {
	if id == "" {
		return nil, nil
	}
	if fc := graphql.GetFieldContext(ctx); fc != nil && !selectsBeyondID(fragmentsOf(ctx), fc.Field.Selections) {
		return &upstream.Asset{ID: id}, nil
	}
	a, err := lookupAsset(ctx, id)
	if err != nil && isNotFound(err) {
		return upstream.MissingAsset(id, err), nil
	}
	return a, err
}

// fragmentsOf is the operation's fragment definitions.
func fragmentsOf(ctx context.Context) ast.FragmentDefinitionList {
	if !graphql.HasOperationContext(ctx) {
		return nil
	}
	if doc := graphql.GetOperationContext(ctx).Doc; doc != nil {
		return doc.Fragments
	}
	return nil
}

// selectsBeyondID reports whether an object's selection set asks for a
// field other than id and __typename, through fragments too. Directives
// are not evaluated: a field under @skip counts as selected, which costs a
// lookup at worst.
func selectsBeyondID(fragments ast.FragmentDefinitionList, sel ast.SelectionSet) bool {
	return selectsBeyond(fragments, sel, map[string]bool{})
}

// selectsBeyond is selectsBeyondID, seen holding the fragments already
// looked at.
func selectsBeyond(fragments ast.FragmentDefinitionList, sel ast.SelectionSet, seen map[string]bool) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name != "id" && s.Name != "__typename" {
				return true
			}
		case *ast.InlineFragment:
			if selectsBeyond(fragments, s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			def := s.Definition
			if def == nil {
				def = fragments.ForName(s.Name)
			}
			if def == nil || selectsBeyond(fragments, def.SelectionSet, seen) {
				return true // unknown: look it up
			}
		}
	}
	return false
}

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

// has reports whether the set holds assetRefs[i].
func (s refSet) has(i int) bool { return s&(1<<i) != 0 }

// The asset references a page of transactions batches. A list of
// transactions run once in its operation (not under another list) looks up
// the asset references of its page in one batch (Loaders.loadPage), made
// by its resolver as soon as the page is decoded: only those of the
// reference fields selected under the list's own field, matched by type
// and field name (a query selecting Future.settlementAsset under new
// markets but not under market updates gets the settlement assets of both
// looked up, in the same one batch). A list under another list (a party's
// transactions under each of a page of delegations) makes no batch of its
// own, which would cost a batch a row: its references go through the
// loader's wait with every other lookup of the request, as do references
// outside any list (a single transaction).

// listRefs are the asset references each list of transactions of an
// operation batches, by the list's field.
type listRefs struct {
	fields map[*ast.Field]refSet
	// variable is set when a selection carries @skip or @include: the
	// sets then depend on the request's variables and are computed per
	// request.
	variable bool
}

// batchedRefs returns the asset references the list of transactions being
// resolved in ctx batches for its page: none when it is under another list
// or selects no reference.
func batchedRefs(ctx context.Context) refSet {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || !graphql.HasOperationContext(ctx) {
		return 0
	}
	opCtx := graphql.GetOperationContext(ctx)
	if opCtx.Doc == nil || opCtx.Operation == nil {
		return 0
	}
	refs := perOperation(opCtx, "list refs", func() *listRefs {
		return walkListRefs(opCtx.Doc, opCtx.Operation, opCtx.Variables)
	})
	if refs.variable {
		refs = walkListRefs(opCtx.Doc, opCtx.Operation, opCtx.Variables)
	}
	return refs.fields[fc.Field.Field]
}

// walkListRefs walks an operation for the references each of its lists
// of transactions, and each lookup of one transaction, batches, @skip and
// @include evaluated with vars.
func walkListRefs(doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any) *listRefs {
	w := refWalk{doc: doc, vars: vars, fragments: map[fragmentUse]refSet{}, refs: &listRefs{fields: map[*ast.Field]refSet{}}}
	w.selections(op.SelectionSet, false)
	for f := range w.nested {
		delete(w.refs.fields, f)
	}
	return w.refs
}

// fragmentUse is a fragment spread in one context: under a list or not.
type fragmentUse struct {
	name      string
	underList bool
}

// refWalk walks the selections of one operation, each fragment once per
// context (a fragment spread many times is not walked many times).
type refWalk struct {
	doc       *ast.QueryDocument
	vars      map[string]any
	fragments map[fragmentUse]refSet
	refs      *listRefs
	// nested are the lists met under a list: once is enough (a fragment
	// spread both under a list and outside) for no batch of their own.
	nested map[*ast.Field]bool
}

// selections returns the asset references sel selects outside the lists
// of transactions it holds, and records those each such list selects.
func (w *refWalk) selections(sel ast.SelectionSet, underList bool) refSet {
	var refs refSet
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if s.Definition == nil || s.Definition.Type == nil || w.skipped(s.Directives) {
				continue
			}
			switch s.Definition.Type.Name() {
			case "Asset":
				if !selectsBeyondID(w.doc.Fragments, s.SelectionSet) {
					break // the id alone needs no lookup (loadAsset)
				}
				for i, ref := range assetRefs {
					if s.ObjectDefinition != nil && ref.field == s.Name && (ref.object == s.ObjectDefinition.Name || s.ObjectDefinition.Kind != ast.Object) {
						refs |= 1 << i
					}
				}
			case "Transaction":
				if s.ObjectDefinition != nil && s.ObjectDefinition.Name == "Query" {
					// A lookup's one row holds its references: a batch of
					// its own, made by its resolver as a page's is.
					w.refs.fields[s] |= w.selections(s.SelectionSet, underList)
					continue
				}
			case "TransactionConnection":
				// Its rows hold its references: they are its page's.
				list := w.selections(s.SelectionSet, true)
				if underList {
					if w.nested == nil {
						w.nested = map[*ast.Field]bool{}
					}
					w.nested[s] = true
				}
				w.refs.fields[s] |= list
				continue
			}
			refs |= w.selections(s.SelectionSet, underList || s.Definition.Type.Elem != nil)
		case *ast.InlineFragment:
			if !w.skipped(s.Directives) {
				refs |= w.selections(s.SelectionSet, underList)
			}
		case *ast.FragmentSpread:
			if w.skipped(s.Directives) {
				continue
			}
			use := fragmentUse{s.Name, underList}
			fr, done := w.fragments[use]
			if !done {
				w.fragments[use] = 0 // while walked: a cycle, which validation refuses, ends here
				if f := w.doc.Fragments.ForName(s.Name); f != nil {
					fr = w.selections(f.SelectionSet, underList)
				}
				w.fragments[use] = fr
			}
			refs |= fr
		}
	}
	return refs
}

// skipped evaluates @skip and @include with the walk's variables, and
// marks the walk's result as depending on them. A value it cannot read
// counts as selected: a lookup at worst.
func (w *refWalk) skipped(directives ast.DirectiveList) bool {
	for _, d := range directives {
		if d.Name != "skip" && d.Name != "include" {
			continue
		}
		arg := d.Arguments.ForName("if")
		if arg == nil || arg.Value == nil {
			continue
		}
		if arg.Value.Kind == ast.Variable {
			w.refs.variable = true
		}
		v, err := arg.Value.Value(w.vars)
		if b, ok := v.(bool); err == nil && ok && b == (d.Name == "skip") {
			return true
		}
	}
	return false
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

// refTarget is a reference field of a type: its index in the struct, and
// its reference's in assetRefs.
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
