package swar

import (
	"bytes"
	"testing"
)

// FuzzTests: each test agrees with a byte-by-byte loop, for any eight
// bytes and any byte or bound.
func FuzzTests(f *testing.F) {
	f.Add([]byte("abcdefgh"), byte('"'), byte(0x20))
	f.Add([]byte("\x00\x80\xff\x1f\x20\x7f\"\\"), byte(0), byte(128))
	f.Add([]byte("\x01\x01\x01\x01\x01\x01\x01\x01"), byte(1), byte(1))
	f.Fuzz(func(t *testing.T, b []byte, c, n byte) {
		if len(b) < 8 {
			return
		}
		b = b[:8]
		n = n%128 + 1
		x := Load(b, 0)
		if y := LoadString(string(b), 0); y != x {
			t.Fatalf("LoadString(%q) = %#x, Load = %#x", b, y, x)
		}
		if got, want := HasByte(x, c), bytes.IndexByte(b, c) >= 0; got != want {
			t.Fatalf("HasByte(%q, %#x) = %v, want %v", b, c, got, want)
		}
		less := false
		for _, v := range b {
			less = less || v < n
		}
		if got := HasLess(x, n); got != less {
			t.Fatalf("HasLess(%q, %d) = %v, want %v", b, n, got, less)
		}
	})
}

// TestExhaustiveOneByte: every byte value in every position, against
// every byte and bound, with the other bytes set to each extreme.
func TestExhaustiveOneByte(t *testing.T) {
	for _, fill := range []byte{0x00, 0x7f, 0x80, 0xff} {
		for pos := range 8 {
			for v := range 256 {
				b := bytes.Repeat([]byte{fill}, 8)
				b[pos] = byte(v)
				x := Load(b, 0)
				for c := range 256 {
					if got, want := HasByte(x, byte(c)), bytes.IndexByte(b, byte(c)) >= 0; got != want {
						t.Fatalf("HasByte(%q, %#x) = %v", b, c, got)
					}
				}
				for n := 1; n <= 128; n++ {
					want := false
					for _, e := range b {
						want = want || int(e) < n
					}
					if got := HasLess(x, byte(n)); got != want {
						t.Fatalf("HasLess(%q, %d) = %v", b, n, got)
					}
				}
			}
		}
	}
}
