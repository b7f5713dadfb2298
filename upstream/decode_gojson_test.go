package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tradenet/gateway/sampleservice"
)

// withStdOnly runs fn with the package decoding by encoding/json alone
// (the reference): nested one-of members and AnnounceNode included.
func withStdOnly(fn func()) {
	stdOnly.Store(true)
	defer stdOnly.Store(false)
	fn()
}

// sampleBody is one real body of the sample service and a fresh value of
// the type the client decodes it into.
type sampleBody struct {
	name string
	body []byte
	out  func() listBody
}

var (
	sampleOnce   sync.Once
	sampleBodies []sampleBody
	sampleErr    error
)

// loadSampleBodies fetches, once per test binary, big pages of the sample
// service's default dataset: every transaction (all command kinds, the
// notable edge cases), all assets, the delegations and the funding
// payments of the parties that have them.
func loadSampleBodies(tb testing.TB) []sampleBody {
	tb.Helper()
	sampleOnce.Do(func() { sampleBodies, sampleErr = fetchSampleBodies() })
	if sampleErr != nil {
		tb.Fatal(sampleErr)
	}
	return sampleBodies
}

func fetchSampleBodies() ([]sampleBody, error) {
	srv, err := sampleservice.Start(sampleservice.Config{}, "")
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	get := func(path string) ([]byte, error) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
		}
		return b, err
	}
	data := srv.Service.Dataset()
	var bodies []sampleBody
	add := func(name, path string, out func() listBody) error {
		b, err := get(path)
		if err != nil {
			return err
		}
		bodies = append(bodies, sampleBody{name: name, body: b, out: out})
		return nil
	}
	txs := func() listBody { return new(transactionsBody) }
	if err := add("transactions/all", "/rest/transactions?first="+strconv.Itoa(data.Transactions.Len()), txs); err != nil {
		return nil, err
	}
	for _, n := range []int{50, 1000} {
		if err := add(fmt.Sprintf("transactions/%d", n), "/rest/transactions?first="+strconv.Itoa(n), txs); err != nil {
			return nil, err
		}
	}
	if err := add("assets", "/api/v2/assets?pagination.first=5000", func() listBody { return new(assetsBody) }); err != nil {
		return nil, err
	}
	if err := add("delegations", "/api/v2/delegations?pagination.first=5000", func() listBody { return new(delegationsBody) }); err != nil {
		return nil, err
	}
	funded := 0
	for _, party := range data.Parties {
		if funded == 5 {
			break
		}
		b, err := get("/api/v2/funding-payments?pagination.first=5000&partyId=" + party)
		if err != nil {
			return nil, err
		}
		if strings.Contains(string(b), `"node"`) {
			funded++
			bodies = append(bodies, sampleBody{name: "funding-payments/" + party[:8], body: b,
				out: func() listBody { return new(fundingPaymentsBody) }})
		}
	}
	if funded == 0 {
		return nil, errors.New("no party of the sample dataset has funding payments")
	}
	return bodies, nil
}

