package sampleservice

import (
	"strings"

	"github.com/tradenet/gateway/upstream"
)

// Validator commands: chain events (every group and action of
// docs/wire.md, Command kinds) and state variable proposals (scalar, vector and
// matrix values).

// The bodies of the validator, node-operator and oracle commands
// (cmdKinds' builders).

func (c *txCtx) nodeVote() *upstream.NodeVote {
	r := c.r
	return &upstream.NodeVote{Reference: hexID(r), Type: upstream.NodeVoteType(pick(r, []string{"TYPE_STAKE_DEPOSITED", "TYPE_STAKE_REMOVED", "TYPE_FUNDS_DEPOSITED", "TYPE_SIGNER_ADDED", "TYPE_SIGNER_REMOVED", "TYPE_BRIDGE_STOPPED", "TYPE_BRIDGE_RESUMED", "TYPE_ASSET_LISTED", "TYPE_LIMITS_UPDATED", "TYPE_STAKE_TOTAL_SUPPLY", "TYPE_SIGNER_THRESHOLD_SET", "TYPE_GOVERNANCE_VALIDATE_ASSET", "TYPE_ETHEREUM_CONTRACT_CALL_RESULT"}))}
}

func (c *txCtx) nodeSignature() *upstream.NodeSignature {
	r := c.r
	sig := make([]byte, 65)
	for i := range sig {
		sig[i] = byte(r.Uint32())
	}
	return &upstream.NodeSignature{ID: hexID(r), Sig: base64Bytes(sig), Kind: upstream.NodeSignatureKind(pick(r, []string{"NODE_SIGNATURE_KIND_ASSET_WITHDRAWAL", "NODE_SIGNATURE_KIND_ASSET_NEW", "NODE_SIGNATURE_KIND_ASSET_UPDATE", "NODE_SIGNATURE_KIND_ERC20_MULTISIG_SIGNER_ADDED"}))}
}

func (c *txCtx) keyRotateSubmission() *upstream.KeyRotateSubmission {
	r := c.r
	return &upstream.KeyRotateSubmission{NewPubKeyIndex: upstream.Uint64(2 + r.IntN(5)), TargetBlock: upstream.Uint64(c.block + 100 + uint64(r.IntN(1000))), NewPubKey: hexID(r), CurrentPubKeyHash: hexID(r)}
}

// newStateVariableProposal returns a state variable proposal of scalars
// (half of them), vectors or, rarely, a matrix.
func (c *txCtx) newStateVariableProposal() *upstream.StateVariableProposal {
	k := stateVarScalar
	if x := c.r.IntN(20); x >= 10 {
		k = stateVarVector
	} else if x == 0 {
		k = stateVarMatrix
	}
	return c.stateVariableProposal(k)
}

func (c *txCtx) validatorHeartbeat() *upstream.ValidatorHeartbeat {
	n := c.node()
	return &upstream.ValidatorHeartbeat{NodeID: n.id, EthereumSignature: c.sig("eth"), VegaSignature: c.sig("vega/ed25519"), Message: hexString(c.r, 64, hexLower)}
}

func (c *txCtx) ethereumKeyRotateSubmission() *upstream.EthereumKeyRotateSubmission {
	n := c.node()
	return &upstream.EthereumKeyRotateSubmission{NewAddress: ethAddress(c.r), CurrentAddress: n.ethAddress, TargetBlock: upstream.Uint64(c.block + 500), EthereumSignature: c.sig("eth"), SubmitterAddress: ""}
}

func (c *txCtx) protocolUpgradeProposal() *upstream.ProtocolUpgradeProposal {
	return &upstream.ProtocolUpgradeProposal{UpgradeBlockHeight: upstream.Uint64((c.block/100_000 + 1) * 100_000), VegaReleaseTag: pick(c.r, []string{"v0.74.0", "v0.74.1", "v0.74.3", "v0.75.0-preview.2"})}
}

