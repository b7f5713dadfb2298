package sampleservice

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"

	"github.com/tradenet/gateway/upstream"
)

// Wire types of the explorer's transactions, encoded exactly as the real
// upstream encodes them (upstream-wire.md section 1): 64-bit integers are
// strings (`,string`), 32-bit integers numbers; enums by name; zero values
// emitted; unset messages null; unset optional scalars (pointers with
// omitempty) omitted; one-of members are pointers with omitempty, exactly one
// of them set. Slices are always non-nil so that they encode as [].

// wireEnum is an enum value: its name, or, for a value unknown to the
// sender's schema, its number in decimal, which encodes as a bare JSON number.
type wireEnum string

// MarshalJSON encodes a name as a string and a number as a bare number.
func (e wireEnum) MarshalJSON() ([]byte, error) {
	if _, err := strconv.ParseInt(string(e), 10, 32); err == nil {
		return []byte(e), nil
	}
	return strconv.AppendQuote(nil, string(e)), nil
}

// unknownEnum is the wire form of an enum value beyond the schema.
func unknownEnum(n int32) wireEnum { return wireEnum(strconv.FormatInt(int64(n), 10)) }

func ptr[T any](v T) *T { return &v }

// base64Bytes is a protobuf bytes field as upstream types hold it: its
// standard base64 with padding, nil (null on the wire) when empty.
func base64Bytes(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	return ptr(base64.StdEncoding.EncodeToString(b))
}

// optional returns an optional string field: absent (nil) when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// wireBytes is a protobuf bytes field: standard base64 with padding, and
// null (not "") when empty (commands-v0.74.md §0).
type wireBytes []byte

// MarshalJSON encodes the bytes as base64, or null when there are none.
func (b wireBytes) MarshalJSON() ([]byte, error) {
	if len(b) == 0 {
		return []byte("null"), nil
	}
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, b)
	return append(out, '"'), nil
}

// wireF64 is a protobuf double: a JSON number, except NaN and the
// infinities, which are the strings "NaN", "Infinity" and "-Infinity".
type wireF64 float64

// MarshalJSON encodes a finite value as encoding/json does, the others as
// their protojson strings.
func (f wireF64) MarshalJSON() ([]byte, error) {
	switch v := float64(f); {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Infinity"`), nil
	default:
		return json.Marshal(v)
	}
}

type wireTransaction struct {
	Block     uint64        `json:"block,string"`
	Index     uint32        `json:"index"`
	Hash      string        `json:"hash"`
	Submitter string        `json:"submitter"`
	Type      string        `json:"type"`
	Code      uint32        `json:"code"`
	Cursor    string        `json:"cursor"`
	Command   wireCommand   `json:"command"`
	Signature wireSignature `json:"signature"`
	Error     *string       `json:"error,omitempty"`
	CreatedAt string        `json:"createdAt"`
	Version   wireEnum      `json:"version"`
	// Pow is null on validator commands, which carry no proof of work.
	Pow *wirePow `json:"pow"`
}

type wireSignature struct {
	Value   string `json:"value"`
	Algo    string `json:"algo"`
	Version uint32 `json:"version"`
}

type wirePow struct {
	Tid   string `json:"tid"`
	Nonce uint64 `json:"nonce,string"`
}

// wireCommand is the explorer's InputData: nonce, block height and one
// command member.
type wireCommand struct {
	Nonce       uint64 `json:"nonce,string"`
	BlockHeight uint64 `json:"blockHeight,string"`

	OrderSubmission                *upstream.OrderSubmission                `json:"orderSubmission,omitempty"`
	OrderCancellation              *upstream.OrderCancellation              `json:"orderCancellation,omitempty"`
	OrderAmendment                 *upstream.OrderAmendment                 `json:"orderAmendment,omitempty"`
	WithdrawSubmission             *upstream.WithdrawSubmission             `json:"withdrawSubmission,omitempty"`
	ProposalSubmission             *upstream.ProposalSubmission             `json:"proposalSubmission,omitempty"`
	VoteSubmission                 *upstream.VoteSubmission                 `json:"voteSubmission,omitempty"`
	LiquidityProvisionSubmission   *upstream.LiquidityProvisionSubmission   `json:"liquidityProvisionSubmission,omitempty"`
	DelegateSubmission             *upstream.DelegateSubmission             `json:"delegateSubmission,omitempty"`
	UndelegateSubmission           *upstream.UndelegateSubmission           `json:"undelegateSubmission,omitempty"`
	LiquidityProvisionCancellation *upstream.LiquidityProvisionCancellation `json:"liquidityProvisionCancellation,omitempty"`
	LiquidityProvisionAmendment    *upstream.LiquidityProvisionAmendment    `json:"liquidityProvisionAmendment,omitempty"`
	Transfer                       *upstream.TransferFunds                  `json:"transfer,omitempty"`
	CancelTransfer                 *upstream.CancelTransferFunds            `json:"cancelTransfer,omitempty"`
	AnnounceNode                   *upstream.AnnounceNode                   `json:"announceNode,omitempty"`
	BatchMarketInstructions        *upstream.BatchMarketInstructions        `json:"batchMarketInstructions,omitempty"`
	StopOrdersSubmission           *upstream.StopOrdersSubmission           `json:"stopOrdersSubmission,omitempty"`
	StopOrdersCancellation         *upstream.StopOrderCancellation          `json:"stopOrdersCancellation,omitempty"`
	CreateReferralSet              *upstream.CreateReferralSet              `json:"createReferralSet,omitempty"`
	UpdateReferralSet              *upstream.UpdateReferralSet              `json:"updateReferralSet,omitempty"`
	ApplyReferralCode              *upstream.ApplyReferralCode              `json:"applyReferralCode,omitempty"`
	UpdateMarginMode               *upstream.UpdateMarginMode               `json:"updateMarginMode,omitempty"`
	JoinTeam                       *upstream.JoinTeam                       `json:"joinTeam,omitempty"`
	BatchProposalSubmission        *upstream.BatchProposalSubmission        `json:"batchProposalSubmission,omitempty"`
	UpdatePartyProfile             *upstream.UpdatePartyProfile             `json:"updatePartyProfile,omitempty"`
	NodeVote                       *upstream.NodeVote                       `json:"nodeVote,omitempty"`
	NodeSignature                  *upstream.NodeSignature                  `json:"nodeSignature,omitempty"`
	ChainEvent                     *upstream.ChainEvent                     `json:"chainEvent,omitempty"`
	KeyRotateSubmission            *upstream.KeyRotateSubmission            `json:"keyRotateSubmission,omitempty"`
	StateVariableProposal          *upstream.StateVariableProposal          `json:"stateVariableProposal,omitempty"`
	ValidatorHeartbeat             *upstream.ValidatorHeartbeat             `json:"validatorHeartbeat,omitempty"`
	EthereumKeyRotateSubmission    *upstream.EthereumKeyRotateSubmission    `json:"ethereumKeyRotateSubmission,omitempty"`
	ProtocolUpgradeProposal        *upstream.ProtocolUpgradeProposal        `json:"protocolUpgradeProposal,omitempty"`
	IssueSignatures                *upstream.IssueSignatures                `json:"issueSignatures,omitempty"`
	OracleDataSubmission           *upstream.OracleDataSubmission           `json:"oracleDataSubmission,omitempty"`
}

// ---- Commands the interface describes ----

// ---- Markets ----

// ---- Data sources ----

// ---- Commands the interface does not describe (plausible bodies) ----
