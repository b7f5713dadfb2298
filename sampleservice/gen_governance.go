package sampleservice

import (
	"strings"

	"github.com/tradenet/gateway/upstream"
)

var changeCumulative = cumulateWeights(len(changeKinds), func(i int) int { return changeKinds[i].weight })

// closing returns a proposal's closing time (Unix seconds): a few days after
// the block.
func (c *txCtx) closing() int64 {
	return c.now/1e9 + between(c.r, 2, 7)*86_400 + between(c.r, 0, 3_600)
}

// batchProposal returns a batch proposal with n random changes.
func (c *txCtx) batchProposal(n int) *upstream.BatchProposalSubmission {
	r := c.r
	kinds := make([]changeKind, n)
	for i := range kinds {
		kinds[i] = changeKind(weighted(r, changeCumulative))
	}
	return c.batchProposalOf(kinds...)
}

// batchProposalOf returns a batch proposal with one change of each kind
// given, in order.
func (c *txCtx) batchProposalOf(kinds ...changeKind) *upstream.BatchProposalSubmission {
	b := &upstream.BatchProposalSubmission{
		Reference: c.reference("batch"),
		Terms:     &upstream.BatchProposalTerms{ClosingTimestamp: upstream.UnixSeconds(c.closing()), Changes: []upstream.ProposalChange{}},
	}
	for _, k := range kinds {
		b.Terms.Changes = append(b.Terms.Changes, c.change(int64(b.Terms.ClosingTimestamp), k))
	}
	b.Rationale = c.rationale(kinds)
	return b
}

// change returns one proposal change of kind k, enacted after closing.
func (c *txCtx) change(closing int64, k changeKind) upstream.ProposalChange {
	enact := upstream.UnixSeconds(closing + between(c.r, 0, 3)*86_400)
	return upstream.ProposalChange{EnactmentTimestamp: enact, Change: c.changeOf(k)}
}

// changeAt is change i of a batch proposal, of the member type T.
func changeAt[T upstream.ProposalChangeKind](p *upstream.BatchProposalSubmission, i int) T {
	return p.Terms.Changes[i].Change.(T)
}

func (c *txCtx) newMarket() *upstream.NewMarket {
	r := c.r
	return &upstream.NewMarket{Changes: c.newMarketConfig(marketOptions{perpetual: chance(r, 1, 2), logNormal: chance(r, 3, 4)})}
}

func (c *txCtx) updateNetworkParameter() *upstream.UpdateNetworkParameter {
	p := pick(c.r, networkParameters)
	return &upstream.UpdateNetworkParameter{Changes: &upstream.NetworkParameter{Key: p[0], Value: p[1]}}
}

// proposalSubmission returns a single (not batch) proposal.
func (c *txCtx) proposalSubmission() *upstream.ProposalSubmission {
	r := c.r
	p := c.newProposal()
	if chance(r, 1, 8) {
		c.newAsset(p, true)
		return p
	}
	c.proposalChange(p, changeKind(weighted(r, changeCumulative)))
	return p
}

// newProposal returns a single proposal's reference and times, without a
// change.
func (c *txCtx) newProposal() *upstream.ProposalSubmission {
	closing := c.closing()
	return &upstream.ProposalSubmission{
		Reference: c.reference("proposal"),
		Terms: &upstream.ProposalTerms{
			ClosingTimestamp:   upstream.UnixSeconds(closing),
			EnactmentTimestamp: upstream.UnixSeconds(closing + between(c.r, 0, 2)*86_400),
		},
		Rationale: &upstream.ProposalRationale{},
	}
}

// proposalChange makes p a proposal of change kind k. A free-form proposal
// enacts nothing: its enactment time is 0.
func (c *txCtx) proposalChange(p *upstream.ProposalSubmission, k changeKind) {
	p.Terms.Change = c.changeOf(k)
	p.Rationale = c.rationale([]changeKind{k})
	if k == changeNewFreeform {
		p.Terms.EnactmentTimestamp = 0
	}
}

// newAsset makes p a new-asset proposal of a token-contract (erc20) or
// built-in asset. New assets are proposed alone (not in batches) and
// validated first.
func (c *txCtx) newAsset(p *upstream.ProposalSubmission, erc20 bool) {
	r := c.r
	p.Terms.ValidationTimestamp = upstream.UnixSeconds(c.now/1e9 + 3_600)
	if !erc20 {
		p.Terms.Change = &upstream.NewAsset{Changes: &upstream.AssetDetails{
			Name: "tAVAX TEST", Symbol: "tAVAX", Decimals: 5, Quantum: "1",
			BuiltinAsset: &upstream.BuiltinAsset{MaxFaucetAmountMint: "1000000000"},
		}}
		p.Rationale = &upstream.ProposalRationale{Title: "Add the tAVAX test asset", Description: "A faucet asset for testing AVAX markets."}
		return
	}
	p.Terms.Change = &upstream.NewAsset{Changes: &upstream.AssetDetails{
		Name: "Wrapped Dogecoin", Symbol: "WDOGE", Decimals: 8, Quantum: "1000000000",
		ERC20: &upstream.ERC20{ContractAddress: ethAddress(r), LifetimeLimit: "1000000000000000", WithdrawThreshold: "100000000000"},
	}}
	p.Rationale = &upstream.ProposalRationale{Title: "List Wrapped Dogecoin (WDOGE)", Description: "Lists WDOGE as a collateral asset for future markets."}
}