func (c *txCtx) issueSignatures() *upstream.IssueSignatures {
	r := c.r
	return &upstream.IssueSignatures{Submitter: ethAddress(r), Kind: upstream.NodeSignatureKind(pick(r, []string{"NODE_SIGNATURE_KIND_ERC20_MULTISIG_SIGNER_ADDED", "NODE_SIGNATURE_KIND_ERC20_MULTISIG_SIGNER_REMOVED"})), ValidatorNodeID: pick(r, c.g.nodes).id}
}

func (c *txCtx) oracleDataSubmission() *upstream.OracleDataSubmission {
	r := c.r
	payload := `{"prices.BTC.value":"` + itoa(between(r, 6_500_000, 7_300_000)) + `","prices.BTC.timestamp":"` + itoa(c.now/1e9) + `"}`
	return &upstream.OracleDataSubmission{Source: upstream.OracleSource(pick(r, []string{"ORACLE_SOURCE_JSON", "ORACLE_SOURCE_OPEN_ORACLE"})), Payload: base64Bytes([]byte(payload))}
}

// chainEventKind is one action of one chain event group.
type chainEventKind uint8

const (
	ceBuiltinDeposit chainEventKind = iota
	ceBuiltinWithdrawal
	ceBuiltinEmpty
	ceERC20AssetList
	ceERC20AssetDelist
	ceERC20Deposit
	ceERC20Withdrawal
	ceERC20AssetLimitsUpdated
	ceERC20BridgeStopped
	ceERC20BridgeResumed
	ceStakeDeposited
	ceStakeRemoved
	ceStakeTotalSupply
	ceSignerAdded
	ceSignerRemoved
	ceThresholdSet
	ceContractCall
	numChainEventKinds
)

// chainEventKinds names each action "group.action" (the notable
// transaction "chainEvent.<name>" carries it) and says how often a drawn
// chain event is one (weight 0: only in its notable transaction).
var chainEventKinds = [numChainEventKinds]struct {
	name   string
	weight int
}{
	ceBuiltinDeposit:          {"builtin.deposit", 4},
	ceBuiltinWithdrawal:       {"builtin.withdrawal", 2},
	ceBuiltinEmpty:            {"builtin.empty", 0},
	ceERC20AssetList:          {"erc20.assetList", 1},
	ceERC20AssetDelist:        {"erc20.assetDelist", 0},
	ceERC20Deposit:            {"erc20.deposit", 40},
	ceERC20Withdrawal:         {"erc20.withdrawal", 12},
	ceERC20AssetLimitsUpdated: {"erc20.assetLimitsUpdated", 1},
	ceERC20BridgeStopped:      {"erc20.bridgeStopped", 0},
	ceERC20BridgeResumed:      {"erc20.bridgeResumed", 0},
	ceStakeDeposited:          {"stakingEvent.stakeDeposited", 15},
	ceStakeRemoved:            {"stakingEvent.stakeRemoved", 7},
	ceStakeTotalSupply:        {"stakingEvent.totalSupply", 1},
	ceSignerAdded:             {"erc20Multisig.signerAdded", 1},
	ceSignerRemoved:           {"erc20Multisig.signerRemoved", 1},
	ceThresholdSet:            {"erc20Multisig.thresholdSet", 0},
	ceContractCall:            {"contractCall", 15},
}

var chainEventCumulative = cumulateWeights(len(chainEventKinds), func(i int) int { return chainEventKinds[i].weight })

// ethBlock is the Ethereum block height at the transaction's time.
func (c *txCtx) ethBlock() uint64 {
	return 19_430_000 + uint64(c.now-genesis.UnixNano())/12e9
}

// sourcedAsset returns an enabled asset with a token contract (erc20) or a
// built-in one.
func (c *txCtx) sourcedAsset(erc20 bool) Asset {
	for {
		a := c.g.assets[c.enabledAsset()]
		if (a.Details.ERC20 != nil) == erc20 {
			return a
		}
	}
}

// contractNonce is a multisig contract nonce: a 256-bit decimal.
func (c *txCtx) contractNonce() string {
	return itoa(between(c.r, 1, 9)) + digits(c.r, 20+c.r.IntN(50))
}

// chainEvent returns a drawn chain event.
func (c *txCtx) chainEvent() *upstream.ChainEvent {
	return c.chainEventOf(chainEventKind(weighted(c.r, chainEventCumulative)))
}

