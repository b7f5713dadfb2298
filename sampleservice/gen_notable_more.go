package sampleservice

import (
	"math"

	"github.com/tradenet/gateway/upstream"
)

// Notable transactions added for issue 16: every nested one-of member of
// commands-v0.74.md at least once, a single proposal of every change kind,
// a command the explorer cannot name (§9), the type strings of older cores,
// and the §0 wire edge cases (empty bytes, non-finite doubles, u32 values
// beyond GraphQL's Int, enum values beyond the schema).

// historySpecs are transactions processed by cores before v0.72.0, which
// wrote three type strings differently (commands-v0.74.md §1). They lie
// among the oldest transactions.
func historySpecs() []specialSpec {
	legacy := func(name string, kind cmdKind, typeName string) specialSpec {
		return specialSpec{names: []string{name}, kind: kind, typeName: typeName, build: func(c *txCtx) upstream.CommandKind { return c.buildCommand(kind) }}
	}
	return []specialSpec{
		legacy("legacy.registerNewNode", kindAnnounceNode, "Register new Node"),
		legacy("legacy.cancelLiquidityProvision", kindLiquidityProvisionCancellation, "Cancel LiquidityProvision Order"),
		legacy("legacy.amendLiquidityProvision", kindLiquidityProvisionAmendment, "Amend LiquidityProvision Order"),
	}
}

