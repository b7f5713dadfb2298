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
	ProposalSubmission             *wireProposalSubmission                  `json:"proposalSubmission,omitempty"`
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
	BatchProposalSubmission        *wireBatchProposalSubmission             `json:"batchProposalSubmission,omitempty"`
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

type wireBatchProposalSubmission struct {
	Reference string                 `json:"reference"`
	Terms     wireBatchProposalTerms `json:"terms"`
	Rationale wireProposalRationale  `json:"rationale"`
}

type wireBatchProposalTerms struct {
	ClosingTimestamp int64                `json:"closingTimestamp,string"`
	Changes          []wireProposalChange `json:"changes"`
}

type wireProposalRationale struct {
	Description string `json:"description"`
	Title       string `json:"title"`
}

// wireChangeMembers is the change one-of of proposal terms.
type wireChangeMembers struct {
	UpdateMarket                *wireUpdateMarket                `json:"updateMarket,omitempty"`
	NewMarket                   *wireNewMarket                   `json:"newMarket,omitempty"`
	UpdateNetworkParameter      *wireUpdateNetworkParameter      `json:"updateNetworkParameter,omitempty"`
	NewFreeform                 *wireNewFreeform                 `json:"newFreeform,omitempty"`
	UpdateAsset                 *wireUpdateAsset                 `json:"updateAsset,omitempty"`
	NewSpotMarket               *wireNewSpotMarket               `json:"newSpotMarket,omitempty"`
	UpdateSpotMarket            *wireUpdateSpotMarket            `json:"updateSpotMarket,omitempty"`
	NewTransfer                 *wireNewTransfer                 `json:"newTransfer,omitempty"`
	CancelTransfer              *wireCancelTransferChange        `json:"cancelTransfer,omitempty"`
	UpdateMarketState           *wireUpdateMarketState           `json:"updateMarketState,omitempty"`
	UpdateReferralProgram       *wireUpdateReferralProgram       `json:"updateReferralProgram,omitempty"`
	UpdateVolumeDiscountProgram *wireUpdateVolumeDiscountProgram `json:"updateVolumeDiscountProgram,omitempty"`
}

type wireProposalChange struct {
	EnactmentTimestamp int64 `json:"enactmentTimestamp,string"`
	wireChangeMembers
}

type wireNewFreeform struct{}

type wireUpdateNetworkParameter struct {
	Changes wireNetworkParameter `json:"changes"`
}

type wireNetworkParameter struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type wireUpdateAsset struct {
	AssetID string                 `json:"assetId"`
	Changes wireAssetDetailsUpdate `json:"changes"`
}

type wireAssetDetailsUpdate struct {
	Quantum string           `json:"quantum"`
	ERC20   *wireERC20Update `json:"erc20,omitempty"`
}

type wireERC20Update struct {
	LifetimeLimit     string `json:"lifetimeLimit"`
	WithdrawThreshold string `json:"withdrawThreshold"`
}

type wireCancelTransferChange struct {
	Changes wireCancelTransferConfig `json:"changes"`
}

type wireCancelTransferConfig struct {
	TransferID string `json:"transferId"`
}

type wireUpdateMarketState struct {
	Changes wireUpdateMarketStateConfig `json:"changes"`
}

type wireUpdateMarketStateConfig struct {
	MarketID   string   `json:"marketId"`
	UpdateType wireEnum `json:"updateType"`
	Price      *string  `json:"price,omitempty"`
}

type wireNewTransfer struct {
	Changes wireNewTransferConfig `json:"changes"`
}

type wireNewTransferConfig struct {
	SourceType        wireEnum                 `json:"sourceType"`
	Source            string                   `json:"source"`
	TransferType      wireEnum                 `json:"transferType"`
	Amount            string                   `json:"amount"`
	Asset             string                   `json:"asset"`
	FractionOfBalance string                   `json:"fractionOfBalance"`
	DestinationType   wireEnum                 `json:"destinationType"`
	Destination       string                   `json:"destination"`
	OneOff            *upstream.OneOffTransfer `json:"oneOff,omitempty"`
	Recurring         *wireGovernanceRecurring `json:"recurring,omitempty"`
}