// chainEventOf returns a chain event of kind k.
func (c *txCtx) chainEventOf(k chainEventKind) *upstream.ChainEvent {
	r := c.r
	e := &upstream.ChainEvent{TxID: "0x" + hexID(r), Nonce: upstream.Uint64(r.Uint64())}
	ethBlock := upstream.Uint64(c.ethBlock())
	logIndex := upstream.Uint64(r.IntN(300))
	ethTime := upstream.UnixSeconds(c.now/1e9 - between(r, 30, 600))
	switch k {
	case ceBuiltinDeposit, ceBuiltinWithdrawal, ceBuiltinEmpty:
		a := c.sourcedAsset(false)
		m := upstream.BuiltinAssetDeposit{VegaAssetID: a.ID, PartyID: c.g.randomParty(r), Amount: scaled(r, between(r, 1, 10_000), int(a.Details.Decimals))}
		e.Builtin = &upstream.BuiltinAssetEvent{}
		switch k {
		case ceBuiltinDeposit:
			e.Builtin.Deposit = &m
		case ceBuiltinWithdrawal:
			e.Builtin.Withdrawal = (*upstream.BuiltinAssetWithdrawal)(&m)
		}
	case ceERC20AssetList, ceERC20AssetDelist, ceERC20Deposit, ceERC20Withdrawal, ceERC20AssetLimitsUpdated, ceERC20BridgeStopped, ceERC20BridgeResumed:
		a := c.sourcedAsset(true)
		ev := &upstream.ERC20Event{Index: logIndex, Block: ethBlock}
		switch k {
		case ceERC20AssetList:
			ev.AssetList = &upstream.ERC20AssetList{VegaAssetID: a.ID, AssetSource: a.Details.ERC20.ContractAddress}
		case ceERC20AssetDelist:
			ev.AssetDelist = &upstream.ERC20AssetDelist{VegaAssetID: a.ID}
		case ceERC20Deposit:
			ev.Deposit = &upstream.ERC20Deposit{
				VegaAssetID:           a.ID,
				SourceEthereumAddress: ethAddress(r),
				TargetPartyID:         c.g.randomParty(r),
				Amount:                scaled(r, between(r, 1, 100_000), int(a.Details.Decimals)),
			}
		case ceERC20Withdrawal:
			ev.Withdrawal = &upstream.ERC20Withdrawal{VegaAssetID: a.ID, TargetEthereumAddress: ethAddress(r), ReferenceNonce: c.contractNonce()}
		case ceERC20AssetLimitsUpdated:
			ev.AssetLimitsUpdated = &upstream.ERC20AssetLimitsUpdated{
				VegaAssetID:           a.ID,
				SourceEthereumAddress: a.Details.ERC20.ContractAddress,
				LifetimeLimits:        scaled(r, between(r, 1, 100)*100_000, int(a.Details.Decimals)),
				WithdrawThreshold:     scaled(r, between(r, 1, 100)*1_000, int(a.Details.Decimals)),
			}
		case ceERC20BridgeStopped:
			ev.BridgeStopped = ptr(true)
		case ceERC20BridgeResumed:
			ev.BridgeResumed = ptr(true)
		}
		e.ERC20 = ev
	case ceStakeDeposited, ceStakeRemoved, ceStakeTotalSupply:
		ev := &upstream.StakingEvent{Index: logIndex, Block: ethBlock}
		m := upstream.StakeDeposited{
			EthereumAddress: ethAddress(r),
			VegaPublicKey:   c.g.randomParty(r),
			Amount:          scaled(r, between(r, 1, 100_000), 18),
			BlockTime:       ethTime,
		}
		switch k {
		case ceStakeDeposited:
			ev.StakeDeposited = &m
		case ceStakeRemoved:
			ev.StakeRemoved = (*upstream.StakeRemoved)(&m)
		case ceStakeTotalSupply:
			vega := c.g.assets[c.g.asset("VEGA")]
			ev.TotalSupply = &upstream.StakeTotalSupply{TokenAddress: vega.Details.ERC20.ContractAddress, TotalSupply: scaled(r, between(r, 64_000_000, 65_000_000), 18)}
		}
		e.StakingEvent = ev
	case ceSignerAdded, ceSignerRemoved, ceThresholdSet:
		ev := &upstream.ERC20MultiSigEvent{Index: logIndex, Block: ethBlock}
		switch k {
		case ceSignerAdded:
			ev.SignerAdded = &upstream.ERC20SignerAdded{NewSigner: pick(r, c.g.nodes).ethAddress, Nonce: c.contractNonce(), BlockTime: ethTime}
		case ceSignerRemoved:
			ev.SignerRemoved = &upstream.ERC20SignerRemoved{OldSigner: pick(r, c.g.nodes).ethAddress, Nonce: c.contractNonce(), BlockTime: ethTime}
		case ceThresholdSet:
			ev.ThresholdSet = &upstream.ERC20ThresholdSet{NewThreshold: upstream.Uint64(pick(r, []int{500, 667, 700})), Nonce: c.contractNonce(), BlockTime: ethTime}
		}
		e.ERC20Multisig = ev
	case ceContractCall:
		// An ABI-packed int256: a price with 8 decimals.
		result := make([]byte, 32)
		price := uint64(between(r, 6_500_000, 7_300_000)) * 100_000_000 / 100
		for i := range 8 {
			result[31-i] = byte(price >> (8 * i))
		}
		e.ContractCall = &upstream.EthContractCallEvent{
			SpecID:      hexID(r),
			BlockHeight: ethBlock,
			BlockTime:   ethTime,
			Result:      base64Bytes(result),
		}
		if chance(r, 1, 3) {
			e.ContractCall.SourceChainID = ptr(upstream.Uint64(pick(r, []int{1, 100, 42161})))
		}
	}
	return e
}

