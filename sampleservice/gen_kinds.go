package sampleservice

import "github.com/tradenet/gateway/upstream"

// The command kinds and proposal change kinds the generator draws: one
// entry each, holding everything the generator knows of the kind. The wire
// form is not here: a kind's body is package upstream's type for it
// (upstream.OrderSubmission, …), which encodes itself.
//
// Adding a command kind: its type in package upstream (with its entry in
// upstream's commandMembers), then a constant below and its entry in
// cmdKinds. Nothing else: the notable transaction "command.<member>", the
// draws, the explorer's type filter and the coverage tests follow from the
// entry.

// cmdKind is a command kind: an index into cmdKinds.
type cmdKind uint8

const (
	kindOrderSubmission cmdKind = iota
	kindOrderCancellation
	kindOrderAmendment
	kindWithdrawSubmission
	kindProposalSubmission
	kindVoteSubmission
	kindLiquidityProvisionSubmission
	kindDelegateSubmission
	kindUndelegateSubmission
	kindLiquidityProvisionCancellation
	kindLiquidityProvisionAmendment
	kindTransfer
	kindCancelTransfer
	kindAnnounceNode
	kindBatchMarketInstructions
	kindStopOrdersSubmission
	kindStopOrdersCancellation
	kindCreateReferralSet
	kindUpdateReferralSet
	kindApplyReferralCode
	kindUpdateMarginMode
	kindJoinTeam
	kindBatchProposalSubmission
	kindUpdatePartyProfile
	kindNodeVote
	kindNodeSignature
	kindChainEvent
	kindKeyRotateSubmission
	kindStateVariableProposal
	kindValidatorHeartbeat
	kindEthereumKeyRotateSubmission
	kindProtocolUpgradeProposal
	kindIssueSignatures
	kindOracleDataSubmission
	numCmdKinds
)

// sender is who submits a command kind.
type sender uint8

const (
	byParty sender = iota
	// byNode: a node operator's key, with proof of work.
	byNode
	// byValidator: a command the core classes as a validator command
	// (node votes and signatures, chain events, key rotations, state
	// variables, heartbeats): a node's key, and no proof of work (pow is
	// null).
	byValidator
)

// cmdKindInfo is one command kind: its member name on the wire and its
// type string in the explorer, how often the generator draws it (per
// 10,000 ordinary transactions), who sends it, and how to build a
// plausible body.
type cmdKindInfo struct {
	member   string
	typeName string
	weight   int
	sender   sender
	build    func(c *txCtx) upstream.CommandKind
}

// member adapts a builder of a command kind's body to cmdKindInfo.build.
func member[T upstream.CommandKind](build func(c *txCtx) T) func(c *txCtx) upstream.CommandKind {
	return func(c *txCtx) upstream.CommandKind { return build(c) }
}

