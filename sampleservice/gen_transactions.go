package sampleservice

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// txRow is the compact per-transaction index: what Meta needs and what the
// body generator needs to agree with it. 12 bytes a transaction.
type txRow struct {
	block     uint32 // offset from generator.firstBlock
	index     uint16 // position within the block
	kind      cmdKind
	code      uint8  // 0, 70 or 71, with rowOwnType
	submitter uint16 // index into generator.submitters
	receiver  uint16 // 1 + index into generator.submitters; 0 for none
}

// txSource generates transactions on demand from their position. Its index
// is built once; AppendJSON draws the body from a random stream derived
// from (seed, position), so it is safe for concurrent use and gives the same
// bytes on every call.
type txSource struct {
	g        *generator
	rows     []txRow
	specials map[int]*specialSpec
	notable  map[string]int
	// single holds, per submitter, a one-element Parties slice (cap 1, so
	// an append by the caller copies).
	single [][]string
}

// rowOwnType, set in txRow.code, marks a notable transaction whose type
// string is its spec's own (specialSpec.typeName), not its kind's.
const rowOwnType uint8 = 0x80

// result is the transaction's result code.
func (row txRow) result() uint8 { return row.code &^ rowOwnType }

var kindCumulative = cumulateWeights(len(cmdKinds), func(i int) int { return cmdKinds[i].weight })

// Submitter offsets in generator.submitters.
const (
	firstNodeKey  = numParties
	firstOutsider = numParties + numNodes
)

func newTxSource(g *generator, n int) *txSource {
	s := &txSource{g: g, rows: make([]txRow, n), specials: map[int]*specialSpec{}, notable: map[string]int{}}
	for _, sub := range g.submitters {
		s.single = append(s.single, []string{sub}[:1:1])
	}

	// Block layout: a few transactions per block, some blocks without any.
	layout := newRand(g.seed, streamLayout, 0)
	var block uint32
	for i := 0; i < n; {
		size := 1 + layout.IntN(4) + layout.IntN(4)
		if layout.IntN(50) == 0 {
			size += 10 + layout.IntN(20) // a burst
		}
		for j := 0; j < size && i < n; j++ {
			s.rows[i].block = block
			s.rows[i].index = uint16(j)
			i++
		}
		block += 1 + uint32(layout.IntN(3))
	}

	// Notable transactions: the first list spread evenly over the whole
	// range (where they have always been), the history among the oldest
	// transactions, the rest spread over the range between them.
	s.place(notables.spread, n)
	s.place(notables.history, n/50)
	s.place(notables.later, n)

	for i := range s.rows {
		s.indexRow(i)
	}
	return s
}

// place spreads specs evenly over the first n positions, each at the next
// position no earlier spec holds.
func (s *txSource) place(specs []specialSpec, n int) {
	for k := range specs {
		pos := (2*k + 1) * n / (2 * len(specs))
		for s.specials[pos] != nil {
			pos = (pos + 1) % len(s.rows)
		}
		sp := &specs[k]
		s.specials[pos] = sp
		for _, name := range sp.names {
			if _, dup := s.notable[name]; dup {
				panic("sampleservice: duplicate notable name " + name)
			}
			s.notable[name] = pos
		}
	}
}

// indexRow draws the kind, submitter, receiver and result code of
// transaction i from its own stream.
func (s *txSource) indexRow(i int) {
	s.g.drawRow(newRand(s.g.seed, streamTxIndex, uint64(i)), &s.rows[i], s.specials[i])
}

// drawRow draws a row's kind, submitter, receiver and result code from r
// (sp, when set, fixes the kind and code of a notable transaction).
func (g *generator) drawRow(r *rand.Rand, row *txRow, sp *specialSpec) {
	if sp != nil {
		row.kind = sp.kind
		row.code = sp.code
		if sp.typeName != "" {
			row.code |= rowOwnType
		}
	} else {
		row.kind = cmdKind(weighted(r, kindCumulative))
		if chance(r, 1, 60) {
			row.code = 70
			if row.kind == kindBatchMarketInstructions && chance(r, 2, 3) {
				row.code = 71
			}
		}
	}
	switch {
	case row.kind.byNode():
		row.submitter = uint16(firstNodeKey + r.IntN(numNodes))
	case chance(r, 1, 10):
		row.submitter = uint16(firstOutsider + r.IntN(numOutsiders))
	default:
		// Some parties are far more active than others.
		p := r.IntN(numParties)
		if chance(r, 1, 2) {
			p = r.IntN(numFundingParties)
		}
		row.submitter = uint16(p)
	}
	if row.kind == kindTransfer {
		// Most transfers go to another party's general account; the rest
		// fund reward pools (no receiving party).
		if (sp != nil && !sp.noReceiver) || (sp == nil && chance(r, 3, 4)) {
			to := r.IntN(numParties - 1)
			if to >= int(row.submitter) {
				to++
			}
			row.receiver = uint16(to + 1)
		}
	}
}

// Len is the number of transactions.
func (s *txSource) Len() int { return len(s.rows) }

// Meta returns transaction i's block, index, type and parties.
func (s *txSource) Meta(i int) TxMeta {
	row := s.rows[i]
	return s.meta(row, s.typeName(i, row))
}

// meta is the TxMeta of row, whose type string is typeName.
func (s *txSource) meta(row txRow, typeName string) TxMeta {
	m := TxMeta{
		Block: s.g.firstBlock + uint64(row.block),
		Index: uint32(row.index),
		Type:  typeName,
	}
	if row.receiver == 0 {
		m.Parties = s.single[row.submitter]
	} else {
		m.Parties = []string{s.g.submitters[row.submitter], s.g.submitters[row.receiver-1]}
	}
	return m
}

