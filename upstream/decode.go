package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	gojson "github.com/goccy/go-json"
)

// This file is the one place that chooses how the package decodes JSON:
// every upstream body (client.go) and every sub-document a custom
// UnmarshalJSON decodes (a one-of member, AnnounceNode) goes through
// unmarshal.
//
// It decodes with github.com/goccy/go-json, because decoding the
// explorer's transactions dominated the gateway's CPU and go-json does it
// several times faster than encoding/json (which validates every nested
// document again); BenchmarkDecodeSampleTransactions measures it, and
// BENCHMARKS.md has the figures. Its price is a few more allocations per
// transaction.
//
// encoding/json stays the reference. go-json decodes as it does
// (TestDecoderMatchesEncodingJSON checks it on the sample service's real
// bodies, level by level), and whenever go-json fails, with an error or a
// panic, encoding/json decodes the same bytes again and its result and
// error are the ones returned: every error keeps encoding/json's types
// (*json.UnmarshalTypeError, *json.SyntaxError), texts and field paths,
// which callers and tests inspect. Errors are rare (a broken upstream), so
// decoding them twice costs nothing that matters.

// unmarshal decodes data into v, a non-nil pointer, as json.Unmarshal does.
//
// On a go-json failure, *v is restored to what it held before (a shallow
// copy: values behind pointers already in *v are not restored; the
// package's callers pass fresh values) and encoding/json decodes data
// into it.
func unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return json.Unmarshal(data, v) // its *json.InvalidUnmarshalError
	}
	elem := rv.Elem()
	var saved reflect.Value // unset when *v is zero, the common case
	if !elem.IsZero() {
		saved = reflect.New(elem.Type()).Elem()
		saved.Set(elem)
	}
	if fastUnmarshal(data, v) == nil {
		return nil
	}
	fallbacks.Add(1)
	if saved.IsValid() {
		elem.Set(saved)
	} else {
		elem.SetZero()
	}
	return json.Unmarshal(data, v)
}

// fastUnmarshal is go-json's decode, with any panic turned into an error
// (unmarshal then lets encoding/json decide).
func fastUnmarshal(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("go-json panicked: %v", r)
		}
	}()
	return gojson.Unmarshal(data, v)
}

// fallbacks counts the decodes that go-json failed and encoding/json did
// again (only on that path, never on a decode that succeeds): the tests
// check that valid input never needs it.
var fallbacks atomic.Int64

// decodeBody decodes an upstream body into out, then, if out has a
// decoded method, calls it (a page of transactions turns its wire rows
// into Transactions: command_lazy.go). A panic anywhere in the decoding,
// including in a custom UnmarshalJSON of the package, is an error (which
// the client reports as a *DecodeError), never a crash.
func decodeBody(data []byte, out any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the decoder failed on the body: %v", r)
		}
	}()
	if err := unmarshal(data, out); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			namedAsWhole(te)
		}
		return err
	}
	if d, ok := out.(interface{ decoded() }); ok {
		d.decoded()
	}
	return nil
}

// namedAsWhole names, in a type error from decoding a page of
// transactions as the client does (pageBody, lookupBody: command_lazy.go),
// the types that decoding the page whole (transactionsBody, Transaction)
// decodes into, so that its text is the one it was.
func namedAsWhole(te *json.UnmarshalTypeError) {
	if name, ok := wholeStructs[te.Struct]; ok {
		te.Struct = name
	}
	if t, ok := wholeTypes[te.Type]; ok {
		te.Type = t
	}
}

var (
	wholeStructs = map[string]string{
		reflect.TypeFor[wireTransaction]().Name(): reflect.TypeFor[Transaction]().Name(),
		reflect.TypeFor[pageBody]().Name():        reflect.TypeFor[transactionsBody]().Name(),
		reflect.TypeFor[lookupBody]().Name():      "transactionBody",
	}
	wholeTypes = map[reflect.Type]reflect.Type{
		reflect.TypeFor[wireTransaction]():    reflect.TypeFor[Transaction](),
		reflect.TypeFor[*wireTransaction]():   reflect.TypeFor[*Transaction](),
		reflect.TypeFor[[]wireTransaction]():  reflect.TypeFor[[]Transaction](),
		reflect.TypeFor[*[]wireTransaction](): reflect.TypeFor[*[]Transaction](),
	}
)
