package upstream

// The configuration of markets proposed in governance changes (newMarket,
// newSpotMarket, updateMarket). The risk model is a one-of on each
// configuration: exactly one of Simple and LogNormal is set.

// NewFutureMarketConfig configures a new futures or perpetual market.
type NewFutureMarketConfig struct {
	// DecimalPlaces is the smallest price increment.
	DecimalPlaces Uint64      `json:"decimalPlaces"`
	Instrument    *Instrument `json:"instrument"`
	// LinearSlippageFactor caps the slippage part of maintenance margin,
	// applied to slippage volume.
	LinearSlippageFactor          string                         `json:"linearSlippageFactor"`
	LiquidationStrategy           *LiquidationStrategy           `json:"liquidationStrategy"`
	LiquidityFeeSettings          *LiquidityFeeSettings          `json:"liquidityFeeSettings"`
	LiquidityMonitoringParameters *LiquidityMonitoringParameters `json:"liquidityMonitoringParameters"`
	LiquiditySLAParameters        *SlaParameters                 `json:"liquiditySlaParameters"`
	LogNormal                     *LogNormalRiskModel            `json:"logNormal,omitempty"`
	// LpPriceRange is deprecated in favour of the liquidity SLA parameters;
	// optional, omitted when unset.
	LpPriceRange           *string                      `json:"lpPriceRange,omitempty"`
	MarkPriceConfiguration *CompositePriceConfiguration `json:"markPriceConfiguration"`
	Metadata               []string                     `json:"metadata"`
	// PositionDecimalPlaces is the number of decimal places for order sizes.
	PositionDecimalPlaces     Int64                      `json:"positionDecimalPlaces"`
	PriceMonitoringParameters *PriceMonitoringParameters `json:"priceMonitoringParameters"`
	// QuadraticSlippageFactor caps the slippage part of maintenance margin,
	// applied to squared slippage volume.
	QuadraticSlippageFactor string           `json:"quadraticSlippageFactor"`
	Simple                  *SimpleRiskModel `json:"simple,omitempty"`
	// Successor is set when the market succeeds an existing one.
	Successor *SuccessorConfiguration `json:"successor,omitempty"`
}

// NewSpotMarketConfig configures a new spot market.
type NewSpotMarketConfig struct {
	DecimalPlaces             Uint64                     `json:"decimalPlaces"`
	Instrument                *Instrument                `json:"instrument"`
	LiquidityFeeSettings      *LiquidityFeeSettings      `json:"liquidityFeeSettings"`
	LogNormal                 *LogNormalRiskModel        `json:"logNormal,omitempty"`
	Metadata                  []string                   `json:"metadata"`
	PositionDecimalPlaces     Int64                      `json:"positionDecimalPlaces"`
	PriceMonitoringParameters *PriceMonitoringParameters `json:"priceMonitoringParameters"`
	Simple                    *SimpleRiskModel           `json:"simple,omitempty"`
	SlaParams                 *SlaParameters             `json:"slaParams"`
	TargetStakeParameters     *TargetStakeParameters     `json:"targetStakeParameters"`
}

// UpdateMarketConfig is the new configuration of an existing market.
type UpdateMarketConfig struct {
	Instrument                    *UpdateInstrumentConfiguration `json:"instrument"`
	LinearSlippageFactor          string                         `json:"linearSlippageFactor"`
	LiquidationStrategy           *LiquidationStrategy           `json:"liquidationStrategy"`
	LiquidityFeeSettings          *LiquidityFeeSettings          `json:"liquidityFeeSettings"`
	LiquidityMonitoringParameters *LiquidityMonitoringParameters `json:"liquidityMonitoringParameters"`
	LiquiditySLAParameters        *SlaParameters                 `json:"liquiditySlaParameters"`
	LogNormal                     *LogNormalRiskModel            `json:"logNormal,omitempty"`
	// LpPriceRange is deprecated in favour of the liquidity SLA parameters;
	// optional, omitted when unset.
	LpPriceRange              *string                      `json:"lpPriceRange,omitempty"`
	MarkPriceConfiguration    *CompositePriceConfiguration `json:"markPriceConfiguration"`
	Metadata                  []string                     `json:"metadata"`
	PriceMonitoringParameters *PriceMonitoringParameters   `json:"priceMonitoringParameters"`
	QuadraticSlippageFactor   string                       `json:"quadraticSlippageFactor"`
	Simple                    *SimpleRiskModel             `json:"simple,omitempty"`
}

