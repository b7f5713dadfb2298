package sampleservice

// Enumerations of the interface (section 2.14 of data-service-interface.md)
// and the command kinds of the explorer (upstream-wire.md sections 1 and 5).
// The generator draws enum values from these lists; the coverage test checks
// that every value of every list appears somewhere in the default dataset.

var (
	enumPeggedReference = []string{"PEGGED_REFERENCE_UNSPECIFIED", "PEGGED_REFERENCE_MID", "PEGGED_REFERENCE_BEST_BID", "PEGGED_REFERENCE_BEST_ASK"}
	enumTimeInForce     = []string{"TIME_IN_FORCE_UNSPECIFIED", "TIME_IN_FORCE_GTC", "TIME_IN_FORCE_GTT", "TIME_IN_FORCE_IOC", "TIME_IN_FORCE_FOK", "TIME_IN_FORCE_GFA", "TIME_IN_FORCE_GFN"}
	enumSide            = []string{"SIDE_UNSPECIFIED", "SIDE_BUY", "SIDE_SELL"}
	enumOrderType       = []string{"TYPE_UNSPECIFIED", "TYPE_LIMIT", "TYPE_MARKET", "TYPE_NETWORK"}
	enumExpiryStrategy  = []string{"EXPIRY_STRATEGY_UNSPECIFIED", "EXPIRY_STRATEGY_CANCELS", "EXPIRY_STRATEGY_SUBMIT"}
	enumSizeOverride    = []string{"SIZE_OVERRIDE_SETTING_UNSPECIFIED", "SIZE_OVERRIDE_SETTING_NONE", "SIZE_OVERRIDE_SETTING_POSITION"}
	enumMarginMode      = []string{"MODE_UNSPECIFIED", "MODE_CROSS_MARGIN", "MODE_ISOLATED_MARGIN"}
	enumConditionOp     = []string{"OPERATOR_UNSPECIFIED", "OPERATOR_EQUALS", "OPERATOR_GREATER_THAN", "OPERATOR_GREATER_THAN_OR_EQUAL", "OPERATOR_LESS_THAN", "OPERATOR_LESS_THAN_OR_EQUAL"}
	enumPropertyKeyType = []string{"TYPE_UNSPECIFIED", "TYPE_EMPTY", "TYPE_INTEGER", "TYPE_STRING", "TYPE_BOOLEAN", "TYPE_DECIMAL", "TYPE_TIMESTAMP"}
	enumCompositePrice  = []string{"COMPOSITE_PRICE_TYPE_UNSPECIFIED", "COMPOSITE_PRICE_TYPE_WEIGHTED", "COMPOSITE_PRICE_TYPE_MEDIAN", "COMPOSITE_PRICE_TYPE_LAST_TRADE"}
	enumLiquidityFee    = []string{"METHOD_UNSPECIFIED", "METHOD_MARGINAL_COST", "METHOD_WEIGHTED_AVERAGE", "METHOD_CONSTANT"}
	enumTransferType    = []string{"GOVERNANCE_TRANSFER_TYPE_UNSPECIFIED", "GOVERNANCE_TRANSFER_TYPE_ALL_OR_NOTHING", "GOVERNANCE_TRANSFER_TYPE_BEST_EFFORT"}
	enumDistribution    = []string{"DISTRIBUTION_STRATEGY_UNSPECIFIED", "DISTRIBUTION_STRATEGY_PRO_RATA", "DISTRIBUTION_STRATEGY_RANK"}
	enumEntityScope     = []string{"ENTITY_SCOPE_UNSPECIFIED", "ENTITY_SCOPE_INDIVIDUALS", "ENTITY_SCOPE_TEAMS"}
	enumIndividualScope = []string{"INDIVIDUAL_SCOPE_UNSPECIFIED", "INDIVIDUAL_SCOPE_ALL", "INDIVIDUAL_SCOPE_IN_TEAM", "INDIVIDUAL_SCOPE_NOT_IN_TEAM"}
	enumDispatchMetric  = []string{"DISPATCH_METRIC_UNSPECIFIED", "DISPATCH_METRIC_MAKER_FEES_PAID", "DISPATCH_METRIC_MAKER_FEES_RECEIVED", "DISPATCH_METRIC_LP_FEES_RECEIVED", "DISPATCH_METRIC_MARKET_VALUE", "DISPATCH_METRIC_AVERAGE_POSITION", "DISPATCH_METRIC_RELATIVE_RETURN", "DISPATCH_METRIC_RETURN_VOLATILITY", "DISPATCH_METRIC_VALIDATOR_RANKING"}
	enumMarketState     = []string{"MARKET_STATE_UPDATE_TYPE_UNSPECIFIED", "MARKET_STATE_UPDATE_TYPE_TERMINATE", "MARKET_STATE_UPDATE_TYPE_SUSPEND", "MARKET_STATE_UPDATE_TYPE_RESUME"}
	enumAccountType     = []string{
		"ACCOUNT_TYPE_UNSPECIFIED", "ACCOUNT_TYPE_INSURANCE", "ACCOUNT_TYPE_SETTLEMENT", "ACCOUNT_TYPE_MARGIN",
		"ACCOUNT_TYPE_GENERAL", "ACCOUNT_TYPE_FEES_INFRASTRUCTURE", "ACCOUNT_TYPE_FEES_LIQUIDITY", "ACCOUNT_TYPE_FEES_MAKER",
		"ACCOUNT_TYPE_BOND", "ACCOUNT_TYPE_EXTERNAL", "ACCOUNT_TYPE_GLOBAL_INSURANCE", "ACCOUNT_TYPE_GLOBAL_REWARD",
		"ACCOUNT_TYPE_PENDING_TRANSFERS", "ACCOUNT_TYPE_REWARD_MAKER_PAID_FEES", "ACCOUNT_TYPE_REWARD_MAKER_RECEIVED_FEES",
		"ACCOUNT_TYPE_REWARD_LP_RECEIVED_FEES", "ACCOUNT_TYPE_REWARD_MARKET_PROPOSERS", "ACCOUNT_TYPE_HOLDING",
		"ACCOUNT_TYPE_LP_LIQUIDITY_FEES", "ACCOUNT_TYPE_LIQUIDITY_FEES_BONUS_DISTRIBUTION", "ACCOUNT_TYPE_NETWORK_TREASURY",
		"ACCOUNT_TYPE_VESTING_REWARDS", "ACCOUNT_TYPE_VESTED_REWARDS", "ACCOUNT_TYPE_REWARD_AVERAGE_POSITION",
		"ACCOUNT_TYPE_REWARD_RELATIVE_RETURN", "ACCOUNT_TYPE_REWARD_RETURN_VOLATILITY", "ACCOUNT_TYPE_REWARD_VALIDATOR_RANKING",
		"ACCOUNT_TYPE_PENDING_FEE_REFERRAL_REWARD", "ACCOUNT_TYPE_ORDER_MARGIN",
	}
	enumAssetStatus = []string{"STATUS_UNSPECIFIED", "STATUS_PROPOSED", "STATUS_REJECTED", "STATUS_PENDING_LISTING", "STATUS_ENABLED"}
)

