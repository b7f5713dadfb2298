package upstream

import (
	"reflect"
)

// ProposalSubmission submits a governance proposal of a single change
// (command proposalSubmission).
type ProposalSubmission struct {
	// Reference is a free human-readable reference.
	Reference string `json:"reference"`
	// Terms is nil when the wire sends null.
	Terms *ProposalTerms `json:"terms"`
	// Rationale is nil when the wire sends null.
	Rationale *ProposalRationale `json:"rationale"`
}

// IsCommand marks the member of the Command union.
func (*ProposalSubmission) IsCommand() {}

// ProposalTerms are the terms of a single proposal: three times and what it
// changes (a one-of, decoded into Change). Every time is Unix seconds; "0"
// (unset) is served as null.
type ProposalTerms struct {
	// ClosingTimestamp is when voting closes.
	ClosingTimestamp UnixSeconds `json:"closingTimestamp"`
	// EnactmentTimestamp is when the change is enacted if the vote passes;
	// 0 for a freeform proposal.
	EnactmentTimestamp UnixSeconds `json:"enactmentTimestamp"`
	// ValidationTimestamp is when the external validation of a new asset
	// ends; 0 for every other change.
	ValidationTimestamp UnixSeconds `json:"validationTimestamp"`
	// Change is the member of proposalChangeMembers, or
	// *UnknownProposalChange for any other kind (or none).
	Change ProposalChangeKind `json:"-"`
}

// UnmarshalJSON decodes the three times and the change's member.
func (t *ProposalTerms) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	terms, kind, err := decodeWithChange(b, (*ProposalTerms).decodePlain)
	if err != nil {
		return err
	}
	terms.Change = kind
	*t = terms
	return nil
}

// decodePlain decodes the times, the fields beside the member.
func (t *ProposalTerms) decodePlain(key, value []byte) (bool, error) {
	switch string(key) {
	case "closingTimestamp":
		return true, t.ClosingTimestamp.UnmarshalJSON(value)
	case "enactmentTimestamp":
		return true, t.EnactmentTimestamp.UnmarshalJSON(value)
	case "validationTimestamp":
		return true, t.ValidationTimestamp.UnmarshalJSON(value)
	}
	return false, nil
}

// MarshalJSON writes the wire form: the three times and the member under
// its wire name, last.
func (t ProposalTerms) MarshalJSON() ([]byte, error) {
	return marshalWithChange(struct {
		ClosingTimestamp    UnixSeconds `json:"closingTimestamp"`
		EnactmentTimestamp  UnixSeconds `json:"enactmentTimestamp"`
		ValidationTimestamp UnixSeconds `json:"validationTimestamp"`
	}{t.ClosingTimestamp, t.EnactmentTimestamp, t.ValidationTimestamp}, t.Change)
}

// ProposalRationale explains a proposal.
type ProposalRationale struct {
	// Description is 0 to 20,000 Unicode characters.
	Description string `json:"description"`
	// Title is 0 to 100 Unicode characters.
	Title string `json:"title"`
}

// BatchProposalTerms are the terms of a batch proposal.
type BatchProposalTerms struct {
	// ClosingTimestamp is when voting closes.
	ClosingTimestamp UnixSeconds      `json:"closingTimestamp"`
	Changes          []ProposalChange `json:"changes"`
}

// ProposalChange is one change of a batch proposal: when it is enacted and
// what it changes (a one-of, decoded into Change).
type ProposalChange struct {
	// EnactmentTimestamp is when the change is enacted if the vote passes.
	EnactmentTimestamp UnixSeconds `json:"enactmentTimestamp"`
	// Change is the member of proposalChangeMembers, or
	// *UnknownProposalChange for any other kind. Batches never carry
	// newAsset (single proposals only), but one would decode.
	Change ProposalChangeKind `json:"-"`
}

// ProposalChangeKind is the GraphQL union ProposalChangeKind.
type ProposalChangeKind interface{ IsProposalChangeKind() }

