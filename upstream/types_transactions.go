package upstream

import "reflect"

// Transaction is a transaction recorded on the network's blockchain, with
// its decoded command (explorer /transactions).
type Transaction struct {
	Block Uint64 `json:"block"`
	// Index is the transaction's position within its block.
	Index Int32 `json:"index"`
	// Hash is upper-case hex.
	Hash string `json:"hash"`
	// Submitter is the submitting party's public key (lower-case hex).
	Submitter string `json:"submitter"`
	// Type is the explorer's name for the command kind, e.g.
	// "Batch Market Instructions"; it is what the cmdTypes filter matches.
	Type string `json:"type"`
	// Code is the execution result code, 0 for success.
	Code Int64 `json:"code"`
	// Error is set only when Code is not 0.
	Error *string `json:"error,omitempty"`
	// Command is the transaction's command decoded whole, as encoding/json
	// decodes a Transaction (the reference decoding) and as the sample
	// service builds one. The client's pages leave it zero and hold the
	// command in LazyCommand instead, decoded as far as it is read
	// (command_lazy.go): read a transaction's command through
	// DecodedCommand, CommandMember, CommandNonce or CommandBlockHeight,
	// which take it from whichever holds it.
	Command   Command            `json:"command"`
	Signature *Signature         `json:"signature"`
	CreatedAt Time               `json:"createdAt"`
	Version   TransactionVersion `json:"version"`
	Pow       *ProofOfWork       `json:"pow"`
	// LazyCommand is the command of a transaction of the client's pages:
	// its JSON, decoded as far as it is read; the zero TxCommand
	// elsewhere.
	LazyCommand TxCommand `json:"-"`
}

// DecodedCommand is the transaction's command decoded whole: Command, or
// LazyCommand decoded (once; the error is the reference decoder's).
func (t *Transaction) DecodedCommand() (Command, error) {
	if t.LazyCommand.cell == nil {
		return t.Command, nil
	}
	return t.LazyCommand.Decode()
}

// Position returns the transaction's place in the chain, which is also its
// explorer cursor.
func (t *Transaction) Position() TxCursor {
	return TxCursor{Block: uint64(t.Block), Index: uint32(t.Index)}
}

// CommandNonce is the nonce of the transaction's command (GraphQL
// Transaction.commandNonce), 0 for a null command. Of a lazy command it
// reads the head only (command_lazy.go); the error is the head's.
func (t *Transaction) CommandNonce() (Uint64, error) {
	if t.LazyCommand.cell == nil {
		return t.Command.Nonce, nil
	}
	h := t.LazyCommand.head()
	return h.nonce, h.err
}

// CommandBlockHeight is the block height the command was built against
// (GraphQL Transaction.commandBlockHeight), 0 for a null command; of a
// lazy command it reads the head only.
func (t *Transaction) CommandBlockHeight() (Uint64, error) {
	if t.LazyCommand.cell == nil {
		return t.Command.BlockHeight, nil
	}
	h := t.LazyCommand.head()
	return h.blockHeight, h.err
}

// Signature is a cryptographic signature.
type Signature struct {
	// Value is the hex-encoded signature.
	Value string `json:"value"`
	// Algo names the algorithm, e.g. "vega/ed25519".
	Algo    string `json:"algo"`
	Version Int64  `json:"version"`
}

// ProofOfWork is the anti-spam proof of work attached to a transaction.
type ProofOfWork struct {
	Tid   string `json:"tid"`
	Nonce Uint64 `json:"nonce"`
}

// Command is the network command a transaction carries: two ordinary fields
// and a one-of member, decoded into Kind.
//
// The wire document calls nonce and blockHeight int64, but the network's
// own definition is uint64 and real nonces use the whole range: decoding
// them as Int64 would fail whole pages, so both are Uint64.
type Command struct {
	Nonce       Uint64 `json:"nonce"`
	BlockHeight Uint64 `json:"blockHeight"`
	// Kind is the command's member: the type commandMembers gives for its
	// wire name (*OrderSubmission for orderSubmission, …), or
	// *UnknownCommand for any other. It is nil only when the command itself
	// was null.
	Kind CommandKind `json:"-"`
}

// CommandKind is the GraphQL union Command.
type CommandKind interface{ IsCommand() }

// UnknownCommand is a command member this package does not describe (one
// a later network version adds), kept as the upstream sent it.
type UnknownCommand struct {
	// Name is the member's wire name, e.g. "orderSubmission"; "" when the
	// command had no member, in which case Raw is the whole command object.
	Name string  `json:"name"`
	Raw  RawJSON `json:"raw"`
}

// IsCommand marks the member of the Command union.
func (*UnknownCommand) IsCommand() {}

