package upstream

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unsafe"

	"github.com/tradenet/gateway/internal/swar"
)

// Pack returns the cursor in a compact binary form, for embedding in
// another cursor. UnpackCursor reverses it exactly. The first byte says
// the form:
//
//   - 'j': a data-node cursor (padded standard base64 of a JSON object)
//     whose JSON is written member by member in binary: keys the data node
//     uses as one byte, 64-character hex ids as their 32 bytes, timestamps
//     as numbers, integers as varints; about a third of the 'b' form. Used
//     whenever it reproduces the cursor byte for byte (Pack checks).
//   - 'b': any other padded standard base64, decoded (three quarters of
//     the room).
//   - 's': any other string, as it is.
//
// Cursors packed by earlier gateways ('b' and 's') still unpack.
func (c Cursor) Pack() []byte { return c.AppendPack(nil) }

// AppendPack appends the packed form of c to dst; with room in dst, and a
// cursor of at most maxPackBuffer bytes, it allocates nothing.
func (c Cursor) AppendPack(dst []byte) []byte {
	if len(c) <= maxPackBuffer {
		var js [maxPackBuffer / 4 * 3]byte
		// Decode only reads its source: the cursor's bytes, not a copy.
		n, err := strictBase64.Decode(js[:], unsafe.Slice(unsafe.StringData(string(c)), len(c)))
		if err == nil && strictBase64.EncodedLen(n) == len(c) {
			if out, ok := appendCompactCursor(dst, js[:n]); ok {
				return out
			}
			dst = append(dst, packedBase64)
			return append(dst, js[:n]...)
		}
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
	case packedJSON:
		var js, enc [maxPackBuffer]byte
		out, err := appendExpandedJSON(js[:0], p[1:])
		if err != nil {
			return "", fmt.Errorf("malformed packed cursor: %w", err)
		}
		return Cursor(strictBase64.AppendEncode(enc[:0], out)), nil
	case packedBase64:
		return Cursor(strictBase64.EncodeToString(p[1:])), nil
	case packedRaw:
		return Cursor(p[1:]), nil
	}
	return "", fmt.Errorf("unknown packed cursor form %#x", p[0])
}

// The first byte of a packed cursor says its form.
const (
	packedJSON   = 'j'
	packedBase64 = 'b'
	packedRaw    = 's'
)

// The 'j' form: after the 'j', one entry per member of the JSON object, in
// order (duplicates kept), and nothing else; "{}" is 'j' alone. An entry
// is a header byte, valueKind<<5 | key, then the key when key is
// literalKey (uvarint length, then the bytes between its quotes), then the
// value:
//
//   - kindString: uvarint length, then the bytes between the quotes, as
//     written (escapes included);
//   - kindHex: a 64-character lowercase hex string, as its 32 bytes;
//   - kindTime: an RFC 3339 timestamp "YYYY-MM-DDThh:mm:ss[.f…](Z|±hh:mm)":
//     a byte fractionDigits | offsetKind<<4, the wall clock as written in
//     Unix seconds (zigzag varint), the fraction's digits as a uvarint
//     (when there are any), the offset in minutes as a uvarint (when not Z);
//   - kindInt: an integer that fits an int64, as a zigzag varint.
//
// Anything else (floats, booleans, null, nested values, whitespace) keeps
// the cursor in the 'b' form.
const (
	kindString = 0
	kindHex    = 1
	kindTime   = 2
	kindInt    = 3

	literalKey = 31
)

// Timestamp offset kinds.
const (
	offsetZ     = 0
	offsetPlus  = 1
	offsetMinus = 2
)

// cursorKeys are the keys of the data node's cursors, by their one-byte
// index in the 'j' form (docs/wire.md, Data-node cursors, and the sample
// service). The indexes are in cursors clients hold: append only, never
// reorder or remove. At most 31 (index 31 is literalKey).
var cursorKeys = [...]string{
	"vegaTime", // delegations, funding payments
	"partyId",  // delegations
	"nodeId",   // delegations
	"epochId",  // delegations
	"id",       // assets
	"marketID", // funding payments
	"partyID",  // funding payments
	// Likely keys of other data-node lists' cursors (unverified: this
	// gateway reads none of them; a key not in the table is written out).
	"marketId",
	"assetId",
	"createdAt",
}

