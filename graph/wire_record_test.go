package graph_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
)

// v074Members are the one-of members of the v0.74 wire
// (docs/wire.md, Command kinds and Proposal changes): the schema must type
// every one of them.
var v074Members = []string{
	"Command.announceNode", "Command.applyReferralCode", "Command.batchMarketInstructions",
	"Command.batchProposalSubmission", "Command.cancelTransfer", "Command.chainEvent",
	"Command.createReferralSet", "Command.delegateSubmission", "Command.ethereumKeyRotateSubmission",
	"Command.issueSignatures", "Command.joinTeam", "Command.keyRotateSubmission",
	"Command.liquidityProvisionAmendment", "Command.liquidityProvisionCancellation",
	"Command.liquidityProvisionSubmission", "Command.nodeSignature", "Command.nodeVote",
	"Command.oracleDataSubmission", "Command.orderAmendment", "Command.orderCancellation",
	"Command.orderSubmission", "Command.proposalSubmission", "Command.protocolUpgradeProposal",
	"Command.stateVariableProposal", "Command.stopOrdersCancellation", "Command.stopOrdersSubmission",
	"Command.transfer", "Command.undelegateSubmission", "Command.updateMarginMode",
	"Command.updatePartyProfile", "Command.updateReferralSet", "Command.validatorHeartbeat",
	"Command.voteSubmission", "Command.withdrawSubmission",
	"ProposalChangeKind.cancelTransfer", "ProposalChangeKind.newAsset", "ProposalChangeKind.newFreeform",
	"ProposalChangeKind.newMarket", "ProposalChangeKind.newSpotMarket", "ProposalChangeKind.newTransfer",
	"ProposalChangeKind.updateAsset", "ProposalChangeKind.updateMarket", "ProposalChangeKind.updateMarketState",
	"ProposalChangeKind.updateNetworkParameter", "ProposalChangeKind.updateReferralProgram",
	"ProposalChangeKind.updateSpotMarket", "ProposalChangeKind.updateVolumeDiscountProgram",
}

// allowUnknown are the v0.74 members the gateway may still serve as
// UnknownCommand / UnknownProposalChange: none, since the schema types them
// all. (Members outside v0.74, and a one-of that arrives with no member,
// are Unknown… by design and always allowed.)
var allowUnknown = map[string]bool{}

// TestWireRecords: every notable transaction of the sample dataset (one of
// each command and change kind, and the edge cases), queried through the
// gateway with every field of the schema selected (fullSelection), equals
// its record as the sample explorer serves it, by compareTx's generic
// rules: every wire key has a field, every field its wire value. All the
// differences are reported, with their paths.
func TestWireRecords(t *testing.T) {
	gw := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Limits: fullSelectionLimits}})
	ds := gw.Sample.Service.Dataset()
	checker := newWireChecker(t, ds)
	query := notableQuery(checker.sel)

	var mu sync.Mutex
	unknown := map[string][]string{} // member → notable names
	t.Run("notable", func(t *testing.T) {
		for _, name := range slices.Sorted(maps.Keys(ds.Notable)) {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				pos := ds.Notable[name]
				wire := explorerTx(t, gw.Sample.URL, ds, pos)
				node, errs := notableNode(t, gw, query, name)
				res := checker.compareTx(node, wire, errs)
				if len(res.problems) > 0 {
					t.Errorf("%d differences from the wire record:\n%s\nwire: %s", len(res.problems), strings.Join(res.problems, "\n"), wire)
				}
				mu.Lock()
				for m := range res.unknown {
					unknown[m] = append(unknown[m], name)
				}
				mu.Unlock()
			})
		}
	})
	checkUnknownMembers(t, unknown)
}

// notableQuery fetches, with selection sel, the transaction that the
// cursor $c addresses (txCursorOf), under tx.
func notableQuery(sel *selObject) string {
	return `query ($c: String) { tx: transactions(last: 1, before: $c) { edges { node ` + sel.String() + ` } } }`
}

