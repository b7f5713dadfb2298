package live

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tradenet/gateway/upstream"
)

// wireBatch is a Batch on the wire: the cursor in the explorer's
// "<block>.<index>" form and each transaction in the explorer's own JSON
// (upstream.Transaction encodes to the form it decodes from), so a batch
// read back is the batch written.
type wireBatch struct {
	Prev         *string                `json:"prev"`
	Transactions []upstream.Transaction `json:"transactions"`
}

func encodeBatch(b Batch) ([]byte, error) {
	prev := b.Prev.String()
	msg, err := json.Marshal(wireBatch{Prev: &prev, Transactions: b.Transactions})
	if err != nil {
		return nil, fmt.Errorf("encode live batch after %s: %w", b.Prev, err)
	}
	if len(msg) > MaxBatchBytes {
		return nil, fmt.Errorf("encode live batch after %s: %d bytes, more than %d", b.Prev, len(msg), MaxBatchBytes)
	}
	return msg, nil
}

// decodeBatch also checks what the fan-out relies on: a batch's
// transactions are in chain order, all newer than Prev.
func decodeBatch(msg []byte) (b Batch, err error) {
	// The transaction decoders are the upstream package's, written for
	// the explorer's bodies; a message from elsewhere must not take the
	// process down whatever it holds.
	defer func() {
		if r := recover(); r != nil {
			b, err = Batch{}, fmt.Errorf("decode live batch: %v", r)
		}
	}()
	if len(msg) > MaxBatchBytes {
		// Refused before parsing: decoding a large message costs several
		// times its size.
		return Batch{}, fmt.Errorf("decode live batch: %d bytes, more than %d", len(msg), MaxBatchBytes)
	}
	var w wireBatch
	if err := json.Unmarshal(msg, &w); err != nil {
		return Batch{}, fmt.Errorf("decode live batch: %w", err)
	}
	if w.Prev == nil {
		return Batch{}, errors.New("decode live batch: no prev position")
	}
	if b.Prev, err = upstream.ParseTxCursor(*w.Prev); err != nil {
		return Batch{}, fmt.Errorf("decode live batch: %w", err)
	}
	last := b.Prev
	for i := range w.Transactions {
		pos := w.Transactions[i].Position()
		if w.Transactions[i].Index < 0 || !older(last, pos) {
			return Batch{}, fmt.Errorf("decode live batch: transaction %d at %s does not follow %s", i, pos, last)
		}
		last = pos
	}
	b.Transactions = w.Transactions
	return b, nil
}

// decodeCommands returns copies of txs with every command decoded whole,
// as the client's whole decoding of a page gave them. The client decodes
// a page's commands only as far as an operation reads them
// (upstream/command_lazy.go), but the feed's transactions go to every
// subscription, whatever each reads; so the feed decodes them all, and a
// command that does not decode fails the request that brought it (a
// poll, a catch-up) as it did. (A batch's transactions are decoded whole
// with their own type.)
func decodeCommands(txs []upstream.Transaction) ([]upstream.Transaction, error) {
	return upstream.WholeCommands(txs, upstream.EndpointTransactions)
}

// older reports whether position a is before b on the chain.
func older(a, b upstream.TxCursor) bool {
	return a.Block < b.Block || a.Block == b.Block && a.Index < b.Index
}