// wireGovernanceRecurring: unlike the transfer command's recurring
// transfer, its dispatch strategy is optional (absent, not null, when unset).
type wireGovernanceRecurring struct {
	StartEpoch       uint64                     `json:"startEpoch,string"`
	EndEpoch         *uint64                    `json:"endEpoch,omitempty,string"`
	DispatchStrategy *upstream.DispatchStrategy `json:"dispatchStrategy,omitempty"`
}

type wireUpdateReferralProgram struct {
	Changes wireReferralProgramChanges `json:"changes"`
}

type wireReferralProgramChanges struct {
	BenefitTiers          []wireReferralBenefitTier `json:"benefitTiers"`
	EndOfProgramTimestamp int64                     `json:"endOfProgramTimestamp,string"`
	WindowLength          uint64                    `json:"windowLength,string"`
	StakingTiers          []wireStakingTier         `json:"stakingTiers"`
}

type wireReferralBenefitTier struct {
	MinimumRunningNotionalTakerVolume string `json:"minimumRunningNotionalTakerVolume"`
	MinimumEpochs                     string `json:"minimumEpochs"`
	ReferralRewardFactor              string `json:"referralRewardFactor"`
	ReferralDiscountFactor            string `json:"referralDiscountFactor"`
}

type wireStakingTier struct {
	MinimumStakedTokens      string `json:"minimumStakedTokens"`
	ReferralRewardMultiplier string `json:"referralRewardMultiplier"`
}

type wireUpdateVolumeDiscountProgram struct {
	Changes wireVolumeDiscountProgramChanges `json:"changes"`
}

type wireVolumeDiscountProgramChanges struct {
	BenefitTiers          []wireVolumeBenefitTier `json:"benefitTiers"`
	EndOfProgramTimestamp int64                   `json:"endOfProgramTimestamp,string"`
	WindowLength          uint64                  `json:"windowLength,string"`
}

type wireVolumeBenefitTier struct {
	MinimumRunningNotionalTakerVolume string `json:"minimumRunningNotionalTakerVolume"`
	VolumeDiscountFactor              string `json:"volumeDiscountFactor"`
}

// ---- Markets ----

type wireNewMarket struct {
	Changes wireNewMarketConfig `json:"changes"`
}

type wireNewMarketConfig struct {
	Instrument                    wireInstrument                     `json:"instrument"`
	DecimalPlaces                 uint64                             `json:"decimalPlaces,string"`
	Metadata                      []string                           `json:"metadata"`
	PriceMonitoringParameters     *wirePriceMonitoringParameters     `json:"priceMonitoringParameters"`
	LiquidityMonitoringParameters *wireLiquidityMonitoringParameters `json:"liquidityMonitoringParameters"`
	Simple                        *wireSimpleRiskModel               `json:"simple,omitempty"`
	LogNormal                     *wireLogNormalRiskModel            `json:"logNormal,omitempty"`
	PositionDecimalPlaces         int64                              `json:"positionDecimalPlaces,string"`
	LpPriceRange                  *string                            `json:"lpPriceRange,omitempty"`
	LinearSlippageFactor          string                             `json:"linearSlippageFactor"`
	QuadraticSlippageFactor       string                             `json:"quadraticSlippageFactor"`
	Successor                     *wireSuccessor                     `json:"successor,omitempty"`
	LiquiditySlaParameters        *wireSlaParameters                 `json:"liquiditySlaParameters"`
	LiquidityFeeSettings          *wireLiquidityFeeSettings          `json:"liquidityFeeSettings"`
	LiquidationStrategy           *wireLiquidationStrategy           `json:"liquidationStrategy"`
	MarkPriceConfiguration        *wireCompositePriceConfiguration   `json:"markPriceConfiguration"`
}

type wireUpdateMarket struct {
	MarketID string                 `json:"marketId"`
	Changes  wireUpdateMarketConfig `json:"changes"`
}