// proposalChangeMembers are the members of the change one-of, in single
// proposals (ProposalTerms) and batches (ProposalChange) alike.
var proposalChangeMembers = oneOf[ProposalChangeKind]{
	members: map[string]func() ProposalChangeKind{
		"cancelTransfer":              func() ProposalChangeKind { return new(CancelTransfer) },
		"newAsset":                    func() ProposalChangeKind { return new(NewAsset) },
		"newFreeform":                 func() ProposalChangeKind { return new(NewFreeform) },
		"newMarket":                   func() ProposalChangeKind { return new(NewMarket) },
		"newSpotMarket":               func() ProposalChangeKind { return new(NewSpotMarket) },
		"newTransfer":                 func() ProposalChangeKind { return new(NewTransfer) },
		"updateAsset":                 func() ProposalChangeKind { return new(UpdateAsset) },
		"updateMarket":                func() ProposalChangeKind { return new(UpdateMarket) },
		"updateMarketState":           func() ProposalChangeKind { return new(UpdateMarketState) },
		"updateNetworkParameter":      func() ProposalChangeKind { return new(UpdateNetworkParameter) },
		"updateReferralProgram":       func() ProposalChangeKind { return new(UpdateReferralProgram) },
		"updateSpotMarket":            func() ProposalChangeKind { return new(UpdateSpotMarket) },
		"updateVolumeDiscountProgram": func() ProposalChangeKind { return new(UpdateVolumeDiscountProgram) },
	},
	unknown: func(name string, raw RawJSON) ProposalChangeKind {
		return &UnknownProposalChange{Name: name, Raw: raw}
	},
}

// proposalChangeNames is the wire name of each member's Go type, for
// MarshalJSON.
var proposalChangeNames = proposalChangeMembers.names()

// UnmarshalJSON decodes enactmentTimestamp and the change's member.
func (p *ProposalChange) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	change, kind, err := decodeWithChange(b, (*ProposalChange).decodePlain)
	if err != nil {
		return err
	}
	change.Change = kind
	*p = change
	return nil
}

// unmarshalGeneral decodes b the general way only (changeGeneral).
func (p *ProposalChange) unmarshalGeneral(b []byte) error {
	change, kind, err := changeGeneral(b, (*ProposalChange).decodePlain)
	if err != nil {
		return err
	}
	change.Change = kind
	*p = change
	return nil
}

// decodePlain decodes enactmentTimestamp, the field beside the member.
func (p *ProposalChange) decodePlain(key, value []byte) (bool, error) {
	if string(key) == "enactmentTimestamp" {
		return true, p.EnactmentTimestamp.UnmarshalJSON(value)
	}
	return false, nil
}

// MarshalJSON writes the wire form: enactmentTimestamp and the member under
// its wire name, last.
func (p ProposalChange) MarshalJSON() ([]byte, error) {
	return marshalWithChange(struct {
		EnactmentTimestamp UnixSeconds `json:"enactmentTimestamp"`
	}{p.EnactmentTimestamp}, p.Change)
}

// decodeWithChange decodes a JSON object of plain fields (decoded by plain,
// which reports whether key is one) beside a member of the change one-of:
// the fast path (oneOf.decodeLast) for the wire's order, the member last,
// else the general one (changeGeneral).
func decodeWithChange[T any](b []byte, plain func(t *T, key, value []byte) (bool, error)) (T, ProposalChangeKind, error) {
	var fast T
	if kind, ok := proposalChangeMembers.decodeLast(b, func(key, value []byte) (bool, error) {
		return plain(&fast, key, value)
	}); ok {
		return fast, kind, nil
	}
	return changeGeneral(b, plain)
}

// changeGeneral decodes any such object: every key scanned, the member
// chosen among them (oneOf.consider). An object without a member gives an
// *UnknownProposalChange holding the whole object, as a command without
// one does (a kind newer than the explorer: docs/wire.md, Newer and older
// networks).
func changeGeneral[T any](b []byte, plain func(t *T, key, value []byte) (bool, error)) (T, ProposalChangeKind, error) {
	var obj T
	var member choice
	err := eachMember(b, reflect.TypeFor[T](), func(key, value []byte) error {
		isPlain, err := plain(&obj, key, value)
		if err != nil {
			return inField(string(key), err)
		}
		if !isPlain {
			proposalChangeMembers.consider(&member, key, value)
		}
		return nil
	})
	if err != nil {
		return obj, nil, err
	}
	kind, err := proposalChangeMembers.decode(b, member)
	return obj, kind, err
}

