package sampleservice

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tradenet/gateway/upstream"
)

// specialSpec is a transaction built on purpose rather than drawn: one of
// each command and change kind, the edge cases and the shapes that make
// every enum value and nested shape appear in the default dataset. Its
// names become keys of Dataset.Notable.
type specialSpec struct {
	names   []string
	kind    cmdKind
	code    uint8
	version string
	// typeName, when set, is the explorer's type string instead of the
	// kind's: a string older cores wrote, or the type of a kind the
	// explorer does not know.
	typeName string
	// noReceiver: a transfer into a reward pool, not to another party.
	noReceiver bool
	build      func(c *txCtx) upstream.CommandKind
}

// Lengths of the long-rationale edge case, in Unicode code points.
const (
	maxDescriptionChars = 20_000
	maxTitleChars       = 100
)

// specialSpecs lists the notable transactions, in the order they are laid
// out over the dataset.
func specialSpecs() []specialSpec {
	var s []specialSpec

	// One transaction of each command kind, with a drawn body.
	for k := range numCmdKinds {
		names := []string{"command." + cmdKinds[k].member}
		if k == kindTransfer {
			names = append(names, "parties.receiver")
		}
		s = append(s, specialSpec{names: names, kind: k, build: func(c *txCtx) upstream.CommandKind { return c.buildCommand(k) }})
	}

	// One batch proposal with a single change of each kind.
	for k := range numChangeKinds {
		names := []string{"change." + changeKinds[k].member}
		if k == changeNewSpotMarket {
			names = append(names, "market.spot")
		}
		s = append(s, specialSpec{names: names, kind: kindBatchProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
			return c.batchProposalOf(k)
		}})
	}

	s = append(s,
		specialSpec{names: []string{"change.all"}, kind: kindBatchProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
			kinds := make([]changeKind, numChangeKinds)
			for i := range kinds {
				kinds[i] = changeKind(i)
			}
			p := c.batchProposalOf(kinds...)
			// A built-in asset: the update has no source details.
			p.Terms.Changes[changeUpdateAsset].Change = c.updateAsset(c.g.asset("tDAI"))
			return p
		}},
		specialSpec{names: []string{"batch.allLists", "order.iceberg", "order.pegged", "amend.negativeSizeDelta", "amend.size"}, kind: kindBatchMarketInstructions, build: buildAllLists},
		specialSpec{names: []string{"batch.empty"}, kind: kindBatchMarketInstructions, build: func(c *txCtx) upstream.CommandKind {
			return emptyBatch()
		}},
		specialSpec{names: []string{"stopOrder.both", "stopOrder.risesAboveOnly", "stopOrder.fallsBelowOnly", "stopOrder.trailing", "stopOrder.sizeOverride"}, kind: kindBatchMarketInstructions, build: buildStopOrderSetups},
		specialSpec{names: []string{"coverage.orders"}, kind: kindBatchMarketInstructions, build: buildOrderCoverage},
		specialSpec{names: []string{"enum.unknown"}, kind: kindBatchMarketInstructions, build: buildUnknownEnums},
		specialSpec{names: []string{"enum.unknownChange"}, kind: kindBatchProposalSubmission, build: buildUnknownChangeEnums},
		specialSpec{names: []string{"size.uint64max"}, kind: kindBatchMarketInstructions, build: buildUint64Max},
		specialSpec{names: []string{"size.uint64maxOrder"}, kind: kindOrderSubmission, build: func(c *txCtx) upstream.CommandKind {
			o := c.orderSubmission(&c.g.markets[c.g.perps[0]])
			o.Size = math.MaxUint64
			return &o
		}},
		specialSpec{names: []string{"rationale.long", "rationale.titleMax"}, kind: kindBatchProposalSubmission, build: buildLongRationale},
		specialSpec{names: []string{"text.nonASCII"}, kind: kindBatchProposalSubmission, build: buildNonASCII},
		specialSpec{names: []string{"strings.empty"}, kind: kindBatchProposalSubmission, build: buildEmptyStrings},
		specialSpec{names: []string{"expiresAt.zero"}, kind: kindBatchMarketInstructions, build: buildZeroExpiry},
		specialSpec{names: []string{"asset.dangling"}, kind: kindBatchProposalSubmission, build: buildDanglingAssets},
		specialSpec{names: []string{"failed.code70"}, kind: kindOrderSubmission, code: 70, build: func(c *txCtx) upstream.CommandKind {
			return c.buildCommand(kindOrderSubmission)
		}},
		specialSpec{names: []string{"failed.code71"}, kind: kindBatchMarketInstructions, code: 71, build: func(c *txCtx) upstream.CommandKind {
			return c.buildCommand(kindBatchMarketInstructions)
		}},
		specialSpec{names: []string{"failed.batchProposal"}, kind: kindBatchProposalSubmission, code: 70, build: func(c *txCtx) upstream.CommandKind {
			return c.batchProposalOf(changeNewMarket, changeUpdateNetworkParameter)
		}},
		specialSpec{names: []string{"market.future", "market.successor", "risk.simple", "dataSource.oracle", "dataSource.internalTime", "signer.pubKey", "signer.ethAddress"}, kind: kindBatchProposalSubmission, build: buildFutureMarket},
		specialSpec{names: []string{"market.perpetual", "market.noSuccessor", "risk.logNormal", "dataSource.ethOracle", "dataSource.timeTrigger", "compositePrice.dataSources"}, kind: kindBatchProposalSubmission, build: buildPerpetualMarket},
		specialSpec{names: []string{"coverage.markets"}, kind: kindBatchProposalSubmission, build: buildMarketCoverage},
		specialSpec{names: []string{"updateMarket.future", "updateMarket.perpetual"}, kind: kindBatchProposalSubmission, build: buildUpdateMarkets},
		specialSpec{names: []string{"marketState.withPrice", "marketState.withoutPrice"}, kind: kindBatchProposalSubmission, build: buildMarketStates},
		specialSpec{names: []string{"coverage.accountTypes"}, kind: kindBatchProposalSubmission, build: buildAccountTypeCoverage},
		specialSpec{names: []string{"transfer.oneOff", "transfer.recurring", "transfer.recurringNoDispatch", "transfer.rankTable"}, kind: kindBatchProposalSubmission, build: buildDispatchCoverage},
		specialSpec{names: []string{"proposal.newAsset", "proposal.newAsset.erc20"}, kind: kindProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
			p := &upstream.ProposalSubmission{Reference: c.reference("proposal"), Terms: &upstream.ProposalTerms{ClosingTimestamp: upstream.UnixSeconds(c.closing())}}
			p.Terms.EnactmentTimestamp = p.Terms.ClosingTimestamp + 86_400
			c.newAsset(p, true)
			return p
		}},
		specialSpec{names: []string{"txVersion.v2"}, kind: kindOrderSubmission, version: "TX_VERSION_V2", build: func(c *txCtx) upstream.CommandKind {
			return c.buildCommand(kindOrderSubmission)
		}},
	)
	return s
}