// moreSpecialSpecs lists the rest of the notable transactions.
func moreSpecialSpecs() []specialSpec {
	var s []specialSpec

	// Every action of every chain event group.
	for k := range numChainEventKinds {
		s = append(s, specialSpec{names: []string{"chainEvent." + chainEventKinds[k].name}, kind: kindChainEvent, build: func(c *txCtx) upstream.CommandKind {
			e := c.chainEventOf(k)
			if e.ContractCall != nil {
				e.ContractCall.SourceChainID = ptr(upstream.Uint64(100))
			}
			return e
		}})
	}
	s = append(s, specialSpec{names: []string{"chainEvent.contractCall.error", "bytes.emptyResult"}, kind: kindChainEvent, build: func(c *txCtx) upstream.CommandKind {
		e := c.chainEventOf(ceContractCall)
		e.ContractCall.Result, e.ContractCall.SourceChainID = nil, nil
		e.ContractCall.Error = ptr("execution reverted: price feed is stale")
		return e
	}})

	// A single proposal of every change kind; new assets of both sources; a
	// change kind the explorer does not know (no member).
	for k := range numChangeKinds {
		s = append(s, specialSpec{names: []string{"proposal." + changeKinds[k].member}, kind: kindProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
			p := c.newProposal()
			c.proposalChange(p, k)
			return p
		}})
	}
	s = append(s,
		specialSpec{names: []string{"proposal.newAsset.builtinAsset"}, kind: kindProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
			p := c.newProposal()
			c.newAsset(p, false)
			return p
		}},
		specialSpec{names: []string{"proposal.noChange"}, kind: kindProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
			p := c.newProposal()
			p.Rationale = &upstream.ProposalRationale{Title: "Volume rebate programme", Description: "A change kind this explorer's schema does not know: the terms carry no change."}
			return p
		}},
	)

	// Withdrawals to Ethereum and of a built-in asset (an empty ext).
	s = append(s,
		specialSpec{names: []string{"withdrawSubmission.ext.erc20"}, kind: kindWithdrawSubmission, build: func(c *txCtx) upstream.CommandKind {
			return c.withdrawSubmission(c.sourcedAsset(true))
		}},
		specialSpec{names: []string{"withdrawSubmission.ext.empty"}, kind: kindWithdrawSubmission, build: func(c *txCtx) upstream.CommandKind {
			return c.withdrawSubmission(c.sourcedAsset(false))
		}},
	)

	// A party's transfers: one-off, recurring into a reward pool with a
	// dispatch strategy, recurring to a party without one.
	s = append(s,
		specialSpec{names: []string{"transferFunds.oneOff"}, kind: kindTransfer, build: func(c *txCtx) upstream.CommandKind {
			t := c.transfer()
			t.Recurring = nil
			t.OneOff = &upstream.OneOffTransfer{DeliverOn: upstream.UnixNanos(c.now + 3_600e9)}
			return t
		}},
		specialSpec{names: []string{"transferFunds.recurring"}, kind: kindTransfer, noReceiver: true, build: func(c *txCtx) upstream.CommandKind {
			t := c.transfer()
			metric := 1 // maker fees paid
			t.ToAccountType = upstream.AccountType(rewardAccountFor(metric))
			t.Recurring.EndEpoch = ptr(t.Recurring.StartEpoch + 30)
			t.Recurring.DispatchStrategy = c.dispatchStrategy(metric, -1)
			return t
		}},
		specialSpec{names: []string{"transferFunds.recurringNoDispatch"}, kind: kindTransfer, build: func(c *txCtx) upstream.CommandKind {
			t := c.transfer()
			c.standingOrder(t)
			t.Recurring.EndEpoch = nil
			return t
		}},
	)

	// Stop orders: a price trigger, a trailing offset, no trigger at all.
	s = append(s,
		specialSpec{names: []string{"stopOrdersSubmission.price", "stopOrdersSubmission.trailingPercentOffset"}, kind: kindStopOrdersSubmission, build: func(c *txCtx) upstream.CommandKind {
			m := &c.g.markets[c.g.perps[0]]
			so := c.stopOrdersSubmission(m, 0)
			so.RisesAbove.Price, so.RisesAbove.TrailingPercentOffset = ptr(utoa(m.price+m.price/20)), nil
			so.FallsBelow.Price, so.FallsBelow.TrailingPercentOffset = nil, ptr("0.01")
			return &so
		}},
		specialSpec{names: []string{"stopOrdersSubmission.noTrigger"}, kind: kindStopOrdersSubmission, build: func(c *txCtx) upstream.CommandKind {
			so := c.stopOrdersSubmission(&c.g.markets[c.g.perps[1]], 1)
			so.RisesAbove.Price, so.RisesAbove.TrailingPercentOffset = nil, nil
			return &so
		}},
	)

	// State variable values of each shape.
	for _, v := range []struct {
		name string
		kind stateVarKind
	}{{"scalarVal", stateVarScalar}, {"vectorVal", stateVarVector}, {"matrixVal", stateVarMatrix}} {
		s = append(s, specialSpec{names: []string{"stateVariableProposal." + v.name}, kind: kindStateVariableProposal, build: func(c *txCtx) upstream.CommandKind {
			return c.stateVariableProposal(v.kind)
		}})
	}

	// A referral set update that changes only the team's name.
	s = append(s, specialSpec{names: []string{"updateReferralSet.teamPartial"}, kind: kindUpdateReferralSet, build: func(c *txCtx) upstream.CommandKind {
		return &upstream.UpdateReferralSet{ID: hexID(c.r), IsTeam: true, Team: &upstream.UpdateReferralSetTeam{Name: ptr("Renamed Rangers"), AllowList: []string{}}}
	}})

	// A command kind newer than the explorer: no member key (§9).
	s = append(s, specialSpec{names: []string{"command.memberless"}, kind: kindOrderSubmission, typeName: "Submit AMM", build: func(*txCtx) upstream.CommandKind { return nil }})

	// Wire edge cases.
	s = append(s,
		specialSpec{names: []string{"enum.unknownNodeVote"}, kind: kindNodeVote, build: func(c *txCtx) upstream.CommandKind {
			// TYPE_ETHEREUM_HEARTBEAT (v0.77) as an older explorer writes it.
			return &upstream.NodeVote{Reference: hexID(c.r), Type: upstream.NodeVoteType(unknownEnum(14))}
		}},
		specialSpec{names: []string{"bytes.emptySig"}, kind: kindNodeSignature, build: func(c *txCtx) upstream.CommandKind {
			s := c.nodeSignature()
			s.Sig = nil
			return s
		}},
		specialSpec{names: []string{"bytes.emptyPayload"}, kind: kindOracleDataSubmission, build: func(c *txCtx) upstream.CommandKind {
			o := c.oracleDataSubmission()
			o.Payload = nil
			return o
		}},
		// A single proposal (type "Proposal"), so that the benchmark's
		// pages, which list the four kinds typed before issue 16, do not
		// hold it: its Float! errors send a page to gqlgen's executor.
		specialSpec{names: []string{"f64.nonFinite"}, kind: kindProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
			p := c.newProposal()
			c.proposalChange(p, changeNewMarket)
			cfg := p.Terms.Change.(*upstream.NewMarket).Changes
			cfg.Simple, cfg.LogNormal = c.simple(), nil
			cfg.Simple.MaxMoveUp, cfg.Simple.MinMoveDown = upstream.Float64(math.Inf(1)), upstream.Float64(math.Inf(-1))
			cfg.LiquidityMonitoringParameters.TargetStakeParameters.ScalingFactor = upstream.Float64(math.NaN())
			return p
		}},
		specialSpec{names: []string{"u32.large"}, kind: kindBatchProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
			p := c.batchProposalOf(changeNewTransfer)
			t := c.governanceTransfer(transferOptions{recurring: true, distribution: 3}) // rank
			t.Recurring.DispatchStrategy.RankTable = []upstream.RankTable{{StartRank: 1, ShareRatio: math.MaxUint32}, {StartRank: 1 << 31, ShareRatio: 1}}
			changeAt[*upstream.NewTransfer](p, 0).Changes = t
			return p
		}},
	)
	return s
}
