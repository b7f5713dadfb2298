package upstream

import (
	"encoding/json"
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
// Why go-json: decoding the explorer's transactions dominated the gateway's
// CPU (a profile of the heaviest query, BENCHMARKS.md "What changed in the
// second round": about half of it in encoding/json, which validates the
// whole input before decoding it, and validates each sub-document again on
// every nested json.Unmarshal, so a command's one-of member was scanned
// several times). With
// github.com/goccy/go-json v0.12.0 (pure Go, MIT) for both the body and the
// nested decodes, the sample service's pages of 50 and 1,000 transactions
// decode about 4 times faster (BenchmarkDecodeSampleTransactions: 1.36 ms
// to 0.30 ms, 27.6 ms to 7.1 ms; bench/heavy_test.go's page 3.05 ms to
// 0.88 ms; sonic was slower here, 1.3 ms). The price is allocations: go-json
// copies the bytes it hands to every UnmarshalJSON of a type outside the
// standard library (a command object, each scalar and enum of the
// package), about 10 more allocations per transaction.
//
// encoding/json stays the reference. go-json decodes as encoding/json does
// (it says so, and TestDecoderMatchesEncodingJSON checks it on the sample
// service's real bodies, one level of documents at a time: the bodies,
// then the one-of members inside them, each decoded by gojson.Unmarshal
// and by json.Unmarshal directly; nothing here switches decoders for
// tests), but whenever it fails, with an error or a
// panic, the same bytes are decoded again by encoding/json, whose result
// and error are the ones returned. So every error is exactly what it was
// before go-json: its type (*json.UnmarshalTypeError, *json.SyntaxError,
// which callers and tests inspect), its text and its field path, since
// go-json's error types are its own and its texts follow a newer
// encoding/json. Errors are rare (a broken upstream), so decoding them
// twice costs nothing that matters.

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

// decodeBody decodes an upstream body into out. A panic anywhere in the
// decoding, including in a custom UnmarshalJSON of the package, is an
// error (which the client reports as a *DecodeError), never a crash.
func decodeBody(data []byte, out any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the decoder failed on the body: %v", r)
		}
	}()
	return unmarshal(data, out)
}