var cmdKinds = [numCmdKinds]cmdKindInfo{
	kindOrderSubmission:                {"orderSubmission", "Submit Order", 1700, byParty, member((*txCtx).newOrder)},
	kindOrderCancellation:              {"orderCancellation", "Cancel Order", 800, byParty, member((*txCtx).newCancellation)},
	kindOrderAmendment:                 {"orderAmendment", "Amend Order", 800, byParty, member((*txCtx).newAmendment)},
	kindWithdrawSubmission:             {"withdrawSubmission", "Withdraw", 90, byParty, member((*txCtx).newWithdrawal)},
	kindProposalSubmission:             {"proposalSubmission", "Proposal", 60, byParty, member((*txCtx).proposalSubmission)},
	kindVoteSubmission:                 {"voteSubmission", "Vote on Proposal", 250, byParty, member((*txCtx).voteSubmission)},
	kindLiquidityProvisionSubmission:   {"liquidityProvisionSubmission", "Liquidity Provision Order", 80, byParty, member((*txCtx).liquidityProvision)},
	kindDelegateSubmission:             {"delegateSubmission", "Delegate", 150, byParty, member((*txCtx).delegateSubmission)},
	kindUndelegateSubmission:           {"undelegateSubmission", "Undelegate", 70, byParty, member((*txCtx).undelegateSubmission)},
	kindLiquidityProvisionCancellation: {"liquidityProvisionCancellation", "Cancel Liquidity Provision Order", 30, byParty, member((*txCtx).liquidityCancellation)},
	kindLiquidityProvisionAmendment:    {"liquidityProvisionAmendment", "Amend Liquidity Provision Order", 60, byParty, member((*txCtx).liquidityAmendment)},
	kindTransfer:                       {"transfer", "Transfer Funds", 280, byParty, member((*txCtx).transfer)},
	kindCancelTransfer:                 {"cancelTransfer", "Cancel Transfer Funds", 25, byParty, member((*txCtx).cancelTransfer)},
	kindAnnounceNode:                   {"announceNode", "Register New Node", 20, byNode, member((*txCtx).announceNode)},
	kindBatchMarketInstructions:        {"batchMarketInstructions", "Batch Market Instructions", 2900, byParty, member((*txCtx).batchMarketInstructions)},
	kindStopOrdersSubmission:           {"stopOrdersSubmission", "Stop Orders Submission", 200, byParty, member((*txCtx).newStopOrders)},
	kindStopOrdersCancellation:         {"stopOrdersCancellation", "Stop Orders Cancellation", 80, byParty, member((*txCtx).newStopCancellation)},
	kindCreateReferralSet:              {"createReferralSet", "Create Referral Set", 25, byParty, member((*txCtx).createReferralSet)},
	kindUpdateReferralSet:              {"updateReferralSet", "Update Referral Set", 20, byParty, member((*txCtx).updateReferralSet)},
	kindApplyReferralCode:              {"applyReferralCode", "Apply Referral Code", 90, byParty, member((*txCtx).applyReferralCode)},
	kindUpdateMarginMode:               {"updateMarginMode", "Update Margin Mode", 90, byParty, member((*txCtx).newMarginMode)},
	kindJoinTeam:                       {"joinTeam", "Join Team", 50, byParty, member((*txCtx).joinTeam)},
	kindBatchProposalSubmission:        {"batchProposalSubmission", "Batch Proposal", 150, byParty, member((*txCtx).newBatchProposal)},
	kindUpdatePartyProfile:             {"updatePartyProfile", "Update Party Profile", 40, byParty, member((*txCtx).updatePartyProfile)},
	kindNodeVote:                       {"nodeVote", "Node Vote", 300, byValidator, member((*txCtx).nodeVote)},
	kindNodeSignature:                  {"nodeSignature", "Node Signature", 120, byValidator, member((*txCtx).nodeSignature)},
	kindChainEvent:                     {"chainEvent", "Chain Event", 300, byValidator, member((*txCtx).chainEvent)},
	kindKeyRotateSubmission:            {"keyRotateSubmission", "Key Rotate Submission", 10, byValidator, member((*txCtx).keyRotateSubmission)},
	kindStateVariableProposal:          {"stateVariableProposal", "State Variable Proposal", 200, byValidator, member((*txCtx).newStateVariableProposal)},
	kindValidatorHeartbeat:             {"validatorHeartbeat", "Validator Heartbeat", 250, byValidator, member((*txCtx).validatorHeartbeat)},
	kindEthereumKeyRotateSubmission:    {"ethereumKeyRotateSubmission", "Ethereum Key Rotate Submission", 10, byValidator, member((*txCtx).ethereumKeyRotateSubmission)},
	kindProtocolUpgradeProposal:        {"protocolUpgradeProposal", "Protocol Upgrade", 20, byNode, member((*txCtx).protocolUpgradeProposal)},
	kindIssueSignatures:                {"issueSignatures", "Issue Signatures", 25, byParty, member((*txCtx).issueSignatures)},
	kindOracleDataSubmission:           {"oracleDataSubmission", "Submit Oracle Data", 245, byParty, member((*txCtx).oracleDataSubmission)},
}

// byNode reports whether a node's key, rather than a party's, submits k.
func (k cmdKind) byNode() bool { return cmdKinds[k].sender != byParty }

// validatorCommand reports whether the core classes k as a validator
// command: nodes send those without proof of work.
func (k cmdKind) validatorCommand() bool { return cmdKinds[k].sender == byValidator }

// buildCommand returns a plausible body of kind.
func (c *txCtx) buildCommand(kind cmdKind) upstream.CommandKind { return cmdKinds[kind].build(c) }

// changeKind is a member of a proposal change's one-of: an index into
// changeKinds.
type changeKind uint8