// buildAllLists: batch market instructions with every list populated.
func buildAllLists(c *txCtx) upstream.CommandKind {
	r := c.r
	m := &c.g.markets[c.g.perps[0]]
	b := emptyBatch()
	b.Cancellations = append(b.Cancellations,
		upstream.OrderCancellation{OrderID: hexID(r), MarketID: m.id},
		upstream.OrderCancellation{MarketID: m.id})
	neg := c.orderAmendment(m)
	neg.Size, neg.SizeDelta = nil, -5
	sized := c.orderAmendment(m)
	sized.Size, sized.SizeDelta = ptr(upstream.Uint64(250)), 0
	b.Amendments = append(b.Amendments, neg, sized)

	limit := c.orderSubmission(m)
	limit.Type, limit.TimeInForce, limit.Price, limit.ExpiresAt = "TYPE_LIMIT", "TIME_IN_FORCE_GTC", c.price(m), 0
	limit.PeggedOrder, limit.IcebergOpts = nil, nil
	pegged := limit
	pegged.Price = ""
	pegged.PeggedOrder = &upstream.PeggedOrder{Reference: "PEGGED_REFERENCE_BEST_BID", Offset: "150"}
	iceberg := limit
	iceberg.Size = 1_000
	iceberg.IcebergOpts = &upstream.IcebergOpts{PeakSize: 100, MinimumVisibleSize: 20}
	b.Submissions = append(b.Submissions, limit, pegged, iceberg)

	b.StopOrdersCancellation = append(b.StopOrdersCancellation, upstream.StopOrderCancellation{MarketID: ptr(m.id), StopOrderID: ptr(hexID(r))})
	b.StopOrdersSubmission = append(b.StopOrdersSubmission, c.stopOrdersSubmission(m, 0))
	b.UpdateMarginMode = append(b.UpdateMarginMode,
		upstream.UpdateMarginMode{MarketID: m.id, Mode: "MODE_ISOLATED_MARGIN", MarginFactor: ptr("0.25")})
	return b
}