// appendCompactCursor appends the 'j' form of a cursor whose
// base64-decoded JSON is js, and reports whether it did; otherwise dst is
// returned as it was.
//
// The form unpacks to the cursor exactly, with no need to check: the
// cursor is the canonical base64 of js (AppendPack decoded it strictly,
// at its canonical length), and appendCompactJSON accepts only JSON that
// appendExpandedJSON writes back byte for byte. It accepts no whitespace,
// and each part it accepts has a single written form:
//   - a key is its index only when it is exactly a known key's bytes,
//     otherwise its bytes as written;
//   - a string is its bytes as written, escapes included;
//   - an id only when it is 64 lowercase hex digits, which hex encoding
//     writes back;
//   - an integer only without a sign on zero or leading zeros, as
//     strconv writes it;
//   - a timestamp only when each of its numbers is in range and the date
//     exists, so that its wall clock converts to the same date and time,
//     and its fraction and offset keep their digits.
//
// FuzzCursorPack checks this on arbitrary JSON.
func appendCompactCursor(dst, js []byte) ([]byte, bool) {
	start := len(dst)
	dst, ok := appendCompactJSON(dst, js)
	if !ok {
		return dst[:start], false
	}
	return dst, true
}

// appendCompactJSON appends 'j' and the members of the JSON object js, and
// reports whether js has the form's shape (dst is then partly written).
func appendCompactJSON(dst, js []byte) ([]byte, bool) {
	if len(js) < 2 || js[0] != '{' {
		return dst, false
	}
	dst = append(dst, packedJSON)
	if js[1] == '}' {
		return dst, len(js) == 2
	}
	i := 1
	for {
		key, next, ok := scanString(js, i)
		if !ok || next >= len(js) || js[next] != ':' {
			return dst, false
		}
		i = next + 1
		if i >= len(js) {
			return dst, false
		}
		keyIndex := byte(literalKey)
		for k, known := range cursorKeys {
			if string(key) == known {
				keyIndex = byte(k)
				break
			}
		}
		header := len(dst)
		dst = append(dst, keyIndex)
		if keyIndex == literalKey {
			dst = binary.AppendUvarint(dst, uint64(len(key)))
			dst = append(dst, key...)
		}
		var kind byte
		switch c := js[i]; {
		case c == '"':
			s, next, ok := scanString(js, i)
			if !ok {
				return dst, false
			}
			i = next
			if out, ok := appendLowerHex64(dst, s); ok {
				kind = kindHex
				dst = out
			} else if t, ok := parseTimestamp(s); ok {
				kind = kindTime
				dst = t.append(dst)
			} else {
				kind = kindString
				dst = binary.AppendUvarint(dst, uint64(len(s)))
				dst = append(dst, s...)
			}
		case c == '-' || ('0' <= c && c <= '9'):
			n, next, ok := scanInt(js, i)
			if !ok {
				return dst, false
			}
			i = next
			kind = kindInt
			dst = binary.AppendVarint(dst, n)
		default:
			return dst, false
		}
		dst[header] |= kind << 5
		if i >= len(js) {
			return dst, false
		}
		switch js[i] {
		case ',':
			i++
		case '}':
			return dst, i+1 == len(js)
		default:
			return dst, false
		}
	}
}