var networkParameters = [][2]string{
	{"market.fee.factors.makerFee", "0.0002"},
	{"market.fee.factors.infrastructureFee", "0.0005"},
	{"governance.proposal.market.minEnact", "48h0m0s"},
	{"governance.proposal.updateNetParam.requiredMajority", "0.66"},
	{"spam.pow.difficulty", "15"},
	{"network.markPriceUpdateMaximumFrequency", "5s"},
	{"rewards.vesting.baseRate", "0.0055"},
	{"validators.epoch.length", "24h0m0s"},
	{"referralProgram.maxReferralTiers", "10"},
	{"transfer.fee.factor", "0.001"},
	{"reward.staking.delegation.minimumValidatorStake", "3000000000000000000000"},
	{"limits.markets.maxPeggedOrders", "1500"},
	{"blockchains.ethereumRpcAndEvmCompatDataSourcesConfig", `{"configs":[{"network_id":"100","chain_id":"100","confirmations":3,"name":"Gnosis Chain"}]}`},
	{"market.liquidity.providersFeeCalculationTimeStep", "1m0s"},
}

// rationale returns a title and description fitting the change kinds.
func (c *txCtx) rationale(kinds []changeKind) *upstream.ProposalRationale {
	r := c.r
	var title string
	if len(kinds) == 1 {
		title = pick(r, changeKinds[kinds[0]].titles)
	} else {
		title = pick(r, []string{"Quarterly parameter review", "Market housekeeping batch", "Launch of the spring incentive programme", "Fee and liquidity adjustments", "Governance omnibus #" + itoa(between(r, 3, 99))})
	}
	var d strings.Builder
	for range 1 + r.IntN(4) {
		if d.Len() > 0 {
			d.WriteString(" ")
		}
		d.WriteString(pick(r, rationaleSentences))
	}
	return &upstream.ProposalRationale{Title: title, Description: d.String()}
}

var rationaleSentences = []string{
	"This proposal follows the discussion on the community forum.",
	"The parameters were back-tested against the last ninety days of market data.",
	"Liquidity providers asked for a wider price range during volatile sessions.",
	"Fees collected will be redistributed to makers through the reward accounts.",
	"See https://community.example/t/proposal for the full analysis & the votes of the working group.",
	"No change is required from traders; open positions are unaffected.",
	"The oracle moves to a contract that publishes every eight hours.",
	"Funding is capped so that a single epoch cannot drain the treasury.",
	"Le comité a validé les paramètres à l'unanimité.",
	"Parameters: `triggeringRatio` < 1 and `auctionExtension` > 0.",
}

// derivativeMarket returns a future or perpetual market.
func (c *txCtx) derivativeMarket() *genMarket {
	for {
		m := &c.g.markets[c.r.IntN(len(c.g.markets))]
		if m.product != productSpot {
			return m
		}
	}
}

func (c *txCtx) spotMarket() *genMarket {
	for {
		m := &c.g.markets[c.r.IntN(len(c.g.markets))]
		if m.product == productSpot {
			return m
		}
	}
}

// settlementAsset returns an asset id markets settle in: mostly stablecoins.
func (c *txCtx) settlementAsset() string {
	sym := pick(c.r, []string{"USDT", "USDT", "USDC", "DAI", "tDAI", "tUSDC"})
	return c.g.assets[c.g.asset(sym)].ID
}

func (c *txCtx) updateAsset(ai int) *upstream.UpdateAsset {
	r := c.r
	a := c.g.assets[ai]
	u := &upstream.UpdateAsset{AssetID: a.ID, Changes: &upstream.UpdateAssetConfiguration{Quantum: a.Details.Quantum}}
	if chance(r, 1, 2) {
		u.Changes.Quantum = a.Details.Quantum + "0"
	}
	// Only a token-contract asset has source details to update.
	if a.Details.ERC20 != nil {
		u.Changes.ERC20 = &upstream.UpdateERC20{
			LifetimeLimit:     scaled(r, between(r, 1, 100)*100_000, int(a.Details.Decimals)),
			WithdrawThreshold: scaled(r, between(r, 1, 100)*1_000, int(a.Details.Decimals)),
		}
	}
	return u
}

// marketOptions chooses the shapes of a new market.
type marketOptions struct {
	perpetual  bool
	logNormal  bool
	successor  bool
	feeMethod  int    // 1 + index into enumLiquidityFee; 0 draws
	priceType  int    // 1 + index into enumCompositePrice; 0 draws
	settlement string // settlement asset id; "" draws
	ethOracle  bool   // settle from an Ethereum contract call
	until      bool   // the Ethereum time trigger has an end
	coverage   int    // > 0: cycle filter enums from this offset
}

