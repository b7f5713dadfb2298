package sampleservice

import (
	"strings"

	"github.com/tradenet/gateway/upstream"
)

// zeroKey is the `to` of a transfer into a network-wide account.
var zeroKey = strings.Repeat("0", 64)

// The bodies of the party commands (cmdKinds' builders).

func (c *txCtx) newOrder() *upstream.OrderSubmission {
	o := c.orderSubmission(c.tradedMarket())
	return &o
}

func (c *txCtx) newCancellation() *upstream.OrderCancellation {
	o := c.orderCancellation()
	return &o
}

func (c *txCtx) newAmendment() *upstream.OrderAmendment {
	o := c.orderAmendment(c.tradedMarket())
	return &o
}

func (c *txCtx) newWithdrawal() *upstream.WithdrawSubmission {
	return c.withdrawSubmission(c.g.assets[c.enabledAsset()])
}

func (c *txCtx) voteSubmission() *upstream.VoteSubmission {
	v := upstream.VoteValueYes
	if chance(c.r, 1, 4) {
		v = upstream.VoteValueNo
	}
	return &upstream.VoteSubmission{ProposalID: hexID(c.r), Value: v}
}

func (c *txCtx) liquidityProvision() *upstream.LiquidityProvisionSubmission {
	r := c.r
	m := c.tradedMarket()
	return &upstream.LiquidityProvisionSubmission{
		MarketID:         m.id,
		CommitmentAmount: scaled(r, between(r, 1, 200)*1000, int(c.g.assets[c.settlementOf(m)].Details.Decimals)),
		Fee:              pick(r, []string{"0.0001", "0.0005", "0.001", "0.002", "0.01"}),
		Reference:        c.reference("lp"),
	}
}

func (c *txCtx) liquidityAmendment() *upstream.LiquidityProvisionAmendment {
	return (*upstream.LiquidityProvisionAmendment)(c.liquidityProvision())
}

func (c *txCtx) liquidityCancellation() *upstream.LiquidityProvisionCancellation {
	return &upstream.LiquidityProvisionCancellation{MarketID: c.tradedMarket().id}
}

func (c *txCtx) delegateSubmission() *upstream.DelegateSubmission {
	r := c.r
	return &upstream.DelegateSubmission{NodeID: pick(r, c.g.nodes).id, Amount: scaled(r, between(r, 1, 100_000), 18)}
}

func (c *txCtx) undelegateSubmission() *upstream.UndelegateSubmission {
	r := c.r
	method := upstream.UndelegateMethodAtEndOfEpoch
	if chance(r, 1, 3) {
		method = upstream.UndelegateMethodNow
	}
	return &upstream.UndelegateSubmission{NodeID: pick(r, c.g.nodes).id, Amount: scaled(r, between(r, 1, 50_000), 18), Method: method}
}

func (c *txCtx) cancelTransfer() *upstream.CancelTransferFunds {
	return &upstream.CancelTransferFunds{TransferID: hexID(c.r)}
}

func (c *txCtx) newStopOrders() *upstream.StopOrdersSubmission {
	s := c.stopOrdersSubmission(c.tradedMarket(), c.r.IntN(3))
	return &s
}

func (c *txCtx) newStopCancellation() *upstream.StopOrderCancellation {
	s := c.stopOrdersCancellation()
	return &s
}

func (c *txCtx) createReferralSet() *upstream.CreateReferralSet {
	s := &upstream.CreateReferralSet{IsTeam: chance(c.r, 2, 3)}
	if s.IsTeam {
		s.Team = c.team()
	}
	return s
}

func (c *txCtx) updateReferralSet() *upstream.UpdateReferralSet {
	s := &upstream.UpdateReferralSet{ID: hexID(c.r), IsTeam: chance(c.r, 2, 3)}
	if s.IsTeam {
		s.Team = c.updateTeam()
	}
	return s
}

func (c *txCtx) applyReferralCode() *upstream.ApplyReferralCode {
	return &upstream.ApplyReferralCode{ID: hexID(c.r)}
}

func (c *txCtx) newMarginMode() *upstream.UpdateMarginMode {
	u := c.updateMarginMode(c.tradedMarket())
	return &u
}

func (c *txCtx) joinTeam() *upstream.JoinTeam { return &upstream.JoinTeam{ID: hexID(c.r)} }

func (c *txCtx) newBatchProposal() *upstream.BatchProposalSubmission {
	return c.batchProposal(1 + c.r.IntN(4))
}