const (
	changeUpdateMarket changeKind = iota
	changeNewMarket
	changeUpdateNetworkParameter
	changeNewFreeform
	changeUpdateAsset
	changeNewSpotMarket
	changeUpdateSpotMarket
	changeNewTransfer
	changeCancelTransfer
	changeUpdateMarketState
	changeUpdateReferralProgram
	changeUpdateVolumeDiscountProgram
	numChangeKinds
)

// changeKindInfo is one proposal change kind: its member name on the wire,
// how often a batch proposal draws it, the titles of a proposal of it
// alone, and how to build a plausible change.
type changeKindInfo struct {
	member string
	weight int
	titles []string
	build  func(c *txCtx) upstream.ProposalChangeKind
}

// change adapts a builder of a change kind to changeKindInfo.build.
func change[T upstream.ProposalChangeKind](build func(c *txCtx) T) func(c *txCtx) upstream.ProposalChangeKind {
	return func(c *txCtx) upstream.ProposalChangeKind { return build(c) }
}

var changeKinds = [numChangeKinds]changeKindInfo{
	changeUpdateMarket: {"updateMarket", 18,
		[]string{"Update BTC/USDT-PERP liquidity parameters", "Tighten price monitoring on ETH futures", "Raise slippage factors"},
		change(func(c *txCtx) *upstream.UpdateMarket { return c.updateMarket(c.derivativeMarket()) })},
	changeNewMarket: {"newMarket", 14,
		[]string{"Launch DOGE/USDT perpetual", "New market: BTC/USDT quarterly future", "Propose SOL/USDC perpetual"},
		change((*txCtx).newMarket)},
	changeUpdateNetworkParameter: {"updateNetworkParameter", 16,
		[]string{"Lower the maker fee", "Increase PoW difficulty", "Shorten minimum enactment period"},
		change((*txCtx).updateNetworkParameter)},
	changeNewFreeform: {"newFreeform", 6,
		[]string{"Community sentiment: should the treasury fund a grants programme?", "Signal support for the roadmap"},
		change(func(*txCtx) *upstream.NewFreeform { return &upstream.NewFreeform{} })},
	changeUpdateAsset: {"updateAsset", 6,
		[]string{"Raise USDT lifetime deposit limit", "Update the quantum of WETH"},
		change(func(c *txCtx) *upstream.UpdateAsset { return c.updateAsset(c.enabledAsset()) })},
	changeNewSpotMarket: {"newSpotMarket", 6,
		[]string{"Launch ETH/USDT spot", "New spot market for VEGA/USDC"},
		change(func(c *txCtx) *upstream.NewSpotMarket { return c.newSpotMarket(-1, -1) })},
	changeUpdateSpotMarket: {"updateSpotMarket", 5,
		[]string{"Adjust SLA parameters of the VEGA/USDT spot market"},
		change((*txCtx).updateSpotMarket)},
	changeNewTransfer: {"newTransfer", 12,
		[]string{"Fund maker fee rewards for Q2", "Top up the insurance pool", "Validator ranking rewards"},
		change(func(c *txCtx) *upstream.NewTransfer {
			return &upstream.NewTransfer{Changes: c.governanceTransfer(transferOptions{})}
		})},
	changeCancelTransfer: {"cancelTransfer", 4,
		[]string{"Cancel the recurring LP reward transfer"},
		change(func(c *txCtx) *upstream.CancelTransfer {
			return &upstream.CancelTransfer{Changes: &upstream.CancelTransferConfiguration{TransferID: hexID(c.r)}}
		})},
	changeUpdateMarketState: {"updateMarketState", 8,
		[]string{"Terminate the expired election market", "Suspend trading on a misbehaving market", "Resume trading"},
		change(func(c *txCtx) *upstream.UpdateMarketState {
			return c.updateMarketState(1+c.r.IntN(3), chance(c.r, 1, 2))
		})},
	changeUpdateReferralProgram: {"updateReferralProgram", 3,
		[]string{"Referral programme season 3"},
		change((*txCtx).updateReferralProgram)},
	changeUpdateVolumeDiscountProgram: {"updateVolumeDiscountProgram", 2,
		[]string{"Volume discount programme, new tiers"},
		change((*txCtx).updateVolumeDiscountProgram)},
}

// changeOf returns a plausible change of kind k.
func (c *txCtx) changeOf(k changeKind) upstream.ProposalChangeKind { return changeKinds[k].build(c) }
