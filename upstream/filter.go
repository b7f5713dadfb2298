package upstream

import (
	"slices"
	"strings"
)

// TxFilter is the filter of a TransactionsParams (its fields other than
// paging) as a test of one transaction, with the explorer's semantics
// (docs/explorer.md): command types matched exactly, parties and
// submitter against the submitter (public keys, in any letter case), the
// block height exactly. An explorer list answers the transactions its
// filter matches; the live feed's fan-out filters with it, and the cache
// keeps a list answer across a block none of whose transactions it
// matches. Testing it allocates nothing.
type TxFilter struct {
	cmdTypes, excludeCmdTypes, parties []string
	submitter                          string
	blockHeight                        *uint64
}

// NewTxFilter is p's filter (p is copied: later changes to it do not
// reach the filter).
func NewTxFilter(p TransactionsParams) TxFilter {
	f := TxFilter{
		cmdTypes:        slices.Clone(p.CmdTypes),
		excludeCmdTypes: slices.Clone(p.ExcludeCmdTypes),
		parties:         slices.Clone(p.Parties),
		submitter:       p.Submitter,
	}
	if p.BlockHeight != nil {
		h := *p.BlockHeight
		f.blockHeight = &h
	}
	return f
}

// Params is the filter as explorer parameters (no paging).
func (f *TxFilter) Params() TransactionsParams {
	return TransactionsParams{
		CmdTypes:        f.cmdTypes,
		ExcludeCmdTypes: f.excludeCmdTypes,
		Parties:         f.parties,
		Submitter:       f.submitter,
		BlockHeight:     f.blockHeight,
	}
}

// empty reports whether the filter matches every transaction.
func (f *TxFilter) empty() bool {
	return len(f.cmdTypes) == 0 && len(f.excludeCmdTypes) == 0 && len(f.parties) == 0 && f.submitter == "" && f.blockHeight == nil
}

// Match reports whether the explorer lists tx under this filter.
func (f *TxFilter) Match(tx *Transaction) bool {
	if len(f.cmdTypes) > 0 && !slices.Contains(f.cmdTypes, tx.Type) {
		return false
	}
	if len(f.excludeCmdTypes) > 0 && slices.Contains(f.excludeCmdTypes, tx.Type) {
		return false
	}
	if len(f.parties) > 0 && !containsFold(f.parties, tx.Submitter) {
		return false
	}
	if f.submitter != "" && !strings.EqualFold(f.submitter, tx.Submitter) {
		return false
	}
	return f.blockHeight == nil || *f.blockHeight == uint64(tx.Block)
}

func containsFold(keys []string, key string) bool {
	for _, k := range keys {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}