func (c *txCtx) updatePartyProfile() *upstream.UpdatePartyProfile {
	r := c.r
	p := &upstream.UpdatePartyProfile{Alias: pick(r, []string{"", "whale_42", "mm-desk-7", "Zoë", "trader.joe", "🐋"}), Metadata: []upstream.Metadata{}}
	if chance(r, 1, 2) {
		p.Metadata = append(p.Metadata, upstream.Metadata{Key: "twitter", Value: "@" + hexString(r, 8, hexLower)})
	}
	return p
}

// withdrawSubmission returns a withdrawal of asset a: its ext names the
// receiving Ethereum address for a token-contract asset and is empty ({})
// for a built-in one.
func (c *txCtx) withdrawSubmission(a Asset) *upstream.WithdrawSubmission {
	r := c.r
	ext := &upstream.WithdrawExt{}
	if a.Details.ERC20 != nil {
		ext.Erc20 = &upstream.Erc20WithdrawExt{ReceiverAddress: ethAddress(r)}
	}
	return &upstream.WithdrawSubmission{
		Amount: scaled(r, between(r, 1, 50_000), int(a.Details.Decimals)),
		Asset:  a.ID,
		Ext:    ext,
	}
}

// node returns the node whose key submits this transaction, or a random
// node when a party submits it.
func (c *txCtx) node() genNode {
	if i := c.subIdx - firstNodeKey; i >= 0 && i < numNodes {
		return c.g.nodes[i]
	}
	return pick(c.r, c.g.nodes)
}

// sig is a node's signature made with the given algorithm.
func (c *txCtx) sig(algo string) *upstream.Signature {
	return &upstream.Signature{Value: hexString(c.r, 130, hexLower), Algo: algo, Version: 1}
}

// tradedMarket returns a market to trade on, perpetuals most often.
func (c *txCtx) tradedMarket() *genMarket {
	r := c.r
	if chance(r, 3, 5) {
		return &c.g.markets[pick(r, c.g.perps)]
	}
	return &c.g.markets[r.IntN(len(c.g.markets))]
}

// settlementOf returns the asset a market settles in (its quote for spot).
func (c *txCtx) settlementOf(m *genMarket) int {
	if m.product == productSpot {
		return m.quote
	}
	return m.settlement
}

func (c *txCtx) enabledAsset() int { return pick(c.r, c.g.enabled) }

// reference returns an order or commitment reference, often empty.
func (c *txCtx) reference(prefix string) string {
	r := c.r
	switch r.IntN(4) {
	case 0, 1:
		return ""
	case 2:
		return prefix + "-" + hexString(r, 8, hexLower)
	}
	return pick(r, []string{"mm-bot", "ui", "console", "vega-wallet", "hedger"}) + "/" + itoa(r.Int64N(1_000_000))
}

// price returns a limit price near the market's typical price.
func (c *txCtx) price(m *genMarket) string {
	p := int64(m.price)
	spread := p/50 + 1
	return itoa(p + c.r.Int64N(2*spread+1) - spread)
}

func (c *txCtx) size() upstream.Uint64 {
	if chance(c.r, 1, 5) {
		return upstream.Uint64(1 + c.r.Uint64N(10_000))
	}
	return upstream.Uint64(1 + c.r.Uint64N(200))
}

// orderSubmission returns a plausible order for market m.
func (c *txCtx) orderSubmission(m *genMarket) upstream.OrderSubmission {
	r := c.r
	o := upstream.OrderSubmission{
		MarketID:    m.id,
		Size:        c.size(),
		Side:        upstream.Side(enumSide[1+r.IntN(2)]),
		Type:        "TYPE_LIMIT",
		TimeInForce: "TIME_IN_FORCE_GTC",
		Reference:   c.reference("order"),
	}
	if chance(r, 1, 7) {
		o.Type = "TYPE_MARKET"
		o.TimeInForce = upstream.TimeInForce(pick(r, []string{"TIME_IN_FORCE_IOC", "TIME_IN_FORCE_FOK"}))
		o.ReduceOnly = chance(r, 1, 4)
		return o
	}
	o.Price = c.price(m)
	switch x := r.IntN(100); {
	case x < 55:
	case x < 70:
		o.TimeInForce = "TIME_IN_FORCE_GTT"
		o.ExpiresAt = upstream.UnixNanos(c.now + between(r, 60, 7*86_400)*1e9)
	case x < 80:
		o.TimeInForce = "TIME_IN_FORCE_IOC"
		o.ReduceOnly = chance(r, 1, 4)
	case x < 85:
		o.TimeInForce = "TIME_IN_FORCE_FOK"
	case x < 90:
		o.TimeInForce = "TIME_IN_FORCE_GFA"
	default:
		o.TimeInForce = "TIME_IN_FORCE_GFN"
	}
	persistent := o.TimeInForce == "TIME_IN_FORCE_GTC" || o.TimeInForce == "TIME_IN_FORCE_GTT"
	if persistent {
		o.PostOnly = chance(r, 1, 4)
		if chance(r, 1, 10) {
			o.Price = ""
			o.PeggedOrder = &upstream.PeggedOrder{
				Reference: upstream.PeggedReference(enumPeggedReference[1+r.IntN(3)]),
				Offset:    itoa(between(r, 0, int64(m.price)/100)),
			}
			if o.PeggedOrder.Reference == "PEGGED_REFERENCE_MID" && o.PeggedOrder.Offset == "0" {
				o.PeggedOrder.Offset = "1"
			}
		}
		if chance(r, 1, 20) {
			peak := 1 + o.Size/4
			o.IcebergOpts = &upstream.IcebergOpts{PeakSize: peak, MinimumVisibleSize: 1 + peak/4}
		}
	}
	return o
}