// newMarketConfig returns a new future or perpetual market.
func (c *txCtx) newMarketConfig(o marketOptions) *upstream.NewFutureMarketConfig {
	r := c.r
	base := pick(r, []string{"DOGE", "AVAX", "ARB", "OP", "TIA", "SUI", "PEPE", "NEAR", "XAU", "EUR"})
	quote := pick(r, []string{"USDT", "USDC", "USD"})
	if o.settlement == "" {
		o.settlement = c.settlementAsset()
	}
	if !o.ethOracle && o.coverage == 0 && chance(r, 1, 3) {
		o.ethOracle = true
		o.until = chance(r, 1, 2)
	}
	cfg := &upstream.NewFutureMarketConfig{
		DecimalPlaces:                 upstream.Uint64(r.IntN(6)),
		Metadata:                      []string{"base:" + base, "quote:" + quote, "class:fx/crypto"},
		PriceMonitoringParameters:     c.priceMonitoring(),
		LiquidityMonitoringParameters: c.liquidityMonitoring(),
		PositionDecimalPlaces:         upstream.Int64(r.IntN(5)) - 1,
		LpPriceRange:                  optional(pick(r, []string{"", "0.5", "0.1"})),
		LinearSlippageFactor:          pick(r, []string{"0.001", "0.01", "0.1"}),
		QuadraticSlippageFactor:       pick(r, []string{"0", "0.000001"}),
		LiquiditySLAParameters:        c.slaParameters(),
		LiquidityFeeSettings:          c.liquidityFeeSettings(o.feeMethod - 1),
		LiquidationStrategy:           c.liquidationStrategy(),
		MarkPriceConfiguration:        c.compositePrice(o.priceType-1, o.coverage),
	}
	if chance(r, 1, 5) {
		cfg.Metadata = []string{}
	}
	if o.perpetual {
		cfg.Instrument = &upstream.Instrument{Code: base + "/" + quote + "-PERP", Name: base + " / " + quote + " Perpetual", Perpetual: c.perpetual(o)}
	} else {
		cfg.Instrument = &upstream.Instrument{Code: base + "/" + quote + "-JUN24", Name: base + " / " + quote + " Future (Jun 2024)", Future: c.future(o)}
	}
	if o.logNormal {
		cfg.LogNormal = c.logNormal()
	} else {
		cfg.Simple = c.simple()
	}
	if o.successor {
		cfg.Successor = &upstream.SuccessorConfiguration{ParentMarketID: c.derivativeMarket().id, InsurancePoolFraction: pick(r, []string{"1", "0.5", "0"})}
	}
	return cfg
}

// future returns a future settled in o.settlement (none for an update).
func (c *txCtx) future(o marketOptions) *upstream.Future {
	r := c.r
	prop := "prices." + pick(r, []string{"BTC", "ETH", "SOL", "XAU"}) + ".value"
	f := &upstream.Future{SettlementAsset: o.settlement, QuoteName: pick(r, []string{"USDT", "USDC", "USD"})}
	f.DataSourceSpecForSettlementData = c.settlementSource(prop, o)
	termination := "vegaprotocol.builtin.timestamp"
	if chance(r, 1, 2) {
		f.DataSourceSpecForTradingTermination = c.internalTimeSource(o.coverage)
	} else {
		termination = "trading.terminated"
		f.DataSourceSpecForTradingTermination = c.oracleSource(termination, "TYPE_BOOLEAN", o.coverage)
	}
	f.DataSourceSpecBinding = &upstream.DataSourceSpecToFutureBinding{SettlementDataProperty: prop, TradingTerminationProperty: termination}
	return f
}

// settlementSource is a product's settlement data for prop: an Ethereum
// call, or an oracle signed by keys or addresses.
func (c *txCtx) settlementSource(prop string, o marketOptions) *upstream.DataSourceDefinition {
	if o.ethOracle {
		return c.ethOracleSource(prop, o.until, o.coverage)
	}
	return c.oracleSource(prop, "TYPE_INTEGER", o.coverage)
}

// perpetual returns a perpetual settled in o.settlement (none for an
// update).
func (c *txCtx) perpetual(o marketOptions) *upstream.Perpetual {
	r := c.r
	prop := pick(r, []string{"btc.price", "eth.price", "sol.price"})
	p := &upstream.Perpetual{
		SettlementAsset:                     o.settlement,
		QuoteName:                           pick(r, []string{"USDT", "USDC", "USD"}),
		MarginFundingFactor:                 pick(r, []string{"0", "0.5", "0.9", "1"}),
		InterestRate:                        pick(r, []string{"0", "0.0001095", "-0.01"}),
		ClampLowerBound:                     pick(r, []string{"-0.0005", "0", "-1"}),
		ClampUpperBound:                     pick(r, []string{"0.0005", "0", "1"}),
		DataSourceSpecForSettlementSchedule: c.internalTimeTriggerSource(chance(r, 3, 4), o.coverage),
		DataSourceSpecBinding:               &upstream.DataSourceSpecToPerpetualBinding{SettlementDataProperty: prop, SettlementScheduleProperty: "vegaprotocol.builtin.timetrigger"},
		FundingRateScalingFactor:            optional(pick(r, []string{"1", "0.5", ""})),
		FundingRateLowerBound:               optional(pick(r, []string{"-0.005", "-0.001", ""})),
		FundingRateUpperBound:               optional(pick(r, []string{"0.005", "0.001", ""})),
	}
	p.DataSourceSpecForSettlementData = c.settlementSource(prop, o)
	if chance(r, 1, 2) {
		p.InternalCompositePriceConfiguration = c.compositePrice(o.priceType-1, o.coverage)
	}
	return p
}

