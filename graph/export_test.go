package graph

import (
	"encoding/json"
	"fmt"
	"hash"
	"sync/atomic"
	"testing"
)

// testCursorKeys sign the cursors of this package's tests; the test
// harness gives them to every gateway that is not given keys of its own,
// so that cursors built here (TxCursorAt) and golden files hold.
var testCursorKeys = func() *CursorKeys {
	k, err := NewCursorKeys(CursorKeyForTest)
	if err != nil {
		panic(err)
	}
	return k
}()

// CursorKeyForTest is the key text of testCursorKeys.
const CursorKeyForTest = "graph-tests-cursor-key-0123456789abcdef"

// CursorKeysForTest returns testCursorKeys.
func CursorKeysForTest() *CursorKeys { return testCursorKeys }

// TxCursorAt is the gateway's cursor of the transaction at a chain
// position, for tests that address a known transaction.
func TxCursorAt(block uint64, index uint32) string {
	return encodeCursor(testCursorKeys, listTransactions, txCursor{B: block, I: index})
}

// encodeCursor builds the opaque cursor of a row of list from its payload,
// for tests: the resolvers call their payload's own encode.
// The lists' own payloads (txCursor, dataNodeCursor, fundingCursor) encode
// themselves (txCursor's JSON byte for byte as encoding/json would write
// it); any other payload goes through encoding/json.
func encodeCursor(keys *CursorKeys, list cursorList, payload any) string {
	switch p := payload.(type) {
	case txCursor:
		return p.encode(keys)
	case dataNodeCursor:
		return p.encode(keys, list)
	case fundingCursor:
		return p.encode(keys)
	}
	body, err := json.Marshal(payload)
	if err != nil {
		// Payloads are plain structs of strings and numbers.
		panic(fmt.Sprintf("encode %s cursor: %v", list, err))
	}
	var raw [cursorBuffer]byte
	return keys.sealCursor(append(appendCursorHeader(raw[:0], list), body...))
}

// SignedCursorForTest signs an arbitrary raw form
// "<version>:<list>:<payload>" with keys, as a gateway with a bug (or a
// forger holding the key) would.
func SignedCursorForTest(keys *CursorKeys, raw string) string {
	return keys.sealCursor([]byte(raw))
}

// SpliceForTest writes {"data":<data>} as the POST transport writes the
// data a Splice holds.
func SpliceForTest(data []byte) []byte {
	s := &Splice{data: rawData(data)}
	return append(s.AppendTo([]byte(`{"data":`)), '}')
}

type rawData []byte

func (r rawData) appendEscaped(dst []byte) []byte { return appendHTMLEscaped(dst, r) }

func (r rawData) size() int { return len(r) }

// OnSubscribedForTest makes lf call f after every subscription it opens,
// once the subscription knows where it starts.
func OnSubscribedForTest(lf *LiveFeed, f func()) { lf.subscribed = f }

// SignEveryCursorForTest makes the list resolvers sign every cursor of
// their pages, whether or not the operation reads them (on), or only
// those it reads (off, as served), until t ends.
func SignEveryCursorForTest(t testing.TB, on bool) {
	old := signEveryCursor.Swap(on)
	t.Cleanup(func() { signEveryCursor.Store(old) })
}

// CountingCursorKeysForTest returns cursor keys of the key text setting
// (NewCursorKeys) that count the MACs they compute, and the count so
// far: one for each cursor signed, and one a key for each cursor
// verified.
func CountingCursorKeysForTest(setting string) (*CursorKeys, func() int64, error) {
	k, err := NewCursorKeys(setting)
	if err != nil {
		return nil, nil, err
	}
	n := new(atomic.Int64)
	for _, m := range k.keys {
		made := m.pool.New
		m.pool.New = func() any {
			s := made().(*macState)
			s.h = countingHash{Hash: s.h, n: n}
			return s
		}
	}
	return k, n.Load, nil
}

// countingHash counts the sums of a hash: one a MAC.
type countingHash struct {
	hash.Hash
	n *atomic.Int64
}

// Sum counts one sum and returns the hash's.
func (h countingHash) Sum(b []byte) []byte {
	h.n.Add(1)
	return h.Hash.Sum(b)
}