func (c *txCtx) orderCancellation() upstream.OrderCancellation {
	r := c.r
	switch r.IntN(6) {
	case 0:
		return upstream.OrderCancellation{} // everything, everywhere
	case 1, 2:
		return upstream.OrderCancellation{MarketID: c.tradedMarket().id}
	}
	return upstream.OrderCancellation{OrderID: hexID(r), MarketID: c.tradedMarket().id}
}

func (c *txCtx) orderAmendment(m *genMarket) upstream.OrderAmendment {
	r := c.r
	a := upstream.OrderAmendment{
		OrderID:         hexID(r),
		MarketID:        m.id,
		TimeInForce:     "TIME_IN_FORCE_UNSPECIFIED",
		PeggedReference: "PEGGED_REFERENCE_UNSPECIFIED",
	}
	if chance(r, 2, 3) {
		a.Price = ptr(c.price(m))
	}
	switch r.IntN(5) {
	case 0:
		a.Size = ptr(c.size())
	case 1, 2:
		a.SizeDelta = upstream.Int64(r.Int64N(101) - 50)
	}
	if chance(r, 1, 10) {
		a.TimeInForce = "TIME_IN_FORCE_GTT"
		a.ExpiresAt = ptr(upstream.UnixNanos(c.now + between(r, 60, 86_400)*1e9))
	} else if chance(r, 1, 20) {
		a.TimeInForce = "TIME_IN_FORCE_GTC"
	}
	if chance(r, 1, 15) {
		a.PeggedReference = upstream.PeggedReference(enumPeggedReference[1+r.IntN(3)])
		a.PeggedOffset = itoa(between(r, 1, int64(m.price)/100+1))
	}
	return a
}

// stopOrderSetup returns one side of a stop order for market m.
func (c *txCtx) stopOrderSetup(m *genMarket, risesAbove bool) *upstream.StopOrderSetup {
	r := c.r
	o := c.orderSubmission(m)
	o.Type = "TYPE_MARKET"
	o.Price = ""
	o.TimeInForce = upstream.TimeInForce(pick(r, []string{"TIME_IN_FORCE_IOC", "TIME_IN_FORCE_FOK"}))
	o.ExpiresAt = 0
	o.PeggedOrder = nil
	o.IcebergOpts = nil
	o.PostOnly = false
	o.ReduceOnly = true
	s := &upstream.StopOrderSetup{OrderSubmission: &o}
	if chance(r, 1, 3) {
		s.TrailingPercentOffset = ptr(pick(r, []string{"0.005", "0.01", "0.025", "0.05", "0.1"}))
	} else {
		p := int64(m.price)
		if risesAbove {
			p += p / 20
		} else {
			p -= p / 20
		}
		s.Price = ptr(itoa(p))
	}
	if chance(r, 1, 3) {
		s.ExpiresAt = ptr(upstream.UnixNanos(c.now + between(r, 3_600, 30*86_400)*1e9))
		s.ExpiryStrategy = ptr(upstream.StopOrderExpiryStrategy(enumExpiryStrategy[1+r.IntN(2)]))
	}
	if chance(r, 1, 4) {
		s.SizeOverrideSetting = ptr(upstream.SizeOverrideSetting(enumSizeOverride[1+r.IntN(2)]))
		if *s.SizeOverrideSetting == "SIZE_OVERRIDE_SETTING_POSITION" {
			s.SizeOverrideValue = &upstream.SizeOverrideValue{Percentage: pick(r, []string{"0.25", "0.5", "0.75", "1"})}
		}
	}
	return s
}