func (c *txCtx) updateMarket(m *genMarket) *upstream.UpdateMarket {
	r := c.r
	o := marketOptions{perpetual: m.product == productPerpetual, ethOracle: chance(r, 1, 3), until: chance(r, 1, 2)}
	cfg := &upstream.UpdateMarketConfig{
		Instrument:                    &upstream.UpdateInstrumentConfiguration{Code: m.code, Name: m.name},
		Metadata:                      []string{"quote:" + m.quoteName},
		PriceMonitoringParameters:     c.priceMonitoring(),
		LiquidityMonitoringParameters: c.liquidityMonitoring(),
		LpPriceRange:                  nil,
		LinearSlippageFactor:          pick(r, []string{"0.001", "0.01"}),
		QuadraticSlippageFactor:       "0",
		LiquiditySLAParameters:        c.slaParameters(),
		LiquidityFeeSettings:          c.liquidityFeeSettings(-1),
		LiquidationStrategy:           c.liquidationStrategy(),
		MarkPriceConfiguration:        c.compositePrice(-1, 0),
	}
	if o.perpetual {
		p := c.perpetual(o)
		cfg.Instrument.Perpetual = &upstream.UpdatePerpetualProduct{
			ClampLowerBound: p.ClampLowerBound, ClampUpperBound: p.ClampUpperBound,
			DataSourceSpecBinding: p.DataSourceSpecBinding, DataSourceSpecForSettlementData: p.DataSourceSpecForSettlementData,
			DataSourceSpecForSettlementSchedule: p.DataSourceSpecForSettlementSchedule,
			FundingRateLowerBound:               p.FundingRateLowerBound, FundingRateScalingFactor: p.FundingRateScalingFactor, FundingRateUpperBound: p.FundingRateUpperBound,
			InterestRate: p.InterestRate, InternalCompositePriceConfiguration: p.InternalCompositePriceConfiguration,
			MarginFundingFactor: p.MarginFundingFactor, QuoteName: p.QuoteName,
		}
	} else {
		f := c.future(o)
		cfg.Instrument.Future = &upstream.UpdateFutureProduct{
			DataSourceSpecBinding: f.DataSourceSpecBinding, DataSourceSpecForSettlementData: f.DataSourceSpecForSettlementData,
			DataSourceSpecForTradingTermination: f.DataSourceSpecForTradingTermination, QuoteName: f.QuoteName,
		}
	}
	cfg.Simple, cfg.LogNormal = c.riskModel()
	if chance(r, 1, 6) {
		cfg.LiquidationStrategy = nil
	}
	return &upstream.UpdateMarket{MarketID: m.id, Changes: cfg}
}

// newSpotMarket returns a new spot market; base and quote < 0 draw assets.
func (c *txCtx) newSpotMarket(base, quote int) *upstream.NewSpotMarket {
	r := c.r
	if base < 0 {
		base = c.g.asset(pick(r, []string{"WETH", "WBTC", "VEGA", "LINK", "UNI", "ARB"}))
	}
	if quote < 0 {
		quote = c.g.asset(pick(r, []string{"USDT", "USDC"}))
	}
	b, q := c.g.assets[base], c.g.assets[quote]
	cfg := &upstream.NewSpotMarketConfig{
		Instrument: &upstream.Instrument{
			Code: b.Details.Symbol + "/" + q.Details.Symbol,
			Name: b.Details.Name + " / " + q.Details.Name,
			Spot: &upstream.Spot{BaseAsset: b.ID, QuoteAsset: q.ID, Name: b.Details.Symbol + "/" + q.Details.Symbol},
		},
		DecimalPlaces:             upstream.Uint64(1 + r.IntN(4)),
		Metadata:                  []string{"base:" + b.Details.Symbol, "quote:" + q.Details.Symbol, "class:spot"},
		PriceMonitoringParameters: c.priceMonitoring(),
		TargetStakeParameters:     c.targetStake(),
		PositionDecimalPlaces:     upstream.Int64(r.IntN(4)),
		SlaParams:                 c.slaParameters(),
		LiquidityFeeSettings:      c.liquidityFeeSettings(-1),
	}
	cfg.Simple, cfg.LogNormal = c.riskModel()
	return &upstream.NewSpotMarket{Changes: cfg}
}

func (c *txCtx) updateSpotMarket() *upstream.UpdateSpotMarket {
	m := c.spotMarket()
	cfg := &upstream.UpdateSpotMarketConfiguration{
		Metadata:                  []string{},
		PriceMonitoringParameters: c.priceMonitoring(),
		TargetStakeParameters:     c.targetStake(),
		SlaParams:                 c.slaParameters(),
		LiquidityFeeSettings:      c.liquidityFeeSettings(-1),
	}
	cfg.Simple, cfg.LogNormal = c.riskModel()
	return &upstream.UpdateSpotMarket{MarketID: m.id, Changes: cfg}
}

// updateMarketState returns a market state change of the given type (an
// index into enumMarketState), with or without a settlement price.
func (c *txCtx) updateMarketState(updateType int, withPrice bool) *upstream.UpdateMarketState {
	m := c.derivativeMarket()
	u := &upstream.UpdateMarketState{Changes: &upstream.UpdateMarketStateConfiguration{MarketID: m.id, UpdateType: upstream.MarketStateUpdateType(enumMarketState[updateType])}}
	if withPrice {
		u.Changes.Price = ptr(utoa(m.price))
	}
	return u
}

