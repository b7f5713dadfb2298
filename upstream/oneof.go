package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/tradenet/gateway/internal/jsonscan"
)

// The wire encodes a one-of group as exactly one member key beside the
// object's ordinary fields; the group's own name never appears. Command and
// ProposalChange turn theirs into an interface value (a GraphQL union) and
// keep members this package does not describe as raw JSON. The other
// one-of groups are plain nullable pointer fields, one per member, which
// encoding/json fills (and ignores unknown members of) by itself.

// oneOf describes the members of one such group.
type oneOf[K any] struct {
	// members makes the typed value of each known member.
	members map[string]func() K
	// unknown wraps any other member; name is "" when the object has no
	// member at all, and raw is then the whole object.
	unknown func(name string, raw RawJSON) K
}

// names maps the Go type of each known member to its wire name, for
// writing the wire form back (MarshalJSON).
func (o *oneOf[K]) names() map[reflect.Type]string {
	names := make(map[reflect.Type]string, len(o.members))
	for name, newMember := range o.members {
		names[reflect.TypeOf(newMember())] = name
	}
	return names
}

// choice is the member picked so far among an object's keys. key and raw
// point into the object being decoded; the key becomes a string only when
// it is needed (an unknown member's name, an error), so that decoding a
// known member does not allocate its name.
type choice struct {
	key   []byte
	raw   []byte
	known bool
}

// consider offers the object's key with its raw value as the member. Null
// values are no member. Should an object hold several members, which the
// wire never does, a known one wins, then the first by name, so that the
// result does not depend on key order.
func (o oneOf[K]) consider(c *choice, key []byte, raw []byte) {
	if isNull(raw) {
		return
	}
	_, known := o.members[string(key)]
	if c.raw == nil || (known && !c.known) || (known == c.known && bytes.Compare(key, c.key) < 0) {
		*c = choice{key: key, raw: raw, known: known}
	}
}

// decode decodes the chosen member of the object obj.
func (o oneOf[K]) decode(obj []byte, c choice) (K, error) {
	var zero K
	if c.raw == nil {
		raw, err := compactJSON(obj)
		if err != nil {
			return zero, err
		}
		return o.unknown("", raw), nil
	}
	if !c.known {
		raw, err := compactJSON(c.raw)
		if err != nil {
			return zero, inField(string(c.key), err)
		}
		return o.unknown(string(c.key), raw), nil
	}
	member := o.members[string(c.key)]()
	if err := unmarshal(c.raw, member); err != nil {
		return zero, inField(string(c.key), err)
	}
	return member, nil
}

// decodeLast is the fast path of a one-of object in the wire's order: its
// plain fields, then its member, last (as the services and the sample
// service write it: docs/wire.md, One-of groups). plain decodes the value
// of a plain field and reports whether key is one. When the first key that
// is not a plain field is a known member whose value runs to the end of the
// object, and go-json decodes that value, decodeLast returns the member:
// the member the general path would choose (no other member follows it),
// decoded from the same bytes, without scanning the member's value first to
// find its end. Anything else (an unknown member, a member before a plain
// field, an escape in a key, a null member, any error) returns ok false,
// and the caller decodes b the general way, which reports every error as
// before.
func (o oneOf[K]) decodeLast(b []byte, plain func(key, value []byte) (bool, error)) (member K, ok bool) {
	end := len(bytes.TrimRight(b, jsonscan.Space))
	if end == 0 || b[end-1] != '}' {
		return member, false
	}
	end-- // at the object's closing brace
	i := jsonscan.SkipSpace(b, 0)
	if i >= end || b[i] != '{' {
		return member, false
	}
	for i = jsonscan.SkipSpace(b, i+1); i < end && b[i] == '"'; {
		kend, ok := skipString(b, i)
		if !ok {
			return member, false
		}
		key := b[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return member, false
		}
		i = jsonscan.SkipSpace(b, kend)
		if i >= end || b[i] != ':' {
			return member, false
		}
		i = jsonscan.SkipSpace(b, i+1)
		if newMember, known := o.members[string(key)]; known {
			raw := bytes.TrimRight(b[i:end], jsonscan.Space)
			if len(raw) == 0 || raw[len(raw)-1] != '}' { // members are objects (and null is no member)
				return member, false
			}
			m := newMember()
			if fastUnmarshal(raw, m) != nil {
				return member, false
			}
			return m, true
		}
		vend, ok := skipValue(b, i)
		if !ok {
			return member, false
		}
		if isPlain, err := plain(key, b[i:vend]); !isPlain || err != nil {
			return member, false
		}
		i = jsonscan.SkipSpace(b, vend)
		if i >= end || b[i] != ',' {
			return member, false
		}
		i = jsonscan.SkipSpace(b, i+1)
	}
	return member, false
}

// eachMember calls fn with each key of the JSON object b (unquoted) and
// its raw value, in order. It is a light scan, not a validation: b comes
// from the JSON decoder (decode.go), which has validated it, as
// encoding/json validates a value before it calls UnmarshalJSON, and each
// value used is decoded (and so validated) by the caller. It fails on any
// non-object.
func eachMember(b []byte, typ reflect.Type, fn func(key, value []byte) error) error {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return &json.UnmarshalTypeError{Value: describe(b), Type: typ}
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errMalformedObject
		}
		end, ok := skipString(b, i)
		if !ok {
			return errMalformedObject
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			if err := unmarshal(b[i:end], &s); err != nil {
				return err
			}
			key = []byte(s)
		}
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errMalformedObject
		}
		i = jsonscan.SkipSpace(b, i+1)
		vend, ok := skipValue(b, i)
		if !ok {
			return errMalformedObject
		}
		if err := fn(key, b[i:vend]); err != nil {
			return err
		}
		i = jsonscan.SkipSpace(b, vend)
		switch {
		case i < len(b) && b[i] == ',':
			i = jsonscan.SkipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return nil
		default:
			return errMalformedObject
		}
	}
}

var errMalformedObject = errors.New("malformed JSON object")

// skipString returns the index after the string starting at b[i] == '"'.
// Its closing quote is the first quote not escaped, that is, not after an
// odd run of backslashes; quotes are found with bytes.IndexByte (vector
// instructions), as strings (hex ids, amounts) make up most of a body.
func skipString(b []byte, i int) (int, bool) {
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return 0, false
		}
		q += j
		run := 0
		for k := q - 1; k > i && b[k] == '\\'; k-- {
			run++
		}
		if run%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default: // number, true, false, null
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' &&
			b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
			j++
		}
		return j, j > i
	}
}

// inField adds the JSON field name to an error from decoding that field's
// value, so that the error names the whole path once encoding/json has
// added the path of the enclosing object.
func inField(name string, err error) error {
	if err == nil {
		return nil
	}
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		if te.Field == "" {
			te.Field = name
		} else {
			te.Field = name + "." + te.Field
		}
		return te
	}
	return fmt.Errorf("%s: %w", name, err)
}