// buildStopOrderSetups: both sides, rises-above only, falls-below only;
// prices and trailing offsets; size overrides; expiries.
func buildStopOrderSetups(c *txCtx) upstream.CommandKind {
	m := &c.g.markets[c.g.perps[1]]
	b := emptyBatch()
	both := c.stopOrdersSubmission(m, 0)
	both.RisesAbove.Price, both.RisesAbove.TrailingPercentOffset = ptr(utoa(m.price+m.price/10)), nil
	both.FallsBelow.Price, both.FallsBelow.TrailingPercentOffset = nil, ptr("0.05")
	both.RisesAbove.ExpiresAt = ptr(upstream.UnixNanos(c.now + 86_400e9))
	both.RisesAbove.ExpiryStrategy = ptr(upstream.StopOrderExpiryStrategySubmit)
	both.FallsBelow.SizeOverrideSetting = ptr(upstream.SizeOverrideSettingPosition)
	both.FallsBelow.SizeOverrideValue = &upstream.SizeOverrideValue{Percentage: "0.5"}
	rises := c.stopOrdersSubmission(m, 1)
	rises.RisesAbove.Price, rises.RisesAbove.TrailingPercentOffset = nil, ptr("0.025")
	falls := c.stopOrdersSubmission(m, 2)
	falls.FallsBelow.Price, falls.FallsBelow.TrailingPercentOffset = ptr(utoa(m.price-m.price/10)), nil
	falls.FallsBelow.ExpiresAt, falls.FallsBelow.ExpiryStrategy = nil, nil
	falls.FallsBelow.SizeOverrideSetting = ptr(upstream.SizeOverrideSettingNone)
	falls.FallsBelow.SizeOverrideValue = nil
	b.StopOrdersSubmission = append(b.StopOrdersSubmission, both, rises, falls)
	return b
}

