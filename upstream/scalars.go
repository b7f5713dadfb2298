package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"time"
)

// The scalar types below decode the upstream's wire form and carry their
// GraphQL marshalling as structural methods (MarshalGQLContext and
// UnmarshalGQLContext), so that gqlgen binds to them without this package
// importing gqlgen.
//
// Decoding errors are *json.UnmarshalTypeError values: encoding/json then
// adds the path of the offending field, so a malformed value deep inside a
// transaction is reported as, for example,
// "json: cannot unmarshal number 1.5 (not an integer) into Go struct field
// Transaction.transactions.command.batchMarketInstructions.submissions.size
// of type upstream.Uint64".

// Int64 is a signed 64-bit integer. The upstream sends it as a JSON string
// ("-5"); a JSON number is accepted too. GraphQL (scalar Int64) and
// MarshalJSON write it as a JSON string, since GraphQL Int is 32-bit and
// JavaScript numbers lose precision past 2^53.
type Int64 int64

// UnmarshalJSON accepts a JSON string or number holding an integer; null
// leaves the value unchanged.
func (v *Int64) UnmarshalJSON(b []byte) error {
	return unmarshalInt((*int64)(v), b, reflect.TypeFor[Int64]())
}

// MarshalJSON writes the wire form, a JSON string.
func (v Int64) MarshalJSON() ([]byte, error) {
	return appendQuotedInt(nil, int64(v)), nil
}

// MarshalGQLContext writes the value as a JSON string of its decimal digits.
func (v Int64) MarshalGQLContext(_ context.Context, w io.Writer) error {
	_, err := w.Write(appendQuotedInt(spareCapacity(w), int64(v)))
	return err
}

// UnmarshalGQLContext accepts a decimal string or an integer number.
func (v *Int64) UnmarshalGQLContext(_ context.Context, in any) error {
	n, err := gqlInt(in, "Int64", Int64Range)
	if err != nil {
		return err
	}
	*v = Int64(n)
	return nil
}

// Uint64 is an unsigned 64-bit integer. The upstream sends it as a JSON
// string ("18446744073709551615"); a JSON number is accepted too. GraphQL
// (scalar Uint64) and MarshalJSON write it as a JSON string.
type Uint64 uint64

// UnmarshalJSON accepts a JSON string or number holding a non-negative
// integer; null leaves the value unchanged.
func (v *Uint64) UnmarshalJSON(b []byte) error {
	return unmarshalUint((*uint64)(v), b, reflect.TypeFor[Uint64]())
}

// MarshalJSON writes the wire form, a JSON string.
func (v Uint64) MarshalJSON() ([]byte, error) {
	return appendQuotedUint(nil, uint64(v)), nil
}

// MarshalGQLContext writes the value as a JSON string of its decimal digits.
func (v Uint64) MarshalGQLContext(_ context.Context, w io.Writer) error {
	_, err := w.Write(appendQuotedUint(spareCapacity(w), uint64(v)))
	return err
}

// UnmarshalGQLContext accepts a decimal string or a non-negative integer number.
func (v *Uint64) UnmarshalGQLContext(_ context.Context, in any) error {
	n, err := gqlUint(in, "Uint64", Uint64Range)
	if err != nil {
		return err
	}
	*v = Uint64(n)
	return nil
}

// Int32 is a 32-bit integer that the upstream sends as a JSON number (a
// string is accepted too). It binds to GraphQL's built-in Int: its GraphQL
// form is a plain JSON number.
type Int32 int32

// UnmarshalJSON accepts a JSON number or string holding a 32-bit integer;
// null leaves the value unchanged.
func (v *Int32) UnmarshalJSON(b []byte) error {
	var n int64
	typ := reflect.TypeFor[Int32]()
	if err := unmarshalInt(&n, b, typ); err != nil {
		return err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return &json.UnmarshalTypeError{Value: describe(b) + " (out of range)", Type: typ}
	}
	*v = Int32(n)
	return nil
}

// MarshalGQLContext writes the value as a JSON number.
func (v Int32) MarshalGQLContext(_ context.Context, w io.Writer) error {
	_, err := w.Write(strconv.AppendInt(spareCapacity(w), int64(v), 10))
	return err
}