// stateVarKind is the value shape of a state variable proposal.
type stateVarKind uint8

const (
	stateVarScalar stateVarKind = iota
	stateVarVector
	stateVarMatrix
)

// stateVariableProposal returns a state variable proposal: risk factors
// (scalars), probability of trading (vectors) or, rarely, a matrix.
func (c *txCtx) stateVariableProposal(k stateVarKind) *upstream.StateVariableProposal {
	r := c.r
	m := c.tradedMarket()
	p := &upstream.StateValueProposal{EventID: "time_" + itoa(c.now/1e9), Kvb: []upstream.KeyValueBundle{}}
	decimal := func() string { return "0." + digits(r, 6) }
	vector := func(n int) upstream.VectorValue {
		v := upstream.VectorValue{Value: []string{}}
		for range n {
			v.Value = append(v.Value, decimal())
		}
		return v
	}
	switch k {
	case stateVarScalar:
		p.StateVarID = m.id + "_risk-factors"
		for _, key := range []string{"short", "long"} {
			p.Kvb = append(p.Kvb, upstream.KeyValueBundle{Key: key, Tolerance: "0.000001", Value: &upstream.StateVarValue{ScalarVal: &upstream.ScalarValue{Value: decimal()}}})
		}
	case stateVarVector:
		p.StateVarID = m.id + "_probability_of_trading"
		n := 1 + r.IntN(5)
		for _, key := range []string{"bidOffset", "bidProbability", "askOffset", "askProbability"} {
			v := vector(n)
			p.Kvb = append(p.Kvb, upstream.KeyValueBundle{Key: key, Tolerance: "0.000001", Value: &upstream.StateVarValue{VectorVal: &v}})
		}
	case stateVarMatrix:
		p.StateVarID = m.id + "_" + strings.ToLower(pick(r, []string{"Correlation", "Covariance"}))
		mat := &upstream.MatrixValue{Value: []upstream.VectorValue{}}
		for range 2 + r.IntN(2) {
			mat.Value = append(mat.Value, vector(3))
		}
		p.Kvb = append(p.Kvb, upstream.KeyValueBundle{Key: "matrix", Tolerance: "0.0001", Value: &upstream.StateVarValue{MatrixVal: mat}})
	}
	return &upstream.StateVariableProposal{Proposal: p}
}