// stopOrdersSubmission returns a stop order: which 0 = both sides, 1 =
// rises above only, 2 = falls below only.
func (c *txCtx) stopOrdersSubmission(m *genMarket, which int) upstream.StopOrdersSubmission {
	var s upstream.StopOrdersSubmission
	if which != 2 {
		s.RisesAbove = c.stopOrderSetup(m, true)
	}
	if which != 1 {
		s.FallsBelow = c.stopOrderSetup(m, false)
	}
	return s
}

func (c *txCtx) stopOrdersCancellation() upstream.StopOrderCancellation {
	r := c.r
	switch r.IntN(4) {
	case 0:
		return upstream.StopOrderCancellation{}
	case 1:
		return upstream.StopOrderCancellation{MarketID: ptr(c.tradedMarket().id)}
	}
	return upstream.StopOrderCancellation{MarketID: ptr(c.tradedMarket().id), StopOrderID: ptr(hexID(r))}
}

func (c *txCtx) updateMarginMode(m *genMarket) upstream.UpdateMarginMode {
	r := c.r
	if chance(r, 1, 2) {
		return upstream.UpdateMarginMode{MarketID: m.id, Mode: "MODE_CROSS_MARGIN"}
	}
	return upstream.UpdateMarginMode{MarketID: m.id, Mode: "MODE_ISOLATED_MARGIN", MarginFactor: ptr(pick(r, []string{"0.1", "0.2", "0.25", "0.5", "0.9"}))}
}

// emptyBatch returns batch market instructions with every list empty.
func emptyBatch() *upstream.BatchMarketInstructions {
	return &upstream.BatchMarketInstructions{
		Cancellations:          []upstream.OrderCancellation{},
		Amendments:             []upstream.OrderAmendment{},
		Submissions:            []upstream.OrderSubmission{},
		StopOrdersCancellation: []upstream.StopOrderCancellation{},
		StopOrdersSubmission:   []upstream.StopOrdersSubmission{},
		UpdateMarginMode:       []upstream.UpdateMarginMode{},
	}
}

// batchMarketInstructions returns a market maker's typical batch: cancel,
// amend and submit orders, now and then stop orders and a margin mode.
func (c *txCtx) batchMarketInstructions() *upstream.BatchMarketInstructions {
	r := c.r
	b := emptyBatch()
	m := c.tradedMarket()
	if chance(r, 1, 2) {
		b.Cancellations = append(b.Cancellations, upstream.OrderCancellation{MarketID: m.id})
	}
	for range r.IntN(3) {
		b.Cancellations = append(b.Cancellations, upstream.OrderCancellation{OrderID: hexID(r), MarketID: m.id})
	}
	for range r.IntN(4) {
		b.Amendments = append(b.Amendments, c.orderAmendment(m))
	}
	for range r.IntN(7) {
		b.Submissions = append(b.Submissions, c.orderSubmission(m))
	}
	if chance(r, 1, 12) {
		b.StopOrdersCancellation = append(b.StopOrdersCancellation, c.stopOrdersCancellation())
	}
	if chance(r, 1, 10) {
		b.StopOrdersSubmission = append(b.StopOrdersSubmission, c.stopOrdersSubmission(m, r.IntN(3)))
	}
	if chance(r, 1, 15) {
		b.UpdateMarginMode = append(b.UpdateMarginMode, c.updateMarginMode(m))
	}
	if len(b.Cancellations)+len(b.Amendments)+len(b.Submissions)+len(b.StopOrdersCancellation)+len(b.StopOrdersSubmission)+len(b.UpdateMarginMode) == 0 {
		b.Submissions = append(b.Submissions, c.orderSubmission(m))
	}
	return b
}

