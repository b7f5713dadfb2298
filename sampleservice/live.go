package sampleservice

// Blocks appended while the service runs: the chain grows at its head, as
// the real network's does, so that a client polling the explorer (the
// gateway's live feed) sees new transactions arrive.
//
// The explorer's index is a chain of immutable snapshots: an append builds
// a new txIndex that extends the previous one's slices (appending beyond
// their length, which no reader of an older snapshot looks at) and clones
// its two small maps, then publishes it atomically. A request reads one
// snapshot from start to end, so it sees a consistent chain, and appends
// cost what they add, not the size of the chain.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tradenet/gateway/internal/ctxwait"
)

// BlocksConfig makes the service produce new blocks over time.
type BlocksConfig struct {
	// Interval between two new blocks; 0 (the default) produces none.
	// The Server appends them; Service.AppendBlock appends one at any time.
	Interval time.Duration
	// PerBlock is the most transactions a new block holds (each holds
	// 1..PerBlock, drawn from the seed and the block's height); 0 means 4.
	PerBlock int
}

// Block size bounds.
const (
	defaultBlockSize = 4
	// maxBlockSize bounds a block's transactions (txRow.index is 16 bits).
	maxBlockSize = 1000
	// maxAppend bounds the transactions of one AppendTransactions call.
	maxAppend = 100_000
)

// controlBlocksPath is the control route that appends a block
// (Config.Control).
const controlBlocksPath = "/_sample/blocks"

// errNotAppendable is the answer of a service whose dataset was not
// generated: appended transactions come from the generator, which names
// the dataset's parties, assets and nodes.
var errNotAppendable = errors.New("sampleservice: appending blocks needs a generated dataset (Config.Data is hand-made)")

// AppendedTx is a transaction appended to the chain, as the control route
// reports it.
type AppendedTx struct {
	Block     uint64 `json:"block,string"`
	Index     uint32 `json:"index"`
	Hash      string `json:"hash"`
	Type      string `json:"type"`
	Submitter string `json:"submitter"`
	// Cursor is the explorer's cursor of the transaction, "<block>.<index>".
	Cursor string `json:"cursor"`
}

// validate checks the configuration and applies its default.
func (c *BlocksConfig) validate() error {
	switch {
	case c.Interval < 0:
		return fmt.Errorf("block interval %s is negative", c.Interval)
	case c.PerBlock < 0 || c.PerBlock > maxBlockSize:
		return fmt.Errorf("block size %d is out of range 1..%d", c.PerBlock, maxBlockSize)
	case c.PerBlock == 0:
		c.PerBlock = defaultBlockSize
	}
	return nil
}

// chainSource is a snapshot of a generated chain that has grown: the
// generated transactions followed by the appended ones, whose rows it
// holds. Appended transaction (height, index) draws its row and body from
// its own random streams, so its content does not depend on the chain's
// length.
type chainSource struct {
	base *txSource
	n    int     // base.Len()
	rows []txRow // appended transactions, oldest first
}

func (c *chainSource) Len() int { return c.n + len(c.rows) }

func (c *chainSource) Meta(i int) TxMeta {
	if i < c.n {
		return c.base.Meta(i)
	}
	row := c.rows[i-c.n]
	return c.base.meta(row, cmdKinds[row.kind].typeName)
}

func (c *chainSource) AppendJSON(dst []byte, i int) []byte {
	if i < c.n {
		return c.base.AppendJSON(dst, i)
	}
	row := c.rows[i-c.n]
	g := c.base.g
	return appendWireJSON(dst, g.transaction(c.bodyRand(row), i, row, nil, cmdKinds[row.kind].typeName), i)
}

// Hash is the first draw of the body stream, as for generated ones.
func (c *chainSource) Hash(i int) string {
	if i < c.n {
		return c.base.Hash(i)
	}
	return hexString(c.bodyRand(c.rows[i-c.n]), 64, hexUpper)
}

func (c *chainSource) bodyRand(row txRow) *rand.Rand {
	return newRand(c.base.g.seed, streamLiveBody, liveKey(c.base.g.firstBlock+uint64(row.block), int(row.index)))
}

// liveKey numbers transaction index of block height, for its streams.
func liveKey(height uint64, index int) uint64 { return height<<16 | uint64(index) }

// extend returns a snapshot of x extended by src's transactions from
// x.len() on (src extends x.src). x is not modified, but its slices'
// spare capacity is: only the newest snapshot may be extended.
func (x *txIndex) extend(src TransactionSource) (*txIndex, error) {
	y := &txIndex{
		src:         src,
		keys:        x.keys,
		types:       x.types,
		typeIDs:     maps.Clone(x.typeIDs),
		bySubmitter: maps.Clone(x.bySubmitter),
		hashes:      x.hashes,
	}
	from, to := x.len(), src.Len()
	hashes := make(map[string]int32, to-from)
	hasher, _ := src.(TxHasher)
	var raw []byte
	for i := from; i < to; i++ {
		if err := y.add(i, src.Meta(i)); err != nil {
			return nil, err
		}
		var h string
		if hasher != nil {
			h = hasher.Hash(i)
		} else {
			h, raw = decodeHash(src, i, raw)
		}
		if h != "" {
			hashes[strings.ToUpper(h)] = int32(i)
		}
	}
	x.hashes.add(hashes)
	return y, nil
}

