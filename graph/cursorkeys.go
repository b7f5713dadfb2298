package graph

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"hash"
	"sync"

	"github.com/tradenet/gateway/internal/keytext"
)

// CursorKeys sign the gateway's cursors and verify the cursors clients
// send back: the first key signs, every key verifies, so that a key can be
// rotated without breaking clients in the middle of paging (add the new
// key first, keep the old one second until its cursors have aged out).
// Replicas behind one load balancer need the same keys. A CursorKeys is
// safe for concurrent use.
type CursorKeys struct {
	keys []*cursorMAC
	// random: a key of this process's own (RandomCursorKeys), whose
	// cursors fail after a restart.
	random bool
}

// MinCursorKeyLength is the shortest key text NewCursorKeys accepts (32
// characters: `openssl rand -hex 32` gives 64).
const MinCursorKeyLength = 32

// cursorKeyDomain separates the HMAC key derived from a key text from any
// other use of the same text.
const cursorKeyDomain = "tradenet-gateway cursor MAC v3\x00"

// NewCursorKeys reads the CURSOR_KEY setting: one key, or several
// separated by commas (the first signs). Errors never quote a key.
func NewCursorKeys(setting string) (*CursorKeys, error) {
	texts, err := keytext.Split(setting, "cursor key", MinCursorKeyLength)
	if err != nil {
		return nil, err
	}
	var k CursorKeys
	for _, text := range texts {
		sum := sha256.Sum256([]byte(cursorKeyDomain + text))
		k.keys = append(k.keys, newCursorMAC(sum[:]))
	}
	return &k, nil
}

// RandomCursorKeys returns a key of this process's own: its cursors are
// refused by any other process, and by this one after a restart.
func RandomCursorKeys() *CursorKeys {
	key := make([]byte, sha256.Size)
	_, _ = rand.Read(key) // never fails (crypto/rand crashes the program rather)
	return &CursorKeys{keys: []*cursorMAC{newCursorMAC(key)}, random: true}
}

// cursorMACSize is how much of the HMAC-SHA256 a cursor carries. 64 bits
// are plenty: a MAC cannot be checked offline, each guess costs the
// forger a request to the gateway, and a wrong guess costs the gateway no
// upstream request; 2^63 requests on average are out of anyone's reach.
// The other 24 bytes would lengthen every cursor by 32 characters.
const cursorMACSize = 8

// cursorMAC is one key's HMAC. hmac.New costs several allocations and two
// block hashes of the padded key; a pool of ready hashes, Reset between
// uses, makes a MAC cost its message's blocks alone and no allocation.
type cursorMAC struct {
	pool sync.Pool // of *macState
}

// macState is a reusable HMAC with its own buffers: the message is copied
// into msg rather than handed to the hash from the caller's stack buffer,
// which a call through the hash.Hash interface would move to the heap.
type macState struct {
	h   hash.Hash
	msg []byte
	sum [sha256.Size]byte
}

func newCursorMAC(key []byte) *cursorMAC {
	m := &cursorMAC{}
	m.pool.New = func() any {
		return &macState{h: hmac.New(sha256.New, key), msg: make([]byte, 0, cursorBuffer+cursorMACSize)}
	}
	return m
}

// get returns a state whose msg holds raw and whose sum its MAC; put it
// back when done with both.
func (m *cursorMAC) get(raw []byte) *macState {
	s := m.pool.Get().(*macState)
	s.msg = append(s.msg[:0], raw...)
	s.h.Reset()
	s.h.Write(s.msg)
	s.h.Sum(s.sum[:0])
	return s
}

func (m *cursorMAC) put(s *macState) {
	if cap(s.msg) > 4*cursorBuffer { // an unusually long cursor: keep the pool's buffers small
		s.msg = make([]byte, 0, cursorBuffer+cursorMACSize)
	}
	m.pool.Put(s)
}

// appendSigned appends to dst the cursor of the raw form
// "<version>:<list>:<payload>": base64url (unpadded) of raw and its MAC
// under the first key.
func (k *CursorKeys) appendSigned(dst, raw []byte) []byte {
	m := k.keys[0]
	s := m.get(raw)
	s.msg = append(s.msg, s.sum[:cursorMACSize]...)
	dst = cursorEncoding.AppendEncode(dst, s.msg)
	m.put(s)
	return dst
}

// verify reports whether signed (a raw form followed by its MAC) carries
// the MAC of one of the keys.
func (k *CursorKeys) verify(signed []byte) bool {
	if len(signed) < cursorMACSize {
		return false
	}
	raw, mac := signed[:len(signed)-cursorMACSize], signed[len(signed)-cursorMACSize:]
	ok := 0
	for _, m := range k.keys {
		// Every key is tried, in constant time: which key matched, or
		// how much of a MAC did, is not for a forger to time.
		s := m.get(raw)
		ok |= subtle.ConstantTimeCompare(s.sum[:cursorMACSize], mac)
		m.put(s)
	}
	return ok == 1
}
