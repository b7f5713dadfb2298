package upstream

// Chain events (the chainEvent command: docs/wire.md, Command kinds and
// One-of groups): what validators saw happen on a foreign chain (a bridge
// deposit, a stake, a multisig change, a contract call's result), submitted
// for the network to act on. Every one-of group here is one nullable
// pointer per member, at most one set; an object with none set (an empty
// BuiltinAssetEvent, a member a later version adds) decodes to all nil.
//
// Two wire names mean something else here than on the command: nonce is
// a u64 in ChainEvent but the contract's nonce as a string in the multisig
// events; blockHeight in EthContractCallEvent is an Ethereum height.

// ChainEvent is an event on a foreign chain, reported by a validator. Its
// event is a one-of: at most one of Builtin, ERC20, StakingEvent,
// ERC20Multisig and ContractCall is set.
type ChainEvent struct {
	// TxID is the foreign-chain transaction that gave rise to the event.
	TxID string `json:"txId"`
	// Nonce is the event's own one-time number against replay (a u64, like
	// the command's).
	Nonce         Uint64                `json:"nonce"`
	Builtin       *BuiltinAssetEvent    `json:"builtin,omitempty"`
	ERC20         *ERC20Event           `json:"erc20,omitempty"`
	StakingEvent  *StakingEvent         `json:"stakingEvent,omitempty"`
	ERC20Multisig *ERC20MultiSigEvent   `json:"erc20Multisig,omitempty"`
	ContractCall  *EthContractCallEvent `json:"contractCall,omitempty"`
}

// IsCommand marks the member of the Command union.
func (*ChainEvent) IsCommand() {}

// BuiltinAssetEvent is a deposit or withdrawal of a built-in asset (a
// one-of: at most one is set; the wire may send it with neither).
type BuiltinAssetEvent struct {
	Deposit    *BuiltinAssetDeposit    `json:"deposit,omitempty"`
	Withdrawal *BuiltinAssetWithdrawal `json:"withdrawal,omitempty"`
}

// BuiltinAssetDeposit credits a party with a built-in asset.
type BuiltinAssetDeposit struct {
	VegaAssetID string `json:"vegaAssetId"`
	PartyID     string `json:"partyId"`
	// Amount is an integer string in the asset's decimals.
	Amount string `json:"amount"`
}

// PartyRef is the party credited (GraphQL BuiltinAssetDeposit.party).
func (d *BuiltinAssetDeposit) PartyRef() *Party { return &Party{ID: d.PartyID} }

// BuiltinAssetWithdrawal debits a party's built-in asset; same shape as
// BuiltinAssetDeposit, a message of its own on the wire.
type BuiltinAssetWithdrawal struct {
	VegaAssetID string `json:"vegaAssetId"`
	PartyID     string `json:"partyId"`
	Amount      string `json:"amount"`
}

// PartyRef is the party debited (GraphQL BuiltinAssetWithdrawal.party).
func (w *BuiltinAssetWithdrawal) PartyRef() *Party { return &Party{ID: w.PartyID} }

// ERC20Event is an event of the ERC-20 bridge. Its action is a one-of:
// at most one of the pointers is set; BridgeStopped and BridgeResumed are
// scalar members, set (normally to true) when they are the action.
type ERC20Event struct {
	// Index is the log index within the Ethereum transaction.
	Index Uint64 `json:"index"`
	// Block is the Ethereum block number.
	Block              Uint64                   `json:"block"`
	AssetList          *ERC20AssetList          `json:"assetList,omitempty"`
	AssetDelist        *ERC20AssetDelist        `json:"assetDelist,omitempty"`
	Deposit            *ERC20Deposit            `json:"deposit,omitempty"`
	Withdrawal         *ERC20Withdrawal         `json:"withdrawal,omitempty"`
	AssetLimitsUpdated *ERC20AssetLimitsUpdated `json:"assetLimitsUpdated,omitempty"`
	BridgeStopped      *bool                    `json:"bridgeStopped,omitempty"`
	BridgeResumed      *bool                    `json:"bridgeResumed,omitempty"`
}

// ERC20AssetList is a token allow-listed on the bridge.
type ERC20AssetList struct {
	VegaAssetID string `json:"vegaAssetId"`
	// AssetSource is the token's contract address.
	AssetSource string `json:"assetSource"`
}

// ERC20AssetDelist is a token removed from the bridge.
type ERC20AssetDelist struct {
	VegaAssetID string `json:"vegaAssetId"`
}

// ERC20Deposit is a token deposit through the bridge.
type ERC20Deposit struct {
	VegaAssetID           string `json:"vegaAssetId"`
	SourceEthereumAddress string `json:"sourceEthereumAddress"`
	TargetPartyID         string `json:"targetPartyId"`
	// Amount is an integer string in the asset's decimals.
	Amount string `json:"amount"`
}