// programPeriod draws a reward program's end (Unix seconds, a month to
// half a year away) and window length (epochs).
func (c *txCtx) programPeriod() (upstream.UnixSeconds, upstream.Uint64) {
	end := upstream.UnixSeconds(c.now/1e9 + between(c.r, 30, 180)*86_400)
	return end, upstream.Uint64(between(c.r, 1, 30))
}

func (c *txCtx) updateReferralProgram() *upstream.UpdateReferralProgram {
	r := c.r
	ch := &upstream.ReferralProgramChanges{BenefitTiers: []upstream.BenefitTier{}, StakingTiers: []upstream.StakingTier{}}
	ch.EndOfProgramTimestamp, ch.WindowLength = c.programPeriod()
	for i := range 1 + r.IntN(4) {
		ch.BenefitTiers = append(ch.BenefitTiers, upstream.BenefitTier{
			MinimumRunningNotionalTakerVolume: itoa(int64(i+1) * 10_000),
			MinimumEpochs:                     itoa(int64(i*2 + 1)),
			ReferralRewardFactor:              "0.0" + itoa(int64(i+1)),
			ReferralDiscountFactor:            "0.0" + itoa(int64(i+1)),
		})
	}
	for i := range r.IntN(3) {
		ch.StakingTiers = append(ch.StakingTiers, upstream.StakingTier{MinimumStakedTokens: scaled(r, int64(i+1)*1000, 18), ReferralRewardMultiplier: itoa(int64(i + 1))})
	}
	return &upstream.UpdateReferralProgram{Changes: ch}
}

func (c *txCtx) updateVolumeDiscountProgram() *upstream.UpdateVolumeDiscountProgram {
	r := c.r
	ch := &upstream.VolumeDiscountProgramChanges{BenefitTiers: []upstream.VolumeBenefitTier{}}
	ch.EndOfProgramTimestamp, ch.WindowLength = c.programPeriod()
	for i := range 1 + r.IntN(4) {
		ch.BenefitTiers = append(ch.BenefitTiers, upstream.VolumeBenefitTier{
			MinimumRunningNotionalTakerVolume: itoa(int64(i+1) * 100_000),
			VolumeDiscountFactor:              "0.0" + itoa(int64(i+1)),
		})
	}
	return &upstream.UpdateVolumeDiscountProgram{Changes: ch}
}

// ---- Shared configuration shapes ----

func (c *txCtx) priceMonitoring() *upstream.PriceMonitoringParameters {
	r := c.r
	p := &upstream.PriceMonitoringParameters{Triggers: []upstream.PriceMonitoringTrigger{}}
	for i := range r.IntN(4) {
		p.Triggers = append(p.Triggers, upstream.PriceMonitoringTrigger{
			Horizon:          upstream.Int64(pick(r, []int{60, 360, 1440, 4320, 43200})) * upstream.Int64(i+1),
			Probability:      pick(r, []string{"0.9999", "0.99999", "0.9999999"}),
			AuctionExtension: upstream.Int64(pick(r, []int{60, 120, 300, 600})),
		})
	}
	return p
}

func (c *txCtx) targetStake() *upstream.TargetStakeParameters {
	return &upstream.TargetStakeParameters{TimeWindow: upstream.Int64(pick(c.r, []int{3600, 86400, 604800})), ScalingFactor: pick(c.r, []upstream.Float64{1, 0.05, 10, 2.5})}
}

func (c *txCtx) liquidityMonitoring() *upstream.LiquidityMonitoringParameters {
	return &upstream.LiquidityMonitoringParameters{
		TargetStakeParameters: c.targetStake(),
		TriggeringRatio:       pick(c.r, []string{"0", "0.7", "0.9"}),
		AuctionExtension:      upstream.Int64(pick(c.r, []int{0, 1, 60})),
	}
}

func (c *txCtx) slaParameters() *upstream.SlaParameters {
	r := c.r
	return &upstream.SlaParameters{
		PriceRange:                  pick(r, []string{"0.01", "0.03", "0.05"}),
		CommitmentMinTimeFraction:   pick(r, []string{"0.5", "0.85", "0.95"}),
		PerformanceHysteresisEpochs: upstream.Uint64(r.IntN(5)),
		SlaCompetitionFactor:        pick(r, []string{"0.2", "0.5", "1"}),
	}
}

// liquidityFeeSettings returns fee settings with the given method (an index
// into enumLiquidityFee; < 0 draws one).
func (c *txCtx) liquidityFeeSettings(method int) *upstream.LiquidityFeeSettings {
	r := c.r
	if method < 0 {
		method = 1 + r.IntN(3)
	}
	s := &upstream.LiquidityFeeSettings{Method: upstream.LiquidityFeeMethod(enumLiquidityFee[method])}
	if enumLiquidityFee[method] == "METHOD_CONSTANT" {
		s.FeeConstant = ptr(pick(r, []string{"0.0001", "0.0005", "0.001"}))
	}
	return s
}

func (c *txCtx) liquidationStrategy() *upstream.LiquidationStrategy {
	r := c.r
	return &upstream.LiquidationStrategy{
		DisposalTimeStep:    upstream.Int64(pick(r, []int{1, 5, 10, 30})),
		DisposalFraction:    pick(r, []string{"0.1", "0.25", "1"}),
		FullDisposalSize:    upstream.Uint64(pick(r, []int{0, 50, 1000, 1000000})),
		MaxFractionConsumed: pick(r, []string{"0.01", "0.05", "0.1"}),
	}
}