// typeName is the explorer's type string of transaction i.
func (s *txSource) typeName(i int, row txRow) string {
	if row.code&rowOwnType != 0 {
		return s.specials[i].typeName
	}
	return cmdKinds[row.kind].typeName
}

// AppendJSON appends transaction i's compact wire JSON to dst.
func (s *txSource) AppendJSON(dst []byte, i int) []byte {
	return appendWireJSON(dst, s.transaction(i), i)
}

// appendWireJSON appends tx's compact wire JSON (of the transaction at
// position pos) to dst.
func appendWireJSON(dst []byte, tx *upstream.Transaction, pos int) []byte {
	// upstream.Transaction writes compact JSON, without escaping <, > and
	// & (as the upstream's encoder): called directly, not through an
	// encoder that would scan its output again.
	b, err := tx.MarshalJSON()
	if err != nil {
		// Every upstream type encodes; an error here is a generator bug.
		panic("sampleservice: encode transaction " + strconv.Itoa(pos) + ": " + err.Error())
	}
	return append(dst, b...)
}

// txCtx is what a command builder needs: the generator, the transaction's
// random stream, and where and by whom the transaction was made.
type txCtx struct {
	g         *generator
	r         *rand.Rand
	pos       int
	block     uint64
	now       int64 // block time, Unix nanoseconds
	submitter string
	subIdx    int
	receiver  string // "" when none
}

// Hash returns transaction i's hash without building the transaction: it
// is the first draw of the transaction's random stream (transaction
// relies on that order). It makes the explorer's lookup index cheap
// (TxHasher).
func (s *txSource) Hash(i int) string {
	return hexString(newRand(s.g.seed, streamTxBody, uint64(i)), 64, hexUpper)
}

// transaction builds transaction i.
func (s *txSource) transaction(i int) *upstream.Transaction {
	row := s.rows[i]
	return s.g.transaction(newRand(s.g.seed, streamTxBody, uint64(i)), i, row, s.specials[i], s.typeName(i, row))
}

// transaction builds the transaction at position pos described by row (sp
// set for a notable one), drawing its body from r.
func (g *generator) transaction(r *rand.Rand, pos int, row txRow, sp *specialSpec, typeName string) *upstream.Transaction {
	block := g.firstBlock + uint64(row.block)
	c := &txCtx{g: g, r: r, pos: pos, block: block, now: g.blockTime(block), subIdx: int(row.submitter)}
	c.submitter = g.submitters[row.submitter]
	if row.receiver != 0 {
		c.receiver = g.submitters[row.receiver-1]
	}

	tx := &upstream.Transaction{
		Block: upstream.Uint64(block),
		Index: upstream.Int32(row.index),
		Hash:  hexString(r, 64, hexUpper), // the first draw: Hash

		Submitter: c.submitter,
		Type:      typeName,
		Code:      upstream.Int64(row.result()),
		Signature: &upstream.Signature{Value: hexString(r, 128, hexLower), Algo: "vega/ed25519", Version: 1},
		// The explorer's createdAt has whole seconds.
		CreatedAt: upstream.Time{Time: time.Unix(0, c.now).UTC().Truncate(time.Second)},
		Version:   upstream.TransactionVersionV3,
		Pow:       &upstream.ProofOfWork{Tid: hexString(r, 64, hexUpper), Nonce: upstream.Uint64(r.Uint64N(200_000))},
	}
	if row.kind.validatorCommand() {
		tx.Pow = nil
	}
	if chance(r, 1, 20) {
		tx.Version = upstream.TransactionVersionV2
	}
	tx.Command.Nonce = upstream.Uint64(r.Uint64())
	tx.Command.BlockHeight = upstream.Uint64(block - 1 - uint64(r.IntN(3)))

	if sp != nil {
		tx.Command.Kind = sp.build(c)
		if sp.version != "" {
			tx.Version = upstream.TransactionVersion(sp.version)
		}
	} else {
		tx.Command.Kind = c.buildCommand(row.kind)
	}
	if code := row.result(); code != 0 {
		tx.Error = ptr(c.errorText(row.kind, code))
	}
	return tx
}

// errorText is the upstream's error message for a failed transaction.
func (c *txCtx) errorText(kind cmdKind, code uint8) string {
	r := c.r
	if code == 71 {
		return pick(r, []string{
			"0 (OrderError: Invalid Market ID), 2 (OrderError: margin check failed)",
			"1 (OrderError: Order Not Found)",
			"0 (OrderError: Invalid Persistence), 3 (OrderError: Post Only Order Would Trade)",
			"2 (insufficient funds to pay fees)",
		})
	}
	switch kind {
	case kindOrderSubmission, kindOrderAmendment, kindBatchMarketInstructions, kindStopOrdersSubmission:
		return pick(r, []string{"OrderError: margin check failed", "insufficient funds to pay fees", "OrderError: Invalid Market ID", "OrderError: Order Not Found", "isolated margin check failed"})
	case kindProposalSubmission, kindBatchProposalSubmission:
		return pick(r, []string{"proposal terms invalid: enactment time is too late", "party has insufficient associated governance tokens in their staking account to submit proposal request", "proposal failed: the proposal is invalid: invalid asset"})
	case kindVoteSubmission:
		return "proposal is not open for voting"
	case kindTransfer, kindWithdrawSubmission:
		return pick(r, []string{"could not pay the fee for transfer: not enough funds to transfer", "invalid withdrawal, amount exceeds balance"})
	case kindDelegateSubmission, kindUndelegateSubmission:
		return "delegation amount is lower than the minimum amount for delegation for a validator"
	}
	return pick(r, []string{"tx already processed", "invalid signature", "internal error"})
}