// scanString reads the JSON string that starts at js[i] and returns the
// bytes between its quotes and the index after it. A string with a control
// character or a bad escape is refused.
func scanString(js []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(js) || js[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(js); j++ {
		// Eight bytes at a time while none ends the string or needs a look.
		for j+8 <= len(js) {
			x := swar.Load(js, j)
			if swar.HasLess(x, 0x20) || swar.HasByte(x, '"') || swar.HasByte(x, '\\') {
				break
			}
			j += 8
		}
		if j >= len(js) {
			break
		}
		switch c := js[j]; {
		case c == '"':
			return js[i+1 : j], j + 1, true
		case c < 0x20:
			return nil, 0, false
		case c == '\\':
			j++
			if j >= len(js) {
				return nil, 0, false
			}
			switch js[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(js) {
					return nil, 0, false
				}
				for _, h := range js[j+1 : j+5] {
					if !isHexDigit(h) {
						return nil, 0, false
					}
				}
				j += 4
			default:
				return nil, 0, false
			}
		}
	}
	return nil, 0, false
}

// scanInt reads the JSON integer that starts at js[i] (no fraction or
// exponent, no leading zeros, not -0) if it fits an int64.
func scanInt(js []byte, i int) (n int64, next int, ok bool) {
	neg := js[i] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	for ; i < len(js) && '0' <= js[i] && js[i] <= '9'; i++ {
		d := uint64(js[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, 0, false
		}
		u = u*10 + d
	}
	switch digits := i - start; {
	case digits == 0, digits > 1 && js[start] == '0':
		return 0, 0, false
	}
	if i < len(js) && (js[i] == '.' || js[i] == 'e' || js[i] == 'E') {
		return 0, 0, false
	}
	switch {
	case neg && u == 0:
		return 0, 0, false // -0 would come back as 0
	case neg && u <= 1<<63:
		return int64(-u), i, true // -u wraps to MinInt64 for u = 1<<63
	case !neg && u < 1<<63:
		return int64(u), i, true
	}
	return 0, 0, false
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// appendLowerHex64 appends the 32 bytes that s, 64 lowercase hex digits,
// encodes, and reports whether s is such; otherwise dst is returned as it
// was.
func appendLowerHex64(dst, s []byte) ([]byte, bool) {
	if len(s) != 64 {
		return dst, false
	}
	var out [32]byte
	bad := byte(0)
	for k := range out {
		hi, lo := lowerHexValue[s[2*k]], lowerHexValue[s[2*k+1]]
		bad |= hi | lo
		out[k] = hi<<4 | lo&0xf
	}
	if bad&0x80 != 0 {
		return dst, false
	}
	return append(dst, out[:]...), true
}

// lowerHexValue is the value of each lowercase hex digit; every other byte
// has the high bit set.
var lowerHexValue = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		default:
			t[c] = 0x80
		}
	}
	return t
}()

// packedTime is a timestamp as the 'j' form holds it.
type packedTime struct {
	wall     int64  // the date and time as written, in Unix seconds
	fraction uint64 // the fraction's digits as a number
	digits   byte   // how many fraction digits were written, 0-9
	offset   byte   // offsetZ, offsetPlus, offsetMinus
	minutes  uint64 // the offset in minutes, when not Z
}

// Timestamps the 'j' form holds are of years 0000-9999.
var (
	minWall = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxWall = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

// parseTimestamp reads "YYYY-MM-DDThh:mm:ss[.f{1,9}](Z|±hh:mm)" with a
// valid date and time (no leap second), exactly as written.
func parseTimestamp(s []byte) (packedTime, bool) {
	var t packedTime
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return t, false
	}
	year, ok1 := digitsAt(s, 0, 4)
	month, ok2 := digitsAt(s, 5, 2)
	day, ok3 := digitsAt(s, 8, 2)
	hour, ok4 := digitsAt(s, 11, 2)
	minute, ok5 := digitsAt(s, 14, 2)
	second, ok6 := digitsAt(s, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59 {
		return t, false
	}
	wall := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC)
	if wall.Day() != day { // e.g. February 30th
		return t, false
	}
	t.wall = wall.Unix()
	i := 19
	if s[i] == '.' {
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			if t.digits == 9 {
				return t, false
			}
			t.fraction = t.fraction*10 + uint64(s[i]-'0')
			t.digits++
			i++
		}
		if t.digits == 0 {
			return t, false
		}
	}
	switch {
	case i+1 == len(s) && s[i] == 'Z':
		t.offset = offsetZ
	case i+6 == len(s) && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
		hh, ok1 := digitsAt(s, i+1, 2)
		mm, ok2 := digitsAt(s, i+4, 2)
		if !ok1 || !ok2 || hh > 23 || mm > 59 {
			return t, false
		}
		t.offset = offsetPlus
		if s[i] == '-' {
			t.offset = offsetMinus
		}
		t.minutes = uint64(hh*60 + mm)
	default:
		return t, false
	}
	return t, true
}

