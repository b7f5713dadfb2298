package upstream

import "encoding/base64"

// The commands validators and node operators send, and the data
// providers' oracle data (docs/wire.md, Command kinds). Chain events, the
// largest of them, are in types_chainevents.go.
//
// Bytes fields (a node signature, an oracle payload, a contract call's
// result) stay the base64 text the explorer sends: *string, nil when the
// wire has null, which is how the encoder writes an empty value.

// NodeVote is a validator's vote that an external resource (a deposit, a
// signer change, …) exists.
type NodeVote struct {
	// Reference is the reference of the external resource verified.
	Reference string       `json:"reference"`
	Type      NodeVoteType `json:"type"`
}

// IsCommand marks the member of the Command union.
func (*NodeVote) IsCommand() {}

// NodeSignature is a validator's signature of a resource (a withdrawal,
// an asset, a multisig change) to be submitted to the external chain.
type NodeSignature struct {
	// ID is the ID of the resource signed.
	ID string `json:"id"`
	// Sig is the raw signature as base64 (not hex, unlike Signature.Value);
	// nil when empty.
	Sig  *string           `json:"sig"`
	Kind NodeSignatureKind `json:"kind"`
}

// IsCommand marks the member of the Command union.
func (*NodeSignature) IsCommand() {}

// KeyRotateSubmission rotates a validator's network key at a block.
type KeyRotateSubmission struct {
	// NewPubKeyIndex is a u32 on the wire (a JSON number); Uint64 holds
	// every value of it, where GraphQL Int would not.
	NewPubKeyIndex Uint64 `json:"newPubKeyIndex"`
	// TargetBlock is the network block height at which the rotation applies.
	TargetBlock       Uint64 `json:"targetBlock"`
	NewPubKey         string `json:"newPubKey"`
	CurrentPubKeyHash string `json:"currentPubKeyHash"`
}

// IsCommand marks the member of the Command union.
func (*KeyRotateSubmission) IsCommand() {}

// StateVariableProposal is a validator's proposed value of a state
// variable (a market's probability of trading, its bid and ask offsets…).
type StateVariableProposal struct {
	Proposal *StateValueProposal `json:"proposal"`
}

// IsCommand marks the member of the Command union.
func (*StateVariableProposal) IsCommand() {}

// StateValueProposal is the proposed value: key, tolerance and value
// triples for one state variable and event.
type StateValueProposal struct {
	StateVarID string           `json:"stateVarId"`
	EventID    string           `json:"eventId"`
	Kvb        []KeyValueBundle `json:"kvb"`
}

// KeyValueBundle is one key of a state variable with its value and the
// tolerance within which validators' values count as agreeing.
type KeyValueBundle struct {
	Key string `json:"key"`
	// Tolerance is a decimal string.
	Tolerance string         `json:"tolerance"`
	Value     *StateVarValue `json:"value"`
}

// StateVarValue is a one-of: at most one of ScalarVal, VectorVal and
// MatrixVal is set.
type StateVarValue struct {
	ScalarVal *ScalarValue `json:"scalarVal,omitempty"`
	VectorVal *VectorValue `json:"vectorVal,omitempty"`
	MatrixVal *MatrixValue `json:"matrixVal,omitempty"`
}

// ScalarValue is one decimal string.
type ScalarValue struct {
	Value string `json:"value"`
}

// VectorValue is a list of decimal strings.
type VectorValue struct {
	Value []string `json:"value"`
}

// MatrixValue is a list of rows, each a VectorValue.
type MatrixValue struct {
	Value []VectorValue `json:"value"`
}

// ValidatorHeartbeat is a validator's proof that it still controls its
// keys: one message signed with both.
type ValidatorHeartbeat struct {
	NodeID            string     `json:"nodeId"`
	EthereumSignature *Signature `json:"ethereumSignature"`
	VegaSignature     *Signature `json:"vegaSignature"`
	Message           string     `json:"message"`
}

// IsCommand marks the member of the Command union.
func (*ValidatorHeartbeat) IsCommand() {}

// NodeRef is the validator (GraphQL ValidatorHeartbeat.node).
func (h *ValidatorHeartbeat) NodeRef() *ValidatorNode { return &ValidatorNode{ID: h.NodeID} }

// EthereumKeyRotateSubmission rotates a validator's Ethereum key at a
// block.
type EthereumKeyRotateSubmission struct {
	TargetBlock       Uint64     `json:"targetBlock"`
	NewAddress        string     `json:"newAddress"`
	CurrentAddress    string     `json:"currentAddress"`
	SubmitterAddress  string     `json:"submitterAddress"`
	EthereumSignature *Signature `json:"ethereumSignature"`
}

// IsCommand marks the member of the Command union.
func (*EthereumKeyRotateSubmission) IsCommand() {}

// ProtocolUpgradeProposal is a node operator's proposal to upgrade the
// network's software at a block (unrelated to governance proposals).
type ProtocolUpgradeProposal struct {
	UpgradeBlockHeight Uint64 `json:"upgradeBlockHeight"`
	VegaReleaseTag     string `json:"vegaReleaseTag"`
}

// IsCommand marks the member of the Command union.
func (*ProtocolUpgradeProposal) IsCommand() {}

// IssueSignatures asks validators to sign the addition or removal of a
// node to or from the multisig contract.
type IssueSignatures struct {
	// Submitter is the Ethereum address that will submit the signatures.
	Submitter       string            `json:"submitter"`
	Kind            NodeSignatureKind `json:"kind"`
	ValidatorNodeID string            `json:"validatorNodeId"`
}

// IsCommand marks the member of the Command union.
func (*IssueSignatures) IsCommand() {}

// ValidatorNodeRef is the node added or removed (GraphQL
// IssueSignatures.validatorNode).
func (s *IssueSignatures) ValidatorNodeRef() *ValidatorNode {
	return &ValidatorNode{ID: s.ValidatorNodeID}
}

// OracleDataSubmission is data a provider submits for oracle data sources.
type OracleDataSubmission struct {
	Source OracleSource `json:"source"`
	// Payload is the raw payload as base64; nil when empty.
	Payload *string `json:"payload"`
}

// IsCommand marks the member of the Command union.
func (*OracleDataSubmission) IsCommand() {}

// PayloadJSON is the payload decoded from base64 when its bytes are one
// JSON value, as they are for the JSON and Open Oracle sources (GraphQL
// OracleDataSubmission.payloadJson); nil otherwise. It is exactly the
// payload, compacted: a payload that is not valid base64 or not JSON has
// none, rather than an approximation.
func (o *OracleDataSubmission) PayloadJSON() RawJSON {
	if o.Payload == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(*o.Payload)
	if err != nil {
		return nil
	}
	compact, err := compactJSON(b) // fails on anything but one JSON value
	if err != nil {
		return nil
	}
	return compact
}