// cmdKind is a command member of a transaction's `command` one-of.
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

// cmdKindInfo names a command kind on the wire and in the explorer, and says
// how often the generator draws it (per 10,000 ordinary transactions) and
// whether a node, rather than a party, submits it.
type cmdKindInfo struct {
	member   string
	typeName string
	weight   int
	byNode   bool
}

var cmdKinds = [numCmdKinds]cmdKindInfo{
	kindOrderSubmission:                {"orderSubmission", "Submit Order", 1700, false},
	kindOrderCancellation:              {"orderCancellation", "Cancel Order", 800, false},
	kindOrderAmendment:                 {"orderAmendment", "Amend Order", 800, false},
	kindWithdrawSubmission:             {"withdrawSubmission", "Withdraw", 90, false},
	kindProposalSubmission:             {"proposalSubmission", "Proposal", 60, false},
	kindVoteSubmission:                 {"voteSubmission", "Vote on Proposal", 250, false},
	kindLiquidityProvisionSubmission:   {"liquidityProvisionSubmission", "Liquidity Provision Order", 80, false},
	kindDelegateSubmission:             {"delegateSubmission", "Delegate", 150, false},
	kindUndelegateSubmission:           {"undelegateSubmission", "Undelegate", 70, false},
	kindLiquidityProvisionCancellation: {"liquidityProvisionCancellation", "Cancel Liquidity Provision Order", 30, false},
	kindLiquidityProvisionAmendment:    {"liquidityProvisionAmendment", "Amend Liquidity Provision Order", 60, false},
	kindTransfer:                       {"transfer", "Transfer Funds", 280, false},
	kindCancelTransfer:                 {"cancelTransfer", "Cancel Transfer Funds", 25, false},
	kindAnnounceNode:                   {"announceNode", "Register New Node", 20, true},
	kindBatchMarketInstructions:        {"batchMarketInstructions", "Batch Market Instructions", 2900, false},
	kindStopOrdersSubmission:           {"stopOrdersSubmission", "Stop Orders Submission", 200, false},
	kindStopOrdersCancellation:         {"stopOrdersCancellation", "Stop Orders Cancellation", 80, false},
	kindCreateReferralSet:              {"createReferralSet", "Create Referral Set", 25, false},
	kindUpdateReferralSet:              {"updateReferralSet", "Update Referral Set", 20, false},
	kindApplyReferralCode:              {"applyReferralCode", "Apply Referral Code", 90, false},
	kindUpdateMarginMode:               {"updateMarginMode", "Update Margin Mode", 90, false},
	kindJoinTeam:                       {"joinTeam", "Join Team", 50, false},
	kindBatchProposalSubmission:        {"batchProposalSubmission", "Batch Proposal", 150, false},
	kindUpdatePartyProfile:             {"updatePartyProfile", "Update Party Profile", 40, false},
	kindNodeVote:                       {"nodeVote", "Node Vote", 300, true},
	kindNodeSignature:                  {"nodeSignature", "Node Signature", 120, true},
	kindChainEvent:                     {"chainEvent", "Chain Event", 300, true},
	kindKeyRotateSubmission:            {"keyRotateSubmission", "Key Rotate Submission", 10, true},
	kindStateVariableProposal:          {"stateVariableProposal", "State Variable Proposal", 200, true},
	kindValidatorHeartbeat:             {"validatorHeartbeat", "Validator Heartbeat", 250, true},
	kindEthereumKeyRotateSubmission:    {"ethereumKeyRotateSubmission", "Ethereum Key Rotate Submission", 10, true},
	kindProtocolUpgradeProposal:        {"protocolUpgradeProposal", "Protocol Upgrade", 20, true},
	kindIssueSignatures:                {"issueSignatures", "Issue Signatures", 25, false},
	kindOracleDataSubmission:           {"oracleDataSubmission", "Submit Oracle Data", 245, false},
}