// digitsAt reads the n decimal digits at s[i:].
func digitsAt(s []byte, i, n int) (int, bool) {
	v := 0
	for _, c := range s[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func (t packedTime) append(dst []byte) []byte {
	dst = append(dst, t.digits|t.offset<<4)
	dst = binary.AppendVarint(dst, t.wall)
	if t.digits > 0 {
		dst = binary.AppendUvarint(dst, t.fraction)
	}
	if t.offset != offsetZ {
		dst = binary.AppendUvarint(dst, t.minutes)
	}
	return dst
}

// appendExpandedJSON appends the JSON object whose 'j' form (after the
// 'j') is p.
func appendExpandedJSON(dst, p []byte) ([]byte, error) {
	dst = append(dst, '{')
	for i := 0; i < len(p); {
		if i > 0 {
			dst = append(dst, ',')
		}
		header := p[i]
		i++
		kind, key := header>>5, header&literalKey
		dst = append(dst, '"')
		switch {
		case key == literalKey:
			s, next, err := lengthPrefixed(p, i)
			if err != nil {
				return dst, fmt.Errorf("key: %w", err)
			}
			dst, i = append(dst, s...), next
		case int(key) < len(cursorKeys):
			dst = append(dst, cursorKeys[key]...)
		default:
			return dst, fmt.Errorf("unknown key %d", key)
		}
		dst = append(dst, '"', ':')
		var err error
		switch kind {
		case kindString:
			var s []byte
			s, i, err = lengthPrefixed(p, i)
			dst = append(append(append(dst, '"'), s...), '"')
		case kindHex:
			if len(p)-i < 32 {
				return dst, errors.New("truncated id")
			}
			dst = append(hex.AppendEncode(append(dst, '"'), p[i:i+32]), '"')
			i += 32
		case kindTime:
			dst, i, err = appendExpandedTime(dst, p, i)
		case kindInt:
			n, size := binary.Varint(p[i:])
			if size <= 0 {
				return dst, errors.New("bad integer")
			}
			dst, i = strconv.AppendInt(dst, n, 10), i+size
		default:
			return dst, fmt.Errorf("unknown value kind %d", kind)
		}
		if err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// lengthPrefixed reads the uvarint length at p[i:] and the bytes after it.
func lengthPrefixed(p []byte, i int) (s []byte, next int, err error) {
	n, size := binary.Uvarint(p[i:])
	if size <= 0 || n > uint64(len(p)-i-size) {
		return nil, 0, errors.New("bad length")
	}
	i += size
	return p[i : i+int(n)], i + int(n), nil
}

// appendExpandedTime appends the timestamp at p[i:] as a JSON string.
func appendExpandedTime(dst, p []byte, i int) ([]byte, int, error) {
	if i >= len(p) {
		return dst, 0, errors.New("truncated timestamp")
	}
	t := packedTime{digits: p[i] & 0xf, offset: p[i] >> 4}
	i++
	if t.digits > 9 || t.offset > offsetMinus {
		return dst, 0, errors.New("bad timestamp")
	}
	wall, size := binary.Varint(p[i:])
	if size <= 0 || wall < minWall || wall > maxWall {
		return dst, 0, errors.New("bad timestamp")
	}
	i += size
	if t.digits > 0 {
		if t.fraction, size = binary.Uvarint(p[i:]); size <= 0 || t.fraction >= pow10(t.digits) {
			return dst, 0, errors.New("bad timestamp fraction")
		}
		i += size
	}
	if t.offset != offsetZ {
		if t.minutes, size = binary.Uvarint(p[i:]); size <= 0 || t.minutes >= 24*60 {
			return dst, 0, errors.New("bad timestamp offset")
		}
		i += size
	}
	w := time.Unix(wall, 0).UTC()
	year, month, day := w.Date()
	hour, minute, second := w.Clock()
	dst = append(dst, '"')
	dst = appendDigits(dst, uint64(year), 4)
	dst = appendDigits(append(dst, '-'), uint64(month), 2)
	dst = appendDigits(append(dst, '-'), uint64(day), 2)
	dst = appendDigits(append(dst, 'T'), uint64(hour), 2)
	dst = appendDigits(append(dst, ':'), uint64(minute), 2)
	dst = appendDigits(append(dst, ':'), uint64(second), 2)
	if t.digits > 0 {
		dst = appendDigits(append(dst, '.'), t.fraction, int(t.digits))
	}
	switch t.offset {
	case offsetZ:
		dst = append(dst, 'Z')
	case offsetPlus, offsetMinus:
		sign := byte('+')
		if t.offset == offsetMinus {
			sign = '-'
		}
		dst = appendDigits(append(dst, sign), t.minutes/60, 2)
		dst = appendDigits(append(dst, ':'), t.minutes%60, 2)
	}
	return append(dst, '"'), i, nil
}

// appendDigits appends v as exactly n decimal digits (v < 10^n).
func appendDigits(dst []byte, v uint64, n int) []byte {
	for range n {
		dst = append(dst, '0')
	}
	for j := len(dst) - 1; v > 0 && j >= len(dst)-n; j-- {
		dst[j] = byte('0' + v%10)
		v /= 10
	}
	return dst
}

func pow10(n byte) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}
