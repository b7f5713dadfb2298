package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"testing"
)

// The fuzz targets feed the scalars and enums arbitrary input, from the
// upstream's JSON (UnmarshalJSON) and from clients' GraphQL arguments
// (UnmarshalGQLContext). Whatever the input: no panic, and a value that
// decodes writes itself back to a form that decodes to the same value.
// Their seed corpora (f.Add and testdata/fuzz/Fuzz…) run with go test;
// go test -fuzz=FuzzScalarJSON ./upstream explores further.

// scalar is one scalar or enum type under test.
type scalar struct {
	name string
	new  func() any // a pointer to a fresh zero value
}

var scalars = []scalar{
	{"Int64", func() any { return new(Int64) }},
	{"Uint64", func() any { return new(Uint64) }},
	{"Int32", func() any { return new(Int32) }},
	{"UnixNanos", func() any { return new(UnixNanos) }},
	{"UnixSeconds", func() any { return new(UnixSeconds) }},
	{"Time", func() any { return new(Time) }},
	{"RawJSON", func() any { return new(RawJSON) }},
	{"AssetStatus", func() any { return new(AssetStatus) }},
	{"TransactionVersion", func() any { return new(TransactionVersion) }},
	{"PeggedReference", func() any { return new(PeggedReference) }},
	{"TimeInForce", func() any { return new(TimeInForce) }},
	{"Side", func() any { return new(Side) }},
	{"OrderType", func() any { return new(OrderType) }},
	{"StopOrderExpiryStrategy", func() any { return new(StopOrderExpiryStrategy) }},
	{"SizeOverrideSetting", func() any { return new(SizeOverrideSetting) }},
	{"MarginMode", func() any { return new(MarginMode) }},
	{"ConditionOperator", func() any { return new(ConditionOperator) }},
	{"PropertyKeyType", func() any { return new(PropertyKeyType) }},
	{"CompositePriceType", func() any { return new(CompositePriceType) }},
	{"LiquidityFeeMethod", func() any { return new(LiquidityFeeMethod) }},
	{"GovernanceTransferType", func() any { return new(GovernanceTransferType) }},
	{"DistributionStrategy", func() any { return new(DistributionStrategy) }},
	{"EntityScope", func() any { return new(EntityScope) }},
	{"IndividualScope", func() any { return new(IndividualScope) }},
	{"DispatchMetric", func() any { return new(DispatchMetric) }},
	{"MarketStateUpdateType", func() any { return new(MarketStateUpdateType) }},
	{"AccountType", func() any { return new(AccountType) }},
}

type jsonUnmarshaler interface{ UnmarshalJSON([]byte) error }

type gqlUnmarshaler interface {
	UnmarshalGQLContext(context.Context, any) error
}

type valueMarshaler interface {
	MarshalGQLContext(context.Context, io.Writer) error
}

// deref is the value a pointer from scalar.new points to.
func deref(p any) any { return reflect.ValueOf(p).Elem().Interface() }

// marshalGQLValue writes the value p points to with its MarshalGQLContext.
func marshalGQLValue(p any) ([]byte, error) {
	var buf bytes.Buffer
	m, ok := deref(p).(valueMarshaler)
	if !ok {
		return nil, fmt.Errorf("%T has no MarshalGQLContext", deref(p))
	}
	err := m.MarshalGQLContext(context.Background(), &buf)
	return buf.Bytes(), err
}

func FuzzScalarJSON(f *testing.F) {
	for _, seed := range []string{
		`"12"`, `12`, `-9223372036854775808`, `"18446744073709551615"`, `18446744073709551616`, `"4.5"`, `1e3`, `null`, `""`,
		`"2024-03-14T12:00:00.123456789Z"`, `"1710417600123456789"`, `"SIDE_BUY"`, `7`, `"SIDE_SIDEWAYS"`, `{"a":[1,2]}`,
		`"\u0000"`, "\"\xff\"", `[`, `-`, ``, ` "1" `, `"-0"`, `true`, `"0x10"`, `"+5"`, `"1_000"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range scalars {
			v := s.new()
			err := v.(jsonUnmarshaler).UnmarshalJSON(b)
			// Inside a document, through encoding/json, it fails cleanly
			// too.
			_ = json.Unmarshal(append(append([]byte(`{"v":`), b...), '}'), &struct{ V any }{V: s.new()})
			if err != nil {
				continue
			}
			// A decoded value writes itself for GraphQL, and a client
			// sending that back as an argument means the same value
			// (unknown enum values are refused, and null written, by
			// design).
			out, merr := marshalGQLValue(v)
			if merr != nil || string(out) == "null" || s.name == "RawJSON" {
				continue
			}
			var arg any
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.UseNumber() // as gqlgen decodes variables
			if err := dec.Decode(&arg); err != nil {
				t.Fatalf("%s: %q decoded, but wrote %q, which is not JSON: %v", s.name, b, out, err)
			}
			back := s.new()
			if err := back.(gqlUnmarshaler).UnmarshalGQLContext(context.Background(), arg); err != nil {
				t.Fatalf("%s: %q decoded, wrote %q, which is refused as an argument: %v", s.name, b, out, err)
			}
			if fmt.Sprint(deref(back)) != fmt.Sprint(deref(v)) {
				t.Fatalf("%s: %q decoded to %v, wrote %q, which reads back as %v", s.name, b, deref(v), out, deref(back))
			}
		}
	})
}

func FuzzScalarGQL(f *testing.F) {
	f.Add("12", int64(12), 12.0)
	f.Add("-9223372036854775808", int64(math.MinInt64), -1.5)
	f.Add("18446744073709551615", int64(math.MaxInt64), 1e300)
	f.Add("2024-03-14T12:00:00Z", int64(0), math.Inf(1))
	f.Add("SIDE_BUY", int64(-1), math.NaN())
	f.Add("", int64(1<<53+1), 9007199254740993.0)
	f.Add("\xff", int64(7), -0.0)
	f.Add(`{"a":1}`, int64(2147483648), 2147483647.5)
	f.Fuzz(func(t *testing.T, s string, n int64, x float64) {
		inputs := []any{s, n, x, int(n), int32(n), json.Number(s), nil, true, []any{s}, map[string]any{"k": s}}
		for _, sc := range scalars {
			for _, in := range inputs {
				v := sc.new()
				u, ok := v.(gqlUnmarshaler)
				if !ok {
					continue
				}
				if err := u.UnmarshalGQLContext(context.Background(), in); err != nil {
					if err.Error() == "" {
						t.Fatalf("%s(%#v): an empty error", sc.name, in)
					}
					continue
				}
				// An accepted argument is a value the type can write.
				if _, err := marshalGQLValue(v); err != nil {
					if _, unknown := err.(*UnknownEnumError); !unknown {
						t.Fatalf("%s(%#v) accepted, but does not marshal: %v", sc.name, in, err)
					}
					t.Fatalf("%s(%#v): an argument accepted as an unknown enum value", sc.name, in)
				}
			}
		}
	})
}