// UnmarshalGQLContext accepts an integer number (or decimal string) in the
// 32-bit range.
func (v *Int32) UnmarshalGQLContext(_ context.Context, in any) error {
	n, err := gqlInt(in, "Int", Int32Range)
	if err != nil {
		return err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return inputError("Int", in, Int32Range)
	}
	*v = Int32(n)
	return nil
}

// UnixNanos is a point in time in Unix nanoseconds (wire: an int64 as a JSON
// string or number). Zero means "unset" upstream. GraphQL (scalar
// Timestamp) writes RFC 3339 in UTC with full precision, or null for zero.
type UnixNanos int64

// Time returns the instant in UTC, or the zero time.Time when unset.
func (v UnixNanos) Time() time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(v)).UTC()
}

// UnmarshalJSON accepts a JSON string or number; null leaves the value unchanged.
func (v *UnixNanos) UnmarshalJSON(b []byte) error {
	return unmarshalInt((*int64)(v), b, reflect.TypeFor[UnixNanos]())
}

// MarshalJSON writes the wire form, a JSON string.
func (v UnixNanos) MarshalJSON() ([]byte, error) {
	return appendQuotedInt(nil, int64(v)), nil
}

// MarshalGQLContext writes an RFC 3339 string in UTC, or null when unset.
func (v UnixNanos) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return writeTimestamp(w, v.Time())
}

// UnmarshalGQLContext accepts an RFC 3339 string (or null).
func (v *UnixNanos) UnmarshalGQLContext(_ context.Context, in any) error {
	t, err := gqlTime(in)
	if err != nil {
		return err
	}
	if t.IsZero() {
		*v = 0
		return nil
	}
	*v = UnixNanos(t.UnixNano())
	return nil
}

// UnixSeconds is a point in time in Unix seconds (wire: an int64 as a JSON
// string or number). Zero means "unset" upstream. GraphQL (scalar
// Timestamp) writes RFC 3339 in UTC, or null for zero.
type UnixSeconds int64

// Time returns the instant in UTC, or the zero time.Time when unset.
func (v UnixSeconds) Time() time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(int64(v), 0).UTC()
}

// UnmarshalJSON accepts a JSON string or number; null leaves the value unchanged.
func (v *UnixSeconds) UnmarshalJSON(b []byte) error {
	return unmarshalInt((*int64)(v), b, reflect.TypeFor[UnixSeconds]())
}

// MarshalJSON writes the wire form, a JSON string.
func (v UnixSeconds) MarshalJSON() ([]byte, error) {
	return appendQuotedInt(nil, int64(v)), nil
}

// MarshalGQLContext writes an RFC 3339 string in UTC, or null when unset.
func (v UnixSeconds) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return writeTimestamp(w, v.Time())
}

// UnmarshalGQLContext accepts an RFC 3339 string with whole seconds (or null).
func (v *UnixSeconds) UnmarshalGQLContext(_ context.Context, in any) error {
	t, err := gqlTime(in)
	if err != nil {
		return err
	}
	if t.Nanosecond() != 0 {
		return inputError("Timestamp", in, TimestampForm+" in whole seconds")
	}
	if t.IsZero() {
		*v = 0
		return nil
	}
	*v = UnixSeconds(t.Unix())
	return nil
}

// Time is an instant the upstream sends as an RFC 3339 string (transaction
// createdAt). An empty string decodes to the zero Time, which GraphQL
// (scalar Timestamp) writes as null.
type Time struct {
	time.Time
}

// Equal reports whether t and u are the same instant. (It also lets
// go-cmp compare Time values.)
func (t Time) Equal(u Time) bool { return t.Time.Equal(u.Time) }

// UnmarshalJSON accepts an RFC 3339 string, "" (zero) or null (unchanged).
// The instant is stored in UTC.
func (t *Time) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	typ := reflect.TypeFor[Time]()
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return &json.UnmarshalTypeError{Value: describe(b), Type: typ}
	}
	s := b[1 : len(b)-1]
	if len(s) == 0 {
		t.Time = time.Time{}
		return nil
	}
	parsed, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return &json.UnmarshalTypeError{Value: describe(b) + " (not RFC 3339)", Type: typ}
	}
	t.Time = parsed.UTC()
	return nil
}

// MarshalJSON writes the wire form: an RFC 3339 string, "" when zero.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte(`""`), nil
	}
	b := make([]byte, 0, len(time.RFC3339Nano)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// MarshalGQLContext writes an RFC 3339 string in UTC, or null when zero.
func (t Time) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return writeTimestamp(w, t.Time)
}

