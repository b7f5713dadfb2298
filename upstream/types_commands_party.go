package upstream

// The party commands of the Command union (docs/wire.md, Command kinds): the
// kinds a party's own wallet signs. The order, stop-order and margin-mode
// kinds reuse the batch element types of types_commands.go, which are
// members of the union too.

// IsCommand marks the member of the Command union (orderSubmission).
func (*OrderSubmission) IsCommand() {}

// IsCommand marks the member of the Command union (orderCancellation).
func (*OrderCancellation) IsCommand() {}

// IsCommand marks the member of the Command union (orderAmendment).
func (*OrderAmendment) IsCommand() {}

// IsCommand marks the member of the Command union (stopOrdersSubmission).
func (*StopOrdersSubmission) IsCommand() {}

// IsCommand marks the member of the Command union (stopOrdersCancellation).
func (*StopOrderCancellation) IsCommand() {}

// IsCommand marks the member of the Command union (updateMarginMode).
func (*UpdateMarginMode) IsCommand() {}

// WithdrawSubmission withdraws funds from the party's general account to a
// foreign chain.
type WithdrawSubmission struct {
	// Amount is an integer string in the asset's decimals.
	Amount string `json:"amount"`
	// Asset is the asset ID (GraphQL: the Asset object).
	Asset string `json:"asset"`
	// Ext holds the foreign chain's details; nil when the wire sent null.
	Ext *WithdrawExt `json:"ext"`
}

// IsCommand marks the member of the Command union.
func (*WithdrawSubmission) IsCommand() {}

// WithdrawExt is the one-of group of foreign-chain details; the wire sends
// {} when no member is set, leaving every field nil.
type WithdrawExt struct {
	Erc20 *Erc20WithdrawExt `json:"erc20,omitempty"`
}

// Erc20WithdrawExt is the Ethereum side of a withdrawal.
type Erc20WithdrawExt struct {
	// ReceiverAddress is where the bridge releases the funds.
	ReceiverAddress string `json:"receiverAddress"`
}

// VoteSubmission votes on a governance proposal.
type VoteSubmission struct {
	// ProposalID is the proposal, or the batch proposal, voted on.
	ProposalID string    `json:"proposalId"`
	Value      VoteValue `json:"value"`
}

// IsCommand marks the member of the Command union.
func (*VoteSubmission) IsCommand() {}

// LiquidityProvisionSubmission commits liquidity to a market.
type LiquidityProvisionSubmission struct {
	MarketID string `json:"marketId"`
	// CommitmentAmount is an integer string in the settlement asset's
	// decimals.
	CommitmentAmount string `json:"commitmentAmount"`
	// Fee is the nominated liquidity fee factor, a decimal string.
	Fee string `json:"fee"`
	// Reference is copied to the orders the commitment creates.
	Reference string `json:"reference"`
}

// IsCommand marks the member of the Command union.
func (*LiquidityProvisionSubmission) IsCommand() {}

// LiquidityProvisionAmendment amends a liquidity commitment; it has the
// submission's fields, where an empty or zero value means unchanged.
type LiquidityProvisionAmendment LiquidityProvisionSubmission

// IsCommand marks the member of the Command union.
func (*LiquidityProvisionAmendment) IsCommand() {}

// LiquidityProvisionCancellation cancels the party's liquidity commitment
// on a market.
type LiquidityProvisionCancellation struct {
	MarketID string `json:"marketId"`
}

// IsCommand marks the member of the Command union.
func (*LiquidityProvisionCancellation) IsCommand() {}

// DelegateSubmission delegates stake to a validator node.
type DelegateSubmission struct {
	NodeID string `json:"nodeId"`
	// Amount is an integer string in the governance asset's decimals.
	Amount string `json:"amount"`
}

// IsCommand marks the member of the Command union.
func (*DelegateSubmission) IsCommand() {}

// NodeRef is the node delegated to (GraphQL DelegateSubmission.node).
func (d *DelegateSubmission) NodeRef() *ValidatorNode { return &ValidatorNode{ID: d.NodeID} }

// UndelegateSubmission removes stake delegated to a validator node.
type UndelegateSubmission struct {
	NodeID string `json:"nodeId"`
	// Amount is an integer string; empty means all the stake delegated to
	// the node.
	Amount string           `json:"amount"`
	Method UndelegateMethod `json:"method"`
}

