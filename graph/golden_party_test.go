package graph_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// partyCommands maps each party command's wire member to its GraphQL
// type (the party commands beside the four kinds the interface describes,
// and the batch element types that are members too: docs/wire.md, Command
// kinds).
var partyCommands = map[string]string{
	"cancelTransfer":                 "CancelTransferFunds",
	"createReferralSet":              "CreateReferralSet",
	"delegateSubmission":             "DelegateSubmission",
	"joinTeam":                       "JoinTeam",
	"liquidityProvisionAmendment":    "LiquidityProvisionAmendment",
	"liquidityProvisionCancellation": "LiquidityProvisionCancellation",
	"liquidityProvisionSubmission":   "LiquidityProvisionSubmission",
	"orderAmendment":                 "OrderAmendment",
	"orderCancellation":              "OrderCancellation",
	"orderSubmission":                "OrderSubmission",
	"stopOrdersCancellation":         "StopOrderCancellation",
	"stopOrdersSubmission":           "StopOrdersSubmission",
	"transfer":                       "TransferFunds",
	"undelegateSubmission":           "UndelegateSubmission",
	"updateMarginMode":               "UpdateMarginMode",
	"updatePartyProfile":             "UpdatePartyProfile",
	"updateReferralSet":              "UpdateReferralSet",
	"voteSubmission":                 "VoteSubmission",
	"withdrawSubmission":             "WithdrawSubmission",
}

// TestGoldenPartyCommands: every party command kind, every field selected,
// from the dataset's Notable `command.<member>` transaction; each response
// also matches the transaction's wire record.
func TestGoldenPartyCommands(t *testing.T) {
	runGolden(t, partyCommandCases())
}

func init() { goldenSuites = append(goldenSuites, partyCommandCases) }

// partyCommandSelection selects every field of the command member's type,
// on its own: selecting several members at once needs aliases (the note
// on fragment PartyCommandFields). all adds every field of the
// transaction.
func partyCommandSelection(member string, all bool) string {
	typ := partyCommands[member]
	sel := fmt.Sprintf("command {\n          __typename\n          ... on %s {\n            ...%sFields\n          }\n        }", typ, typ)
	if all {
		sel = "...TransactionFields\n        " + sel
	}
	return sel
}

func partyCommandCases() []goldenCase {
	var cases []goldenCase
	for _, member := range slices.Sorted(maps.Keys(partyCommands)) {
		notable := "command." + member
		cases = append(cases, oneTx(notable, partyCommandSelection(member, true), notable, func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, partyCommands[member], txNode("tx", "command", "__typename")...)
			wire := wireCommandOf(t, notable)
			for _, e := range compareWire(member, wire[member], dataAt(t, r, txNode("tx", "command")...)) {
				t.Error(e)
			}
		}))
	}
	return cases
}

// TestPartyCommandsMatchWire reads up to 300 transactions of each party
// command kind through the gateway, every field selected, and compares each
// with its wire record; it also checks that the dataset exercises every
// one-of member and optional key of these kinds, so that the comparison
// covers them.
func TestPartyCommandsMatchWire(t *testing.T) {
	t.Parallel() // CPU: reads the shared sample, counts none of its requests
	gw := newGateway(t, nil, gatewayOptions{})
	ds := gw.Sample.Service.Dataset()
	fragments := loadFragments(t)

	type pos struct {
		block uint64
		index uint32
	}
	wire := map[pos]map[string]any{}
	typeOf := map[string]string{} // wire member → explorer type string
	for i := range ds.Transactions.Len() {
		var tx struct{ Command map[string]any }
		if err := json.Unmarshal(ds.Transactions.AppendJSON(nil, i), &tx); err != nil {
			t.Fatal(err)
		}
		m := ds.Transactions.Meta(i)
		for member := range partyCommands {
			if _, ok := tx.Command[member]; ok {
				wire[pos{m.Block, m.Index}] = tx.Command
				typeOf[member] = m.Type
			}
		}
	}

	seen := map[string]bool{}
	for _, member := range slices.Sorted(maps.Keys(partyCommands)) {
		t.Run(member, func(t *testing.T) {
			query := withFragments(t, `query ($type: String!) {
  transactions(first: 300, cmdTypes: [$type]) {
    edges { node { block index `+partyCommandSelection(member, false)+` } }
  }
}`, fragments)
			typ, ok := typeOf[member]
			if !ok {
				t.Fatalf("the dataset has no %s transaction", member)
			}
			r := gw.query(t, query, map[string]any{"type": typ})
			expectErrorCount(t, r, 0)
			edges, _ := dataAt(t, r, "transactions", "edges").([]any)
			for i := range edges {
				node := dataAt(t, r, "transactions", "edges", i, "node").(map[string]any)
				block, _ := strconv.ParseUint(node["block"].(string), 10, 64)
				cmd := wire[pos{block, uint32(node["index"].(float64))}]
				if cmd[member] == nil {
					t.Errorf("block %d index %v: no %s on the wire", block, node["index"], member)
					continue
				}
				got := node["command"].(map[string]any)
				if got["__typename"] != partyCommands[member] {
					t.Errorf("block %d: __typename %v, want %s", block, got["__typename"], partyCommands[member])
				}
				for _, e := range compareWire(member, cmd[member], got) {
					t.Errorf("block %d: %s", block, e)
				}
				markPresent(seen, member, cmd[member])
			}
		})
	}
	for _, path := range []string{
		"transfer.oneOff", "transfer.recurring", "transfer.recurring.endEpoch", "transfer.recurring.dispatchStrategy",
		"withdrawSubmission.ext", "withdrawSubmission.ext.erc20",
		"createReferralSet.team", "createReferralSet.team.teamUrl", "createReferralSet.team.avatarUrl",
		"updateReferralSet.team", "updatePartyProfile.metadata",
		"orderSubmission.peggedOrder", "orderSubmission.icebergOpts", "orderSubmission.expiresAt",
		"orderAmendment.price", "orderAmendment.size", "orderAmendment.expiresAt",
		"stopOrdersSubmission.risesAbove.price", "stopOrdersSubmission.fallsBelow.trailingPercentOffset",
		"stopOrdersSubmission.risesAbove.expiresAt", "stopOrdersSubmission.risesAbove.sizeOverrideValue",
		"stopOrdersCancellation.marketId", "stopOrdersCancellation.stopOrderId", "updateMarginMode.marginFactor",
	} {
		if !seen[path] {
			t.Errorf("no transaction read has %s: the comparison does not cover it", path)
		}
	}
}