// TestDecoderMatchesEncodingJSON is the differential test of decode.go:
// the sample service's real bodies, and the fixtures, decode to
// reflect.DeepEqual values with go-json and with encoding/json alone.
func TestDecoderMatchesEncodingJSON(t *testing.T) {
	type input struct {
		name string
		body []byte
		out  func() listBody
	}
	var inputs []input
	for _, s := range loadSampleBodies(t) {
		inputs = append(inputs, input(s))
	}
	for name, out := range map[string]func() listBody{
		"assets.json":                  func() listBody { return new(assetsBody) },
		"delegations.json":             func() listBody { return new(delegationsBody) },
		"funding_payments.json":        func() listBody { return new(fundingPaymentsBody) },
		"transactions_commands.json":   func() listBody { return new(transactionsBody) },
		"transactions_edge_cases.json": func() listBody { return new(transactionsBody) },
		"transactions_proposals.json":  func() listBody { return new(transactionsBody) },
	} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{"testdata/" + name, b, out})
	}

	kinds := map[string]int{}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			want, got := in.out(), in.out()
			var wantErr error
			withStdOnly(func() { wantErr = decodeBody(in.body, want) })
			if wantErr != nil {
				t.Fatalf("encoding/json: %v", wantErr)
			}
			before := fallbacks.Load()
			if err := decodeBody(in.body, got); err != nil {
				t.Fatalf("package decoder: %v", err)
			}
			if n := fallbacks.Load() - before; n != 0 {
				t.Errorf("go-json failed %d times on the body, and encoding/json decoded it", n)
			}
			if !want.hasList() {
				t.Fatal("no list decoded")
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("go-json and encoding/json decode %s differently", in.name)
			}
			if txs, ok := got.(*transactionsBody); ok {
				for _, tx := range *txs.Transactions {
					kinds[fmt.Sprintf("%T", tx.Command.Kind)]++
				}
			}
		})
	}
	// The transactions covered every command kind the package describes,
	// the unknown ones and batch proposals.
	for _, k := range []string{"*upstream.AnnounceNode", "*upstream.ApplyReferralCode",
		"*upstream.BatchMarketInstructions", "*upstream.BatchProposalSubmission", "*upstream.UnknownCommand"} {
		if kinds[k] == 0 {
			t.Errorf("no transaction with a %s command among the inputs (%v)", k, kinds)
		}
	}
}

// garbageBodies are bodies of the transactions list that are not valid,
// with the error encoding/json gives them (a fragment of it).
var garbageBodies = []struct {
	name, body, wantErr string
}{
	{"empty", ``, "unexpected end of JSON input"},
	{"truncated", `{"transactions":[{"block":"1","index":0,"command":{"nonce":"1","announceNode":{"id":"x"`, "unexpected end of JSON input"},
	{"truncated string", `{"transactions":[{"hash":"abc`, "unexpected end of JSON input"},
	{"HTML", `<html>maintenance</html>`, "invalid character '<'"},
	{"trailing garbage", `{"transactions":[]} x`, "invalid character 'x' after top-level value"},
	{"trailing nul", "{\"transactions\":[]}\x00", `invalid character '\x00' after top-level value`},
	{"trailing comma", `{"transactions":[{"block":"1",}]}`, "invalid character '}' looking for beginning of object key string"},
	{"bad literal in an unknown member", `{"transactions":[{"command":{"nonce":"1","futureCommand":{"a":tru}}}]}`, "invalid character '}' in literal true"},
	{"bad literal beside a known member", `{"transactions":[{"command":{"zzz":nul,"announceNode":{}}}]}`, "invalid character ',' in literal null"},
	{"bad escape in a key", `{"transactions":[{"command":{"a\x":1}}]}`, "invalid character 'x' in string escape code"},
	{"control character", "{\"transactions\":[{\"hash\":\"a\tb\"}]}", `invalid character '\t' in string literal`},
	{"leading zero", `{"transactions":[{"index":01}]}`, "invalid character '1'"},
	{"number in an enum", `{"transactions":[{"version":1.5}]}`, "(not an enum number)"},
	{"wrong type deep in a member", `{"transactions":[{"command":{"batchMarketInstructions":{"submissions":[{"size":"1.5"}]}}}]}`,
		`cannot unmarshal string "1.5" (not an integer) into Go struct field Transaction.transactions.command.batchMarketInstructions.submissions.size of type upstream.Uint64`},
	{"wrong type in AnnounceNode", `{"transactions":[{"command":{"announceNode":{"vegaPubKeyIndex":true}}}]}`, "cannot unmarshal bool"},
	{"object for the list", `{"transactions":{}}`, "cannot unmarshal object"},
	{"deeply nested arrays", `{"transactions":[{"command":{"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}]}`, "exceeded max depth"},
	{"deeply nested objects", `{"transactions":[{"command":{"announceNode":` + strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000) + `}}]}`, "exceeded max depth"},
	{"deeply nested, unclosed", `{"transactions":` + strings.Repeat("[", 50000), "exceeded max depth"},
	{"invalid UTF-8 accepted", "{\"transactions\":[{\"hash\":\"a\xffb\",\"command\":{\"k\xff\":{\"\xc3\":1}}}]}", ""},
	{"lone surrogates accepted", `{"transactions":[{"hash":"\ud800\udc00\udc00","command":{"announceNode":{"name":"\ud800x"}}}]}`, ""},
	{"case-insensitive and duplicate keys", `{"TRANSACTIONS":[{"HASH":"a","hash":"b","Command":{"announceNode":{"ID":"1","id":"2"}}}],"transactions":[{"block":"7"}]}`, ""},
	{"numbers at the limits", `{"transactions":[{"block":"18446744073709551615","code":"-9223372036854775808","index":2147483648,"command":{"nonce":"-1"}}]}`, `number 2147483648 (out of range) into Go struct field Transaction.transactions.index of type upstream.Int32`},
	{"floats out of range", `{"transactions":[{"command":{"batchProposalSubmission":{"terms":{"changes":[{"newMarket":{"changes":{"logNormal":{"tau":1e999,"params":{"mu":-0,"r":1e-400,"sigma":123456789012345678901234567890}}}}}]}}}}]}`, "cannot unmarshal number 1e999 into Go struct field"},
}

