package sampleservice

// This file is the contract between the HTTP layer of the sample data service
// (server*.go, paging*.go, errors*.go, ratelimit*.go, faults*.go) and the
// dataset generator (gen_*.go). The generator fills a Dataset; the HTTP layer
// sorts, filters, pages and encodes it exactly as the real services do.

// DatasetOptions says which dataset to generate. The same options always
// produce the same dataset, byte for byte.
type DatasetOptions struct {
	// Seed drives every random choice of the generator.
	Seed int64
	// Scale multiplies the number of transactions: 1 is the default dataset
	// (at least 5,000 transactions); 200 gives a million. Transactions are
	// generated on demand from their index, so a large scale costs no memory
	// beyond the small per-transaction metadata index.
	Scale int
}

// Dataset is everything the sample service serves.
type Dataset struct {
	// Assets in any order; the HTTP layer sorts them by ID.
	Assets []Asset
	// FundingPayments in any order; the HTTP layer sorts them.
	FundingPayments []FundingPayment
	// Delegations in any order; the HTTP layer sorts them.
	Delegations []Delegation
	// Transactions, addressed by position: 0 is the oldest.
	Transactions TransactionSource

	// Parties, Markets (perpetual markets with funding payments) and Nodes
	// name the ids the dataset uses, for tests and examples.
	Parties []string
	Markets []string
	Nodes   []string

	// BlockHeight and BlockTime (Unix nanoseconds) are the freshness the data
	// node reports in X-Block-Height and X-Block-Timestamp.
	BlockHeight uint64
	BlockTime   int64

	// Notable maps a name to the position of a transaction that tests want
	// to find: "command.<member>" (one of each command kind),
	// "change.<member>" (a batch proposal with one change of each kind), and
	// edge cases such as "enum.unknown", "size.uint64max", "rationale.long",
	// "asset.dangling", "failed.code70". gen_notable.go lists them all.
	Notable map[string]int
}

// TransactionSource yields transactions by position without holding them all.
type TransactionSource interface {
	// Len is the number of transactions.
	Len() int
	// Meta returns what paging and filtering need, cheaply, for transaction i
	// (0 = oldest; positions are in ascending (block, index) order).
	Meta(i int) TxMeta
	// AppendJSON appends the compact wire JSON of transaction i (the object
	// that appears in the explorer's "transactions" array) to dst.
	AppendJSON(dst []byte, i int) []byte
}

// TxMeta is the part of a transaction that the explorer pages and filters on.
type TxMeta struct {
	Block uint64
	Index uint32
	// Type is the explorer's type string, e.g. "Batch Market Instructions".
	Type string
	// Parties are the submitter and any receivers. The explorer's
	// `parties` filter matches the submitter (the first) only.
	Parties []string
}

// Asset is an asset exactly as the data node encodes it. 64-bit integers
// are JSON strings (`,string`); the one-of details member is a pointer that
// is omitted when unset.
type Asset struct {
	ID      string       `json:"id"`
	Details AssetDetails `json:"details"`
	// Status is an enum name such as "STATUS_ENABLED".
	Status string `json:"status"`
}

// AssetDetails holds the asset's descriptive fields and its source one-of.
type AssetDetails struct {
	Name         string        `json:"name"`
	Symbol       string        `json:"symbol"`
	Decimals     uint64        `json:"decimals,string"`
	Quantum      string        `json:"quantum"`
	BuiltinAsset *BuiltinAsset `json:"builtinAsset,omitempty"`
	ERC20        *ERC20        `json:"erc20,omitempty"`
}

// BuiltinAsset is the built-in asset source.
type BuiltinAsset struct {
	MaxFaucetAmountMint string `json:"maxFaucetAmountMint"`
}

// ERC20 is the token-contract asset source.
type ERC20 struct {
	ContractAddress   string `json:"contractAddress"`
	LifetimeLimit     string `json:"lifetimeLimit"`
	WithdrawThreshold string `json:"withdrawThreshold"`
}

// FundingPayment is a funding payment exactly as the data node encodes it.
type FundingPayment struct {
	PartyID          string `json:"partyId"`
	MarketID         string `json:"marketId"`
	FundingPeriodSeq uint64 `json:"fundingPeriodSeq,string"`
	// Timestamp is Unix nanoseconds; it is also the row's vegaTime.
	Timestamp int64  `json:"timestamp,string"`
	Amount    string `json:"amount"`
}

// Delegation is a delegation exactly as the data node encodes it.
type Delegation struct {
	Party    string `json:"party"`
	NodeID   string `json:"nodeId"`
	EpochSeq string `json:"epochSeq"`
	Amount   string `json:"amount"`
	// VegaTime (Unix nanoseconds) is not on the wire: it orders rows and
	// goes into cursors.
	VegaTime int64 `json:"-"`
}