type wireUpdateMarketConfig struct {
	Instrument                    wireUpdateInstrument               `json:"instrument"`
	Metadata                      []string                           `json:"metadata"`
	PriceMonitoringParameters     *wirePriceMonitoringParameters     `json:"priceMonitoringParameters"`
	LiquidityMonitoringParameters *wireLiquidityMonitoringParameters `json:"liquidityMonitoringParameters"`
	Simple                        *wireSimpleRiskModel               `json:"simple,omitempty"`
	LogNormal                     *wireLogNormalRiskModel            `json:"logNormal,omitempty"`
	LpPriceRange                  *string                            `json:"lpPriceRange,omitempty"`
	LinearSlippageFactor          string                             `json:"linearSlippageFactor"`
	QuadraticSlippageFactor       string                             `json:"quadraticSlippageFactor"`
	LiquiditySlaParameters        *wireSlaParameters                 `json:"liquiditySlaParameters"`
	LiquidityFeeSettings          *wireLiquidityFeeSettings          `json:"liquidityFeeSettings"`
	LiquidationStrategy           *wireLiquidationStrategy           `json:"liquidationStrategy"`
	MarkPriceConfiguration        *wireCompositePriceConfiguration   `json:"markPriceConfiguration"`
}

type wireNewSpotMarket struct {
	Changes wireNewSpotMarketConfig `json:"changes"`
}

type wireNewSpotMarketConfig struct {
	Instrument                wireInstrument                 `json:"instrument"`
	DecimalPlaces             uint64                         `json:"decimalPlaces,string"`
	Metadata                  []string                       `json:"metadata"`
	PriceMonitoringParameters *wirePriceMonitoringParameters `json:"priceMonitoringParameters"`
	TargetStakeParameters     *wireTargetStakeParameters     `json:"targetStakeParameters"`
	Simple                    *wireSimpleRiskModel           `json:"simple,omitempty"`
	LogNormal                 *wireLogNormalRiskModel        `json:"logNormal,omitempty"`
	PositionDecimalPlaces     int64                          `json:"positionDecimalPlaces,string"`
	SlaParams                 *wireSlaParameters             `json:"slaParams"`
	LiquidityFeeSettings      *wireLiquidityFeeSettings      `json:"liquidityFeeSettings"`
}

type wireUpdateSpotMarket struct {
	MarketID string                     `json:"marketId"`
	Changes  wireUpdateSpotMarketConfig `json:"changes"`
}

type wireUpdateSpotMarketConfig struct {
	Metadata                  []string                       `json:"metadata"`
	PriceMonitoringParameters *wirePriceMonitoringParameters `json:"priceMonitoringParameters"`
	TargetStakeParameters     *wireTargetStakeParameters     `json:"targetStakeParameters"`
	Simple                    *wireSimpleRiskModel           `json:"simple,omitempty"`
	LogNormal                 *wireLogNormalRiskModel        `json:"logNormal,omitempty"`
	SlaParams                 *wireSlaParameters             `json:"slaParams"`
	LiquidityFeeSettings      *wireLiquidityFeeSettings      `json:"liquidityFeeSettings"`
}

type wireInstrument struct {
	Code      string         `json:"code"`
	Name      string         `json:"name"`
	Future    *wireFuture    `json:"future,omitempty"`
	Perpetual *wirePerpetual `json:"perpetual,omitempty"`
	Spot      *wireSpot      `json:"spot,omitempty"`
}

type wireUpdateInstrument struct {
	Code      string               `json:"code"`
	Name      string               `json:"name"`
	Future    *wireUpdateFuture    `json:"future,omitempty"`
	Perpetual *wireUpdatePerpetual `json:"perpetual,omitempty"`
}

type wireFuture struct {
	SettlementAsset string `json:"settlementAsset"`
	wireUpdateFuture
}

type wireUpdateFuture struct {
	QuoteName                           string                    `json:"quoteName"`
	DataSourceSpecForSettlementData     *wireDataSourceDefinition `json:"dataSourceSpecForSettlementData"`
	DataSourceSpecForTradingTermination *wireDataSourceDefinition `json:"dataSourceSpecForTradingTermination"`
	DataSourceSpecBinding               *wireFutureBinding        `json:"dataSourceSpecBinding"`
}

type wireFutureBinding struct {
	SettlementDataProperty     string `json:"settlementDataProperty"`
	TradingTerminationProperty string `json:"tradingTerminationProperty"`
}

type wirePerpetual struct {
	SettlementAsset string `json:"settlementAsset"`
	wireUpdatePerpetual
}