// Instrument is what a new market trades. Its product is a one-of:
// exactly one of Future, Perpetual and Spot is set.
type Instrument struct {
	// Code is a human-readable short code.
	Code      string     `json:"code"`
	Name      string     `json:"name"`
	Future    *Future    `json:"future,omitempty"`
	Perpetual *Perpetual `json:"perpetual,omitempty"`
	Spot      *Spot      `json:"spot,omitempty"`
}

// UpdateInstrumentConfiguration is the new instrument of an existing
// market. Its product is a one-of: exactly one of Future and Perpetual is set.
type UpdateInstrumentConfiguration struct {
	Code      string                  `json:"code"`
	Name      string                  `json:"name"`
	Future    *UpdateFutureProduct    `json:"future,omitempty"`
	Perpetual *UpdatePerpetualProduct `json:"perpetual,omitempty"`
}

// Future is a futures product.
type Future struct {
	DataSourceSpecBinding               *DataSourceSpecToFutureBinding `json:"dataSourceSpecBinding"`
	DataSourceSpecForSettlementData     *DataSourceDefinition          `json:"dataSourceSpecForSettlementData"`
	DataSourceSpecForTradingTermination *DataSourceDefinition          `json:"dataSourceSpecForTradingTermination"`
	QuoteName                           string                         `json:"quoteName"`
	// SettlementAsset is the asset's ID.
	SettlementAsset string `json:"settlementAsset"`
}

// UpdateFutureProduct is the new futures product of an existing market; it
// has no settlement asset.
type UpdateFutureProduct struct {
	DataSourceSpecBinding               *DataSourceSpecToFutureBinding `json:"dataSourceSpecBinding"`
	DataSourceSpecForSettlementData     *DataSourceDefinition          `json:"dataSourceSpecForSettlementData"`
	DataSourceSpecForTradingTermination *DataSourceDefinition          `json:"dataSourceSpecForTradingTermination"`
	QuoteName                           string                         `json:"quoteName"`
}

// DataSourceSpecToFutureBinding names the data source properties a future uses.
type DataSourceSpecToFutureBinding struct {
	// SettlementDataProperty is the property used as settlement data.
	SettlementDataProperty string `json:"settlementDataProperty"`
	// TradingTerminationProperty is the property that signals the end of trading.
	TradingTerminationProperty string `json:"tradingTerminationProperty"`
}

// Perpetual is a perpetual futures product. The funding-rate fields are
// optional upstream and omitted when unset.
type Perpetual struct {
	// ClampLowerBound and ClampUpperBound, in [-1, 1], clamp the funding rate.
	ClampLowerBound                     string                            `json:"clampLowerBound"`
	ClampUpperBound                     string                            `json:"clampUpperBound"`
	DataSourceSpecBinding               *DataSourceSpecToPerpetualBinding `json:"dataSourceSpecBinding"`
	DataSourceSpecForSettlementData     *DataSourceDefinition             `json:"dataSourceSpecForSettlementData"`
	DataSourceSpecForSettlementSchedule *DataSourceDefinition             `json:"dataSourceSpecForSettlementSchedule"`
	FundingRateLowerBound               *string                           `json:"fundingRateLowerBound,omitempty"`
	FundingRateScalingFactor            *string                           `json:"fundingRateScalingFactor,omitempty"`
	FundingRateUpperBound               *string                           `json:"fundingRateUpperBound,omitempty"`
	// InterestRate is continuously compounded, in [-1, 1].
	InterestRate string `json:"interestRate"`
	// InternalCompositePriceConfiguration is nil when the market's default
	// mark price is used.
	InternalCompositePriceConfiguration *CompositePriceConfiguration `json:"internalCompositePriceConfiguration,omitempty"`
	// MarginFundingFactor, in [0, 1], is the share of upcoming funding
	// liability counted in margin.
	MarginFundingFactor string `json:"marginFundingFactor"`
	QuoteName           string `json:"quoteName"`
	// SettlementAsset is the asset's ID.
	SettlementAsset string `json:"settlementAsset"`
}

