package graph

import (
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/tradenet/gateway/upstream"
)

// The members of the union Command are the types upstream decodes
// commands into, UnknownCommand included: every type condition valid
// under Transaction.command names one.
func TestCommandUnionMembersAreUpstreamTypes(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	var members []string
	for _, def := range schema.PossibleTypes["Command"] {
		members = append(members, def.Name)
	}
	slices.Sort(members)
	if got := upstream.CommandTypes(); !slices.Equal(got, members) {
		t.Fatalf("upstream's command types %v, the schema's union Command %v", got, members)
	}
	if _, err := upstream.NewCommandUse(members); err != nil {
		t.Fatal(err)
	}
}

// readCommands finds what an operation reads of commands: nothing without
// a command field; the heads alone for nonces, block heights and
// __typename; and the member types whose fields a fragment selects,
// through fragments, nested fragments and lists under other objects.
func TestReadCommands(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	for _, tt := range []struct {
		name, query string
		want        []string // nil: nothing read
	}{
		{"hashes", `{ transactions(first: 50) { edges { node { hash } } } }`, nil},
		{"a party's hashes", `{ party(id: "ab") { transactions { edges { node { hash type } } } } }`, nil},
		{"nonce", `{ transactions { edges { node { commandNonce } } } }`, []string{}},
		{"block height in a lookup", `{ transaction(hash: "AB") { commandBlockHeight } }`, []string{}},
		{"typename", `{ transactions { edges { node { command { __typename } } } } }`, []string{}},
		{"typename in member fragments", `{ transactions { edges { node { command { ... on OrderSubmission { __typename } ... on Command { __typename } } } } } }`, []string{}},
		{"one kind", `{ transactions { edges { node { command { __typename ... on OrderSubmission { price } } } } } }`, []string{"OrderSubmission"}},
		{"named fragments", `query { transactions { edges { node { ...T } } } }
			fragment T on Transaction { command { ...C } }
			fragment C on Command { ... on JoinTeam { id } ...V }
			fragment V on VoteSubmission { proposalId }`, []string{"JoinTeam", "VoteSubmission"}},
		{"an untyped inline fragment", `{ transactions { edges { node { command { ... on BatchMarketInstructions { ... { submissions { price } } } } } } } }`, []string{"BatchMarketInstructions"}},
		{"unknown commands", `{ transactions { edges { node { command { ... on UnknownCommand { name } } } } } }`, []string{"UnknownCommand"}},
		{"under @skip", `query($s: Boolean!) { transactions { edges { node { command @skip(if: $s) { ... on JoinTeam { id } } } } } }`, []string{"JoinTeam"}},
		{"subscription", `subscription { transactions { node { command { ... on TransferFunds { to } } } } }`, []string{"TransferFunds"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(schema, tt.query)
			if errs != nil {
				t.Fatal(errs)
			}
			use := readCommands(doc, doc.Operations[0])
			switch {
			case tt.want == nil && use != nil:
				t.Fatalf("reads %v, want nothing", use.Types())
			case tt.want != nil && use == nil:
				t.Fatalf("reads nothing, want %v", tt.want)
			case tt.want != nil && !slices.Equal(use.Types(), tt.want) && !(len(tt.want) == 0 && len(use.Types()) == 0):
				t.Fatalf("reads %v, want %v", use.Types(), tt.want)
			}
		})
	}
}
