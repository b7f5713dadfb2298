package graph_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGoldenGovernance: single proposals (proposalSubmission) and the
// change kinds the interface does not describe (newAsset, updateSpotMarket,
// updateReferralProgram, updateVolumeDiscountProgram), each with every
// field selected and compared, field by field, with the wire record the
// sample service sent (matchesWire); and every change kind of a batch
// compared the same way (change.all).
func TestGoldenGovernance(t *testing.T) { runGolden(t, governanceCases()) }

func init() { goldenSuites = append(goldenSuites, governanceCases) }

func governanceCases() []goldenCase {
	single := func(typename string) func(*testing.T, gqlResponse) {
		return func(t *testing.T, r gqlResponse) {
			t.Helper()
			expectErrorCount(t, r, 0)
			expectData(t, r, "ProposalSubmission", txNode("tx", "command", "__typename")...)
			expectData(t, r, typename, txNode("tx", "command", "terms", "change", "__typename")...)
			matchesWire(t, r, "proposalSubmission")
		}
	}
	batch := func(typenames ...string) func(*testing.T, gqlResponse) {
		return func(t *testing.T, r gqlResponse) {
			t.Helper()
			expectErrorCount(t, r, 0)
			for i, w := range typenames {
				expectData(t, r, w, txNode("tx", "command", "terms", "changes", i, "change", "__typename")...)
			}
			matchesWire(t, r, "batchProposalSubmission")
		}
	}
	return []goldenCase{
		oneTx("command.proposalSubmission", txCommand, "command.proposalSubmission", func(t *testing.T, r gqlResponse) {
			t.Helper()
			expectErrorCount(t, r, 0)
			expectData(t, r, "ProposalSubmission", txNode("tx", "command", "__typename")...)
			matchesWire(t, r, "proposalSubmission")
		}),
		oneTx("proposal.newAsset", txCommand, "proposal.newAsset", func(t *testing.T, r gqlResponse) {
			single("NewAsset")(t, r)
			// Validated before voting closes: the only change with a validation time.
			if dataAt(t, r, txNode("tx", "command", "terms", "validationTimestamp")...) == nil {
				t.Errorf("newAsset proposal without a validation time")
			}
		}),
		oneTx("change.updateSpotMarket", txCommand, "change.updateSpotMarket", batch("UpdateSpotMarket")),
		oneTx("change.updateReferralProgram", txCommand, "change.updateReferralProgram", batch("UpdateReferralProgram")),
		oneTx("change.updateVolumeDiscountProgram", txCommand, "change.updateVolumeDiscountProgram", batch("UpdateVolumeDiscountProgram")),
		oneTx("change.all", txCommand, "change.all", batch(
			"UpdateMarket", "NewMarket", "UpdateNetworkParameter", "NewFreeform", "UpdateAsset",
			"NewSpotMarket", "UpdateSpotMarket", "NewTransfer", "CancelTransfer", "UpdateMarketState",
			"UpdateReferralProgram", "UpdateVolumeDiscountProgram")),
	}
}

// matchesWire compares the command of the response's transaction with the
// command member the sample service sent for it (found by hash): every wire
// key must be served with the same value (see matchValue), and every
// served key the wire lacks must be null, a reference's object beside its
// id, or __typename.
func matchesWire(t *testing.T, r gqlResponse, member string) {
	t.Helper()
	hash, _ := dataAt(t, r, txNode("tx", "hash")...).(string)
	ds := dataset(t)
	var wire map[string]any
	for i := ds.Transactions.Len() - 1; i >= 0 && wire == nil; i-- {
		var tx struct {
			Hash    string                     `json:"hash"`
			Command map[string]json.RawMessage `json:"command"`
		}
		if err := json.Unmarshal(ds.Transactions.AppendJSON(nil, i), &tx); err != nil {
			t.Fatal(err)
		}
		if tx.Hash == hash {
			dec := json.NewDecoder(strings.NewReader(string(tx.Command[member])))
			dec.UseNumber()
			if err := dec.Decode(&wire); err != nil {
				t.Fatalf("wire %s of %s: %v", member, hash, err)
			}
		}
	}
	if wire == nil {
		t.Fatalf("no %s transaction %q in the dataset", member, hash)
	}
	var served any
	if err := json.Unmarshal(mustMarshal(t, dataAt(t, r, txNode("tx", "command")...)), &served); err != nil {
		t.Fatal(err)
	}
	// The batch's and the single proposal's change one-ofs are served
	// under `change`; on the wire the member sits beside the other fields.
	for _, problem := range matchValue("command", unwrapChanges(served), wire) {
		t.Error(problem)
	}
}

