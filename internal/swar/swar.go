// Package swar tests the eight bytes of a uint64 at once (SIMD within a
// register), for the scanners that look for a few special bytes in long
// runs of ordinary ones: the JSON strings of data-node cursors
// (upstream/cursor_pack.go) and the response writer's escaping
// (graph/fastexec.go). BENCHMARKS.md, "What each fast path buys at 1 ms",
// measures what each use buys.
package swar

import "encoding/binary"

// Load reads the eight bytes at b[i:] (little-endian: b[i] is the low byte).
func Load(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// LoadString reads the eight bytes at s[i:], as Load.
func LoadString(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// HasByte reports whether any byte of x is b (the classic test for a zero
// byte, applied to x with b's bits flipped: exact, no false positives).
func HasByte(x uint64, b byte) bool {
	y := x ^ (lsbs * uint64(b))
	return (y-lsbs)&^y&msbs != 0
}

// HasLess reports whether any byte of x is less than n (n <= 128).
func HasLess(x uint64, n byte) bool {
	return (x-lsbs*uint64(n))&^x&msbs != 0
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)