// add records appended transactions' hashes. A hash already known among
// the appended ones becomes hashNotUnique; the initial chain's are not
// consulted (building that map costs seconds at a large scale, and random
// 256-bit hashes do not collide).
func (h *hashIndex) add(hashes map[string]int32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.appended == nil {
		h.appended = make(map[string]int32, len(hashes))
	}
	for hash, pos := range hashes {
		if _, dup := h.appended[hash]; dup {
			pos = hashNotUnique
		}
		h.appended[hash] = pos
	}
}

// AppendBlock appends one block at the chain's newest height + 1 holding
// 1..PerBlock transactions, all drawn from the seed and the block's height:
// a realistic mix of command kinds, submitted by the dataset's parties and
// nodes, referring to its assets, markets and nodes. It returns the new
// transactions, oldest first. It fails only when the dataset is hand-made.
func (s *Service) AppendBlock() ([]AppendedTx, error) { return s.grow(0, 0) }

// AppendBlockOf appends one block of exactly n transactions (1..1000).
func (s *Service) AppendBlockOf(n int) ([]AppendedTx, error) {
	if n < 1 || n > maxBlockSize {
		return nil, fmt.Errorf("sampleservice: block size %d is out of range 1..%d", n, maxBlockSize)
	}
	return s.grow(n, n)
}

// AppendTransactions appends n transactions (1..100,000) in as many
// consecutive blocks as their drawn sizes (1..PerBlock) need; the last
// block may be cut short.
func (s *Service) AppendTransactions(n int) ([]AppendedTx, error) {
	if n < 1 || n > maxAppend {
		return nil, fmt.Errorf("sampleservice: %d transactions is out of range 1..%d", n, maxAppend)
	}
	return s.grow(n, 0)
}

// grow appends blocks until total transactions are appended (total 0: one
// block); size, when not 0, is every block's size, else each block's size
// is drawn from its height.
func (s *Service) grow(total, size int) ([]AppendedTx, error) {
	if s.generated == nil {
		return nil, errNotAppendable
	}
	s.appendMu.Lock()
	defer s.appendMu.Unlock()

	x := s.txs.Load()
	src := &chainSource{base: s.generated, n: s.generated.Len()}
	if prev, ok := x.src.(*chainSource); ok {
		src.rows = prev.rows
	}
	g := s.generated.g
	head := x.keys[x.len()-1].block // a generated chain is never empty
	added := 0
	for first := true; first || added < total; first = false {
		height := head + 1
		k := size
		if k == 0 {
			k = 1 + newRand(g.seed, streamLiveLayout, height).IntN(s.blocks.PerBlock)
		}
		if total > 0 {
			k = min(k, total-added)
		}
		for j := range k {
			row := txRow{block: uint32(height - g.firstBlock), index: uint16(j)}
			g.drawRow(newRand(g.seed, streamLiveIndex, liveKey(height, j)), &row, nil)
			src.rows = append(src.rows, row)
		}
		added += k
		head = height
	}

	y, err := x.extend(src)
	if err != nil {
		return nil, fmt.Errorf("sampleservice: append: %w", err)
	}
	s.txs.Store(y)
	s.fresh.Store(&freshness{height: utoa(head), time: itoa(g.blockTime(head))})

	out := make([]AppendedTx, 0, added)
	for i := x.len(); i < y.len(); i++ {
		m := src.Meta(i)
		out = append(out, AppendedTx{
			Block: m.Block, Index: m.Index, Hash: src.Hash(i), Type: m.Type, Submitter: m.Parties[0],
			Cursor: utoa(m.Block) + "." + strconv.FormatUint(uint64(m.Index), 10),
		})
	}
	if s.onAppend != nil {
		s.onAppend(out)
	}
	return out, nil
}

// Transactions returns the chain served now: the dataset's transactions
// followed by any appended since. It is a snapshot; later appends do not
// change it.
func (s *Service) Transactions() TransactionSource { return s.txs.Load().src }

// produceBlocks appends a block every interval until ctx is done.
func (s *Service) produceBlocks(ctx context.Context, interval time.Duration) {
	// New refused a hand-made dataset with an interval, so AppendBlock
	// cannot fail.
	ctxwait.Every(ctx, interval, func() { _, _ = s.AppendBlock() })
}

// appendedBlock is the control route's answer.
type appendedBlock struct {
	Block        uint64       `json:"block,string"`
	Transactions []AppendedTx `json:"transactions"`
}

// serveControl serves POST /_sample/blocks[?transactions=N]: it appends one
// block now (of N transactions, else of a drawn size) and answers what it
// appended.
func (s *Service) serveControl(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.writeError(w, r, plainError(http.StatusMethodNotAllowed, grpcUnimplemented,
			"Method Not Allowed: "+controlBlocksPath+" takes POST"), false)
		return
	}
	grow := s.AppendBlock
	if v := r.URL.Query().Get("transactions"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxBlockSize {
			s.writeError(w, r, plainError(http.StatusBadRequest, grpcInvalidArgument,
				fmt.Sprintf("transactions must be a whole number from 1 to %d, not %q", maxBlockSize, v)), false)
			return
		}
		grow = func() ([]AppendedTx, error) { return s.AppendBlockOf(n) }
	}
	txs, err := grow()
	if err != nil {
		s.writeError(w, r, plainError(http.StatusConflict, grpcFailedPrecondition, err.Error()), false)
		return
	}
	b, _ := json.Marshal(appendedBlock{Block: txs[len(txs)-1].Block, Transactions: txs})
	writeBody(w, r, http.StatusOK, "application/json", b, nil)
}