// notableNode runs a notableQuery for the Notable transaction name and
// returns its node (decoded with UseNumber) and the errors under it, by
// relative path; an error elsewhere fails the test.
func notableNode(t *testing.T, gw *testGateway, query, name string) (any, map[string][]gqlError) {
	t.Helper()
	r := gw.query(t, query, map[string]any{"c": txCursorOf(t, gw.Sample.Service.Dataset(), name)})
	var data struct {
		Tx struct {
			Edges []struct {
				Node json.RawMessage `json:"node"`
			} `json:"edges"`
		} `json:"tx"`
	}
	if err := json.Unmarshal(r.Data, &data); err != nil || len(data.Tx.Edges) != 1 {
		t.Fatalf("want one transaction: %v; errors %+v; data %.300s", err, r.Errors, r.Data)
	}
	var node any
	if err := decodeNumbers(data.Tx.Edges[0].Node, &node); err != nil {
		t.Fatal(err)
	}
	errs, other := errorsUnder(r.Errors, []any{"tx", "edges", 0, "node"})
	for _, e := range other {
		t.Errorf("error outside the transaction: %s: %s (%s)", pathString(e.Path), e.Message, e.code())
	}
	return node, errs
}

// checkUnknownMembers fails for the v0.74 members served as Unknown… that
// allowUnknown does not allow, and logs the rest.
func checkUnknownMembers(t *testing.T, unknown map[string][]string) {
	t.Helper()
	var still []string
	for _, m := range slices.Sorted(maps.Keys(unknown)) {
		_, member, _ := strings.Cut(m, ".")
		switch {
		case member == "" || !slices.Contains(v074Members, m):
			t.Logf("%s served as Unknown… (not a v0.74 member: by design)", m)
		case allowUnknown[m]:
			still = append(still, m)
		default:
			t.Errorf("%s is served as Unknown… (in %s): the schema must type it", m, strings.Join(unknown[m], ", "))
		}
	}
	if len(still) > 0 {
		t.Logf("%d v0.74 members still served as Unknown… (allowed by allowUnknown): %s", len(still), strings.Join(still, " "))
	}
	for _, m := range slices.Sorted(maps.Keys(allowUnknown)) {
		if _, seen := unknown[m]; !seen {
			t.Logf("allowUnknown allows %s, which is no longer served as Unknown… (or is not in the data): remove it", m)
		}
	}
}

// TestFullSelectionCoversTheSchema: the generated selection reaches every
// type that a transaction can hold, so a type added under Command is
// selected without editing the tests.
func TestFullSelectionCoversTheSchema(t *testing.T) {
	sel := fullSelection(t, "Transaction")
	reached := map[string]bool{}
	var walk func(o *selObject)
	walk = func(o *selObject) {
		reached[o.def.Name] = true
		for _, f := range o.fields {
			reached[f.typeName()] = true
			if f.obj != nil {
				walk(f.obj)
			}
			for _, m := range f.members {
				walk(m)
			}
		}
	}
	walk(sel)
	for _, union := range []string{"Command", "ProposalChangeKind"} {
		for _, m := range executableSchema().GetPossibleTypes(executableSchema().Types[union]) {
			if !reached[m.Name] {
				t.Errorf("%s member %s is not in the full selection", union, m.Name)
			}
		}
	}
	if testing.Verbose() {
		t.Logf("full selection of Transaction: %d types, %d bytes", len(reached), len(fmt.Sprint(sel)))
	}
}

