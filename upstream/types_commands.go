package upstream

// AnnounceNode is a node operator's announcement of a node as a pending
// validator.
type AnnounceNode struct {
	AvatarURL string `json:"avatarUrl"`
	// ChainPubKey is the node's blockchain (consensus-engine) public key.
	ChainPubKey string `json:"chainPubKey"`
	// Country is an ISO 3166-1 alpha-2 code.
	Country string `json:"country"`
	// EthereumAddress is the node's public key on the external chain.
	EthereumAddress   string     `json:"ethereumAddress"`
	EthereumSignature *Signature `json:"ethereumSignature"`
	// FromEpoch is the epoch from which the node should be ready to validate.
	FromEpoch Uint64 `json:"fromEpoch"`
	// ID is the node ID, the node's public master key.
	ID      string `json:"id"`
	InfoURL string `json:"infoUrl"`
	Name    string `json:"name"`
	// SubmitterAddress is the external-chain key used as submitter for
	// automatic signature generation.
	SubmitterAddress string `json:"submitterAddress"`
	// NetPubKey, NetPubKeyIndex and NetSignature arrive on the real wire as
	// vegaPubKey, vegaPubKeyIndex and vegaSignature; both spellings decode.
	NetPubKey      string     `json:"netPubKey"`
	NetPubKeyIndex Int64      `json:"netPubKeyIndex"`
	NetSignature   *Signature `json:"netSignature"`
}

// IsCommand marks the member of the Command union.
func (*AnnounceNode) IsCommand() {}

// UnmarshalJSON decodes the announcement in one pass, accepting the wire's
// vega* field names as well as the interface's net* names (net* wins when
// both are present).
func (a *AnnounceNode) UnmarshalJSON(b []byte) error {
	type plain AnnounceNode // without this method
	var w struct {
		plain
		VegaPubKey      *string    `json:"vegaPubKey"`
		VegaPubKeyIndex *Int64     `json:"vegaPubKeyIndex"`
		VegaSignature   *Signature `json:"vegaSignature"`
	}
	w.plain = plain(*a)
	if err := unmarshal(b, &w); err != nil {
		return err
	}
	*a = AnnounceNode(w.plain)
	if w.VegaPubKey != nil && a.NetPubKey == "" {
		a.NetPubKey = *w.VegaPubKey
	}
	if w.VegaPubKeyIndex != nil && a.NetPubKeyIndex == 0 {
		a.NetPubKeyIndex = *w.VegaPubKeyIndex
	}
	if w.VegaSignature != nil && a.NetSignature == nil {
		a.NetSignature = w.VegaSignature
	}
	return nil
}

// ApplyReferralCode applies a referral code to the submitting party.
type ApplyReferralCode struct {
	// ID is the referral code, normally the referral set ID.
	ID string `json:"id"`
}

// IsCommand marks the member of the Command union.
func (*ApplyReferralCode) IsCommand() {}

// BatchMarketInstructions is a batch of market instructions; each list is
// processed in order.
type BatchMarketInstructions struct {
	Amendments             []OrderAmendment        `json:"amendments"`
	Cancellations          []OrderCancellation     `json:"cancellations"`
	StopOrdersCancellation []StopOrderCancellation `json:"stopOrdersCancellation"`
	StopOrdersSubmission   []StopOrdersSubmission  `json:"stopOrdersSubmission"`
	Submissions            []OrderSubmission       `json:"submissions"`
	UpdateMarginMode       []UpdateMarginMode      `json:"updateMarginMode"`
}

// IsCommand marks the member of the Command union.
func (*BatchMarketInstructions) IsCommand() {}

// OrderAmendment amends an existing order.
type OrderAmendment struct {
	// ExpiresAt is the new expiry; omitted when unchanged.
	ExpiresAt *UnixNanos `json:"expiresAt,omitempty"`
	MarketID  string     `json:"marketId"`
	OrderID   string     `json:"orderId"`
	// PeggedOffset is an unsigned integer scaled to the market's decimals.
	PeggedOffset    string          `json:"peggedOffset"`
	PeggedReference PeggedReference `json:"peggedReference"`
	// Price is the new price; omitted when unchanged.
	Price *string `json:"price,omitempty"`
	// Size is the new size; omitted when unchanged. Exclusive with SizeDelta.
	Size *Uint64 `json:"size,omitempty"`
	// SizeDelta changes the size: negative reduces, positive increases.
	SizeDelta   Int64       `json:"sizeDelta"`
	TimeInForce TimeInForce `json:"timeInForce"`
}