type wireUpdatePerpetual struct {
	QuoteName                           string                           `json:"quoteName"`
	MarginFundingFactor                 string                           `json:"marginFundingFactor"`
	InterestRate                        string                           `json:"interestRate"`
	ClampLowerBound                     string                           `json:"clampLowerBound"`
	ClampUpperBound                     string                           `json:"clampUpperBound"`
	DataSourceSpecForSettlementSchedule *wireDataSourceDefinition        `json:"dataSourceSpecForSettlementSchedule"`
	DataSourceSpecForSettlementData     *wireDataSourceDefinition        `json:"dataSourceSpecForSettlementData"`
	DataSourceSpecBinding               *wirePerpetualBinding            `json:"dataSourceSpecBinding"`
	FundingRateScalingFactor            *string                          `json:"fundingRateScalingFactor,omitempty"`
	FundingRateLowerBound               *string                          `json:"fundingRateLowerBound,omitempty"`
	FundingRateUpperBound               *string                          `json:"fundingRateUpperBound,omitempty"`
	InternalCompositePriceConfiguration *wireCompositePriceConfiguration `json:"internalCompositePriceConfiguration,omitempty"`
}

type wirePerpetualBinding struct {
	SettlementDataProperty     string `json:"settlementDataProperty"`
	SettlementScheduleProperty string `json:"settlementScheduleProperty"`
}

type wireSpot struct {
	BaseAsset  string `json:"baseAsset"`
	QuoteAsset string `json:"quoteAsset"`
	Name       string `json:"name"`
}

type wireSuccessor struct {
	ParentMarketID        string `json:"parentMarketId"`
	InsurancePoolFraction string `json:"insurancePoolFraction"`
}

type wirePriceMonitoringParameters struct {
	Triggers []wirePriceMonitoringTrigger `json:"triggers"`
}

type wirePriceMonitoringTrigger struct {
	Horizon          int64  `json:"horizon,string"`
	Probability      string `json:"probability"`
	AuctionExtension int64  `json:"auctionExtension,string"`
}

type wireLiquidityMonitoringParameters struct {
	TargetStakeParameters *wireTargetStakeParameters `json:"targetStakeParameters"`
	TriggeringRatio       string                     `json:"triggeringRatio"`
	AuctionExtension      int64                      `json:"auctionExtension,string"`
}

type wireTargetStakeParameters struct {
	TimeWindow    int64   `json:"timeWindow,string"`
	ScalingFactor wireF64 `json:"scalingFactor"`
}

type wireSimpleRiskModel struct {
	FactorLong           wireF64 `json:"factorLong"`
	FactorShort          wireF64 `json:"factorShort"`
	MaxMoveUp            wireF64 `json:"maxMoveUp"`
	MinMoveDown          wireF64 `json:"minMoveDown"`
	ProbabilityOfTrading wireF64 `json:"probabilityOfTrading"`
}

type wireLogNormalRiskModel struct {
	RiskAversionParameter wireF64             `json:"riskAversionParameter"`
	Tau                   wireF64             `json:"tau"`
	Params                wireLogNormalParams `json:"params"`
}

type wireLogNormalParams struct {
	Mu    wireF64 `json:"mu"`
	R     wireF64 `json:"r"`
	Sigma wireF64 `json:"sigma"`
}

type wireSlaParameters struct {
	PriceRange                  string `json:"priceRange"`
	CommitmentMinTimeFraction   string `json:"commitmentMinTimeFraction"`
	PerformanceHysteresisEpochs uint64 `json:"performanceHysteresisEpochs,string"`
	SlaCompetitionFactor        string `json:"slaCompetitionFactor"`
}

// wireLiquidityFeeSettings: feeConstant is a proto3 optional string, omitted
// when unset (it is set only for METHOD_CONSTANT).
type wireLiquidityFeeSettings struct {
	Method      wireEnum `json:"method"`
	FeeConstant *string  `json:"feeConstant,omitempty"`
}

type wireLiquidationStrategy struct {
	DisposalTimeStep    int64  `json:"disposalTimeStep,string"`
	DisposalFraction    string `json:"disposalFraction"`
	FullDisposalSize    uint64 `json:"fullDisposalSize,string"`
	MaxFractionConsumed string `json:"maxFractionConsumed"`
}

