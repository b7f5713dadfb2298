package graph

// TxCursorAt is the gateway's cursor of the transaction at a chain
// position, for tests that address a known transaction.
func TxCursorAt(block uint64, index uint32) string {
	return encodeCursor(listTransactions, txCursor{B: block, I: index})
}