// transfer returns a party's transfer: to another party (c.receiver) or
// into a reward pool.
func (c *txCtx) transfer() *upstream.TransferFunds {
	r := c.r
	ai := c.enabledAsset()
	if chance(r, 1, 2) {
		ai = c.g.asset("VEGA")
	}
	a := c.g.assets[ai]
	t := &upstream.TransferFunds{
		FromAccountType: "ACCOUNT_TYPE_GENERAL",
		Asset:           a.ID,
		Amount:          scaled(r, between(r, 1, 10_000), int(a.Details.Decimals)),
		Reference:       c.reference("transfer"),
	}
	if chance(r, 1, 10) {
		t.FromAccountType = "ACCOUNT_TYPE_VESTED_REWARDS"
	}
	if c.receiver != "" {
		t.To = c.receiver
		t.ToAccountType = "ACCOUNT_TYPE_GENERAL"
		t.OneOff = &upstream.OneOffTransfer{DeliverOn: 0}
		if chance(r, 1, 5) {
			t.OneOff.DeliverOn = upstream.UnixNanos(c.now + between(r, 3_600, 7*86_400)*1e9)
		}
		if chance(r, 1, 10) {
			c.standingOrder(t)
		}
		return t
	}
	t.To = zeroKey
	metric := 1 + r.IntN(len(enumDispatchMetric)-1)
	t.ToAccountType = upstream.AccountType(rewardAccountFor(metric))
	epoch := c.g.epochAt(c.now)
	rec := &upstream.RecurringTransferFunds{StartEpoch: upstream.Uint64(epoch + 1), Factor: pick(r, []string{"1", "0.9", "1.1"})}
	if chance(r, 1, 2) {
		rec.EndEpoch = ptr(upstream.Uint64(epoch + 1 + uint64(r.IntN(90))))
	}
	if chance(r, 4, 5) {
		rec.DispatchStrategy = c.dispatchStrategy(metric, -1)
	}
	t.Recurring = rec
	return t
}

// standingOrder makes t a recurring transfer to another party: no dispatch
// strategy (null), a fixed amount each epoch, sometimes until an end epoch.
func (c *txCtx) standingOrder(t *upstream.TransferFunds) {
	epoch := c.g.epochAt(c.now)
	t.OneOff = nil
	t.Recurring = &upstream.RecurringTransferFunds{StartEpoch: upstream.Uint64(epoch + 1), Factor: "1"}
	if chance(c.r, 1, 2) {
		t.Recurring.EndEpoch = ptr(upstream.Uint64(epoch + 1 + uint64(c.r.IntN(30))))
	}
}

// rewardAccountFor is the reward account a dispatch metric pays from.
func rewardAccountFor(metric int) string {
	switch enumDispatchMetric[metric] {
	case "DISPATCH_METRIC_MAKER_FEES_PAID":
		return "ACCOUNT_TYPE_REWARD_MAKER_PAID_FEES"
	case "DISPATCH_METRIC_MAKER_FEES_RECEIVED":
		return "ACCOUNT_TYPE_REWARD_MAKER_RECEIVED_FEES"
	case "DISPATCH_METRIC_LP_FEES_RECEIVED":
		return "ACCOUNT_TYPE_REWARD_LP_RECEIVED_FEES"
	case "DISPATCH_METRIC_MARKET_VALUE":
		return "ACCOUNT_TYPE_REWARD_MARKET_PROPOSERS"
	case "DISPATCH_METRIC_AVERAGE_POSITION":
		return "ACCOUNT_TYPE_REWARD_AVERAGE_POSITION"
	case "DISPATCH_METRIC_RELATIVE_RETURN":
		return "ACCOUNT_TYPE_REWARD_RELATIVE_RETURN"
	case "DISPATCH_METRIC_RETURN_VOLATILITY":
		return "ACCOUNT_TYPE_REWARD_RETURN_VOLATILITY"
	case "DISPATCH_METRIC_VALIDATOR_RANKING":
		return "ACCOUNT_TYPE_REWARD_VALIDATOR_RANKING"
	}
	return "ACCOUNT_TYPE_GLOBAL_REWARD"
}