// buildOrderCoverage: every value of the order enums.
func buildOrderCoverage(c *txCtx) upstream.CommandKind {
	m := &c.g.markets[c.g.perps[2]]
	b := emptyBatch()
	for i, tif := range enumTimeInForce {
		o := c.orderSubmission(m)
		o.TimeInForce = upstream.TimeInForce(tif)
		o.Side = upstream.Side(enumSide[i%len(enumSide)])
		o.Type = upstream.OrderType(enumOrderType[i%len(enumOrderType)])
		o.ExpiresAt = 0
		if tif == "TIME_IN_FORCE_GTT" {
			o.ExpiresAt = upstream.UnixNanos(c.now + 3_600e9)
		}
		o.PeggedOrder = &upstream.PeggedOrder{Reference: upstream.PeggedReference(enumPeggedReference[i%len(enumPeggedReference)]), Offset: itoa(int64(i * 10))}
		b.Submissions = append(b.Submissions, o)

		a := c.orderAmendment(m)
		a.TimeInForce = upstream.TimeInForce(tif)
		a.PeggedReference = upstream.PeggedReference(enumPeggedReference[i%len(enumPeggedReference)])
		b.Amendments = append(b.Amendments, a)
	}
	for i, mode := range enumMarginMode {
		u := upstream.UpdateMarginMode{MarketID: m.id, Mode: upstream.MarginMode(mode)}
		if mode == "MODE_ISOLATED_MARGIN" {
			u.MarginFactor = ptr("0.1")
		}
		b.UpdateMarginMode = append(b.UpdateMarginMode, u)
		s := c.stopOrdersSubmission(m, 0)
		s.RisesAbove.ExpiresAt = ptr(upstream.UnixNanos(c.now + 7*86_400e9))
		s.RisesAbove.ExpiryStrategy = ptr(upstream.StopOrderExpiryStrategy(enumExpiryStrategy[i]))
		s.FallsBelow.SizeOverrideSetting = ptr(upstream.SizeOverrideSetting(enumSizeOverride[i]))
		s.FallsBelow.SizeOverrideValue = &upstream.SizeOverrideValue{Percentage: "1"}
		b.StopOrdersSubmission = append(b.StopOrdersSubmission, s)
	}
	return b
}

// buildUnknownEnums: enum values beyond the schema, sent as bare numbers.
func buildUnknownEnums(c *txCtx) upstream.CommandKind {
	m := &c.g.markets[c.g.perps[0]]
	b := emptyBatch()
	o := c.orderSubmission(m)
	o.Side = upstream.Side(unknownEnum(7))
	o.TimeInForce = upstream.TimeInForce(unknownEnum(12))
	b.Submissions = append(b.Submissions, o)
	a := c.orderAmendment(m)
	a.PeggedReference = upstream.PeggedReference(unknownEnum(5))
	b.Amendments = append(b.Amendments, a)
	b.UpdateMarginMode = append(b.UpdateMarginMode, upstream.UpdateMarginMode{MarketID: m.id, Mode: upstream.MarginMode(unknownEnum(3))})
	return b
}

// buildUnknownChangeEnums: a batch proposal with enum values beyond the
// schema in a market state change and a transfer.
func buildUnknownChangeEnums(c *txCtx) upstream.CommandKind {
	p := c.batchProposalOf(changeUpdateMarketState, changeNewTransfer)
	changeAt[*upstream.UpdateMarketState](p, 0).Changes.UpdateType = upstream.MarketStateUpdateType(unknownEnum(9))
	t := c.governanceTransfer(transferOptions{recurring: true})
	t.DestinationType = upstream.AccountType(unknownEnum(41))
	t.Recurring.DispatchStrategy.Metric = upstream.DispatchMetric(unknownEnum(23))
	changeAt[*upstream.NewTransfer](p, 1).Changes = t
	return p
}

// buildUint64Max: sizes at the uint64 maximum.
func buildUint64Max(c *txCtx) upstream.CommandKind {
	m := &c.g.markets[c.g.perps[3]]
	b := emptyBatch()
	o := c.orderSubmission(m)
	o.Type, o.TimeInForce, o.Price, o.ExpiresAt, o.PeggedOrder = "TYPE_LIMIT", "TIME_IN_FORCE_GTC", c.price(m), 0, nil
	o.Size = math.MaxUint64
	o.IcebergOpts = &upstream.IcebergOpts{PeakSize: math.MaxUint64, MinimumVisibleSize: math.MaxUint64}
	b.Submissions = append(b.Submissions, o)
	a := c.orderAmendment(m)
	a.Size, a.SizeDelta = ptr(upstream.Uint64(math.MaxUint64)), 0
	b.Amendments = append(b.Amendments, a)
	return b
}

// longText returns exactly n code points of mixed-script prose.
func longText(n int) string {
	const chunk = "Rationale ¶ détaillée — 詳細な説明 🚀 with data, fees & limits. "
	var b strings.Builder
	count := 0
	for count < n {
		for _, r := range chunk {
			if count == n {
				break
			}
			b.WriteRune(r)
			count++
		}
	}
	return b.String()
}