// marshalWithChange writes the fields of plain (a struct) and the
// change's member under its wire name, last, as one object. A change with
// no member (an *UnknownProposalChange without a name) is written as it
// was received.
func marshalWithChange(plain any, change ProposalChangeKind) ([]byte, error) {
	switch c := change.(type) {
	case nil:
		return marshalOneOf(plain, "", nil)
	case *UnknownProposalChange:
		if c.Name == "" {
			return c.Raw.MarshalJSON()
		}
		return marshalOneOf(plain, c.Name, c.Raw)
	default:
		return marshalOneOf(plain, proposalChangeNames[reflect.TypeOf(c)], c)
	}
}

// UnknownProposalChange is a change kind this package does not describe,
// kept as the upstream sent it.
type UnknownProposalChange struct {
	// Name is the member's wire name, e.g. "updateSpotMarket"; "" when the
	// change had no member, in which case Raw is the whole change object.
	Name string  `json:"name"`
	Raw  RawJSON `json:"raw"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*UnknownProposalChange) IsProposalChangeKind() {}

// CancelTransfer cancels a governance transfer.
type CancelTransfer struct {
	Changes *CancelTransferConfiguration `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*CancelTransfer) IsProposalChangeKind() {}

// CancelTransferConfiguration names the transfer to cancel.
type CancelTransferConfiguration struct {
	// TransferID is the ID of the governance transfer proposal.
	TransferID string `json:"transferId"`
}

// NewAsset proposes a new asset (single proposals only). The asset has no
// ID yet: the proposal's ID becomes it.
type NewAsset struct {
	Changes *AssetDetails `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*NewAsset) IsProposalChangeKind() {}

// NewFreeform is a sentiment-only proposal with no effect on the network.
// Its fields are not described; Raw is its JSON as sent, normally {}.
type NewFreeform struct {
	Raw RawJSON `json:"raw"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*NewFreeform) IsProposalChangeKind() {}

// UnmarshalJSON keeps the whole member, compacted, as Raw.
func (f *NewFreeform) UnmarshalJSON(b []byte) error { return f.Raw.UnmarshalJSON(b) }

// MarshalJSON writes the member as it was received.
func (f NewFreeform) MarshalJSON() ([]byte, error) {
	if len(f.Raw) == 0 {
		return []byte("{}"), nil
	}
	return f.Raw, nil
}

// NewMarket proposes a new futures or perpetual market.
type NewMarket struct {
	Changes *NewFutureMarketConfig `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*NewMarket) IsProposalChangeKind() {}

// NewSpotMarket proposes a new spot market.
type NewSpotMarket struct {
	Changes *NewSpotMarketConfig `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*NewSpotMarket) IsProposalChangeKind() {}

// NewTransfer proposes a governance transfer.
type NewTransfer struct {
	Changes *GovernanceTransfer `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*NewTransfer) IsProposalChangeKind() {}

// UpdateAsset proposes changes to an existing asset.
type UpdateAsset struct {
	AssetID string                    `json:"assetId"`
	Changes *UpdateAssetConfiguration `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*UpdateAsset) IsProposalChangeKind() {}

// UpdateAssetConfiguration is the new configuration of an asset.
type UpdateAssetConfiguration struct {
	ERC20   *UpdateERC20 `json:"erc20,omitempty"`
	Quantum string       `json:"quantum"`
}

// UpdateERC20 is the new configuration of a token-contract asset.
type UpdateERC20 struct {
	LifetimeLimit     string `json:"lifetimeLimit"`
	WithdrawThreshold string `json:"withdrawThreshold"`
}

// UpdateMarket proposes changes to an existing market.
type UpdateMarket struct {
	MarketID string              `json:"marketId"`
	Changes  *UpdateMarketConfig `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*UpdateMarket) IsProposalChangeKind() {}

// UpdateSpotMarket proposes changes to an existing spot market.
type UpdateSpotMarket struct {
	MarketID string                         `json:"marketId"`
	Changes  *UpdateSpotMarketConfiguration `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*UpdateSpotMarket) IsProposalChangeKind() {}

