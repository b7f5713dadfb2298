package upstream

import (
	"encoding/json"
	"fmt"
	"reflect"
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

// decode picks the member among fields (an object's keys, minus the
// ordinary ones already consumed by the caller) and decodes it. obj is the
// whole object. If more than one member is present, which the wire never
// does, a known one wins, then the first by name, so the result is stable.
func (o oneOf[K]) decode(obj []byte, fields map[string]json.RawMessage) (K, error) {
	var name string
	known := false
	for key, raw := range fields {
		if isNull(raw) {
			continue
		}
		_, isKnown := o.members[key]
		if name == "" || (isKnown && !known) || (isKnown == known && key < name) {
			name, known = key, isKnown
		}
	}
	if name == "" {
		raw, err := compactJSON(obj)
		if err != nil {
			var zero K
			return zero, err
		}
		return o.unknown("", raw), nil
	}
	if !known {
		raw, err := compactJSON(fields[name])
		if err != nil {
			var zero K
			return zero, err
		}
		return o.unknown(name, raw), nil
	}
	member := o.members[name]()
	if err := json.Unmarshal(fields[name], member); err != nil {
		var zero K
		return zero, inField(name, err)
	}
	return member, nil
}

// splitObject decodes a JSON object, the wire form of typ, into its keys
// and raw values.
func splitObject(b []byte, typ reflect.Type) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if len(b) == 0 || b[0] != '{' {
		return nil, &json.UnmarshalTypeError{Value: describe(b), Type: typ}
	}
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// inField adds the JSON field name to an error from decoding that field's
// value, so that the error names the whole path once encoding/json has
// added the path of the enclosing object.
func inField(name string, err error) error {
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
