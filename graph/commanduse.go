package graph

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/tradenet/gateway/upstream"
)

// What an operation reads of transactions' commands. The upstream client
// decodes pages of transactions without their commands, and a command as
// far as it is read (upstream/command_lazy.go); the resolvers that hand
// transactions to the executor (listTransactions, transaction) first ask
// upstream.PrepareCommands to decode what the operation reads, so that a
// command that does not decode fails the list or the lookup, as the whole
// page's decoding did. What is read is found in the operation's document,
// by type and field name, not by path (as the page batch's walk does, references.go):
//
//   - nothing, unless the operation selects Transaction.command,
//     commandNonce or commandBlockHeight somewhere;
//   - then the commands' heads (nonce, block height, member name: the
//     member's type, which is all `command { __typename }` needs);
//   - and in full the members of the types whose fields it selects in a
//     fragment on that type (anything beyond __typename).
//
// Selections under @skip or @include count as selected: a command decoded
// for nothing costs time, never an answer. The result is computed once per
// parsed operation and kept while the operation is (the parsed document
// cache keeps it).

// commandUseOf is what the request's operation reads of commands: nil for
// nothing, upstream.EveryCommand when there is no operation to read it
// from.
func commandUseOf(ctx context.Context) *upstream.CommandUse {
	if !graphql.HasOperationContext(ctx) {
		return upstream.EveryCommand
	}
	opCtx := graphql.GetOperationContext(ctx)
	if opCtx.Doc == nil || opCtx.Operation == nil {
		return upstream.EveryCommand
	}
	return perOperation(opCtx, "command use", func() *upstream.CommandUse {
		return readCommands(opCtx.Doc, opCtx.Operation)
	})
}

// readCommands walks op for what it reads of commands.
func readCommands(doc *ast.QueryDocument, op *ast.OperationDefinition) *upstream.CommandUse {
	w := commandWalk{doc: doc, walked: map[string]bool{}, types: map[string]bool{}}
	w.selections(op.SelectionSet)
	if !w.reads {
		return nil
	}
	types := make([]string, 0, len(w.types))
	for t := range w.types {
		types = append(types, t)
	}
	slices.Sort(types)
	use, err := upstream.NewCommandUse(types)
	if err != nil {
		// Validation admits no other type conditions under command; should
		// one pass, every command is read, which is never wrong.
		return upstream.EveryCommand
	}
	return use
}

// commandWalk walks one operation's selections.
type commandWalk struct {
	doc    *ast.QueryDocument
	walked map[string]bool // fragments walked by selections
	reads  bool            // a command field is selected
	types  map[string]bool // member types whose fields are selected
}

// selections looks for Transaction's command fields in set and below it.
func (w *commandWalk) selections(set ast.SelectionSet) {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.ObjectDefinition != nil && s.ObjectDefinition.Name == "Transaction" {
				switch s.Name {
				case "commandNonce", "commandBlockHeight":
					w.reads = true
				case "command":
					w.reads = true
					w.members(s.SelectionSet, "Command", map[string]bool{})
				}
			}
			w.selections(s.SelectionSet)
		case *ast.InlineFragment:
			w.selections(s.SelectionSet)
		case *ast.FragmentSpread:
			if !w.walked[s.Name] {
				w.walked[s.Name] = true
				if f := w.doc.Fragments.ForName(s.Name); f != nil {
					w.selections(f.SelectionSet)
				}
			}
		}
	}
}

// members adds the member types whose fields set, a selection of the
// union Command (on is the type it applies to), selects. spread holds the
// fragments being walked, against cycles.
func (w *commandWalk) members(set ast.SelectionSet, on string, spread map[string]bool) {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name != "__typename" && on != "Command" {
				w.types[on] = true
			}
		case *ast.InlineFragment:
			cond := s.TypeCondition
			if cond == "" {
				cond = on
			}
			w.members(s.SelectionSet, cond, spread)
		case *ast.FragmentSpread:
			if f := w.doc.Fragments.ForName(s.Name); f != nil && !spread[s.Name] {
				spread[s.Name] = true
				w.members(f.SelectionSet, f.TypeCondition, spread)
				delete(spread, s.Name)
			}
		}
	}
}

// commandsFor returns rows prepared for the request's operation
// (upstream.PrepareCommands): a command it reads that does not decode is
// the error, a *upstream.DecodeError of endpoint.
func commandsFor(ctx context.Context, rows []upstream.Transaction, endpoint upstream.Endpoint) ([]upstream.Transaction, error) {
	return upstream.PrepareCommands(rows, commandUseOf(ctx), endpoint)
}