// UpdatePerpetualProduct is the new perpetual product of an existing
// market; it has no settlement asset.
type UpdatePerpetualProduct struct {
	ClampLowerBound                     string                            `json:"clampLowerBound"`
	ClampUpperBound                     string                            `json:"clampUpperBound"`
	DataSourceSpecBinding               *DataSourceSpecToPerpetualBinding `json:"dataSourceSpecBinding"`
	DataSourceSpecForSettlementData     *DataSourceDefinition             `json:"dataSourceSpecForSettlementData"`
	DataSourceSpecForSettlementSchedule *DataSourceDefinition             `json:"dataSourceSpecForSettlementSchedule"`
	FundingRateLowerBound               *string                           `json:"fundingRateLowerBound,omitempty"`
	FundingRateScalingFactor            *string                           `json:"fundingRateScalingFactor,omitempty"`
	FundingRateUpperBound               *string                           `json:"fundingRateUpperBound,omitempty"`
	InterestRate                        string                            `json:"interestRate"`
	InternalCompositePriceConfiguration *CompositePriceConfiguration      `json:"internalCompositePriceConfiguration,omitempty"`
	MarginFundingFactor                 string                            `json:"marginFundingFactor"`
	QuoteName                           string                            `json:"quoteName"`
}

// DataSourceSpecToPerpetualBinding names the data source properties a
// perpetual uses.
type DataSourceSpecToPerpetualBinding struct {
	SettlementDataProperty     string `json:"settlementDataProperty"`
	SettlementScheduleProperty string `json:"settlementScheduleProperty"`
}

// Spot is a spot product.
type Spot struct {
	// BaseAsset and QuoteAsset are asset IDs.
	BaseAsset  string `json:"baseAsset"`
	Name       string `json:"name"`
	QuoteAsset string `json:"quoteAsset"`
}

// SuccessorConfiguration links a new market to the market it succeeds.
type SuccessorConfiguration struct {
	ParentMarketID string `json:"parentMarketId"`
	// InsurancePoolFraction, 0 to 1, is the share of the parent's insurance
	// pool carried over.
	InsurancePoolFraction string `json:"insurancePoolFraction"`
}

// PriceMonitoringParameters configures price monitoring auctions.
type PriceMonitoringParameters struct {
	Triggers []PriceMonitoringTrigger `json:"triggers"`
}

// PriceMonitoringTrigger starts an auction when the price moves too far.
type PriceMonitoringTrigger struct {
	// AuctionExtension is in seconds.
	AuctionExtension Int64 `json:"auctionExtension"`
	// Horizon is the projection horizon in seconds.
	Horizon     Int64  `json:"horizon"`
	Probability string `json:"probability"`
}

// LiquidationStrategy says how the network closes out distressed positions.
type LiquidationStrategy struct {
	// DisposalFraction, 0 to 1, is the fraction of the position closed per attempt.
	DisposalFraction string `json:"disposalFraction"`
	// DisposalTimeStep is the number of seconds between attempts.
	DisposalTimeStep Int64 `json:"disposalTimeStep"`
	// FullDisposalSize is the size the network closes at once.
	FullDisposalSize Uint64 `json:"fullDisposalSize"`
	// MaxFractionConsumed, 0 to 1, is the largest fraction of the book's
	// volume within liquidity bounds that may be used.
	MaxFractionConsumed string `json:"maxFractionConsumed"`
}

// LiquidityFeeSettings says how the liquidity fee is set.
type LiquidityFeeSettings struct {
	// FeeConstant is used with METHOD_CONSTANT; omitted otherwise.
	FeeConstant *string            `json:"feeConstant,omitempty"`
	Method      LiquidityFeeMethod `json:"method"`
}