// dispatchStrategy returns a dispatch strategy for a metric (an index into
// enumDispatchMetric); distribution < 0 draws the distribution strategy.
func (c *txCtx) dispatchStrategy(metric int, distribution int) *upstream.DispatchStrategy {
	r := c.r
	usdt := c.g.assets[c.g.asset("USDT")].ID
	d := &upstream.DispatchStrategy{
		AssetForMetric:     usdt,
		Metric:             upstream.DispatchMetric(enumDispatchMetric[metric]),
		Markets:            []string{},
		EntityScope:        "ENTITY_SCOPE_INDIVIDUALS",
		IndividualScope:    upstream.IndividualScope(enumIndividualScope[1+r.IntN(3)]),
		TeamScope:          []string{},
		StakingRequirement: "",
		NotionalTimeWeightedAveragePositionRequirement: "",
		WindowLength:         upstream.Uint64(1 + r.IntN(7)),
		LockPeriod:           upstream.Uint64(r.IntN(31)),
		DistributionStrategy: "DISTRIBUTION_STRATEGY_PRO_RATA",
		RankTable:            []upstream.RankTable{},
	}
	if enumDispatchMetric[metric] == "DISPATCH_METRIC_VALIDATOR_RANKING" {
		d.AssetForMetric = ""
	}
	for range r.IntN(3) {
		d.Markets = append(d.Markets, c.g.markets[pick(r, c.g.perps)].id)
	}
	if chance(r, 1, 3) {
		d.EntityScope = "ENTITY_SCOPE_TEAMS"
		d.IndividualScope = "INDIVIDUAL_SCOPE_UNSPECIFIED"
		d.NTopPerformers = pick(r, []string{"0.1", "0.5", "1"})
		for range r.IntN(3) {
			d.TeamScope = append(d.TeamScope, hexID(r))
		}
	}
	if chance(r, 1, 2) {
		d.StakingRequirement = scaled(r, between(r, 1, 100)*100, 18)
		d.NotionalTimeWeightedAveragePositionRequirement = scaled(r, between(r, 1, 50)*1000, 6)
	}
	if distribution < 0 {
		distribution = 1 + r.IntN(2)
	}
	d.DistributionStrategy = upstream.DistributionStrategy(enumDistribution[distribution])
	if enumDistribution[distribution] == "DISTRIBUTION_STRATEGY_RANK" {
		d.RankTable = rankTable(r.IntN(3))
	}
	return d
}

func rankTable(variant int) []upstream.RankTable {
	switch variant {
	case 0:
		return []upstream.RankTable{{StartRank: 1, ShareRatio: 10}, {StartRank: 2, ShareRatio: 5}, {StartRank: 4, ShareRatio: 2}, {StartRank: 10, ShareRatio: 1}, {StartRank: 20, ShareRatio: 0}}
	case 1:
		return []upstream.RankTable{{StartRank: 1, ShareRatio: 3}, {StartRank: 5, ShareRatio: 1}}
	}
	return []upstream.RankTable{{StartRank: 1, ShareRatio: 1}}
}

func (c *txCtx) team() *upstream.CreateReferralSetTeam {
	r := c.r
	t := &upstream.CreateReferralSetTeam{
		Name:      pick(r, []string{"Alpha Squad", "Équipe Rouge", "熊猫队", "Degen Rangers", "🦊 Fox Den", "Market Makers United"}),
		Closed:    chance(r, 1, 4),
		AllowList: []string{},
	}
	if chance(r, 1, 2) {
		t.TeamURL = ptr("https://team.example/" + hexString(r, 6, hexLower))
	}
	if chance(r, 1, 2) {
		t.AvatarURL = ptr("https://team.example/avatar/" + hexString(r, 6, hexLower) + ".png")
	}
	if t.Closed {
		for range 1 + r.IntN(3) {
			t.AllowList = append(t.AllowList, c.g.randomParty(r))
		}
	}
	return t
}

// updateTeam returns the team part of a referral set update: each field
// but the allow list is left out (unchanged) now and then.
func (c *txCtx) updateTeam() *upstream.UpdateReferralSetTeam {
	r := c.r
	t := c.team()
	u := &upstream.UpdateReferralSetTeam{TeamURL: t.TeamURL, AvatarURL: t.AvatarURL, AllowList: t.AllowList}
	if chance(r, 2, 3) {
		u.Name = &t.Name
	}
	if chance(r, 1, 2) {
		u.Closed = &t.Closed
	}
	return u
}

func (c *txCtx) announceNode() *upstream.AnnounceNode {
	r := c.r
	n := c.node()
	return &upstream.AnnounceNode{
		NetPubKey:         n.vegaPubKey,
		EthereumAddress:   n.ethAddress,
		ChainPubKey:       n.chainPubKey,
		InfoURL:           n.infoURL,
		Country:           n.country,
		ID:                n.id,
		Name:              n.name,
		AvatarURL:         n.avatarURL,
		NetPubKeyIndex:    upstream.Int64(1 + r.IntN(3)),
		FromEpoch:         upstream.Uint64(c.g.epochAt(c.now) + 1),
		EthereumSignature: c.sig("eth"),
		NetSignature:      &upstream.Signature{Value: hexString(r, 128, hexLower), Algo: "vega/ed25519", Version: 1},
		SubmitterAddress:  pick(r, []string{"", ethAddress(r)}),
	}
}