// IsCommand marks the member of the Command union.
func (*UndelegateSubmission) IsCommand() {}

// NodeRef is the node undelegated from (GraphQL UndelegateSubmission.node).
func (u *UndelegateSubmission) NodeRef() *ValidatorNode { return &ValidatorNode{ID: u.NodeID} }

// TransferFunds is a party's transfer between accounts (wire member
// `transfer`, explorer type "Transfer Funds"); not the governance transfer
// (GovernanceTransfer). Its kind is a one-of: OneOff or Recurring.
type TransferFunds struct {
	FromAccountType AccountType `json:"fromAccountType"`
	// To is the destination public key (64 hex characters).
	To            string      `json:"to"`
	ToAccountType AccountType `json:"toAccountType"`
	// Asset is the asset ID (GraphQL: the Asset object).
	Asset string `json:"asset"`
	// Amount is an integer string in the asset's decimals.
	Amount    string                  `json:"amount"`
	Reference string                  `json:"reference"`
	OneOff    *OneOffTransfer         `json:"oneOff,omitempty"`
	Recurring *RecurringTransferFunds `json:"recurring,omitempty"`
}

// IsCommand marks the member of the Command union.
func (*TransferFunds) IsCommand() {}

// RecurringTransferFunds is the recurring kind of a party's transfer. Unlike
// the governance RecurringTransfer it has a factor, and its dispatch
// strategy is null rather than absent when unset.
type RecurringTransferFunds struct {
	StartEpoch Uint64 `json:"startEpoch"`
	// EndEpoch is the last epoch paid; omitted when open-ended.
	EndEpoch *Uint64 `json:"endEpoch,omitempty"`
	// Factor multiplies the amount at each epoch (a decimal string).
	Factor           string            `json:"factor"`
	DispatchStrategy *DispatchStrategy `json:"dispatchStrategy"`
}

// CancelTransferFunds stops one of the party's recurring transfers (wire
// member `cancelTransfer`); not the governance CancelTransfer change.
type CancelTransferFunds struct {
	TransferID string `json:"transferId"`
}

// IsCommand marks the member of the Command union.
func (*CancelTransferFunds) IsCommand() {}

// CreateReferralSet creates a referral set, which may also be a team.
type CreateReferralSet struct {
	IsTeam bool `json:"isTeam"`
	// Team is omitted when the set is not a team.
	Team *CreateReferralSetTeam `json:"team,omitempty"`
}

// IsCommand marks the member of the Command union.
func (*CreateReferralSet) IsCommand() {}

// CreateReferralSetTeam is the team of a new referral set.
type CreateReferralSetTeam struct {
	Name string `json:"name"`
	// TeamURL and AvatarURL are omitted when not given.
	TeamURL   *string `json:"teamUrl,omitempty"`
	AvatarURL *string `json:"avatarUrl,omitempty"`
	// Closed teams admit only the public keys of AllowList.
	Closed    bool     `json:"closed"`
	AllowList []string `json:"allowList"`
}

// UpdateReferralSet updates a referral set the party created.
type UpdateReferralSet struct {
	ID     string                 `json:"id"`
	IsTeam bool                   `json:"isTeam"`
	Team   *UpdateReferralSetTeam `json:"team,omitempty"`
}

// IsCommand marks the member of the Command union.
func (*UpdateReferralSet) IsCommand() {}

// UpdateReferralSetTeam is the team update of a referral set: an omitted
// field is left unchanged.
type UpdateReferralSetTeam struct {
	Name      *string  `json:"name,omitempty"`
	TeamURL   *string  `json:"teamUrl,omitempty"`
	AvatarURL *string  `json:"avatarUrl,omitempty"`
	Closed    *bool    `json:"closed,omitempty"`
	AllowList []string `json:"allowList"`
}

// JoinTeam makes the party join a team.
type JoinTeam struct {
	// ID is the team, equal to the referral code of the team's set.
	ID string `json:"id"`
}

// IsCommand marks the member of the Command union.
func (*JoinTeam) IsCommand() {}

// UpdatePartyProfile replaces the party's profile.
type UpdatePartyProfile struct {
	Alias    string     `json:"alias"`
	Metadata []Metadata `json:"metadata"`
}

// IsCommand marks the member of the Command union.
func (*UpdatePartyProfile) IsCommand() {}

// Metadata is one key-value entry of a party's profile.
type Metadata struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}