// TestWireCheckerFindsDifferences: compareTx reports each kind of
// difference, with its path, on real transactions altered one way each
// (the wire record, or the gateway's answer).
func TestWireCheckerFindsDifferences(t *testing.T) {
	gw := newGateway(t, nil, gatewayOptions{Executor: graph.ExecutorConfig{Limits: fullSelectionLimits}})
	ds := gw.Sample.Service.Dataset()
	checker := newWireChecker(t, ds)
	query := notableQuery(checker.sel)
	fetch := func(t *testing.T, name string) (node, wire map[string]any) {
		t.Helper()
		raw := explorerTx(t, gw.Sample.URL, ds, ds.Notable[name])
		n, errs := notableNode(t, gw, query, name)
		if len(errs) > 0 {
			t.Fatalf("errors: %+v", errs)
		}
		node = n.(map[string]any)
		if err := decodeNumbers(raw, &wire); err != nil {
			t.Fatal(err)
		}
		return node, wire
	}
	at := func(v any, path ...any) map[string]any {
		for _, p := range path {
			switch p := p.(type) {
			case string:
				v = v.(map[string]any)[p]
			case int:
				v = v.([]any)[p]
			}
		}
		return v.(map[string]any)
	}
	cases := []struct {
		name, notable string
		alter         func(node, wire map[string]any)
		want          string // a problem starts with this
	}{
		{"a wire key with no field", "batch.allLists", func(_, w map[string]any) {
			at(w, "command", "batchMarketInstructions", "submissions", 0)["extra"] = "x"
		}, `command.submissions[0].extra: wire key "extra" has no GraphQL field in OrderSubmission`},
		{"a key absent from the wire, served", "batch.allLists", func(_, w map[string]any) {
			delete(at(w, "command", "batchMarketInstructions", "submissions", 0), "reference")
		}, `command.submissions[0].reference: wire null or absent, served`},
		{"a different string", "batch.allLists", func(n, _ map[string]any) {
			at(n, "command", "cancellations", 0)["orderId"] = "00"
		}, `command.cancellations[0].orderId: served "00"`},
		{"a list of another length", "batch.allLists", func(_, w map[string]any) {
			b := at(w, "command", "batchMarketInstructions")
			b["amendments"] = b["amendments"].([]any)[1:]
		}, `command.amendments: served`},
		{"seconds read as nanoseconds", "change.newMarket", func(n, w map[string]any) {
			s, _ := asText(at(w, "command", "batchProposalSubmission", "terms")["closingTimestamp"])
			secs, _ := strconv.ParseInt(s, 10, 64)
			at(n, "command", "terms__BatchProposalSubmission")["closingTimestamp"] = time.Unix(0, secs).UTC().Format(time.RFC3339Nano)
		}, `command.terms__BatchProposalSubmission.closingTimestamp: served`},
		{"another number", "command.applyReferralCode", func(n, _ map[string]any) {
			n["index"] = json.Number("1000000")
		}, `index: served 1000000`},
		{"another member", "command.applyReferralCode", func(n, _ map[string]any) {
			at(n, "command")["__typename"] = "AnnounceNode"
		}, `command: wire member "applyReferralCode" served as AnnounceNode`},
		{"an unknown member's raw", "command.memberless", func(n, _ map[string]any) {
			at(n, "command")["raw"] = map[string]any{}
		}, `command.raw: served {}`},
		{"an unknown member's name", "command.memberless", func(n, _ map[string]any) {
			at(n, "command")["name"] = "orderCancellation"
		}, `command.name: served "orderCancellation"`},
		{"a reference to another id", "command.announceNode", func(n, _ map[string]any) {
			at(n, "command", "node")["id"] = "00"
		}, `command.node.id: served "00"`},
		{"an asset that did not resolve", "change.updateAsset", func(n, _ map[string]any) {
			at(n, "command", "terms__BatchProposalSubmission", "changes", 0, "change", "asset")["details"] = nil
		}, `command.terms__BatchProposalSubmission.changes[0].change.asset.details: asset`},
		{"the transaction's flattened command fields", "command.applyReferralCode", func(_, w map[string]any) {
			at(w, "command")["nonce"] = "1"
		}, `commandNonce: served`},
		{"a one-of with two members", "command.applyReferralCode", func(_, w map[string]any) {
			at(w, "command")["orderSubmission"] = map[string]any{}
		}, `command: wire has several members of one-of Command`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node, wire := fetch(t, c.notable)
			if res := checker.compareTx(node, mustJSON(t, wire), map[string][]gqlError{}); len(res.problems) != 0 {
				t.Fatalf("unaltered: %q", res.problems)
			}
			c.alter(node, wire)
			res := checker.compareTx(node, mustJSON(t, wire), map[string][]gqlError{})
			if !slices.ContainsFunc(res.problems, func(p string) bool { return strings.HasPrefix(p, c.want) }) {
				t.Fatalf("no problem starting %q; problems:\n%s", c.want, strings.Join(res.problems, "\n"))
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
