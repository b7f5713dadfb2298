package upstream

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
)

// Pack returns the cursor in a compact binary form, for embedding in
// another cursor. A data-node cursor is padded standard base64 of JSON, so
// its decoded bytes take three quarters of the room; any other string is
// kept as it is. UnpackCursor reverses it exactly.
func (c Cursor) Pack() []byte { return c.AppendPack(nil) }

// AppendPack appends the packed form of c to dst; with room in dst, and a
// cursor of at most maxPackBuffer bytes, it allocates nothing.
func (c Cursor) AppendPack(dst []byte) []byte {
	start := len(dst)
	if len(c) <= maxPackBuffer {
		var buf [maxPackBuffer]byte
		src := append(buf[:0], c...)
		dst = append(dst, packedBase64)
		at := len(dst)
		dst = slices.Grow(dst, strictBase64.DecodedLen(len(src)))
		n, err := strictBase64.Decode(dst[at:at+strictBase64.DecodedLen(len(src))], src)
		if err == nil && strictBase64.EncodedLen(n) == len(c) {
			return dst[:at+n]
		}
		dst = dst[:start]
	}
	dst = append(dst, packedRaw)
	return append(dst, c...)
}

// maxPackBuffer bounds the stack copy Pack decodes from; longer cursors
// are kept raw (real ones are a few hundred bytes).
const maxPackBuffer = 1024

var strictBase64 = base64.StdEncoding.Strict()

// UnpackCursor returns the cursor that Pack packed into p.
func UnpackCursor(p []byte) (Cursor, error) {
	if len(p) == 0 {
		return "", errors.New("empty packed cursor")
	}
	switch p[0] {
	case packedBase64:
		return Cursor(strictBase64.EncodeToString(p[1:])), nil
	case packedRaw:
		return Cursor(p[1:]), nil
	}
	return "", fmt.Errorf("unknown packed cursor form %#x", p[0])
}

// The first byte of a packed cursor says its form.
const (
	packedBase64 = 'b'
	packedRaw    = 's'
)