// OrderCancellation cancels one order, all orders of a market, or all orders.
type OrderCancellation struct {
	MarketID string `json:"marketId"`
	OrderID  string `json:"orderId"`
}

// StopOrderCancellation cancels one stop order, those of a market, or all.
type StopOrderCancellation struct {
	MarketID    *string `json:"marketId,omitempty"`
	StopOrderID *string `json:"stopOrderId,omitempty"`
}

// StopOrdersSubmission submits a stop order triggered when the price falls
// below or rises above a trigger (one or both).
type StopOrdersSubmission struct {
	FallsBelow *StopOrderSetup `json:"fallsBelow,omitempty"`
	RisesAbove *StopOrderSetup `json:"risesAbove,omitempty"`
}

// StopOrderSetup is one side of a stop order. Its trigger is a one-of:
// exactly one of Price and TrailingPercentOffset is set.
type StopOrderSetup struct {
	// ExpiresAt is omitted when the stop order never expires.
	ExpiresAt      *UnixNanos               `json:"expiresAt,omitempty"`
	ExpiryStrategy *StopOrderExpiryStrategy `json:"expiryStrategy,omitempty"`
	// OrderSubmission is submitted once the trigger is breached.
	OrderSubmission     *OrderSubmission     `json:"orderSubmission"`
	SizeOverrideSetting *SizeOverrideSetting `json:"sizeOverrideSetting,omitempty"`
	SizeOverrideValue   *SizeOverrideValue   `json:"sizeOverrideValue,omitempty"`
	// Price triggers when the last traded price breaches it.
	Price *string `json:"price,omitempty"`
	// TrailingPercentOffset triggers when the last traded price has moved
	// this fraction from the extreme mark price since submission.
	TrailingPercentOffset *string `json:"trailingPercentOffset,omitempty"`
}

// SizeOverrideValue scales the stop order's size to the position.
type SizeOverrideValue struct {
	Percentage string `json:"percentage"`
}

// OrderSubmission submits a new order.
type OrderSubmission struct {
	// ExpiresAt is set only for time in force GTT; 0 otherwise.
	ExpiresAt   UnixNanos    `json:"expiresAt"`
	IcebergOpts *IcebergOpts `json:"icebergOpts,omitempty"`
	MarketID    string       `json:"marketId"`
	PeggedOrder *PeggedOrder `json:"peggedOrder"`
	PostOnly    bool         `json:"postOnly"`
	// Price is an integer scaled to the market's decimals; empty for market
	// orders.
	Price       string      `json:"price"`
	ReduceOnly  bool        `json:"reduceOnly"`
	Reference   string      `json:"reference"`
	Side        Side        `json:"side"`
	Size        Uint64      `json:"size"`
	TimeInForce TimeInForce `json:"timeInForce"`
	Type        OrderType   `json:"type"`
}

// IcebergOpts makes an order sit on the book in chunks.
type IcebergOpts struct {
	MinimumVisibleSize Uint64 `json:"minimumVisibleSize"`
	PeakSize           Uint64 `json:"peakSize"`
}

// PeggedOrder keeps an order's price at an offset from a reference price.
type PeggedOrder struct {
	Offset    string          `json:"offset"`
	Reference PeggedReference `json:"reference"`
}

// UpdateMarginMode changes a party's margin mode on a market.
type UpdateMarginMode struct {
	// MarginFactor is the margin multiplier in isolated mode; omitted otherwise.
	MarginFactor *string    `json:"marginFactor,omitempty"`
	MarketID     string     `json:"marketId"`
	Mode         MarginMode `json:"mode"`
}

// BatchProposalSubmission submits a governance proposal made of several
// changes voted on together.
type BatchProposalSubmission struct {
	Rationale *ProposalRationale  `json:"rationale"`
	Reference string              `json:"reference"`
	Terms     *BatchProposalTerms `json:"terms"`
}

// IsCommand marks the member of the Command union.
func (*BatchProposalSubmission) IsCommand() {}
