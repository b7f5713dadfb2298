package graph

import (
	"bytes"
	"net/http"
)

// TxCursorAt is the gateway's cursor of the transaction at a chain
// position, for tests that address a known transaction.
func TxCursorAt(block uint64, index uint32) string {
	return encodeCursor(listTransactions, txCursor{B: block, I: index})
}

// SpliceForTest writes {"data":<data>} through directPOST's splice.
func SpliceForTest(data []byte) []byte {
	rec := &bufferWriter{header: http.Header{}}
	s := &splice{data: rawData(data)}
	w := &spliceWriter{ResponseWriter: rec, s: s}
	_, _ = w.Write([]byte(`{"data":1e999}`))
	return rec.buf.Bytes()
}

type bufferWriter struct {
	header http.Header
	buf    bytes.Buffer
}

func (b *bufferWriter) Header() http.Header         { return b.header }
func (b *bufferWriter) Write(p []byte) (int, error) { return b.buf.Write(p) }
func (b *bufferWriter) WriteHeader(int)             {}

type rawData []byte

func (r rawData) appendEscaped(dst []byte) []byte { return appendHTMLEscaped(dst, r) }

func (r rawData) size() int { return len(r) }