// TestDecoderGarbage checks that, on invalid bodies and on valid oddities
// (invalid UTF-8, lone surrogates, case-insensitive and duplicate keys,
// numbers at the limits), the package decoder gives exactly what
// encoding/json alone gives: the same value, the same error text and type.
func TestDecoderGarbage(t *testing.T) {
	for _, tt := range garbageBodies {
		t.Run(tt.name, func(t *testing.T) {
			var want, got transactionsBody
			var wantErr error
			withStdOnly(func() { wantErr = decodeBody([]byte(tt.body), &want) })
			before := fallbacks.Load()
			gotErr := decodeBody([]byte(tt.body), &got)
			if tt.wantErr == "" {
				if wantErr != nil {
					t.Errorf("encoding/json: %v", wantErr)
				}
				if n := fallbacks.Load() - before; n != 0 {
					t.Errorf("go-json failed %d times on valid input", n)
				}
			} else if wantErr == nil || !strings.Contains(wantErr.Error(), tt.wantErr) {
				t.Errorf("encoding/json error %v, want one containing %q", wantErr, tt.wantErr)
			}
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || reflect.TypeOf(gotErr) != reflect.TypeOf(wantErr) {
				t.Errorf("error %v (%T), encoding/json gives %v (%T)", gotErr, gotErr, wantErr, wantErr)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("value %+v, encoding/json gives %+v", got, want)
			}
		})
	}
}

// TestClientGarbageIsDecodeError feeds invalid bodies through the client:
// each is a *DecodeError (UPSTREAM_ERROR in graph) naming encoding/json's
// reason; the sample service's malformed and truncated faults too.
func TestClientGarbageIsDecodeError(t *testing.T) {
	for _, tt := range garbageBodies {
		if tt.wantErr == "" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			c := setup(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tt.body) })
			_, err := c.ListTransactions(context.Background(), TransactionsParams{})
			var de *DecodeError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v (%T), want a *DecodeError containing %q", err, err, tt.wantErr)
			}
		})
	}

	srv, err := sampleservice.Start(sampleservice.Config{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, f := range []struct {
		name  string
		fault sampleservice.Fault
	}{
		{"malformed fault", sampleservice.Fault{MalformedRate: 1}},
		{"truncated fault", sampleservice.Fault{TruncatedRate: 1}},
	} {
		t.Run(f.name, func(t *testing.T) {
			srv.Service.SetFault(sampleservice.EndpointTransactions, f.fault)
			defer srv.Service.SetFault(sampleservice.EndpointTransactions, sampleservice.Fault{})
			c, err := New(Config{DataNodeURL: srv.URL, ExplorerURL: srv.URL + "/rest"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.ListTransactions(context.Background(), TransactionsParams{First: 200})
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T), want a *DecodeError", err, err)
			}
			var se *json.SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("error %v: want an encoding/json *json.SyntaxError inside", err)
			}
		})
	}
}