// buildLongRationale: a 20,000-character description and a 100-character
// title (in code points, some of them multi-byte).
func buildLongRationale(c *txCtx) upstream.CommandKind {
	p := c.batchProposalOf(changeNewFreeform, changeUpdateNetworkParameter)
	title := "Révision complète des paramètres — 市場 🚀 "
	title += strings.Repeat("x", maxTitleChars-utf8.RuneCountInString(title))
	p.Rationale = &upstream.ProposalRationale{Title: title, Description: longText(maxDescriptionChars)}
	return p
}

// buildNonASCII: accents, CJK and emoji in free text and names.
func buildNonASCII(c *txCtx) upstream.CommandKind {
	p := c.batchProposalOf(changeNewMarket, changeNewFreeform)
	p.Reference = "réf-日本-🚀"
	p.Rationale = &upstream.ProposalRationale{
		Title:       "Marché perpétuel « Café » — 日本円 🚀",
		Description: "Proposition de marché: café ☕, 東京 証券, Ελληνικά, emoji 🚀🌕 and combining e\u0301.",
	}
	nm := changeAt[*upstream.NewMarket](p, 0).Changes
	nm.Instrument.Name = "Café ☕ / 日本円 Perpétuel 🚀"
	nm.Metadata = []string{"名前:テスト", "émoji:🚀", "naïve:true"}
	return p
}

// buildEmptyStrings: empty reference, title, description and values.
func buildEmptyStrings(c *txCtx) upstream.CommandKind {
	p := c.batchProposalOf(changeNewFreeform, changeUpdateNetworkParameter)
	p.Reference = ""
	p.Rationale = &upstream.ProposalRationale{}
	changeAt[*upstream.UpdateNetworkParameter](p, 1).Changes = &upstream.NetworkParameter{Key: "", Value: ""}
	return p
}

// buildZeroExpiry: zero timestamps, set and sent as "0".
func buildZeroExpiry(c *txCtx) upstream.CommandKind {
	m := &c.g.markets[c.g.perps[1]]
	b := emptyBatch()
	o := c.orderSubmission(m)
	o.Type, o.TimeInForce, o.Price, o.ExpiresAt, o.PeggedOrder = "TYPE_LIMIT", "TIME_IN_FORCE_GTC", c.price(m), 0, nil
	b.Submissions = append(b.Submissions, o)
	a := c.orderAmendment(m)
	a.ExpiresAt = ptr(upstream.UnixNanos(0))
	b.Amendments = append(b.Amendments, a)
	s := c.stopOrdersSubmission(m, 1)
	s.RisesAbove.ExpiresAt = ptr(upstream.UnixNanos(0))
	s.RisesAbove.ExpiryStrategy = ptr(upstream.StopOrderExpiryStrategyCancels)
	b.StopOrdersSubmission = append(b.StopOrdersSubmission, s)
	return b
}

// danglingAsset returns an asset id that is not in the dataset.
func danglingAsset(c *txCtx) string {
	r := newRand(c.g.seed, streamMisc, 1)
	for {
		id := hexID(r)
		if _, ok := c.g.assetByID(id); !ok {
			return id
		}
	}
}

// buildDanglingAssets: asset references to an asset the dataset lacks, in
// every place a change names an asset.
func buildDanglingAssets(c *txCtx) upstream.CommandKind {
	missing := danglingAsset(c)
	p := c.batchProposalOf(changeNewMarket, changeNewSpotMarket, changeNewTransfer, changeUpdateAsset)
	nm := changeAt[*upstream.NewMarket](p, 0).Changes
	nm.Instrument = &upstream.Instrument{Code: "GHOST/USDT-JUN24", Name: "Ghost / Tether USD Future", Future: c.future(marketOptions{settlement: missing})}
	changeAt[*upstream.NewSpotMarket](p, 1).Changes.Instrument.Spot.BaseAsset = missing
	changeAt[*upstream.NewTransfer](p, 2).Changes = c.governanceTransfer(transferOptions{recurring: true, asset: missing})
	changeAt[*upstream.UpdateAsset](p, 3).AssetID = missing
	return p
}

