package live

import "github.com/tradenet/gateway/upstream"

// filter is SubscribeOptions.Filter as the fan-out tests it: the
// explorer's own semantics, shared with the upstream cache
// (upstream.TxFilter).
type filter = upstream.TxFilter

func newFilter(p upstream.TransactionsParams) filter { return upstream.NewTxFilter(p) }
