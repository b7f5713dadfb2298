package upstream

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// sampleOneOfs returns the command and proposal change objects of the
// whole sample dataset, as the explorer sends them.
func sampleOneOfs(tb testing.TB) (commands, changes [][]byte) {
	tb.Helper()
	for _, s := range loadSampleBodies(tb) {
		if s.name != "transactions/all" {
			continue
		}
		var page struct {
			Transactions []struct {
				Command json.RawMessage `json:"command"`
			} `json:"transactions"`
		}
		if err := json.Unmarshal(s.body, &page); err != nil {
			tb.Fatal(err)
		}
		for _, tx := range page.Transactions {
			commands = append(commands, tx.Command)
			var proposal struct {
				BatchProposalSubmission *struct {
					Terms struct {
						Changes []json.RawMessage `json:"changes"`
					} `json:"terms"`
				} `json:"batchProposalSubmission"`
			}
			if err := json.Unmarshal(tx.Command, &proposal); err == nil && proposal.BatchProposalSubmission != nil {
				for _, c := range proposal.BatchProposalSubmission.Terms.Changes {
					changes = append(changes, c)
				}
			}
		}
	}
	if len(commands) == 0 || len(changes) == 0 {
		tb.Fatalf("%d commands and %d proposal changes in the sample dataset", len(commands), len(changes))
	}
	return commands, changes
}

// checkOneOfFastPath fails unless decoding b (the fast path first) gives
// what the general path gives: the same value, or the same error.
func checkOneOfFastPath(t *testing.T, b []byte) {
	t.Helper()
	var fastCmd, generalCmd Command
	fastErr, generalErr := fastCmd.UnmarshalJSON(b), generalCmd.unmarshalGeneral(b)
	if !sameOutcome(fastErr, generalErr) || !sameDecoded(fastCmd, generalCmd) {
		t.Fatalf("Command %s:\n fast path %#v, %v\n general   %#v, %v", b, fastCmd, fastErr, generalCmd, generalErr)
	}
	var fastChange, generalChange ProposalChange
	fastErr, generalErr = fastChange.UnmarshalJSON(b), generalChange.unmarshalGeneral(b)
	if !sameOutcome(fastErr, generalErr) || !sameDecoded(fastChange, generalChange) {
		t.Fatalf("ProposalChange %s:\n fast path %#v, %v\n general   %#v, %v", b, fastChange, fastErr, generalChange, generalErr)
	}
}

func sameOutcome(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

// TestOneOfFastPathMatchesGeneral: every command and proposal change of
// the sample dataset decodes through the fast path (the wire's order) to
// what the general path decodes, and so do the same objects with their
// members first, doubled, unknown, null, or spaced out, which the fast
// path leaves to the general one. Under -short, the comparisons take the
// first few objects of each kind (of 6,323 objects, each compared with
// six variants: 17 s, nearly all of it in cmp.Equal); the full suite
// compares them all.
func TestOneOfFastPathMatchesGeneral(t *testing.T) {
	commands, changes := sampleOneOfs(t)
	described, taken := 0, 0
	// perKind keeps, under -short, the first objects of each kind.
	const perKind = 3
	var sample [][]byte
	seen := map[reflect.Type]int{}
	keep := func(kind any, b []byte) {
		if k := reflect.TypeOf(kind); seen[k] < perKind {
			seen[k]++
			sample = append(sample, b)
		}
	}
	for _, b := range commands {
		var general, c Command
		err := general.unmarshalGeneral(b)
		keep(general.Kind, b)
		if err == nil && general.Kind != nil {
			if _, unknown := general.Kind.(*UnknownCommand); !unknown {
				described++
				if _, ok := commandMembers.decodeLast(b, c.decodePlain); ok {
					taken++
				}
			}
		}
	}
	for _, b := range changes {
		var general, p ProposalChange
		err := general.unmarshalGeneral(b)
		keep(general.Change, b)
		if err == nil && general.Change != nil {
			if _, unknown := general.Change.(*UnknownProposalChange); !unknown {
				described++
				if _, ok := proposalChangeMembers.decodeLast(b, p.decodePlain); ok {
					taken++
				}
			}
		}
	}
	// Every object of a kind the schema describes, in the wire's order,
	// takes the fast path.
	if described == 0 || taken != described {
		t.Fatalf("the fast path took %d of the %d described commands and changes", taken, described)
	}
	objects := append(commands, changes...)
	if testing.Short() {
		t.Logf("-short: %d of the %d objects (the first %d of each of %d kinds)", len(sample), len(objects), perKind, len(seen))
		objects = sample
	}
	for _, b := range objects {
		checkOneOfFastPath(t, b)
		for _, variant := range oneOfVariants(b) {
			checkOneOfFastPath(t, variant)
		}
	}
}

// oneOfVariants are b's object rewritten: its members reordered (the last
// first), an unknown member added after the last, the last one doubled,
// made null, spaces around everything.
func oneOfVariants(b []byte) [][]byte {
	var keys []string
	var values [][]byte
	err := eachMember(b, reflect.TypeFor[Command](), func(k, v []byte) error {
		keys, values = append(keys, string(k)), append(values, v)
		return nil
	})
	if err != nil || len(keys) == 0 {
		return nil
	}
	object := func(order []int, extra string) []byte {
		var out bytes.Buffer
		out.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				out.WriteByte(',')
			}
			k, _ := json.Marshal(keys[i])
			out.Write(k)
			out.WriteByte(':')
			out.Write(values[i])
		}
		out.WriteString(extra)
		out.WriteByte('}')
		return out.Bytes()
	}
	last := len(keys) - 1
	reversed := make([]int, 0, len(keys))
	for i := last; i >= 0; i-- {
		reversed = append(reversed, i)
	}
	inOrder := make([]int, len(keys))
	for i := range inOrder {
		inOrder[i] = i
	}
	lastKey, _ := json.Marshal(keys[last])
	return [][]byte{
		object(reversed, ""),
		object(inOrder, `,"zzUnknownMember":{"a":1}`),
		object(inOrder, `,`+string(lastKey)+`:{}`),
		object(inOrder[:last], `,`+string(lastKey)+`:null`),
		[]byte(" \n" + string(bytes.ReplaceAll(object(inOrder, ""), []byte(`":`), []byte(`" : `))) + " \t"),
		[]byte(`{"nonce":"x",` + string(b[1:])),
	}
}

// FuzzOneOfFastPath: on any bytes, the fast path and the general path
// agree on the value or the error.
func FuzzOneOfFastPath(f *testing.F) {
	for _, s := range []string{
		`{"nonce":"1","blockHeight":"2","announceNode":{"id":"x"}}`,
		`{"announceNode":{"id":"x"},"nonce":"1"}`,
		`{"nonce":"1","announceNode":{"id":"x"},"applyReferralCode":{"id":"y"}}`,
		`{"nonce":"1","announceNode":{"id":"x"}} `,
		`{"nonce":"1","announceNode":null}`,
		`{"n\u006fnce":"1","announceNode":{"id":"x"}}`,
		`{"nonce":1,"announceNode":{"id":"x"}}`,
		`{"nonce":"1","announceNode":{"id":5}}`,
		`{"enactmentTimestamp":"5","newFreeform":{}}`,
		`{"enactmentTimestamp":"5","newFreeform":{"x":[1,{"y":"}"}]}}`,
		`{"enactmentTimestamp":"5","newFreeform":{}},"x":{}}`,
		`{"nonce":"1","blockHeight":"2","batchMarketInstructions":{"submissions":[{"marketId":"m","side":"SIDE_BUY"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkOneOfFastPath(t, b)
	})
}