// LiquidityMonitoringParameters configures liquidity monitoring auctions.
type LiquidityMonitoringParameters struct {
	// AuctionExtension is in seconds.
	AuctionExtension      Int64                  `json:"auctionExtension"`
	TargetStakeParameters *TargetStakeParameters `json:"targetStakeParameters"`
	TriggeringRatio       string                 `json:"triggeringRatio"`
}

// TargetStakeParameters configures the target stake of a market.
type TargetStakeParameters struct {
	ScalingFactor Float64 `json:"scalingFactor"`
	// TimeWindow is in seconds.
	TimeWindow Int64 `json:"timeWindow"`
}

// SlaParameters are the liquidity providers' service-level parameters.
type SlaParameters struct {
	CommitmentMinTimeFraction   string `json:"commitmentMinTimeFraction"`
	PerformanceHysteresisEpochs Uint64 `json:"performanceHysteresisEpochs"`
	PriceRange                  string `json:"priceRange"`
	SlaCompetitionFactor        string `json:"slaCompetitionFactor"`
}

// LogNormalRiskModel is the log-normal risk model.
type LogNormalRiskModel struct {
	Params                *LogNormalModelParams `json:"params"`
	RiskAversionParameter Float64               `json:"riskAversionParameter"`
	// Tau is the projection horizon as a fraction of a year.
	Tau Float64 `json:"tau"`
}

// LogNormalModelParams are the parameters of the log-normal risk model.
type LogNormalModelParams struct {
	Mu    Float64 `json:"mu"`
	R     Float64 `json:"r"`
	Sigma Float64 `json:"sigma"`
}

// SimpleRiskModel is the simple risk model's pre-defined constants.
type SimpleRiskModel struct {
	FactorLong           Float64 `json:"factorLong"`
	FactorShort          Float64 `json:"factorShort"`
	MaxMoveUp            Float64 `json:"maxMoveUp"`
	MinMoveDown          Float64 `json:"minMoveDown"`
	ProbabilityOfTrading Float64 `json:"probabilityOfTrading"`
}

// CompositePriceConfiguration configures a mark price or an internal
// composite price from several sources.
type CompositePriceConfiguration struct {
	// CashAmount, in asset decimals, is used for the book-based price.
	CashAmount         string             `json:"cashAmount"`
	CompositePriceType CompositePriceType `json:"compositePriceType"`
	// DataSourcesSpec are extra price sources.
	DataSourcesSpec        []DataSourceDefinition         `json:"dataSourcesSpec"`
	DataSourcesSpecBinding []SpecBindingForCompositePrice `json:"dataSourcesSpecBinding"`
	DecayPower             Uint64                         `json:"decayPower"`
	DecayWeight            string                         `json:"decayWeight"`
	// SourceStalenessTolerance has one entry per source: the trade-based
	// price, the book-based price, then one per oracle source.
	SourceStalenessTolerance []string `json:"sourceStalenessTolerance"`
	SourceWeights            []string `json:"sourceWeights"`
}

// SpecBindingForCompositePrice names the property a price source supplies.
type SpecBindingForCompositePrice struct {
	PriceSourceProperty string `json:"priceSourceProperty"`
}

// UpdateSpotMarketConfiguration is the new configuration of an existing
// spot market: no instrument and no decimal places, which cannot change.
// The risk model is a one-of: exactly one of Simple and LogNormal is set.
type UpdateSpotMarketConfiguration struct {
	Metadata                  []string                   `json:"metadata"`
	PriceMonitoringParameters *PriceMonitoringParameters `json:"priceMonitoringParameters"`
	TargetStakeParameters     *TargetStakeParameters     `json:"targetStakeParameters"`
	Simple                    *SimpleRiskModel           `json:"simple,omitempty"`
	LogNormal                 *LogNormalRiskModel        `json:"logNormal,omitempty"`
	SlaParams                 *SlaParameters             `json:"slaParams"`
	LiquidityFeeSettings      *LiquidityFeeSettings      `json:"liquidityFeeSettings"`
}