// riskModel draws a market's risk model, log-normal or simple (the other
// nil: they are a one-of).
func (c *txCtx) riskModel() (*upstream.SimpleRiskModel, *upstream.LogNormalRiskModel) {
	if chance(c.r, 1, 2) {
		return nil, c.logNormal()
	}
	return c.simple(), nil
}

func (c *txCtx) simple() *upstream.SimpleRiskModel {
	r := c.r
	return &upstream.SimpleRiskModel{
		FactorLong:           pick(r, []upstream.Float64{0.15, 0.1, 0.25}),
		FactorShort:          pick(r, []upstream.Float64{0.25, 0.2, 0.5}),
		MaxMoveUp:            pick(r, []upstream.Float64{10, 100, 1.5}),
		MinMoveDown:          pick(r, []upstream.Float64{-5, -100, -1.5}),
		ProbabilityOfTrading: pick(r, []upstream.Float64{0.1, 0.5, 1}),
	}
}

func (c *txCtx) logNormal() *upstream.LogNormalRiskModel {
	r := c.r
	return &upstream.LogNormalRiskModel{
		RiskAversionParameter: pick(r, []upstream.Float64{0.0001, 0.001, 0.01}),
		Tau:                   pick(r, []upstream.Float64{0.0001140771161, 0.000190129, 0.0003}),
		Params: &upstream.LogNormalModelParams{
			Mu:    pick(r, []upstream.Float64{0, 0.05}),
			R:     pick(r, []upstream.Float64{0, 0.016, -0.01}),
			Sigma: pick(r, []upstream.Float64{0.8, 1.5, 0.25, 3}),
		},
	}
}

// compositePrice returns a composite price configuration of the given type
// (an index into enumCompositePrice; < 0 draws one). Weighted and median
// prices carry oracle sources.
func (c *txCtx) compositePrice(priceType int, coverage int) *upstream.CompositePriceConfiguration {
	r := c.r
	if priceType < 0 {
		priceType = 1 + r.IntN(3)
	}
	p := &upstream.CompositePriceConfiguration{
		DecayWeight:              pick(r, []string{"0", "0.5", "1"}),
		DecayPower:               upstream.Uint64(1 + r.IntN(3)),
		CashAmount:               pick(r, []string{"0", "5000000", "100000000"}),
		SourceWeights:            []string{},
		SourceStalenessTolerance: []string{},
		CompositePriceType:       upstream.CompositePriceType(enumCompositePrice[priceType]),
		DataSourcesSpec:          []upstream.DataSourceDefinition{},
		DataSourcesSpecBinding:   []upstream.SpecBindingForCompositePrice{},
	}
	if enumCompositePrice[priceType] == "COMPOSITE_PRICE_TYPE_LAST_TRADE" {
		return p
	}
	p.SourceWeights = append(p.SourceWeights, "0", "0")
	p.SourceStalenessTolerance = append(p.SourceStalenessTolerance, "1m0s", "1m0s")
	for i := range 1 + r.IntN(2) {
		prop := pick(r, []string{"btc.price", "eth.price", "index.price"})
		var ds *upstream.DataSourceDefinition
		if i == 0 && chance(r, 2, 3) {
			ds = c.ethOracleSource(prop, chance(r, 1, 2), coverage)
		} else {
			ds = c.oracleSource(prop, "TYPE_INTEGER", coverage)
		}
		p.DataSourcesSpec = append(p.DataSourcesSpec, *ds)
		p.DataSourcesSpecBinding = append(p.DataSourcesSpecBinding, upstream.SpecBindingForCompositePrice{PriceSourceProperty: prop})
		p.SourceWeights = append(p.SourceWeights, "1")
		p.SourceStalenessTolerance = append(p.SourceStalenessTolerance, "10m0s")
	}
	return p
}

// ---- Data sources ----

// conditions returns one or two conditions; with coverage > 0 the operators
// cycle through every value from that offset.
func (c *txCtx) conditions(value string, coverage int) []upstream.Condition {
	r := c.r
	if coverage > 0 {
		out := []upstream.Condition{}
		for i := range len(enumConditionOp) {
			out = append(out, upstream.Condition{Operator: upstream.ConditionOperator(enumConditionOp[(coverage+i)%len(enumConditionOp)]), Value: value})
		}
		return out
	}
	out := []upstream.Condition{{Operator: upstream.ConditionOperator(enumConditionOp[1+r.IntN(len(enumConditionOp)-1)]), Value: value}}
	if chance(r, 1, 4) {
		out = append(out, upstream.Condition{Operator: "OPERATOR_LESS_THAN", Value: "99999999999"})
	}
	return out
}

// filter returns a filter on a property of the given type.
func (c *txCtx) filter(name, typ string, coverage int) upstream.Filter {
	f := upstream.Filter{Key: &upstream.PropertyKey{Name: name, Type: upstream.PropertyKeyType(typ)}}
	switch typ {
	case "TYPE_INTEGER", "TYPE_DECIMAL":
		f.Key.NumberDecimalPlaces = ptr(upstream.Uint64(c.r.IntN(9)))
		f.Conditions = c.conditions("0", coverage)
	case "TYPE_BOOLEAN":
		f.Conditions = []upstream.Condition{{Operator: "OPERATOR_EQUALS", Value: "true"}}
	case "TYPE_TIMESTAMP":
		f.Conditions = c.conditions(itoa(c.now/1e9), coverage)
	default:
		f.Conditions = []upstream.Condition{}
	}
	return f
}