type wireCompositePriceConfiguration struct {
	DecayWeight              string                     `json:"decayWeight"`
	DecayPower               uint64                     `json:"decayPower,string"`
	CashAmount               string                     `json:"cashAmount"`
	SourceWeights            []string                   `json:"sourceWeights"`
	SourceStalenessTolerance []string                   `json:"sourceStalenessTolerance"`
	CompositePriceType       wireEnum                   `json:"compositePriceType"`
	DataSourcesSpec          []wireDataSourceDefinition `json:"dataSourcesSpec"`
	DataSourcesSpecBinding   []wirePriceSourceBinding   `json:"dataSourcesSpecBinding"`
}

type wirePriceSourceBinding struct {
	PriceSourceProperty string `json:"priceSourceProperty"`
}

// ---- Data sources ----

type wireDataSourceDefinition struct {
	Internal *wireDataSourceInternal `json:"internal,omitempty"`
	External *wireDataSourceExternal `json:"external,omitempty"`
}

type wireDataSourceInternal struct {
	Time        *wireDataSourceTime        `json:"time,omitempty"`
	TimeTrigger *wireDataSourceTimeTrigger `json:"timeTrigger,omitempty"`
}

type wireDataSourceTime struct {
	Conditions []wireCondition `json:"conditions"`
}

type wireDataSourceTimeTrigger struct {
	Conditions []wireCondition           `json:"conditions"`
	Triggers   []wireInternalTimeTrigger `json:"triggers"`
}

type wireInternalTimeTrigger struct {
	Initial *int64 `json:"initial,omitempty,string"`
	Every   int64  `json:"every,string"`
}

type wireDataSourceExternal struct {
	Oracle    *wireOracleSpec  `json:"oracle,omitempty"`
	EthOracle *wireEthCallSpec `json:"ethOracle,omitempty"`
}

type wireOracleSpec struct {
	Signers []wireSigner `json:"signers"`
	Filters []wireFilter `json:"filters"`
}

type wireSigner struct {
	PubKey     *wirePubKey     `json:"pubKey,omitempty"`
	EthAddress *wireEthAddress `json:"ethAddress,omitempty"`
}

type wirePubKey struct {
	Key string `json:"key"`
}

type wireEthAddress struct {
	Address string `json:"address"`
}

type wireEthCallSpec struct {
	Address               string              `json:"address"`
	Abi                   string              `json:"abi"`
	Method                string              `json:"method"`
	Args                  []any               `json:"args"`
	Trigger               *wireEthCallTrigger `json:"trigger"`
	RequiredConfirmations uint64              `json:"requiredConfirmations,string"`
	Filters               []wireFilter        `json:"filters"`
	Normalisers           []wireNormaliser    `json:"normalisers"`
	SourceChainID         uint64              `json:"sourceChainId,string"`
}

type wireEthCallTrigger struct {
	TimeTrigger *wireEthTimeTrigger `json:"timeTrigger,omitempty"`
}

type wireEthTimeTrigger struct {
	Initial *uint64 `json:"initial,omitempty,string"`
	Every   uint64  `json:"every,string"`
	Until   *uint64 `json:"until,omitempty,string"`
}

type wireNormaliser struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

type wireFilter struct {
	Key        wirePropertyKey `json:"key"`
	Conditions []wireCondition `json:"conditions"`
}

type wirePropertyKey struct {
	Name                string   `json:"name"`
	Type                wireEnum `json:"type"`
	NumberDecimalPlaces *uint64  `json:"numberDecimalPlaces,omitempty,string"`
}

type wireCondition struct {
	Operator wireEnum `json:"operator"`
	Value    string   `json:"value"`
}

// ---- Commands the interface does not describe (plausible bodies) ----

type wireProposalSubmission struct {
	Reference string                `json:"reference"`
	Terms     wireProposalTerms     `json:"terms"`
	Rationale wireProposalRationale `json:"rationale"`
}

type wireProposalTerms struct {
	ClosingTimestamp    int64 `json:"closingTimestamp,string"`
	EnactmentTimestamp  int64 `json:"enactmentTimestamp,string"`
	ValidationTimestamp int64 `json:"validationTimestamp,string"`
	wireChangeMembers
	NewAsset *wireNewAsset `json:"newAsset,omitempty"`
}

type wireNewAsset struct {
	Changes AssetDetails `json:"changes"`
}
