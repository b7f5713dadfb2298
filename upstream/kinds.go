package upstream

import (
	"sync"
	"time"
)

// What the client knows of the explorer's head, and the kind of each
// answer (CacheKind), judged from it. The chain has instant finality: a
// listed transaction never changes; a block below the explorer's head
// (the newest block holding a transaction) never gains or loses one; only
// the newest rows change, and only when a block arrives.
//
// The head is learned from the explorer's own answers (every row is at or
// below the head; a fresh unfiltered newest page names it exactly) and
// from the live feed (Client.ObserveHead), which sees a new block first:
// its poller asks WithoutCache, and replicas following it hear its
// batches and heartbeats. The head only moves forward.

// chainHead is the explorer's head as the client knows it.
type chainHead struct {
	mu    sync.Mutex
	block uint64 // 0: unknown
	// at is the newest position known on the chain (in block).
	at TxCursor
	// confirmed is when the head was last read to be block (zero: not
	// since block became known, which a lower bound does).
	confirmed time.Time
	// moved is called, outside the lock, with the new block when the head
	// moves.
	moved func(block uint64)
}

func (h *chainHead) view() headView {
	h.mu.Lock()
	defer h.mu.Unlock()
	return headView{block: h.block, at: h.at, confirmed: h.confirmed}
}

// observe records that the chain reaches pos or, when exact, that pos
// was its newest transaction at time at.
func (h *chainHead) observe(pos TxCursor, exact bool, at time.Time) {
	block := pos.Block
	if block == 0 {
		return
	}
	h.mu.Lock()
	moved := block > h.block
	if h.at.before(pos) {
		h.at = pos
	}
	switch {
	case moved:
		h.block = block
		h.confirmed = time.Time{}
		if exact {
			h.confirmed = at
		}
	case exact && block == h.block && at.After(h.confirmed):
		h.confirmed = at
	}
	h.mu.Unlock()
	if moved && h.moved != nil {
		h.moved(block)
	}
}

// ObserveHead tells the client where the explorer's head is: head is its
// newest transaction, read just now when exact (a poll of the newest
// page, a poller's heartbeat), else a position known to be on the chain
// (a batch of new transactions). The live feed calls it
// (live.Config.OnHead); answers reaching an older head are dropped from
// the cache at once.
func (c *Client) ObserveHead(head TxCursor, exact bool) {
	c.head.observe(head, exact, time.Now())
}

// ObserveTransactions tells the client the chain's transactions after
// prev: txs, in chain order, all of them up to the last (a batch of the
// live feed, with no gap: live.Config.OnTransactions). The explorer lists
// cached until the next block that are known true at prev (or later) and
// list none of txs are kept, true at the last of txs, instead of being
// dropped when the head moves there; the others are dropped (README,
// Caching upstream answers). The head moves to the last of txs, as
// ObserveHead(last, false) would. txs not in chain order, or not after
// prev, tell nothing for sure: the head moves, and every answer it
// passes is dropped.
func (c *Client) ObserveTransactions(prev TxCursor, txs []Transaction) {
	if len(txs) == 0 {
		return
	}
	now := time.Now()
	ordered := true
	for i, p := range txs {
		if pos := p.Position(); !prev.before(pos) || i > 0 && !txs[i-1].Position().before(pos) {
			ordered = false
			break
		}
	}
	if ordered {
		c.cache.transactions(prev, txs, now)
	}
	newest := txs[len(txs)-1].Position()
	for i := range txs {
		if newest.before(txs[i].Position()) {
			newest = txs[i].Position()
		}
	}
	c.head.observe(newest, false, now)
}

// newestPosition is the newest position of rows, zero for none.
func newestPosition(rows []Transaction) TxCursor {
	var n TxCursor
	for i := range rows {
		if p := rows[i].Position(); n.before(p) {
			n = p
		}
	}
	return n
}

// transactionsKind is the kind of a page of ListTransactions asked with p,
// given head, the head block known when it was asked (0: unknown), and
// the head block the answer is true at when it is CacheUntilNextBlock.
//
//   - A page of one block below the head is immutable.
//   - A page paged by cursor (or the oldest rows) whose rows all lie below
//     the head and that cannot reach it is immutable: rows just before a
//     cursor at or below the head; a full page of rows just after a
//     cursor; a full page of the oldest rows.
//   - Any other page (the newest rows, a page reaching the head, an empty
//     page) is true until the next block.
//
// With the head unknown, nothing is immutable.
func transactionsKind(p TransactionsParams, rows []Transaction, head uint64) (CacheKind, uint64) {
	newest := newestPosition(rows).Block
	atHead := max(head, newest)
	if p.namesHead() {
		// The newest rows, unfiltered: true at the head they show (an
		// answer older than the head known is not kept).
		return CacheUntilNextBlock, newest
	}
	if head == 0 {
		return CacheUntilNextBlock, atHead
	}
	if p.BlockHeight != nil {
		if *p.BlockHeight < head {
			return CacheImmutable, 0
		}
		return CacheUntilNextBlock, atHead
	}
	if len(rows) == 0 || newest >= head {
		return CacheUntilNextBlock, atHead
	}
	switch {
	case p.After != nil:
		if p.First > 0 && len(rows) >= p.First {
			return CacheImmutable, 0
		}
	case p.Before != nil:
		if p.Before.Block <= head {
			return CacheImmutable, 0
		}
	case p.Last > 0:
		if len(rows) >= p.Last {
			return CacheImmutable, 0
		}
	}
	return CacheUntilNextBlock, atHead
}

// namesHead reports whether p asks for the explorer's newest rows, unfiltered:
// such a page, fresh, names the head exactly.
func (p TransactionsParams) namesHead() bool {
	return p.After == nil && p.Before == nil && p.Last == 0 && p.BlockHeight == nil && p.Submitter == "" &&
		len(p.CmdTypes) == 0 && len(p.ExcludeCmdTypes) == 0 && len(p.Parties) == 0
}