// oracleSource returns an external oracle filtered on prop.
func (c *txCtx) oracleSource(prop, typ string, coverage int) *upstream.DataSourceDefinition {
	return c.oracleSourceSigned(prop, typ, coverage, c.r.IntN(3))
}

// oracleSourceSigned returns an external oracle signed by a public key
// (signers 0), an Ethereum address (1) or both (2).
func (c *txCtx) oracleSourceSigned(prop, typ string, coverage int, signers int) *upstream.DataSourceDefinition {
	r := c.r
	spec := &upstream.DataSourceSpecConfiguration{Signers: []upstream.Signer{}, Filters: []upstream.Filter{c.filter(prop, typ, coverage)}}
	switch signers {
	case 0:
		spec.Signers = append(spec.Signers, upstream.Signer{PubKey: &upstream.PubKey{Key: hexID(r)}})
	case 1:
		spec.Signers = append(spec.Signers, upstream.Signer{ETHAddress: &upstream.ETHAddress{Address: ethAddress(r)}})
	default:
		spec.Signers = append(spec.Signers, upstream.Signer{PubKey: &upstream.PubKey{Key: hexID(r)}}, upstream.Signer{ETHAddress: &upstream.ETHAddress{Address: ethAddress(r)}})
	}
	if coverage > 0 {
		// Filters on every property key type.
		for i, t := range enumPropertyKeyType {
			spec.Filters = append(spec.Filters, c.filter("prop."+itoa(int64(i)), t, coverage+i))
		}
	} else if chance(r, 1, 4) {
		spec.Filters = append(spec.Filters, c.filter("prices.timestamp", "TYPE_TIMESTAMP", 0))
	}
	return &upstream.DataSourceDefinition{External: &upstream.DataSourceDefinitionExternal{Oracle: spec}}
}

const chainlinkABI = `[{"inputs":[],"name":"latestAnswer","outputs":[{"internalType":"int256","name":"","type":"int256"}],"stateMutability":"view","type":"function"}]`
const pythABI = `[{"inputs":[{"internalType":"bytes32","name":"id","type":"bytes32"},{"internalType":"uint256","name":"age","type":"uint256"}],"name":"getPriceNoOlderThan","outputs":[{"components":[{"internalType":"int64","name":"price","type":"int64"},{"internalType":"uint64","name":"conf","type":"uint64"},{"internalType":"int32","name":"expo","type":"int32"},{"internalType":"uint256","name":"publishTime","type":"uint256"}],"internalType":"struct PythStructs.Price","name":"price","type":"tuple"}],"stateMutability":"view","type":"function"}]`

// ethOracleSource returns an Ethereum contract call polled on a time
// trigger, with or without an end.
func (c *txCtx) ethOracleSource(prop string, until bool, coverage int) *upstream.DataSourceDefinition {
	r := c.r
	spec := &upstream.EthCallSpec{
		Address:               ethAddress(r),
		ABI:                   chainlinkABI,
		Method:                "latestAnswer",
		Args:                  []upstream.RawJSON{},
		RequiredConfirmations: upstream.Uint64(pick(r, []int{1, 3, 12})),
		Filters:               []upstream.Filter{c.filter(prop, "TYPE_INTEGER", coverage)},
		Normalisers:           []upstream.Normaliser{{Name: prop, Expression: "$[0]"}},
		SourceChainID:         upstream.Uint64(pick(r, []int{1, 100, 42161})),
		Trigger:               &upstream.EthCallTrigger{TimeTrigger: &upstream.EthTimeTrigger{Every: ptr(upstream.Uint64(pick(r, []int{30, 300, 3600})))}},
	}
	if chance(r, 1, 2) {
		c.pythCall(spec, prop)
	}
	tt := spec.Trigger.TimeTrigger
	if chance(r, 2, 3) {
		tt.Initial = ptr(upstream.UnixSeconds(c.now/1e9 + 3_600))
	}
	if until {
		tt.Until = ptr(upstream.UnixSeconds(c.now/1e9 + 180*86_400))
	}
	return &upstream.DataSourceDefinition{External: &upstream.DataSourceDefinitionExternal{EthOracle: spec}}
}

// pythCall makes spec a call of Pyth's price feed for prop.
func (c *txCtx) pythCall(spec *upstream.EthCallSpec, prop string) {
	spec.ABI = pythABI
	spec.Method = "getPriceNoOlderThan"
	spec.Args = []upstream.RawJSON{upstream.RawJSON(`"0x` + hexID(c.r) + `"`), upstream.RawJSON("60")}
	spec.Normalisers = []upstream.Normaliser{{Name: prop, Expression: "$[0].price"}, {Name: prop + ".publishTime", Expression: "$[0].publishTime"}}
}

// internalTimeSource returns the network's clock, firing at expiry.
func (c *txCtx) internalTimeSource(coverage int) *upstream.DataSourceDefinition {
	expiry := c.now/1e9 + between(c.r, 30, 120)*86_400
	conds := []upstream.Condition{{Operator: "OPERATOR_GREATER_THAN_OR_EQUAL", Value: itoa(expiry)}}
	if coverage > 0 {
		conds = c.conditions(itoa(expiry), coverage)
	}
	return &upstream.DataSourceDefinition{Internal: &upstream.DataSourceDefinitionInternal{Time: &upstream.DataSourceSpecConfigurationTime{Conditions: conds}}}
}