// buildFutureMarket: a future with a simple risk model, oracle settlement
// signed by a key and an address, termination on the network clock, and a
// successor configuration.
func buildFutureMarket(c *txCtx) upstream.CommandKind {
	p := c.batchProposalOf(changeNewMarket)
	o := marketOptions{successor: true, settlement: c.g.assets[c.g.asset("USDT")].ID}
	cfg := c.newMarketConfig(o)
	prop := "prices.ETH.value"
	f := c.future(o)
	f.DataSourceSpecForSettlementData = c.oracleSourceSigned(prop, "TYPE_INTEGER", 0, 2)
	f.DataSourceSpecForTradingTermination = c.internalTimeSource(0)
	f.DataSourceSpecBinding = &upstream.DataSourceSpecToFutureBinding{SettlementDataProperty: prop, TradingTerminationProperty: "vegaprotocol.builtin.timestamp"}
	cfg.Instrument = &upstream.Instrument{Code: "ETH/USDT-SEP24", Name: "Ether / Tether USD Future (Sep 2024)", Future: f}
	cfg.LogNormal, cfg.Simple = nil, c.simple()
	changeAt[*upstream.NewMarket](p, 0).Changes = cfg
	return p
}

// buildPerpetualMarket: a perpetual with a log-normal risk model, settlement
// data from an Ethereum call (with Pyth arguments, a time trigger with an
// end), a funding schedule on the network's time trigger, and composite
// prices fed by an Ethereum call without an end and a signed oracle.
func buildPerpetualMarket(c *txCtx) upstream.CommandKind {
	p := c.batchProposalOf(changeNewMarket)
	o := marketOptions{perpetual: true, logNormal: true, ethOracle: true, until: true, settlement: c.g.assets[c.g.asset("USDC")].ID}
	cfg := c.newMarketConfig(o)
	prop := "btc.price"
	perp := c.perpetual(o)
	eth := c.ethOracleSource(prop, true, 0)
	spec := eth.External.EthOracle
	c.pythCall(spec, prop)
	spec.Trigger.TimeTrigger.Initial = ptr(upstream.UnixSeconds(c.now/1e9 + 600))
	perp.DataSourceSpecForSettlementData = eth
	perp.DataSourceSpecForSettlementSchedule = c.internalTimeTriggerSource(true, 0)
	perp.DataSourceSpecBinding = &upstream.DataSourceSpecToPerpetualBinding{SettlementDataProperty: prop, SettlementScheduleProperty: "vegaprotocol.builtin.timetrigger"}
	composite := c.compositePrice(1, 0) // weighted
	composite.DataSourcesSpec = []upstream.DataSourceDefinition{*c.ethOracleSource(prop, false, 0), *c.oracleSourceSigned(prop, "TYPE_INTEGER", 0, 0)}
	composite.DataSourcesSpecBinding = []upstream.SpecBindingForCompositePrice{{PriceSourceProperty: prop}, {PriceSourceProperty: prop}}
	composite.SourceWeights = []string{"0", "0", "1", "1"}
	composite.SourceStalenessTolerance = []string{"1m0s", "1m0s", "10m0s", "10m0s"}
	perp.InternalCompositePriceConfiguration = composite
	cfg.Instrument = &upstream.Instrument{Code: "BTC/USDC-PERP", Name: "Bitcoin / USD Coin Perpetual", Perpetual: perp}
	cfg.Simple, cfg.LogNormal, cfg.Successor = nil, c.logNormal(), nil
	changeAt[*upstream.NewMarket](p, 0).Changes = cfg
	return p
}

