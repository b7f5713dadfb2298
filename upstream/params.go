package upstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// TxCursor is a transaction's position on the chain, which the explorer
// uses as its cursor: "<block>.<index>".
type TxCursor struct {
	Block uint64
	Index uint32
}

// String returns the explorer's form, e.g. "34514203.2".
func (c TxCursor) String() string {
	return strconv.FormatUint(c.Block, 10) + "." + strconv.FormatUint(uint64(c.Index), 10)
}

// before reports whether c is before o on the chain.
func (c TxCursor) before(o TxCursor) bool {
	return c.Block < o.Block || c.Block == o.Block && c.Index < o.Index
}

// ParseTxCursor parses the explorer's "<block>.<index>" form.
func ParseTxCursor(s string) (TxCursor, error) {
	block, index, ok := strings.Cut(s, ".")
	if ok {
		b, err1 := strconv.ParseUint(block, 10, 64)
		i, err2 := strconv.ParseUint(index, 10, 32)
		if err1 == nil && err2 == nil {
			return TxCursor{Block: b, Index: uint32(i)}, nil
		}
	}
	return TxCursor{}, fmt.Errorf("invalid transaction position %q: want <block>.<index>, e.g. 34514203.2", s)
}

// Cursor is a data-node cursor (padded base64 of a JSON object). It is
// opaque: callers store it and hand it back, never look inside.
type Cursor string

// Pagination is the data node's paging (pagination.* query parameters).
// The data node's rules: with First set, Last and Before are ignored; else
// with Last set, After is ignored; Before and After together are an error;
// sizes must be 1 to 5000 (default 1000); NewestFirst defaults to true.
type Pagination struct {
	First, Last   *int32
	After, Before Cursor
	NewestFirst   *bool
}

func (p Pagination) addTo(q url.Values) {
	if p.First != nil {
		q.Set("pagination.first", strconv.FormatInt(int64(*p.First), 10))
	}
	if p.Last != nil {
		q.Set("pagination.last", strconv.FormatInt(int64(*p.Last), 10))
	}
	if p.After != "" {
		q.Set("pagination.after", string(p.After))
	}
	if p.Before != "" {
		q.Set("pagination.before", string(p.Before))
	}
	if p.NewestFirst != nil {
		q.Set("pagination.newestFirst", strconv.FormatBool(*p.NewestFirst))
	}
}

// AssetsParams are the parameters of ListAssets.
type AssetsParams struct {
	Pagination Pagination
}

// FundingPaymentsParams are the parameters of ListFundingPayments.
type FundingPaymentsParams struct {
	// PartyID is required by the data node (64 hex characters).
	PartyID string
	// MarketID, if set, keeps the payments of that market only.
	MarketID string
	// Pagination: beware that any After or Before makes the v0.74 data node
	// answer 500 (docs/wire.md, Known defects, 1); only a first page works.
	Pagination Pagination
}

// DelegationsParams are the parameters of ListDelegations; empty filters
// are not sent.
type DelegationsParams struct {
	PartyID string
	NodeID  string
	// EpochID must be an integer. Without it the v0.74 data node returns
	// delegations of all epochs.
	EpochID    string
	Pagination Pagination
}

// TransactionsParams are the parameters of ListTransactions. The explorer
// always answers newest first. First alone gives the newest First; with
// After, the First transactions immediately newer than After. Last alone
// gives the oldest Last; with Before, the Last transactions immediately
// older than Before. 0 means not sent (default page 50, no maximum).
// First with Last, First with Before, Last with After, and Before with
// After are refused before any request: the explorer rejects the first
// three and never returns data for the last (docs/explorer.md, Paging;
// docs/wire.md, Known defects, 2).
type TransactionsParams struct {
	First, Last   int
	Before, After *TxCursor
	// CmdTypes and ExcludeCmdTypes are explorer type strings such as
	// "Submit Order", matched exactly (an unknown string matches nothing);
	// Parties matches the submitter only (not a receiver, whatever the
	// interface document says: docs/explorer.md).
	CmdTypes, ExcludeCmdTypes, Parties []string
	// BlockHeight, if set, keeps the transactions of that block
	// (filters[block.height]).
	BlockHeight *uint64
	// Submitter, if set, keeps the transactions this public key submitted
	// (filters[tx.submitter]); the explorer stores keys in lower case.
	Submitter string
}