var commandMembers = oneOf[CommandKind]{
	members: map[string]func() CommandKind{
		"announceNode":                   func() CommandKind { return new(AnnounceNode) },
		"applyReferralCode":              func() CommandKind { return new(ApplyReferralCode) },
		"batchMarketInstructions":        func() CommandKind { return new(BatchMarketInstructions) },
		"batchProposalSubmission":        func() CommandKind { return new(BatchProposalSubmission) },
		"cancelTransfer":                 func() CommandKind { return new(CancelTransferFunds) },
		"createReferralSet":              func() CommandKind { return new(CreateReferralSet) },
		"delegateSubmission":             func() CommandKind { return new(DelegateSubmission) },
		"joinTeam":                       func() CommandKind { return new(JoinTeam) },
		"liquidityProvisionAmendment":    func() CommandKind { return new(LiquidityProvisionAmendment) },
		"liquidityProvisionCancellation": func() CommandKind { return new(LiquidityProvisionCancellation) },
		"liquidityProvisionSubmission":   func() CommandKind { return new(LiquidityProvisionSubmission) },
		"orderAmendment":                 func() CommandKind { return new(OrderAmendment) },
		"orderCancellation":              func() CommandKind { return new(OrderCancellation) },
		"orderSubmission":                func() CommandKind { return new(OrderSubmission) },
		"proposalSubmission":             func() CommandKind { return new(ProposalSubmission) },
		"stopOrdersCancellation":         func() CommandKind { return new(StopOrderCancellation) },
		"stopOrdersSubmission":           func() CommandKind { return new(StopOrdersSubmission) },
		"transfer":                       func() CommandKind { return new(TransferFunds) },
		"undelegateSubmission":           func() CommandKind { return new(UndelegateSubmission) },
		"updateMarginMode":               func() CommandKind { return new(UpdateMarginMode) },
		"updatePartyProfile":             func() CommandKind { return new(UpdatePartyProfile) },
		"updateReferralSet":              func() CommandKind { return new(UpdateReferralSet) },
		"voteSubmission":                 func() CommandKind { return new(VoteSubmission) },
		"withdrawSubmission":             func() CommandKind { return new(WithdrawSubmission) },
		// Validator and oracle commands: types_commands_validator.go,
		// types_chainevents.go.
		"chainEvent":                  func() CommandKind { return new(ChainEvent) },
		"ethereumKeyRotateSubmission": func() CommandKind { return new(EthereumKeyRotateSubmission) },
		"issueSignatures":             func() CommandKind { return new(IssueSignatures) },
		"keyRotateSubmission":         func() CommandKind { return new(KeyRotateSubmission) },
		"nodeSignature":               func() CommandKind { return new(NodeSignature) },
		"nodeVote":                    func() CommandKind { return new(NodeVote) },
		"oracleDataSubmission":        func() CommandKind { return new(OracleDataSubmission) },
		"protocolUpgradeProposal":     func() CommandKind { return new(ProtocolUpgradeProposal) },
		"stateVariableProposal":       func() CommandKind { return new(StateVariableProposal) },
		"validatorHeartbeat":          func() CommandKind { return new(ValidatorHeartbeat) },
	},
	unknown: func(name string, raw RawJSON) CommandKind {
		return &UnknownCommand{Name: name, Raw: raw}
	},
}

// commandNames is the wire name of each member type of commandMembers.
var commandNames = commandMembers.names()

// UnmarshalJSON decodes nonce, blockHeight and the command's member.
func (c *Command) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var fast Command
	if kind, ok := commandMembers.decodeLast(b, fast.decodePlain); ok {
		fast.Kind = kind
		*c = fast
		return nil
	}
	return c.unmarshalGeneral(b)
}

// unmarshalGeneral decodes any command object: every key scanned, the
// member chosen among them (oneOf.consider).
func (c *Command) unmarshalGeneral(b []byte) error {
	cmd, member, err := scanCommand(b)
	if err != nil {
		return err
	}
	if cmd.Kind, err = commandMembers.decode(b, member); err != nil {
		return err
	}
	*c = cmd
	return nil
}

// scanCommand scans the command object b: every key, nonce and
// blockHeight decoded, the member chosen among the others
// (oneOf.consider) but not decoded. It is the first half of
// unmarshalGeneral, and all a command's head needs (command_lazy.go).
func scanCommand(b []byte) (cmd Command, member choice, err error) {
	err = eachMember(b, reflect.TypeFor[Command](), func(key, value []byte) error {
		switch string(key) {
		case "nonce":
			return inField("nonce", cmd.Nonce.UnmarshalJSON(value))
		case "blockHeight":
			return inField("blockHeight", cmd.BlockHeight.UnmarshalJSON(value))
		}
		commandMembers.consider(&member, key, value)
		return nil
	})
	return cmd, member, err
}

// decodePlain decodes nonce or blockHeight, the fields beside the member
// (oneOf.decodeLast).
func (c *Command) decodePlain(key, value []byte) (bool, error) {
	switch string(key) {
	case "nonce":
		return true, c.Nonce.UnmarshalJSON(value)
	case "blockHeight":
		return true, c.BlockHeight.UnmarshalJSON(value)
	}
	return false, nil
}

// MarshalJSON writes the wire form: nonce, blockHeight and the member
// under its wire name, last; the zero Command (a null command) is null.
func (c Command) MarshalJSON() ([]byte, error) {
	if c == (Command{}) {
		return []byte("null"), nil
	}
	plain := struct {
		Nonce       Uint64 `json:"nonce"`
		BlockHeight Uint64 `json:"blockHeight"`
	}{c.Nonce, c.BlockHeight}
	switch k := c.Kind.(type) {
	case nil:
		return marshalOneOf(plain, "", nil)
	case *UnknownCommand:
		if k.Name == "" {
			return k.Raw.MarshalJSON()
		}
		return marshalOneOf(plain, k.Name, k.Raw)
	default:
		return marshalOneOf(plain, commandNames[reflect.TypeOf(k)], k)
	}
}