// TestDecoderPanics: a panic in go-json leaves the decoding to
// encoding/json (at the top and in a nested member alike), and a panic of
// both decoders is a *DecodeError, not a crash.
func TestDecoderPanics(t *testing.T) {
	body := loadSampleBodies(t)[1].body // 50 transactions
	var want transactionsBody
	withStdOnly(func() {
		if err := decodeBody(body, &want); err != nil {
			t.Fatal(err)
		}
	})
	setDecoders := func(fast, std func([]byte, any) error) {
		oldFast, oldStd := decodeFast, decodeStd
		decodeFast, decodeStd = fast, std
		t.Cleanup(func() { decodeFast, decodeStd = oldFast, oldStd })
	}
	serve := setup(t, func(w http.ResponseWriter, r *http.Request) { w.Write(body) })

	t.Run("go-json panics at the top", func(t *testing.T) {
		setDecoders(func([]byte, any) error { panic("boom") }, decodeStd)
		page, err := serve.ListTransactions(context.Background(), TransactionsParams{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(page.Transactions, *want.Transactions) {
			t.Error("the page differs from encoding/json's")
		}
	})
	t.Run("go-json panics in a member", func(t *testing.T) {
		fast := decodeFast
		setDecoders(func(b []byte, v any) error {
			if _, ok := v.(*BatchMarketInstructions); ok {
				var nilMap map[string]int
				nilMap["x"] = 1 // a runtime panic
			}
			return fast(b, v)
		}, decodeStd)
		var got transactionsBody
		if err := decodeBody(body, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Error("the page differs from encoding/json's")
		}
	})
	t.Run("both panic", func(t *testing.T) {
		boom := func([]byte, any) error { panic("boom") }
		setDecoders(boom, boom)
		_, err := serve.ListTransactions(context.Background(), TransactionsParams{})
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "boom") {
			t.Errorf("error %v (%T), want a *DecodeError", err, err)
		}
	})
}

// BenchmarkDecodeSampleTransactions compares encoding/json (alone, as before
// decode.go) with the package decoder on the sample service's pages of 50
// and 1,000 transactions. allocs/tx is allocations per transaction.
//
//	go test -run '^$' -bench DecodeSampleTransactions -benchmem ./upstream
func BenchmarkDecodeSampleTransactions(b *testing.B) {
	bodies := loadSampleBodies(b)
	for _, s := range bodies {
		if s.name != "transactions/50" && s.name != "transactions/1000" {
			continue
		}
		var probe transactionsBody
		if err := decodeBody(s.body, &probe); err != nil {
			b.Fatal(err)
		}
		n := len(*probe.Transactions)
		for _, dec := range []struct {
			name string
			std  bool
		}{{"encoding-json", true}, {"go-json", false}} {
			b.Run(fmt.Sprintf("%d/%s", n, dec.name), func(b *testing.B) {
				stdOnly.Store(dec.std)
				defer stdOnly.Store(false)
				b.ReportAllocs()
				b.SetBytes(int64(len(s.body)))
				for b.Loop() {
					var out transactionsBody
					if err := decodeBody(s.body, &out); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				allocs := testing.AllocsPerRun(3, func() {
					var out transactionsBody
					decodeBody(s.body, &out)
				})
				b.ReportMetric(allocs/float64(n), "allocs/tx")
			})
		}
	}
}
