package live

import (
	"slices"
	"strings"

	"github.com/tradenet/gateway/upstream"
)

// filter is SubscribeOptions.Filter as the fan-out tests it, with the
// explorer's semantics (upstream-wire.md §5): command types matched
// exactly, parties and submitter against the submitter (public keys, in
// any letter case), the block height exactly. Testing it allocates
// nothing.
type filter struct {
	cmdTypes, excludeCmdTypes, parties []string
	submitter                          string
	blockHeight                        *uint64
}

func newFilter(p upstream.TransactionsParams) filter {
	f := filter{
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

// params is the filter as explorer parameters (for catching up).
func (f *filter) params() upstream.TransactionsParams {
	return upstream.TransactionsParams{
		CmdTypes:        f.cmdTypes,
		ExcludeCmdTypes: f.excludeCmdTypes,
		Parties:         f.parties,
		Submitter:       f.submitter,
		BlockHeight:     f.blockHeight,
	}
}

func (f *filter) match(tx *upstream.Transaction) bool {
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
