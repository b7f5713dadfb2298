package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gqlMarshaler is what gqlgen calls on a scalar or enum.
type gqlMarshaler interface {
	MarshalGQLContext(ctx context.Context, w io.Writer) error
}

// gql returns what m writes for GraphQL and its error.
func gql(t *testing.T, m gqlMarshaler) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	err := m.MarshalGQLContext(context.Background(), &buf)
	return buf.String(), err
}

// integerCase is an integer scalar's wire form, the value it decodes to,
// and how the value is written (for GraphQL and in JSON alike).
type integerCase[T any] struct {
	wire    string
	want    T
	wantGQL string
}

// testInteger decodes each case's wire form and writes the value back.
func testInteger[T interface {
	comparable
	gqlMarshaler
}](t *testing.T, tests []integerCase[T]) {
	for _, tt := range tests {
		t.Run(tt.wire, func(t *testing.T) {
			var got T
			if err := json.Unmarshal([]byte(tt.wire), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			out, err := gql(t, got)
			if err != nil || out != tt.wantGQL {
				t.Errorf("MarshalGQLContext = %s, %v; want %s", out, err, tt.wantGQL)
			}
			if b, _ := json.Marshal(got); string(b) != tt.wantGQL {
				t.Errorf("MarshalJSON = %s, want %s", b, tt.wantGQL)
			}
		})
	}
}

func TestInt64(t *testing.T) {
	testInteger(t, []integerCase[Int64]{
		{`"-5"`, -5, `"-5"`},
		{`-5`, -5, `"-5"`},
		{`"0"`, 0, `"0"`},
		{`"9223372036854775807"`, 9223372036854775807, `"9223372036854775807"`},
		{`"-9223372036854775808"`, -9223372036854775808, `"-9223372036854775808"`},
		{`5234298756345283401`, 5234298756345283401, `"5234298756345283401"`},
		{`null`, 0, `"0"`},
	})
}

func TestUint64(t *testing.T) {
	testInteger(t, []integerCase[Uint64]{
		{`"18446744073709551615"`, 18446744073709551615, `"18446744073709551615"`},
		{`18446744073709551615`, 18446744073709551615, `"18446744073709551615"`},
		{`"34514203"`, 34514203, `"34514203"`},
		{`0`, 0, `"0"`},
		{`null`, 0, `"0"`},
	})
}

func TestIntegerDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		target  any
		wire    string
		wantMsg string
	}{
		{"fraction", new(Uint64), `1.5`, "number 1.5 (not an integer)"},
		{"fraction in string", new(Int64), `"1.5"`, `string "1.5" (not an integer)`},
		{"exponent", new(Int64), `1e3`, "number 1e3 (not an integer)"},
		{"uint64 overflow", new(Uint64), `"18446744073709551616"`, "(out of range)"},
		{"int64 overflow", new(Int64), `9223372036854775808`, "(out of range)"},
		{"negative uint64", new(Uint64), `"-1"`, `string "-1" (negative)`},
		{"int32 overflow", new(Int32), `2147483648`, "number 2147483648 (out of range)"},
		{"empty string", new(Int64), `""`, `string "" (not an integer)`},
		{"word", new(UnixNanos), `"soon"`, `string "soon" (not an integer)`},
		{"bool", new(UnixSeconds), `true`, "bool"},
		{"object", new(Uint64), `{}`, "object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tt.wire), tt.target)
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				t.Fatalf("Unmarshal(%s) = %v, want a *json.UnmarshalTypeError", tt.wire, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

// A malformed value deep in a record names the whole path to its field.
func TestDecodeErrorNamesField(t *testing.T) {
	body := `{"transactions":[{"block":"1","command":{"nonce":"1","batchMarketInstructions":
		{"submissions":[{"marketId":"m","size":"1.5"}]}}}]}`
	var got transactionsBody
	err := json.Unmarshal([]byte(body), &got)
	want := "transactions.command.batchMarketInstructions.submissions.size of type upstream.Uint64"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want it to contain %q", err, want)
	}

	body = `{"transactions":[{"command":{"batchProposalSubmission":{"terms":{"changes":[
		{"enactmentTimestamp":"1","newMarket":{"changes":{"decimalPlaces":"x"}}}]}}}}]}`
	err = json.Unmarshal([]byte(body), &got)
	want = "transactions.command.batchProposalSubmission.terms.changes.newMarket.changes.decimalPlaces of type upstream.Uint64"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want it to contain %q", err, want)
	}
}

func TestInt32(t *testing.T) {
	for wire, want := range map[string]Int32{`2`: 2, `"2"`: 2, `-2147483648`: -2147483648} {
		var got Int32
		if err := json.Unmarshal([]byte(wire), &got); err != nil || got != want {
			t.Errorf("Unmarshal(%s) = %d, %v; want %d", wire, got, err, want)
		}
	}
	if out, err := gql(t, Int32(7)); out != "7" || err != nil {
		t.Errorf("MarshalGQLContext = %s, %v; want 7 (a number, for GraphQL Int)", out, err)
	}
}

func TestTimestamps(t *testing.T) {
	tests := []struct {
		name  string
		value gqlMarshaler
		want  string
	}{
		{"nanos zero is unset", UnixNanos(0), `null`},
		{"nanos", UnixNanos(1710446400123456789), `"2024-03-14T20:00:00.123456789Z"`},
		{"nanos whole second", UnixNanos(1710446400000000000), `"2024-03-14T20:00:00Z"`},
		{"seconds zero is unset", UnixSeconds(0), `null`},
		{"seconds", UnixSeconds(1735689600), `"2025-01-01T00:00:00Z"`},
		{"time zero is unset", Time{}, `null`},
		{"time in another zone is written in UTC",
			Time{time.Date(2024, 3, 14, 13, 0, 2, 500_000_000, time.FixedZone("", 3600))}, `"2024-03-14T12:00:02.5Z"`},
		{"year beyond RFC 3339", UnixSeconds(1 << 40), ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gql(t, tt.value)
			if tt.want == "" {
				if err == nil || got != "" {
					t.Errorf("got %s, %v; want nothing written and an error", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestTimeDecode(t *testing.T) {
	tests := []struct {
		wire string
		want time.Time
	}{
		{`"2024-03-14T12:00:02Z"`, time.Date(2024, 3, 14, 12, 0, 2, 0, time.UTC)},
		{`"2024-03-14T13:00:02.5+01:00"`, time.Date(2024, 3, 14, 12, 0, 2, 500_000_000, time.UTC)},
		{`""`, time.Time{}},
		{`null`, time.Time{}},
	}
	for _, tt := range tests {
		var got Time
		if err := json.Unmarshal([]byte(tt.wire), &got); err != nil {
			t.Fatalf("Unmarshal(%s): %v", tt.wire, err)
		}
		if !got.Time.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("Unmarshal(%s) = %v, want %v in UTC", tt.wire, got.Time, tt.want)
		}
	}
	var got Time
	if err := json.Unmarshal([]byte(`"yesterday"`), &got); err == nil || !strings.Contains(err.Error(), "not RFC 3339") {
		t.Errorf("Unmarshal of a non-RFC 3339 string: %v", err)
	}
}

func TestScalarGQLInput(t *testing.T) {
	ctx := context.Background()
	var i Int64
	for _, in := range []any{"-5", int64(-5), json.Number("-5"), -5.0} {
		if err := i.UnmarshalGQLContext(ctx, in); err != nil || i != -5 {
			t.Errorf("Int64.UnmarshalGQLContext(%#v) = %d, %v", in, i, err)
		}
	}
	if err := i.UnmarshalGQLContext(ctx, 1.5); err == nil {
		t.Error("Int64 accepted 1.5")
	}
	var u Uint64
	if err := u.UnmarshalGQLContext(ctx, "18446744073709551615"); err != nil || u != 18446744073709551615 {
		t.Errorf("Uint64.UnmarshalGQLContext = %d, %v", u, err)
	}
	if err := u.UnmarshalGQLContext(ctx, int64(-1)); err == nil {
		t.Error("Uint64 accepted -1")
	}
	var n UnixNanos
	if err := n.UnmarshalGQLContext(ctx, "2024-03-14T20:00:00.123456789Z"); err != nil || n != 1710446400123456789 {
		t.Errorf("UnixNanos.UnmarshalGQLContext = %d, %v", n, err)
	}
	var s UnixSeconds
	if err := s.UnmarshalGQLContext(ctx, "2024-03-14T20:00:00.5Z"); err == nil {
		t.Error("UnixSeconds accepted fractional seconds")
	}
}

func TestRawJSON(t *testing.T) {
	var r RawJSON
	if err := json.Unmarshal([]byte("{\n  \"a\": [ 1, 2 ],\n  \"b\": \"x y\"\n}"), &r); err != nil {
		t.Fatal(err)
	}
	if got, err := gql(t, r); got != `{"a":[1,2],"b":"x y"}` || err != nil {
		t.Errorf("MarshalGQLContext = %s, %v; want the compacted JSON", got, err)
	}
	if got, _ := gql(t, RawJSON(nil)); got != "null" {
		t.Errorf("empty RawJSON wrote %s, want null", got)
	}
	var in RawJSON
	if err := in.UnmarshalGQLContext(context.Background(), map[string]any{"k": []any{1}}); err != nil || string(in) != `{"k":[1]}` {
		t.Errorf("UnmarshalGQLContext = %s, %v", in, err)
	}
}

func TestTxCursor(t *testing.T) {
	c, err := ParseTxCursor("34514203.2")
	if diff := cmp.Diff(TxCursor{Block: 34514203, Index: 2}, c); diff != "" || err != nil {
		t.Errorf("ParseTxCursor: %v (-want +got)\n%s", err, diff)
	}
	if c.String() != "34514203.2" {
		t.Errorf("String() = %q", c.String())
	}
	for _, bad := range []string{"", "34514203", "a.b", "1.4294967296", "-1.2", "1.2.3"} {
		if _, err := ParseTxCursor(bad); err == nil {
			t.Errorf("ParseTxCursor(%q) succeeded", bad)
		}
	}
}