// validatorCommand reports whether the core classes k as a validator
// command (commands-v0.74.md §1, kinds 2002 to 2008). Nodes send those
// without proof of work, so their transaction's pow is null.
func (k cmdKind) validatorCommand() bool {
	switch k {
	case kindNodeVote, kindNodeSignature, kindChainEvent, kindKeyRotateSubmission,
		kindStateVariableProposal, kindValidatorHeartbeat, kindEthereumKeyRotateSubmission:
		return true
	}
	return false
}

// changeKind is a member of a proposal change's one-of.
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

// changeKinds holds each change kind's wire member name and how often a batch
// proposal draws it.
var changeKinds = [numChangeKinds]struct {
	member string
	weight int
}{
	changeUpdateMarket:                {"updateMarket", 18},
	changeNewMarket:                   {"newMarket", 14},
	changeUpdateNetworkParameter:      {"updateNetworkParameter", 16},
	changeNewFreeform:                 {"newFreeform", 6},
	changeUpdateAsset:                 {"updateAsset", 6},
	changeNewSpotMarket:               {"newSpotMarket", 6},
	changeUpdateSpotMarket:            {"updateSpotMarket", 5},
	changeNewTransfer:                 {"newTransfer", 12},
	changeCancelTransfer:              {"cancelTransfer", 4},
	changeUpdateMarketState:           {"updateMarketState", 8},
	changeUpdateReferralProgram:       {"updateReferralProgram", 3},
	changeUpdateVolumeDiscountProgram: {"updateVolumeDiscountProgram", 2},
}