// UnmarshalGQLContext accepts an RFC 3339 string (or null).
func (t *Time) UnmarshalGQLContext(_ context.Context, in any) error {
	parsed, err := gqlTime(in)
	if err != nil {
		return err
	}
	t.Time = parsed
	return nil
}

// RawJSON is a JSON value kept as the upstream sent it, compacted (the
// explorer pretty-prints). GraphQL (scalar JSON) embeds it as is.
type RawJSON []byte

// UnmarshalJSON stores a compacted copy of b (null is kept as null).
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	c, err := compactJSON(b)
	if err != nil {
		return err
	}
	*r = c
	return nil
}

// MarshalJSON returns the stored JSON, or null when empty.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// MarshalGQLContext writes the stored JSON value itself, or null when empty.
func (r RawJSON) MarshalGQLContext(_ context.Context, w io.Writer) error {
	b, _ := r.MarshalJSON()
	_, err := w.Write(b)
	return err
}

// UnmarshalGQLContext stores any GraphQL input value as JSON.
func (r *RawJSON) UnmarshalGQLContext(_ context.Context, in any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("JSON value cannot be encoded: %w", err)
	}
	*r = b
	return nil
}

// compactJSON returns a compacted copy of the valid JSON value b. The copy
// matters: encoding/json reuses its input buffer after UnmarshalJSON returns.
// (A hand-written compactor beside json.Compact bought under 1 % of the
// gateway's own time at 1 ms: BENCHMARKS.md, "What each fast path buys
// at 1 ms".)
func compactJSON(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(b))
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func isNull(b []byte) bool { return string(b) == "null" }

// describe names a JSON value for an error message: its kind and, for
// scalars, its text (clipped).
func describe(b []byte) string {
	if len(b) == 0 {
		return "empty value"
	}
	switch b[0] {
	case '"':
		return "string " + clip(b)
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	default:
		return "number " + clip(b)
	}
}

func clip(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// integerText returns the text of an integer sent as a JSON number or a
// JSON string. ok is false for other kinds of value.
func integerText(b []byte) (text []byte, ok bool) {
	if len(b) == 0 {
		return nil, false
	}
	if b[0] == '"' {
		if len(b) < 2 || b[len(b)-1] != '"' {
			return nil, false
		}
		return b[1 : len(b)-1], true
	}
	if b[0] == '-' || ('0' <= b[0] && b[0] <= '9') {
		return b, true
	}
	return nil, false
}

// integerError explains why text (from the JSON value b) is not an integer
// of type typ.
func integerError(b, text []byte, err error, typ reflect.Type) error {
	reason := " (not an integer)"
	switch {
	case errors.Is(err, strconv.ErrRange):
		reason = " (out of range)"
	case len(text) > 0 && text[0] == '-' && (typ.Kind() == reflect.Uint64):
		reason = " (negative)"
	}
	return &json.UnmarshalTypeError{Value: describe(b) + reason, Type: typ}
}

func unmarshalInt(dst *int64, b []byte, typ reflect.Type) error {
	if isNull(b) {
		return nil
	}
	text, ok := integerText(b)
	if !ok {
		return &json.UnmarshalTypeError{Value: describe(b), Type: typ}
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		return integerError(b, text, err, typ)
	}
	*dst = n
	return nil
}

func unmarshalUint(dst *uint64, b []byte, typ reflect.Type) error {
	if isNull(b) {
		return nil
	}
	text, ok := integerText(b)
	if !ok {
		return &json.UnmarshalTypeError{Value: describe(b), Type: typ}
	}
	n, err := strconv.ParseUint(string(text), 10, 64)
	if err != nil {
		return integerError(b, text, err, typ)
	}
	*dst = n
	return nil
}

func appendQuotedInt(b []byte, n int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '"')
}

func appendQuotedUint(b []byte, n uint64) []byte {
	b = append(b, '"')
	b = strconv.AppendUint(b, n, 10)
	return append(b, '"')
}

