package sampleservice

import "github.com/tradenet/gateway/upstream"

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

// The data node's records are package upstream's types, which encode
// themselves as the data node does (64-bit integers as JSON strings, the
// asset source one-of a member present only when set).
type (
	Asset          = upstream.Asset
	AssetDetails   = upstream.AssetDetails
	BuiltinAsset   = upstream.BuiltinAsset
	ERC20          = upstream.ERC20
	FundingPayment = upstream.FundingPayment
)

// Delegation is a delegation as the data node holds it: the record it
// encodes and the time it orders rows by.
type Delegation struct {
	upstream.Delegation
	// VegaTime (Unix nanoseconds) is not on the wire: it orders rows and
	// goes into cursors.
	VegaTime int64 `json:"-"`
}