// TargetPartyRef is the party credited (GraphQL ERC20Deposit.targetParty).
func (d *ERC20Deposit) TargetPartyRef() *Party { return &Party{ID: d.TargetPartyID} }

// ERC20Withdrawal is a withdrawal released by the bridge.
type ERC20Withdrawal struct {
	VegaAssetID           string `json:"vegaAssetId"`
	TargetEthereumAddress string `json:"targetEthereumAddress"`
	ReferenceNonce        string `json:"referenceNonce"`
}

// ERC20AssetLimitsUpdated is a change of a token's deposit limits on the
// bridge.
type ERC20AssetLimitsUpdated struct {
	VegaAssetID           string `json:"vegaAssetId"`
	SourceEthereumAddress string `json:"sourceEthereumAddress"`
	// LifetimeLimits is plural on the wire, unlike ERC20.LifetimeLimit.
	LifetimeLimits    string `json:"lifetimeLimits"`
	WithdrawThreshold string `json:"withdrawThreshold"`
}

// StakingEvent is an event of the staking bridge or vesting contract. Its
// action is a one-of: at most one of the pointers is set.
type StakingEvent struct {
	Index          Uint64            `json:"index"`
	Block          Uint64            `json:"block"`
	StakeDeposited *StakeDeposited   `json:"stakeDeposited,omitempty"`
	StakeRemoved   *StakeRemoved     `json:"stakeRemoved,omitempty"`
	TotalSupply    *StakeTotalSupply `json:"totalSupply,omitempty"`
}

// StakeDeposited is stake credited to a network key.
type StakeDeposited struct {
	EthereumAddress string `json:"ethereumAddress"`
	VegaPublicKey   string `json:"vegaPublicKey"`
	Amount          string `json:"amount"`
	// BlockTime is the Ethereum block's time, in Unix seconds.
	BlockTime UnixSeconds `json:"blockTime"`
}

// StakeRemoved is stake debited from a network key; same shape as
// StakeDeposited, a message of its own on the wire.
type StakeRemoved struct {
	EthereumAddress string      `json:"ethereumAddress"`
	VegaPublicKey   string      `json:"vegaPublicKey"`
	Amount          string      `json:"amount"`
	BlockTime       UnixSeconds `json:"blockTime"`
}

// StakeTotalSupply is the staking token's total supply.
type StakeTotalSupply struct {
	TokenAddress string `json:"tokenAddress"`
	TotalSupply  string `json:"totalSupply"`
}

// ERC20MultiSigEvent is an event of the bridge's multisig contract. Its
// action is a one-of: at most one of the pointers is set.
type ERC20MultiSigEvent struct {
	Index         Uint64              `json:"index"`
	Block         Uint64              `json:"block"`
	SignerAdded   *ERC20SignerAdded   `json:"signerAdded,omitempty"`
	SignerRemoved *ERC20SignerRemoved `json:"signerRemoved,omitempty"`
	ThresholdSet  *ERC20ThresholdSet  `json:"thresholdSet,omitempty"`
}

// ERC20SignerAdded is a signer added to the multisig contract.
type ERC20SignerAdded struct {
	NewSigner string `json:"newSigner"`
	// Nonce is the contract's nonce: a protobuf string, not the u64 of
	// ChainEvent.Nonce.
	Nonce     string      `json:"nonce"`
	BlockTime UnixSeconds `json:"blockTime"`
}

// ERC20SignerRemoved is a signer removed from the multisig contract.
type ERC20SignerRemoved struct {
	OldSigner string      `json:"oldSigner"`
	Nonce     string      `json:"nonce"`
	BlockTime UnixSeconds `json:"blockTime"`
}

// ERC20ThresholdSet is a new signature threshold of the multisig
// contract.
type ERC20ThresholdSet struct {
	// NewThreshold is a u32 on the wire (a JSON number).
	NewThreshold Uint64      `json:"newThreshold"`
	Nonce        string      `json:"nonce"`
	BlockTime    UnixSeconds `json:"blockTime"`
}

// EthContractCallEvent is the result of an Ethereum contract call made
// for a data source.
type EthContractCallEvent struct {
	SpecID string `json:"specId"`
	// BlockHeight is an Ethereum block height, not the network's.
	BlockHeight Uint64 `json:"blockHeight"`
	// BlockTime is the Ethereum block's time in Unix seconds (a u64 on the
	// wire; an int64 holds every time that fits RFC 3339).
	BlockTime UnixSeconds `json:"blockTime"`
	// Result is the ABI-packed result as base64; nil when empty.
	Result *string `json:"result"`
	// Error is absent unless the call failed.
	Error         *string `json:"error,omitempty"`
	SourceChainID *Uint64 `json:"sourceChainId,omitempty"`
}