// buildMarketCoverage: four new markets that together use every liquidity
// fee method, composite price type, condition operator and property key
// type.
func buildMarketCoverage(c *txCtx) upstream.CommandKind {
	p := c.batchProposalOf(changeNewMarket, changeNewMarket, changeNewMarket, changeNewMarket)
	for i := range p.Terms.Changes {
		o := marketOptions{perpetual: i%2 == 1, logNormal: i < 2, successor: i == 3, feeMethod: 1 + i, priceType: 1 + i, coverage: 1 + i, ethOracle: i == 2, until: false}
		changeAt[*upstream.NewMarket](p, i).Changes = c.newMarketConfig(o)
	}
	return p
}

// buildUpdateMarkets: an update of a future and of a perpetual.
func buildUpdateMarkets(c *txCtx) upstream.CommandKind {
	p := c.batchProposalOf(changeUpdateMarket, changeUpdateMarket)
	var future, perp *genMarket
	for i := range c.g.markets {
		m := &c.g.markets[i]
		switch {
		case m.product == productFuture && future == nil:
			future = m
		case m.product == productPerpetual && perp == nil:
			perp = m
		}
	}
	p.Terms.Changes[0].Change = c.updateMarket(future)
	p.Terms.Changes[1].Change = c.updateMarket(perp)
	return p
}

// buildMarketStates: every market state update type, terminate with a
// settlement price and the others without.
func buildMarketStates(c *txCtx) upstream.CommandKind {
	kinds := make([]changeKind, len(enumMarketState)+1)
	for i := range kinds {
		kinds[i] = changeUpdateMarketState
	}
	p := c.batchProposalOf(kinds...)
	for i := range enumMarketState {
		p.Terms.Changes[i].Change = c.updateMarketState(i, enumMarketState[i] == "MARKET_STATE_UPDATE_TYPE_TERMINATE")
	}
	p.Terms.Changes[len(enumMarketState)].Change = c.updateMarketState(1, false)
	return p
}

// buildAccountTypeCoverage: one-off governance transfers whose source and
// destination types run through every account type.
func buildAccountTypeCoverage(c *txCtx) upstream.CommandKind {
	n := (len(enumAccountType) + 1) / 2
	kinds := make([]changeKind, n)
	for i := range kinds {
		kinds[i] = changeNewTransfer
	}
	p := c.batchProposalOf(kinds...)
	for i := range n {
		src := 2 * i
		dst := (2*i + 1) % len(enumAccountType)
		changeAt[*upstream.NewTransfer](p, i).Changes = c.governanceTransfer(transferOptions{
			source: 1 + src, destination: 1 + dst, oneOff: true, transferType: 1 + i%len(enumTransferType),
		})
	}
	return p
}

// buildDispatchCoverage: recurring transfers over every dispatch metric,
// distribution strategy (rank tables included), entity and individual
// scope; one recurring without a dispatch strategy; one one-off.
func buildDispatchCoverage(c *txCtx) upstream.CommandKind {
	n := len(enumDispatchMetric)
	kinds := make([]changeKind, n+2)
	for i := range kinds {
		kinds[i] = changeNewTransfer
	}
	p := c.batchProposalOf(kinds...)
	for i := range n {
		changeAt[*upstream.NewTransfer](p, i).Changes = c.governanceTransfer(transferOptions{
			recurring:    true,
			metric:       1 + i,
			distribution: 1 + i%len(enumDistribution),
			entity:       1 + i%len(enumEntityScope),
			individual:   1 + i%len(enumIndividualScope),
			transferType: 1 + i%len(enumTransferType),
		})
	}
	changeAt[*upstream.NewTransfer](p, n).Changes = c.governanceTransfer(transferOptions{recurring: true, noDispatch: true})
	changeAt[*upstream.NewTransfer](p, n+1).Changes = c.governanceTransfer(transferOptions{oneOff: true})
	return p
}

// assetByID finds an asset of the dataset.
func (g *generator) assetByID(id string) (int, bool) {
	for i, a := range g.assets {
		if a.ID == id {
			return i, true
		}
	}
	return 0, false
}