func (p TransactionsParams) validate() error {
	switch {
	case p.First < 0 || p.Last < 0:
		return errors.New("first and last must not be negative")
	case p.First > 0 && p.Last > 0:
		return errors.New("first and last cannot be combined")
	case p.First > 0 && p.Before != nil:
		return errors.New("first and before cannot be combined")
	case p.Last > 0 && p.After != nil:
		return errors.New("last and after cannot be combined")
	case p.Before != nil && p.After != nil:
		return errors.New("before and after cannot be combined (the explorer never returns such a window)")
	}
	return nil
}

func (p TransactionsParams) query() url.Values {
	q := url.Values{}
	if p.First > 0 {
		q.Set("first", strconv.Itoa(p.First))
	}
	if p.Last > 0 {
		q.Set("last", strconv.Itoa(p.Last))
	}
	if p.Before != nil {
		q.Set("before", p.Before.String())
	}
	if p.After != nil {
		q.Set("after", p.After.String())
	}
	for _, v := range p.CmdTypes {
		q.Add("cmdTypes", v)
	}
	for _, v := range p.ExcludeCmdTypes {
		q.Add("excludeCmdTypes", v)
	}
	for _, v := range p.Parties {
		q.Add("parties", v)
	}
	if p.BlockHeight != nil {
		q.Set("filters[block.height]", strconv.FormatUint(*p.BlockHeight, 10))
	}
	if p.Submitter != "" {
		q.Set("filters[tx.submitter]", p.Submitter)
	}
	return q
}

// The keys of parameters (AppendKey) name a request's memoised upstream
// calls: two parameters have the same key only if they are equal (a nil
// slice and an empty one, a nil pointer and one to a zero, differ). Each
// field is written so that where it ends is known (a length before a
// string or a list, a presence byte before a pointer's value), in a fixed
// order, so that no two fields' bytes can be read as each other's.

// AppendKey appends p's key to b.
func (p Pagination) AppendKey(b []byte) []byte {
	b = appendKeyInt32(b, p.First)
	b = appendKeyInt32(b, p.Last)
	b = appendKeyString(b, string(p.After))
	b = appendKeyString(b, string(p.Before))
	switch {
	case p.NewestFirst == nil:
		return append(b, 0)
	case *p.NewestFirst:
		return append(b, 2)
	}
	return append(b, 1)
}

// AppendKey appends p's key to b.
func (p AssetsParams) AppendKey(b []byte) []byte {
	return p.Pagination.AppendKey(b)
}

// AppendKey appends p's key to b.
func (p FundingPaymentsParams) AppendKey(b []byte) []byte {
	b = appendKeyString(b, p.PartyID)
	b = appendKeyString(b, p.MarketID)
	return p.Pagination.AppendKey(b)
}

// AppendKey appends p's key to b.
func (p DelegationsParams) AppendKey(b []byte) []byte {
	b = appendKeyString(b, p.PartyID)
	b = appendKeyString(b, p.NodeID)
	b = appendKeyString(b, p.EpochID)
	return p.Pagination.AppendKey(b)
}

// AppendKey appends p's key to b.
func (p TransactionsParams) AppendKey(b []byte) []byte {
	b = binary.AppendVarint(b, int64(p.First))
	b = binary.AppendVarint(b, int64(p.Last))
	b = appendKeyTxCursor(b, p.Before)
	b = appendKeyTxCursor(b, p.After)
	b = appendKeyStrings(b, p.CmdTypes)
	b = appendKeyStrings(b, p.ExcludeCmdTypes)
	b = appendKeyStrings(b, p.Parties)
	if p.BlockHeight == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(append(b, 1), *p.BlockHeight)
	}
	return appendKeyString(b, p.Submitter)
}

// appendKeyString appends s's length and s.
func appendKeyString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendKeyStrings appends 0 for a nil list, else its length plus one
// and each string.
func appendKeyStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(list))+1)
	for _, s := range list {
		b = appendKeyString(b, s)
	}
	return b
}

// appendKeyInt32 appends 0 for nil, else 1 and the value.
func appendKeyInt32(b []byte, n *int32) []byte {
	if n == nil {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), int64(*n))
}

// appendKeyTxCursor appends 0 for nil, else 1 and the position.
func appendKeyTxCursor(b []byte, c *TxCursor) []byte {
	if c == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(append(b, 1), c.Block)
	return binary.AppendUvarint(b, uint64(c.Index))
}
