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

// macState is a reusable HMAC with its own buffers. A cursor's raw form is
// written straight into msg, where the hash reads it: a message built in
// the caller's stack buffer and handed to the hash through the hash.Hash
// interface would be moved to the heap, and a copy of it costs time. One
// state signs a whole run of cursors (encodeCursorRun), so that a page
// takes one state from the pool, not one a row.
type macState struct {
	mac *cursorMAC // the pool the state goes back to
	h   hash.Hash
	msg []byte
	sum [sha256.Size]byte
}

func newCursorMAC(key []byte) *cursorMAC {
	m := &cursorMAC{}
	m.pool.New = func() any {
		return &macState{mac: m, h: hmac.New(sha256.New, key), msg: make([]byte, 0, cursorBuffer+cursorMACSize)}
	}
	return m
}

// state returns a state of m's key; give it back with put.
func (m *cursorMAC) state() *macState { return m.pool.Get().(*macState) }

// put gives s back to its pool.
func (s *macState) put() {
	if cap(s.msg) > 4*cursorBuffer { // an unusually long cursor: keep the pool's buffers small
		s.msg = make([]byte, 0, cursorBuffer+cursorMACSize)
	}
	s.mac.pool.Put(s)
}

// sign sets sum to the MAC of msg.
func (s *macState) sign() {
	s.h.Reset()
	s.h.Write(s.msg)
	s.h.Sum(s.sum[:0])
}

// signer returns a state of the signing key whose msg is empty, for the
// caller to write a cursor's raw form "<version>:<list>:<payload>" into
// and seal with appendSealed; give it back with put when done with the
// run.
func (k *CursorKeys) signer() *macState {
	s := k.keys[0].state()
	s.msg = s.msg[:0]
	return s
}

// appendSealed appends to dst the cursor of the raw form in msg: base64url
// (unpadded) of it and its MAC. msg is left holding both.
func (s *macState) appendSealed(dst []byte) []byte {
	s.sign()
	s.msg = append(s.msg, s.sum[:cursorMACSize]...)
	return cursorEncoding.AppendEncode(dst, s.msg)
}

// appendSigned appends to dst the cursor of the raw form
// "<version>:<list>:<payload>": base64url (unpadded) of raw and its MAC
// under the first key.
func (k *CursorKeys) appendSigned(dst, raw []byte) []byte {
	s := k.signer()
	s.msg = append(s.msg, raw...)
	dst = s.appendSealed(dst)
	s.put()
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
		s := m.state()
		s.msg = append(s.msg[:0], raw...)
		s.sign()
		ok |= subtle.ConstantTimeCompare(s.sum[:cursorMACSize], mac)
		s.put()
	}
	return ok == 1
}