// UpdateMarketState proposes terminating, suspending or resuming a market.
type UpdateMarketState struct {
	Changes *UpdateMarketStateConfiguration `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*UpdateMarketState) IsProposalChangeKind() {}

// UpdateMarketStateConfiguration says what happens to which market.
type UpdateMarketStateConfiguration struct {
	MarketID string `json:"marketId"`
	// Price is the settlement price, relevant only to terminating a futures
	// market; omitted otherwise.
	Price      *string               `json:"price,omitempty"`
	UpdateType MarketStateUpdateType `json:"updateType"`
}

// UpdateNetworkParameter proposes a new value for a network parameter.
type UpdateNetworkParameter struct {
	Changes *NetworkParameter `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*UpdateNetworkParameter) IsProposalChangeKind() {}

// NetworkParameter is a network parameter's key and value.
type NetworkParameter struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// GovernanceTransfer is a transfer made by governance. Its kind is a
// one-of: exactly one of OneOff and Recurring is set.
type GovernanceTransfer struct {
	// Amount is the maximum amount to transfer.
	Amount string `json:"amount"`
	// Asset is the asset's ID.
	Asset string `json:"asset"`
	// Destination is empty for the network treasury, a party's public key,
	// or a market ID (insurance pool), by DestinationType.
	Destination     string      `json:"destination"`
	DestinationType AccountType `json:"destinationType"`
	// FractionOfBalance is the maximum fraction of the source balance, as a
	// decimal (0.1 = 10%).
	FractionOfBalance string             `json:"fractionOfBalance"`
	OneOff            *OneOffTransfer    `json:"oneOff,omitempty"`
	Recurring         *RecurringTransfer `json:"recurring,omitempty"`
	// Source is empty for the network treasury, otherwise a market ID.
	Source       string                 `json:"source"`
	SourceType   AccountType            `json:"sourceType"`
	TransferType GovernanceTransferType `json:"transferType"`
}

// OneOffTransfer is a transfer made once.
type OneOffTransfer struct {
	DeliverOn UnixNanos `json:"deliverOn"`
}

// RecurringTransfer is a transfer made every epoch between two epochs.
type RecurringTransfer struct {
	DispatchStrategy *DispatchStrategy `json:"dispatchStrategy,omitempty"`
	// EndEpoch is the last epoch paid; omitted when open-ended.
	EndEpoch   *Uint64 `json:"endEpoch,omitempty"`
	StartEpoch Uint64  `json:"startEpoch"`
}

// DispatchStrategy says how a recurring transfer is dispatched as rewards.
type DispatchStrategy struct {
	AssetForMetric       string               `json:"assetForMetric"`
	DistributionStrategy DistributionStrategy `json:"distributionStrategy"`
	EntityScope          EntityScope          `json:"entityScope"`
	IndividualScope      IndividualScope      `json:"individualScope"`
	LockPeriod           Uint64               `json:"lockPeriod"`
	Markets              []string             `json:"markets"`
	Metric               DispatchMetric       `json:"metric"`
	// NTopPerformers is the proportion of a team's top performers averaged
	// for team-scope metrics.
	NTopPerformers string `json:"nTopPerformers"`
	// NotionalTimeWeightedAveragePositionRequirement defaults to 0.
	NotionalTimeWeightedAveragePositionRequirement string `json:"notionalTimeWeightedAveragePositionRequirement"`
	// RankTable is ordered by start rank; mandatory for rank distribution.
	RankTable []RankTable `json:"rankTable"`
	// StakingRequirement is the minimum governance tokens staked.
	StakingRequirement string   `json:"stakingRequirement"`
	TeamScope          []string `json:"teamScope"`
	WindowLength       Uint64   `json:"windowLength"`
}

// RankTable is one entry of a rank distribution. Both numbers are u32,
// sent as JSON numbers (the interface document says int64).
type RankTable struct {
	ShareRatio Int64 `json:"shareRatio"`
	StartRank  Int64 `json:"startRank"`
}
