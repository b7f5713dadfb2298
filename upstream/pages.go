package upstream

import "time"

// Edge is one row of a data-node page and its cursor.
type Edge[T any] struct {
	Node   T      `json:"node"`
	Cursor Cursor `json:"cursor"`
}

// Page is a page of a data-node list.
type Page[T any] struct {
	Edges    []Edge[T]  `json:"edges"`
	PageInfo PageBounds `json:"pageInfo"`
	// Freshness is how current the data node's data was.
	Freshness Freshness `json:"-"`
	// derived is shared by the callers of one flight (Derive).
	derived *Derived
}

// PageBounds is a data-node page's cursors and whether rows lie beyond
// them. It is exact: without a cursor HasPreviousPage is false; after one it
// is true. An empty page has empty cursors.
//
// (It is not called PageInfo, nor are pages' edges AssetEdge and so on,
// because gqlgen autobinds GraphQL types to same-named types of this
// package, and the schema's Relay types of those names carry the gateway's
// own cursors, not the upstream's.)
type PageBounds struct {
	HasNextPage     bool   `json:"hasNextPage"`
	HasPreviousPage bool   `json:"hasPreviousPage"`
	StartCursor     Cursor `json:"startCursor"`
	EndCursor       Cursor `json:"endCursor"`
}

// Pages of the three data-node lists.
type (
	AssetPage          = Page[Asset]
	FundingPaymentPage = Page[FundingPayment]
	DelegationPage     = Page[Delegation]
)

// TransactionPage is a page of explorer transactions, newest first. The
// explorer gives no page info: ask for one more row than needed to learn
// whether more exist. Rows the explorer fails to decode are left out, so a
// page can be shorter than asked.
type TransactionPage struct {
	Transactions []Transaction `json:"transactions"`
}

// Freshness is the data node's block height and block time when it
// answered (X-Block-Height, X-Block-Timestamp); zero when not reported.
type Freshness struct {
	BlockHeight uint64
	BlockTime   time.Time
}
