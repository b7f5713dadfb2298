package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
)

// Float64 is a protobuf double (docs/wire.md, JSON encoding: risk-model
// parameters, target-stake scaling factors). The wire writes it as a JSON
// number, except the values a JSON number cannot hold, which come as the
// strings "NaN", "Infinity" and "-Infinity". All three decode, so that one
// odd parameter does not fail a whole page of transactions. GraphQL (scalar
// Float) writes the number; a GraphQL Float cannot be NaN or infinite
// either, so those are refused with a *NonFiniteFloatError, which the
// gateway reports at the field's path while the rest of the response stays
// intact.
type Float64 float64

// NonFiniteFloatError reports an f64 value (NaN or ±Infinity) the
// GraphQL Float scalar cannot express.
type NonFiniteFloatError struct {
	Value string // "NaN", "Infinity" or "-Infinity", as the upstream sent it
}

func (e *NonFiniteFloatError) Error() string {
	return fmt.Sprintf("upstream sent the number %s, which a GraphQL Float cannot express", e.Value)
}

// UnmarshalJSON accepts a JSON number or one of the strings "NaN",
// "Infinity", "-Infinity"; null leaves the value unchanged.
func (f *Float64) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	switch string(b) {
	case `"NaN"`:
		*f = Float64(math.NaN())
		return nil
	case `"Infinity"`:
		*f = Float64(math.Inf(1))
		return nil
	case `"-Infinity"`:
		*f = Float64(math.Inf(-1))
		return nil
	}
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return &json.UnmarshalTypeError{Value: describe(b), Type: reflect.TypeFor[Float64]()}
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return &json.UnmarshalTypeError{Value: describe(b), Type: reflect.TypeFor[Float64]()}
	}
	*f = Float64(v)
	return nil
}

// MarshalJSON writes the wire form: a JSON number, formatted as the
// upstream's encoder (protojson) and encoding/json format it (1e-7 and
// 1000000, not Go's %g forms 1e-07 and 1e+06), or the string the wire uses
// for NaN and the infinities.
func (f Float64) MarshalJSON() ([]byte, error) {
	if s, ok := f.nonFinite(); ok {
		return strconv.AppendQuote(nil, s), nil
	}
	return json.Marshal(float64(f))
}

// MarshalGQLContext writes the number as gqlgen's Float does (%g); NaN and
// the infinities are a *NonFiniteFloatError.
func (f Float64) MarshalGQLContext(_ context.Context, w io.Writer) error {
	if s, ok := f.nonFinite(); ok {
		return &NonFiniteFloatError{Value: s}
	}
	_, err := w.Write(strconv.AppendFloat(spareCapacity(w), float64(f), 'g', -1, 64))
	return err
}

// UnmarshalGQLContext accepts a GraphQL Float or Int.
func (f *Float64) UnmarshalGQLContext(_ context.Context, in any) error {
	switch v := in.(type) {
	case float64:
		*f = Float64(v)
	case int:
		*f = Float64(v)
	case int64:
		*f = Float64(v)
	case json.Number:
		n, err := v.Float64()
		if err != nil {
			return fmt.Errorf("%q is not a Float", v.String())
		}
		*f = Float64(n)
	default:
		return fmt.Errorf("%T is not a Float", in)
	}
	return nil
}

// nonFinite returns the wire's string for NaN and the infinities.
func (f Float64) nonFinite() (string, bool) {
	switch v := float64(f); {
	case math.IsNaN(v):
		return "NaN", true
	case math.IsInf(v, 1):
		return "Infinity", true
	case math.IsInf(v, -1):
		return "-Infinity", true
	}
	return "", false
}
