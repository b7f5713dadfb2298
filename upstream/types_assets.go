package upstream

// Asset is an asset available on the network (data node /api/v2/assets).
type Asset struct {
	ID      string       `json:"id"`
	Details AssetDetails `json:"details"`
	Status  AssetStatus  `json:"status"`
	// NotFound is set, with the lookup's error, on an asset that a
	// reference names and the data node does not know (MissingAsset).
	NotFound error `json:"-"`
}

// AssetDetails holds an asset's descriptive fields and its source, a
// one-of: at most one of BuiltinAsset and ERC20 is set (neither for an
// asset with no source).
type AssetDetails struct {
	Name   string `json:"name"`
	Symbol string `json:"symbol"`
	// Decimals is sent as a uint64 string ("18"); the interface document
	// types it string, and Uint64's GraphQL form is that same string.
	Decimals Uint64 `json:"decimals"`
	// Quantum is the smallest economically meaningful amount.
	Quantum      string        `json:"quantum"`
	BuiltinAsset *BuiltinAsset `json:"builtinAsset,omitempty"`
	ERC20        *ERC20        `json:"erc20,omitempty"`
}

// BuiltinAsset is the source of an asset built into the network.
type BuiltinAsset struct {
	MaxFaucetAmountMint string `json:"maxFaucetAmountMint"`
}

// ERC20 is the source of an asset backed by a token contract.
type ERC20 struct {
	ContractAddress string `json:"contractAddress"`
	// LifetimeLimit is the lifetime deposit limit per address, read against
	// the asset's decimals.
	LifetimeLimit string `json:"lifetimeLimit"`
	// WithdrawThreshold is the largest amount withdrawable instantly;
	// larger withdrawals are delayed.
	WithdrawThreshold string `json:"withdrawThreshold"`
}

// IsNode and GetID make Asset satisfy the GraphQL interface Node (the
// interface gqlgen generates for it), so the schema can declare
// "type Asset implements Node".
func (Asset) IsNode() {}

// GetID returns the asset's id, its Node id.
func (a Asset) GetID() string { return a.ID }