// markPresent records the paths of wire's non-null, non-empty values.
func markPresent(seen map[string]bool, path string, wire any) {
	switch w := wire.(type) {
	case map[string]any:
		for k, v := range w {
			markPresent(seen, path+"."+k, v)
		}
	case []any:
		if len(w) > 0 {
			seen[path] = true
		}
	case string:
		if w != "" && w != "0" {
			seen[path] = true
		}
		return
	case nil:
		return
	}
	seen[path] = true
}

// wireCommandOf is the wire JSON of the Notable transaction's command.
func wireCommandOf(t *testing.T, notable string) map[string]any {
	t.Helper()
	ds := dataset(t)
	var tx struct{ Command map[string]any }
	if err := json.Unmarshal(ds.Transactions.AppendJSON(nil, ds.Notable[notable]), &tx); err != nil {
		t.Fatal(err)
	}
	return tx.Command
}

// timestampKeys are the wire keys (Unix nanoseconds) served as Timestamp.
var timestampKeys = map[string]bool{"expiresAt": true, "deliverOn": true}

// compareWire compares a GraphQL value with the wire value it was decoded
// from, and returns every difference with its path. Each wire key must
// have a selected field of the same name; a reference is an object whose
// id is the wire string (`asset`), or the sibling object of a wire key
// named `…Id` (`node` beside `nodeId`), null for an empty id; a field the
// wire omits is null; a
// Timestamp is the same instant as the wire's Unix nanoseconds, null for
// "0"; other values are equal as JSON.
func compareWire(path string, wire, got any) []string {
	var errs []string
	fail := func(format string, args ...any) {
		errs = append(errs, path+": "+fmt.Sprintf(format, args...))
	}
	switch w := wire.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			fail("got %v, want an object", got)
			return errs
		}
		for k, v := range w {
			gv, ok := g[k]
			if !ok {
				fail("wire key %s has no field", k)
				continue
			}
			if timestampKeys[k] {
				errs = append(errs, compareTimestamp(path+"."+k, v, gv)...)
				continue
			}
			errs = append(errs, compareWire(path+"."+k, v, gv)...)
		}
		for k, gv := range g {
			if _, onWire := w[k]; onWire || k == "__typename" {
				continue
			}
			if id, ok := w[k+"Id"]; ok {
				errs = append(errs, compareWire(path+"."+k, id, gv)...)
			} else if gv != nil {
				fail("field %s is %v, but the wire omits it", k, gv)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			fail("got %v, want %d elements", got, len(w))
			return errs
		}
		for i := range w {
			errs = append(errs, compareWire(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
	case string:
		if ref, ok := got.(map[string]any); ok {
			got = ref["id"]
		}
		if got == nil && w == "" {
			break // an empty reference is null (DispatchStrategy.assetForMetric)
		}
		if got != w {
			fail("got %v, want %q", got, w)
		}
	case float64: // a u32 JSON number, served as Int64 or Int
		if g := fmt.Sprint(got); g != strconv.FormatFloat(w, 'f', -1, 64) {
			fail("got %v, want %v", got, w)
		}
	default:
		if got != wire {
			fail("got %v, want %v", got, wire)
		}
	}
	return errs
}

// compareTimestamp compares a Timestamp with the wire's Unix nanoseconds.
func compareTimestamp(path string, wire, got any) []string {
	ns, err := strconv.ParseInt(fmt.Sprint(wire), 10, 64)
	if err != nil {
		return []string{fmt.Sprintf("%s: wire value %v is not Unix nanoseconds", path, wire)}
	}
	if ns == 0 {
		if got != nil {
			return []string{fmt.Sprintf("%s: got %v, want null for the wire's 0", path, got)}
		}
		return nil
	}
	s, _ := got.(string)
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || ts.UnixNano() != ns || !strings.HasSuffix(s, "Z") {
		return []string{fmt.Sprintf("%s: got %v, want the instant %d ns in UTC", path, got, ns)}
	}
	return nil
}
