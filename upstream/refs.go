package upstream

// Party and ValidatorNode are the GraphQL objects that references to a
// party or a node become. They are keys, not upstream records: building
// one costs nothing, which is why the reference fields below are plain
// methods rather than resolvers (gqlgen runs a resolver in a goroutine of
// its own, for every row).

// Party is a party of the network, known by its public key.
type Party struct {
	ID string `json:"id"`
}

// ValidatorNode is a validator node, known by its id (a public key).
type ValidatorNode struct {
	ID string `json:"id"`
}

// PartyRef is the delegating party (GraphQL Delegation.party).
func (d *Delegation) PartyRef() *Party { return &Party{ID: d.Party} }

// NodeRef is the node delegated to (GraphQL Delegation.node).
func (d *Delegation) NodeRef() *ValidatorNode { return &ValidatorNode{ID: d.NodeID} }

// PartyRef is the party receiving the payment (GraphQL FundingPayment.party).
func (f *FundingPayment) PartyRef() *Party { return &Party{ID: f.PartyID} }

// SubmitterRef is the submitting party (GraphQL Transaction.submitter).
func (t *Transaction) SubmitterRef() *Party { return &Party{ID: t.Submitter} }

// CommandMember is the command's one-of member (GraphQL
// Transaction.command): decoded, or, of a lazy command, only its type
// where the operation reads nothing else of it (TxCommand.Member).
func (t *Transaction) CommandMember() (CommandKind, error) {
	if t.LazyCommand.cell == nil {
		return t.Command.Kind, nil
	}
	return t.LazyCommand.Member()
}

// NodeRef is the announced node (GraphQL AnnounceNode.node).
func (a *AnnounceNode) NodeRef() *ValidatorNode { return &ValidatorNode{ID: a.ID} }
