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

	gojson "github.com/goccy/go-json"
)

// decodeStdTop decodes data into v with encoding/json at the top: the
// reference of the differential tests. The documents nested in it that
// the package's UnmarshalJSON methods decode themselves (one-of members)
// go through unmarshal, as in production; TestDecoderMatchesEncodingJSON
// compares those on their own, one level down.
func decodeStdTop(data []byte, v any) error { return json.Unmarshal(data, v) }

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
	srv, err := startSampleService(false)
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
	data := srv
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
	if err := add("transactions/all", "/rest/transactions?first="+strconv.Itoa(data.Transactions), txs); err != nil {
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
// reflect.DeepEqual values with the package decoder (go-json) and with
// encoding/json; then every one-of member of the sample dataset (each
// command and proposal change), the documents the package decodes itself,
// decodes alike with go-json and encoding/json. Each level's nested
// documents go through the same decoder on both sides, so go-json matching
// encoding/json on every level is go-json matching encoding/json alone.
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
			wantErr = decodeStdTop(in.body, want)
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
			if !sameDecoded(want, got) {
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

	commands, changes := sampleOneOfs(t)
	members := 0
	checkMembers := func(objects [][]byte, typ reflect.Type, newMember func(key string) any) {
		for _, obj := range objects {
			err := eachMember(obj, typ, func(key, value []byte) error {
				if newMember(string(key)) == nil || isNull(value) {
					return nil // a plain field, an unknown member or none
				}
				members++
				want, got := newMember(string(key)), newMember(string(key))
				if err := json.Unmarshal(value, want); err != nil {
					t.Fatalf("encoding/json, member %s: %v", key, err)
				}
				if err := gojson.Unmarshal(value, got); err != nil {
					t.Fatalf("go-json, member %s: %v", key, err)
				}
				if !sameDecoded(want, got) {
					t.Errorf("go-json and encoding/json decode the %s member %s differently", key, value)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	checkMembers(commands, reflect.TypeFor[Command](), func(key string) any {
		if m, ok := commandMembers.members[key]; ok {
			return m()
		}
		return nil
	})
	checkMembers(changes, reflect.TypeFor[ProposalChange](), func(key string) any {
		if m, ok := proposalChangeMembers.members[key]; ok {
			return m()
		}
		return nil
	})
	if members == 0 {
		t.Fatal("no one-of member compared")
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
			wantErr = decodeStdTop([]byte(tt.body), &want)
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
			if !sameDecoded(want, got) {
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
			page, err := c.ListTransactions(context.Background(), TransactionsParams{})
			if err == nil {
				// A fault in a command is found where the command is read
				// (command_lazy.go).
				_, err = WholeCommands(page.Transactions, EndpointTransactions)
			}
			var de *DecodeError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v (%T), want a *DecodeError containing %q", err, err, tt.wantErr)
			}
		})
	}

	srv := startSampleT(t, false)
	for _, f := range []struct {
		name  string
		fault SampleFault
	}{
		{"malformed fault", SampleFault{MalformedRate: 1}},
		{"truncated fault", SampleFault{TruncatedRate: 1}},
	} {
		t.Run(f.name, func(t *testing.T) {
			srv.SetFault(EndpointTransactions, f.fault)
			defer srv.SetFault(EndpointTransactions, SampleFault{})
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

// panicky's UnmarshalJSON panics on the calls panicAt names (counting
// from 1; every call when panicAlways), else decodes its value as a
// string: a decoder that panics, without replacing any.
type panicky struct{ Value string }

var (
	calls       int
	panicAt     map[int]bool
	panicAlways bool
)

func (p *panicky) UnmarshalJSON(b []byte) error {
	calls++
	if panicAlways || panicAt[calls] {
		var nilMap map[string]int
		nilMap["x"] = 1 // a runtime panic
	}
	return json.Unmarshal(b, &p.Value)
}

// member decodes its panicky through unmarshal, as a one-of decodes its
// member: a nested document of its own.
type member struct{ Inner panicky }

func (m *member) UnmarshalJSON(b []byte) error { return unmarshal(b, &m.Inner) }

// TestDecoderPanics: a panic while go-json decodes leaves the decoding to
// encoding/json (in the body and in a nested document alike), and a panic
// in both is an error of decodeBody (which the client reports as a
// *DecodeError, TestClientGarbageIsDecodeError), not a crash.
func TestDecoderPanics(t *testing.T) {
	t.Cleanup(func() { calls, panicAt, panicAlways = 0, nil, false })
	body := []byte(`{"items":["a","b"],"member":"m"}`)
	type page struct {
		Items  []panicky `json:"items"`
		Member member    `json:"member"`
	}
	for _, tt := range []struct {
		name      string
		panicAt   map[int]bool
		fallbacks int64
	}{
		// Calls: go-json's of "a" (then encoding/json's of "a" and
		// "b", go-json's of the member, encoding/json's of it).
		{"go-json panics in the body", map[int]bool{1: true}, 1},
		{"go-json panics in the body and in the nested document", map[int]bool{1: true, 4: true}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls, panicAt = 0, tt.panicAt
			before := fallbacks.Load()
			var got page
			if err := decodeBody(body, &got); err != nil {
				t.Fatal(err)
			}
			if n := fallbacks.Load() - before; n != tt.fallbacks {
				t.Errorf("%d fallbacks to encoding/json, want %d", n, tt.fallbacks)
			}
			if want := (page{Items: []panicky{{"a"}, {"b"}}, Member: member{panicky{"m"}}}); !reflect.DeepEqual(got, want) {
				t.Errorf("decoded %+v, want %+v", got, want)
			}
		})
	}
	t.Run("both panic", func(t *testing.T) {
		panicAlways = true
		var got page
		err := decodeBody(body, &got)
		if err == nil || !strings.Contains(err.Error(), "assignment to entry in nil map") {
			t.Errorf("error %v, want the panic as an error", err)
		}
	})
}

// BenchmarkDecodeSampleTransactions compares encoding/json at the top (the
// one-of members inside still decoded by the package decoder) with the
// package decoder on the sample service's pages of 50 and 1,000
// transactions. allocs/tx is allocations per transaction.
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
			name   string
			decode func([]byte, any) error
		}{{"encoding-json", decodeStdTop}, {"go-json", decodeBody}} {
			b.Run(fmt.Sprintf("%d/%s", n, dec.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(s.body)))
				for b.Loop() {
					var out transactionsBody
					if err := dec.decode(s.body, &out); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				allocs := testing.AllocsPerRun(3, func() {
					var out transactionsBody
					dec.decode(s.body, &out)
				})
				b.ReportMetric(allocs/float64(n), "allocs/tx")
			})
		}
		// As the client decodes the page: commands kept undecoded
		// (command_lazy.go), then, for an operation reading every one of
		// them, decoded.
		for _, read := range []struct {
			name string
			use  *CommandUse
		}{{"client", nil}, {"client+every-command", EveryCommand}} {
			b.Run(fmt.Sprintf("%d/%s", n, read.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(s.body)))
				decode := func() {
					var out pageBody
					if err := decodeBody(s.body, &out); err != nil {
						b.Fatal(err)
					}
					if _, err := PrepareCommands(out.rows, read.use, EndpointTransactions); err != nil {
						b.Fatal(err)
					}
				}
				for b.Loop() {
					decode()
				}
				b.StopTimer()
				b.ReportMetric(testing.AllocsPerRun(3, decode)/float64(n), "allocs/tx")
			})
		}
	}
}