// unwrapChanges moves each served `change` union's fields up into its
// owner, where the wire keeps the member (under its own name, with the
// GraphQL type's name in lower camel case).
func unwrapChanges(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k != "change" {
				out[k] = unwrapChanges(x)
				continue
			}
			change, _ := x.(map[string]any)
			name, _ := change["__typename"].(string)
			member := strings.ToLower(name[:1]) + name[1:]
			delete(change, "__typename")
			out[member] = unwrapChanges(change)
		}
		return out
	case []any:
		for i := range v {
			v[i] = unwrapChanges(v[i])
		}
	}
	return v
}

// matchValue lists how the served value differs from the wire value at
// path. Wire integers may be served as strings (Int64, Uint64), wire
// times (Unix seconds or nanoseconds) as RFC 3339, "0" times as null, wire
// asset ids as Asset objects (their id), and freeform members as {raw}.
func matchValue(path string, served, wire any) []string {
	switch w := wire.(type) {
	case nil:
		if served != nil {
			return []string{fmt.Sprintf("%s: served %v, wire null", path, served)}
		}
		return nil
	case map[string]any:
		s, ok := served.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: served %v, wire object", path, served)}
		}
		if raw, ok := s["raw"]; ok && len(s) == 1 { // NewFreeform
			return matchValue(path+".raw", mustRoundTrip(raw), w)
		}
		var problems []string
		for k, wv := range w {
			sv, ok := s[k]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s.%s: not served", path, k))
				continue
			}
			problems = append(problems, matchValue(path+"."+k, sv, wv)...)
		}
		for k, sv := range s {
			_, onWire := w[k]
			_, idOnWire := w[k+"Id"]
			if !onWire && !idOnWire && k != "__typename" && sv != nil {
				problems = append(problems, fmt.Sprintf("%s.%s: served %v, absent on the wire", path, k, sv))
			}
		}
		return problems
	case []any:
		s, ok := served.([]any)
		if !ok || len(s) != len(w) {
			return []string{fmt.Sprintf("%s: served %v, wire %v", path, served, w)}
		}
		var problems []string
		for i := range w {
			problems = append(problems, matchValue(fmt.Sprintf("%s[%d]", path, i), s[i], w[i])...)
		}
		return problems
	case json.Number:
		if s, ok := served.(string); ok && s == w.String() {
			return nil
		}
		if s, ok := served.(float64); ok {
			if f, err := w.Float64(); err == nil && f == s {
				return nil
			}
		}
		return []string{fmt.Sprintf("%s: served %v, wire %v", path, served, w)}
	case string:
		switch s := served.(type) {
		case string:
			if s == w || sameTime(s, w) {
				return nil
			}
		case map[string]any: // a reference named without the suffix
			if s["id"] == w {
				return nil
			}
		case nil:
			if w == "0" && isTimeKey(path) {
				return nil
			}
		}
		return []string{fmt.Sprintf("%s: served %v, wire %q", path, served, w)}
	default:
		if served != wire {
			return []string{fmt.Sprintf("%s: served %v, wire %v", path, served, wire)}
		}
		return nil
	}
}

// sameTime reports whether served is the RFC 3339 form of the wire's Unix
// seconds or nanoseconds.
func sameTime(served, wire string) bool {
	ts, err := time.Parse(time.RFC3339Nano, served)
	if err != nil {
		return false
	}
	n, err := strconv.ParseInt(wire, 10, 64)
	return err == nil && (ts.Unix() == n && ts.Nanosecond() == 0 || ts.UnixNano() == n)
}

func isTimeKey(path string) bool {
	return strings.HasSuffix(path, "Timestamp") || strings.HasSuffix(path, ".deliverOn") ||
		strings.HasSuffix(path, ".initial") || strings.HasSuffix(path, ".until")
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustRoundTrip re-decodes v with numbers kept as json.Number, as the
// wire's side is.
func mustRoundTrip(v any) any {
	b, _ := json.Marshal(v)
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out any
	_ = dec.Decode(&out)
	return out
}