// internalTimeTriggerSource returns a funding schedule: every 8 hours, from
// an initial time or from now.
func (c *txCtx) internalTimeTriggerSource(withInitial bool, coverage int) *upstream.DataSourceDefinition {
	r := c.r
	trig := upstream.InternalTimeTrigger{Every: upstream.Int64(pick(r, []int{3600, 14400, 28800}))}
	if withInitial {
		trig.Initial = ptr(upstream.UnixSeconds(c.now/1e9/3600*3600 + 3600))
	}
	tt := &upstream.DataSourceSpecConfigurationTimeTrigger{
		Conditions: []upstream.Condition{{Operator: "OPERATOR_GREATER_THAN_OR_EQUAL", Value: "0"}},
		Triggers:   []upstream.InternalTimeTrigger{trig},
	}
	if coverage > 0 {
		tt.Conditions = c.conditions("0", coverage)
	}
	return &upstream.DataSourceDefinition{Internal: &upstream.DataSourceDefinitionInternal{TimeTrigger: tt}}
}

// ---- Governance transfers ----

// transferOptions chooses the shape of a governance transfer. Index fields
// are 1-based into their enum lists; 0 draws.
type transferOptions struct {
	source, destination int // enumAccountType
	transferType        int
	oneOff              bool
	recurring           bool
	noDispatch          bool
	metric              int
	distribution        int
	entity, individual  int
	asset               string
}

// governanceTransfer returns a governance transfer: from the network
// treasury or an insurance pool into a party's account, a reward pool or a
// market's insurance pool.
func (c *txCtx) governanceTransfer(o transferOptions) *upstream.GovernanceTransfer {
	r := c.r
	vega := c.g.assets[c.g.asset("VEGA")]
	t := &upstream.GovernanceTransfer{
		SourceType:        "ACCOUNT_TYPE_NETWORK_TREASURY",
		TransferType:      upstream.GovernanceTransferType(enumTransferType[1+r.IntN(2)]),
		Asset:             vega.ID,
		Amount:            scaled(r, between(r, 1, 500)*1000, 18),
		FractionOfBalance: pick(r, []string{"0.1", "0.05", "1", "0.5"}),
		DestinationType:   "ACCOUNT_TYPE_GENERAL",
	}
	if o.asset != "" {
		t.Asset = o.asset
	}
	if o.transferType != 0 {
		t.TransferType = upstream.GovernanceTransferType(enumTransferType[o.transferType-1])
	}
	if chance(r, 1, 4) && o.source == 0 {
		t.SourceType = "ACCOUNT_TYPE_INSURANCE"
		t.Source = c.derivativeMarket().id
	}
	if o.source != 0 {
		t.SourceType = upstream.AccountType(enumAccountType[o.source-1])
		if enumAccountType[o.source-1] == "ACCOUNT_TYPE_INSURANCE" {
			t.Source = c.derivativeMarket().id
		}
	}
	recurring := o.recurring || (!o.oneOff && chance(r, 1, 2))
	metric := o.metric
	if metric == 0 {
		metric = 1 + r.IntN(len(enumDispatchMetric)-1)
	} else {
		metric--
	}
	switch {
	case o.destination != 0:
		t.DestinationType = upstream.AccountType(enumAccountType[o.destination-1])
	case recurring && !o.noDispatch:
		t.DestinationType = upstream.AccountType(rewardAccountFor(metric))
	case chance(r, 1, 3):
		t.DestinationType = "ACCOUNT_TYPE_INSURANCE"
	}
	switch t.DestinationType {
	case "ACCOUNT_TYPE_GENERAL", "ACCOUNT_TYPE_VESTING_REWARDS", "ACCOUNT_TYPE_VESTED_REWARDS":
		t.Destination = c.g.randomParty(r)
	case "ACCOUNT_TYPE_INSURANCE", "ACCOUNT_TYPE_MARGIN", "ACCOUNT_TYPE_BOND":
		t.Destination = c.derivativeMarket().id
	}
	if !recurring {
		t.OneOff = &upstream.OneOffTransfer{DeliverOn: 0}
		if chance(r, 1, 2) {
			t.OneOff.DeliverOn = upstream.UnixNanos((c.now/1e9 + between(r, 7, 30)*86_400) * 1e9)
		}
		return t
	}
	epoch := c.g.epochAt(c.now)
	rec := &upstream.RecurringTransfer{StartEpoch: upstream.Uint64(epoch + 7)}
	if chance(r, 2, 3) {
		rec.EndEpoch = ptr(upstream.Uint64(epoch + 7 + uint64(between(r, 0, 90))))
	}
	if !o.noDispatch {
		distribution := o.distribution
		if distribution == 0 {
			distribution = -1
		} else {
			distribution--
		}
		d := c.dispatchStrategy(metric, distribution)
		if o.entity != 0 {
			d.EntityScope = upstream.EntityScope(enumEntityScope[o.entity-1])
		}
		if o.individual != 0 {
			d.IndividualScope = upstream.IndividualScope(enumIndividualScope[o.individual-1])
		}
		if o.asset != "" {
			d.AssetForMetric = o.asset
		}
		rec.DispatchStrategy = d
	}
	t.Recurring = rec
	return t
}