// writeTimestamp writes t as an RFC 3339 string in UTC with full precision,
// or null for the zero time. Years outside 0000-9999 cannot be written in
// RFC 3339 and are an error (gqlgen then nulls the field and reports it).
func writeTimestamp(w io.Writer, t time.Time) error {
	if t.IsZero() {
		_, err := io.WriteString(w, "null")
		return err
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return fmt.Errorf("timestamp %d-… is outside the range RFC 3339 can express", y)
	}
	b := append(spareCapacity(w), '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	_, err := w.Write(b)
	return err
}

// spareCapacity returns an empty slice to append a value's JSON into
// before writing it to w: w's own spare capacity when it offers it
// (*bytes.Buffer and *bufio.Writer do; gqlgen writes a response into a
// bytes.Buffer), so that writing a scalar allocates nothing; else nil.
// A buffer on the stack would escape through the io.Writer call and
// cost an allocation per value.
func spareCapacity(w io.Writer) []byte {
	if a, ok := w.(interface{ AvailableBuffer() []byte }); ok {
		return a.AvailableBuffer()
	}
	return nil
}

// InputError is a GraphQL input value that a scalar refuses (a variable's
// value: literals are checked when the query is validated). It is the
// client's mistake: the gateway answers BAD_USER_INPUT, naming the
// argument (graph/errors.go).
type InputError struct {
	// Scalar is the GraphQL scalar, e.g. "Uint64".
	Scalar string
	// Got is the value received, in GraphQL syntax, clipped.
	Got string
	// Want says what the scalar accepts, e.g. Uint64Range.
	Want string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("%s is not %s", e.Got, e.Want)
}

// What the integer scalars accept, for error messages.
const (
	Int32Range  = "an integer from -2147483648 to 2147483647"
	Int64Range  = "an integer from -9223372036854775808 to 9223372036854775807 (a string of digits or a number)"
	Uint64Range = "an integer from 0 to 18446744073709551615 (a string of digits or a number)"
	// TimestampForm is what Timestamp accepts.
	TimestampForm = "an RFC 3339 timestamp such as \"2024-03-14T12:00:02Z\""
)

func inputError(scalar string, in any, want string) *InputError {
	return &InputError{Scalar: scalar, Got: GQLValueText(in), Want: want}
}

// GQLValueText writes a GraphQL input value (a literal or a JSON-decoded
// variable) in GraphQL syntax for an error message, clipped to 40
// characters; lists and objects are named, not written.
func GQLValueText(in any) string {
	var s string
	switch v := in.(type) {
	case nil:
		return "null"
	case string:
		s = strconv.Quote(v)
	case json.Number:
		s = string(v)
	case bool:
		s = strconv.FormatBool(v)
	case int, int32, int64, uint64:
		s = fmt.Sprint(v)
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("a value of type %T", in)
	}
	return clip([]byte(s))
}

// gqlInt converts a GraphQL input value (a literal or a JSON-decoded
// variable) to an int64; want says what the scalar accepts.
func gqlInt(in any, scalar, want string) (int64, error) {
	switch v := in.(type) {
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, inputError(scalar, in, want)
		}
		return n, nil
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, inputError(scalar, in, want)
		}
		return n, nil
	case int:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case int64:
		return v, nil
	case uint64:
		if v > math.MaxInt64 {
			return 0, inputError(scalar, in, want)
		}
		return int64(v), nil
	case float64:
		if v != math.Trunc(v) || v < math.MinInt64 || v >= math.MaxInt64 {
			return 0, inputError(scalar, in, want)
		}
		return int64(v), nil
	default:
		return 0, inputError(scalar, in, want)
	}
}

// gqlUint converts a GraphQL input value to a uint64.
func gqlUint(in any, scalar, want string) (uint64, error) {
	switch v := in.(type) {
	case string:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, inputError(scalar, in, want)
		}
		return n, nil
	case json.Number:
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, inputError(scalar, in, want)
		}
		return n, nil
	case uint64:
		return v, nil
	default:
		n, err := gqlInt(in, scalar, want)
		if err != nil {
			return 0, err
		}
		if n < 0 {
			return 0, inputError(scalar, in, want)
		}
		return uint64(n), nil
	}
}

// gqlTime converts a GraphQL input value (an RFC 3339 string or null) to a
// time in UTC.
func gqlTime(in any) (time.Time, error) {
	switch v := in.(type) {
	case nil:
		return time.Time{}, nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, inputError("Timestamp", in, TimestampForm)
		}
		return t.UTC(), nil
	default:
		return time.Time{}, inputError("Timestamp", in, TimestampForm)
	}
}
