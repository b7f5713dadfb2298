package upstream

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
)

// The enum types (enums_gen.go) are generated from the GraphQL schema's
// enums by internal/enumgen (`go generate ./...`); this file holds what
// they share.
//
// Every enum is a string type holding the value's name as the upstream
// sends it ("SIDE_BUY"). A value the upstream's own schema does not know
// arrives as a bare number and is kept as its decimal text ("7"); a name
// newer than this package is kept as is. Known tells the two apart, and
// MarshalGQLContext refuses unknown values with an *UnknownEnumError, which
// gqlgen reports at the field's path while writing null there: the rest of
// the response stays intact. The empty value means "absent" (an omitted
// optional enum) and is written as null without an error.

// UnknownEnumError reports an enum value the GraphQL schema cannot express.
type UnknownEnumError struct {
	Enum  string // GraphQL enum name, e.g. "Side"
	Value string // the value as received, e.g. "7" or "SIDE_SIDEWAYS"
}

func (e *UnknownEnumError) Error() string {
	return fmt.Sprintf("upstream sent %s value %q, which this schema does not know", e.Enum, e.Value)
}

// enum holds the known values of one enum type and implements the
// behaviour every enum type shares.
type enum[E ~string] struct {
	name   string
	values map[string]E
	typ    reflect.Type
}

func newEnum[E ~string](name string, values ...E) *enum[E] {
	m := make(map[string]E, len(values))
	for _, v := range values {
		m[string(v)] = v
	}
	return &enum[E]{name: name, values: m, typ: reflect.TypeFor[E]()}
}

func (s *enum[E]) known(v E) bool {
	_, ok := s.values[string(v)]
	return ok
}

func (s *enum[E]) unmarshalJSON(dst *E, b []byte) error {
	switch {
	case isNull(b):
		return nil
	case len(b) == 0: // never from encoding/json, but UnmarshalJSON is public
		return &json.UnmarshalTypeError{Value: "empty input", Type: s.typ}
	case len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"':
		// Known names are interned: the map lookup does not allocate.
		if v, ok := s.values[string(b[1:len(b)-1])]; ok {
			*dst = v
			return nil
		}
		var name string
		if err := unmarshal(b, &name); err != nil {
			return &json.UnmarshalTypeError{Value: describe(b), Type: s.typ}
		}
		*dst = E(name)
		return nil
	case b[0] == '-' || ('0' <= b[0] && b[0] <= '9'):
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return &json.UnmarshalTypeError{Value: describe(b) + " (not an enum number)", Type: s.typ}
		}
		*dst = E(strconv.FormatInt(n, 10))
		return nil
	default:
		return &json.UnmarshalTypeError{Value: describe(b), Type: s.typ}
	}
}

// marshalJSON writes v as the upstream sends it: a name as a JSON string,
// a value beyond the sender's schema (kept as its decimal text) as a bare
// number.
func (s *enum[E]) marshalJSON(v E) ([]byte, error) {
	if s.known(v) {
		// Known names are [A-Z0-9_]: no escaping needed.
		b := make([]byte, 0, len(v)+2)
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"'), nil
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && strconv.FormatInt(n, 10) == string(v) {
		return []byte(v), nil
	}
	return marshalWire(string(v))
}

func (s *enum[E]) marshalGQL(w io.Writer, v E) error {
	if v == "" {
		_, err := io.WriteString(w, "null")
		return err
	}
	if !s.known(v) {
		return &UnknownEnumError{Enum: s.name, Value: string(v)}
	}
	// Known names are [A-Z0-9_]: no escaping needed.
	buf := append(spareCapacity(w), '"')
	buf = append(buf, v...)
	buf = append(buf, '"')
	_, err := w.Write(buf)
	return err
}

func (s *enum[E]) unmarshalGQL(dst *E, in any) error {
	name, ok := in.(string)
	if !ok {
		return fmt.Errorf("%s must be an enum value name, got %T", s.name, in)
	}
	v, ok := s.values[name]
	if !ok {
		return fmt.Errorf("%q is not a valid %s", name, s.name)
	}
	*dst = v
	return nil
}
