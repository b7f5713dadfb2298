package graph

import (
	"context"

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
