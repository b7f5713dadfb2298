package upstream

import "github.com/tradenet/gateway/internal/jsonscan"

// appendCompact appends the JSON value b with its insignificant whitespace
// removed, as json.Compact does, and reports whether b was one valid JSON
// value (surrounded by whitespace at most). When it reports false, dst
// holds nothing meaningful and the caller lets json.Compact decide (and
// give its error). It is json.Compact without the state machine: the raw
// JSON of undescribed commands is compacted on every explorer page, and
// json.Compact was an eighth of decoding a mixed page.
func appendCompact(dst, b []byte) ([]byte, bool) {
	i := jsonscan.SkipSpace(b, 0)
	dst, i, ok := compactValue(dst, b, i, 0)
	if !ok || jsonscan.SkipSpace(b, i) != len(b) {
		return dst, false
	}
	return dst, true
}

// maxCompactDepth bounds the nesting compactValue follows; deeper values
// go to json.Compact.
const maxCompactDepth = 512

func compactValue(dst, b []byte, i, depth int) ([]byte, int, bool) {
	if i >= len(b) || depth > maxCompactDepth {
		return dst, i, false
	}
	switch c := b[i]; c {
	case '{':
		dst = append(dst, '{')
		i = jsonscan.SkipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return append(dst, '}'), i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return dst, i, false
			}
			var ok bool
			if dst, i, ok = compactString(dst, b, i); !ok {
				return dst, i, false
			}
			i = jsonscan.SkipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return dst, i, false
			}
			dst = append(dst, ':')
			if dst, i, ok = compactValue(dst, b, jsonscan.SkipSpace(b, i+1), depth+1); !ok {
				return dst, i, false
			}
			i = jsonscan.SkipSpace(b, i)
			if i >= len(b) {
				return dst, i, false
			}
			switch b[i] {
			case ',':
				dst = append(dst, ',')
				i = jsonscan.SkipSpace(b, i+1)
			case '}':
				return append(dst, '}'), i + 1, true
			default:
				return dst, i, false
			}
		}
	case '[':
		dst = append(dst, '[')
		i = jsonscan.SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return append(dst, ']'), i + 1, true
		}
		for {
			var ok bool
			if dst, i, ok = compactValue(dst, b, i, depth+1); !ok {
				return dst, i, false
			}
			i = jsonscan.SkipSpace(b, i)
			if i >= len(b) {
				return dst, i, false
			}
			switch b[i] {
			case ',':
				dst = append(dst, ',')
				i = jsonscan.SkipSpace(b, i+1)
			case ']':
				return append(dst, ']'), i + 1, true
			default:
				return dst, i, false
			}
		}
	case '"':
		return compactString(dst, b, i)
	case 't':
		return compactLiteral(dst, b, i, "true")
	case 'f':
		return compactLiteral(dst, b, i, "false")
	case 'n':
		return compactLiteral(dst, b, i, "null")
	default:
		return compactNumber(dst, b, i)
	}
}

// compactString copies the string at b[i] == '"', checking its escapes
// and that it holds no control character (invalid UTF-8 passes, as in
// encoding/json).
func compactString(dst, b []byte, i int) ([]byte, int, bool) {
	start := i
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return append(dst, b[start:i+1]...), i + 1, true
		case c < 0x20:
			return dst, i, false
		case c == '\\':
			i++
			if i >= len(b) {
				return dst, i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return dst, i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHexDigit(h) {
						return dst, i, false
					}
				}
				i += 4
			default:
				return dst, i, false
			}
		}
	}
	return dst, i, false
}

func compactLiteral(dst, b []byte, i int, lit string) ([]byte, int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return dst, i, false
	}
	return append(dst, lit...), i + len(lit), true
}

// compactNumber copies the number at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func compactNumber(dst, b []byte, i int) ([]byte, int, bool) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return dst, i, false
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || b[i+1] < '0' || b[i+1] > '9' {
			return dst, i, false
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return dst, i, false
		}
		i = digits(b, i)
	}
	return append(dst, b[start:i]...), i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
