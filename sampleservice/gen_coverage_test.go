package sampleservice

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// genWalk calls fn for every value under v with its path: keys joined by
// ".", array elements as "[]" ("command.batchMarketInstructions.submissions[].side").
func genWalk(path string, v any, fn func(path string, v any)) {
	fn(path, v)
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			genWalk(p, e, fn)
		}
	case []any:
		for _, e := range x {
			genWalk(path+"[]", e, fn)
		}
	}
}

// genDig follows keys (and array indices written as numbers) into v.
func genDig(v any, keys ...string) any {
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// genMember returns the one-of member of a command or change object: its
// one key beside the ordinary ones.
func genMember(obj map[string]any, ordinary ...string) []string {
	var out []string
	for k := range obj {
		if !slices.Contains(ordinary, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func genChanges(tx map[string]any) []map[string]any {
	var out []map[string]any
	changes, _ := genDig(tx, "command", "batchProposalSubmission", "terms", "changes").([]any)
	for _, c := range changes {
		out = append(out, c.(map[string]any))
	}
	return out
}

// genEnumKey is the key under which an enum value is collected: the field
// name, or for `type` the parent's name too (an order's type and a property
// key's type share the field name).
func genEnumKey(path string) string {
	parts := strings.Split(path, ".")
	last := parts[len(parts)-1]
	if last == "type" && len(parts) > 1 {
		return parts[len(parts)-2] + ".type"
	}
	return last
}

// genCoverage is what the whole default dataset contains.
type genCoverage struct {
	commands map[string]int
	changes  map[string]int
	enums    map[string]map[string]bool
	present  map[string]bool // paths of non-null, non-empty values
	objects  []genObject
}

type genObject struct {
	pos  int
	path string
	obj  map[string]any
}

func genCollect(t *testing.T) genCoverage {
	t.Helper()
	_, txs := genDataset(t)
	c := genCoverage{commands: map[string]int{}, changes: map[string]int{}, enums: map[string]map[string]bool{}, present: map[string]bool{}}
	for pos, tx := range txs {
		cmd := tx["command"].(map[string]any)
		for _, m := range genMember(cmd, "nonce", "blockHeight") {
			c.commands[m]++
		}
		for _, ch := range genChanges(tx) {
			for _, m := range genMember(ch, "enactmentTimestamp") {
				c.changes[m]++
			}
		}
		genWalk("", tx, func(path string, v any) {
			switch x := v.(type) {
			case nil:
				return
			case string:
				if x == "" {
					return
				}
				k := genEnumKey(path)
				if c.enums[k] == nil {
					c.enums[k] = map[string]bool{}
				}
				c.enums[k][x] = true
			case []any:
				if len(x) == 0 {
					return
				}
			case map[string]any:
				c.objects = append(c.objects, genObject{pos, path, x})
			}
			c.present[path] = true
		})
	}
	return c
}

var genCoverageOnce = struct {
	done bool
	c    genCoverage
}{}

func genCovered(t *testing.T) genCoverage {
	if !genCoverageOnce.done {
		genCoverageOnce.c = genCollect(t)
		genCoverageOnce.done = true
	}
	return genCoverageOnce.c
}

// hasSuffix reports whether some present path ends with suffix.
func (c genCoverage) hasSuffix(suffix string) bool {
	for p := range c.present {
		if p == suffix || strings.HasSuffix(p, "."+suffix) {
			return true
		}
	}
	return false
}

// anyObject reports whether some object at a path ending with suffix
// satisfies ok.
func (c genCoverage) anyObject(suffix string, ok func(map[string]any) bool) bool {
	for _, o := range c.objects {
		if (o.path == suffix || strings.HasSuffix(o.path, "."+suffix)) && ok(o.obj) {
			return true
		}
	}
	return false
}

func TestCoverageCommandAndChangeKinds(t *testing.T) {
	c := genCovered(t)
	for _, k := range cmdKinds {
		if c.commands[k.member] == 0 {
			t.Errorf("no %s command", k.member)
		}
	}
	if len(c.commands) != len(cmdKinds) {
		t.Errorf("command members %v, want exactly the %d kinds", c.commands, len(cmdKinds))
	}
	for _, k := range changeKinds {
		if c.changes[k.member] == 0 {
			t.Errorf("no batch proposal change %s", k.member)
		}
	}
	if len(c.changes) != len(changeKinds) {
		t.Errorf("change members %v", c.changes)
	}
}

func TestCoverageEnums(t *testing.T) {
	c := genCovered(t)
	union := func(keys ...string) map[string]bool {
		out := map[string]bool{}
		for _, k := range keys {
			for v := range c.enums[k] {
				out[v] = true
			}
		}
		return out
	}
	for _, e := range []struct {
		name   string
		values []string
		keys   []string
	}{
		{"PeggedReference", enumPeggedReference, []string{"peggedOrder.reference", "reference", "peggedReference"}},
		{"TimeInForce", enumTimeInForce, []string{"timeInForce"}},
		{"Side", enumSide, []string{"side"}},
		{"OrderType", enumOrderType, []string{"submissions[].type", "orderSubmission.type"}},
		{"StopOrderExpiryStrategy", enumExpiryStrategy, []string{"expiryStrategy"}},
		{"SizeOverrideSetting", enumSizeOverride, []string{"sizeOverrideSetting"}},
		{"MarginMode", enumMarginMode, []string{"mode"}},
		{"ConditionOperator", enumConditionOp, []string{"operator"}},
		{"PropertyKeyType", enumPropertyKeyType, []string{"key.type"}},
		{"CompositePriceType", enumCompositePrice, []string{"compositePriceType"}},
		{"LiquidityFeeMethod", enumLiquidityFee, []string{"method"}},
		{"GovernanceTransferType", enumTransferType, []string{"transferType"}},
		{"DistributionStrategy", enumDistribution, []string{"distributionStrategy"}},
		{"EntityScope", enumEntityScope, []string{"entityScope"}},
		{"IndividualScope", enumIndividualScope, []string{"individualScope"}},
		{"DispatchMetric", enumDispatchMetric, []string{"metric"}},
		{"MarketStateUpdateType", enumMarketState, []string{"updateType"}},
		{"AccountType (governance transfers)", enumAccountType, []string{"sourceType", "destinationType"}},
		{"TxVersion", []string{"TX_VERSION_V2", "TX_VERSION_V3"}, []string{"version"}},
		// Enumerations of the commands (docs/wire.md, Command kinds) (zero values are invalid in
		// accepted commands; ORACLE_SOURCE_ETHEREUM has no decoder at v0.74).
		{"VoteValue", []string{"VALUE_NO", "VALUE_YES"}, []string{"value"}},
		{"UndelegateMethod", []string{"METHOD_NOW", "METHOD_AT_END_OF_EPOCH"}, []string{"method"}},
		{"NodeVoteType", []string{"TYPE_STAKE_DEPOSITED", "TYPE_STAKE_REMOVED", "TYPE_FUNDS_DEPOSITED", "TYPE_SIGNER_ADDED",
			"TYPE_SIGNER_REMOVED", "TYPE_BRIDGE_STOPPED", "TYPE_BRIDGE_RESUMED", "TYPE_ASSET_LISTED", "TYPE_LIMITS_UPDATED",
			"TYPE_STAKE_TOTAL_SUPPLY", "TYPE_SIGNER_THRESHOLD_SET", "TYPE_GOVERNANCE_VALIDATE_ASSET", "TYPE_ETHEREUM_CONTRACT_CALL_RESULT"}, []string{"nodeVote.type"}},
		{"NodeSignatureKind", []string{"NODE_SIGNATURE_KIND_ASSET_NEW", "NODE_SIGNATURE_KIND_ASSET_WITHDRAWAL", "NODE_SIGNATURE_KIND_ERC20_MULTISIG_SIGNER_ADDED",
			"NODE_SIGNATURE_KIND_ERC20_MULTISIG_SIGNER_REMOVED", "NODE_SIGNATURE_KIND_ASSET_UPDATE"}, []string{"kind"}},
		{"OracleSource", []string{"ORACLE_SOURCE_OPEN_ORACLE", "ORACLE_SOURCE_JSON"}, []string{"source"}},
	} {
		got := union(e.keys...)
		for _, v := range e.values {
			if !got[v] {
				t.Errorf("%s value %s appears nowhere (under %v)", e.name, v, e.keys)
			}
		}
	}
}

func TestCoverageShapes(t *testing.T) {
	c := genCovered(t)
	for _, s := range []string{
		// batch market instructions: every list, every optional part.
		"batchMarketInstructions.cancellations", "batchMarketInstructions.amendments",
		"batchMarketInstructions.submissions", "batchMarketInstructions.stopOrdersCancellation",
		"batchMarketInstructions.stopOrdersSubmission", "batchMarketInstructions.updateMarginMode",
		"stopOrdersSubmission[].risesAbove.price", "stopOrdersSubmission[].risesAbove.trailingPercentOffset",
		"stopOrdersSubmission[].fallsBelow.price", "stopOrdersSubmission[].fallsBelow.trailingPercentOffset",
		"stopOrdersSubmission[].risesAbove.expiresAt", "stopOrdersSubmission[].risesAbove.expiryStrategy",
		"stopOrdersSubmission[].fallsBelow.sizeOverrideSetting", "stopOrdersSubmission[].fallsBelow.sizeOverrideValue.percentage",
		"stopOrdersCancellation[].stopOrderId", "stopOrdersCancellation[].marketId",
		"submissions[].icebergOpts.peakSize", "submissions[].icebergOpts.minimumVisibleSize", "submissions[].peggedOrder.offset",
		"amendments[].size", "amendments[].price", "amendments[].expiresAt", "amendments[].peggedOffset",
		"updateMarginMode[].marginFactor",
		// batch proposals and their changes.
		"batchProposalSubmission.terms.closingTimestamp", "batchProposalSubmission.rationale.title",
		"batchProposalSubmission.rationale.description", "batchProposalSubmission.reference",
		"newMarket.changes.instrument.future.settlementAsset", "newMarket.changes.instrument.perpetual.settlementAsset",
		"newMarket.changes.instrument.future.dataSourceSpecBinding.tradingTerminationProperty",
		"newMarket.changes.instrument.perpetual.dataSourceSpecBinding.settlementScheduleProperty",
		"newMarket.changes.simple.factorLong", "newMarket.changes.logNormal.params.sigma",
		"newMarket.changes.successor.parentMarketId", "newMarket.changes.successor.insurancePoolFraction",
		"newMarket.changes.metadata", "newMarket.changes.lpPriceRange",
		"newMarket.changes.liquiditySlaParameters.priceRange", "newMarket.changes.liquidationStrategy.disposalFraction",
		"newMarket.changes.liquidityMonitoringParameters.targetStakeParameters.timeWindow",
		"newMarket.changes.priceMonitoringParameters.triggers[].horizon", "liquidityFeeSettings.feeConstant",
		"newMarket.changes.markPriceConfiguration.dataSourcesSpec", "perpetual.internalCompositePriceConfiguration.dataSourcesSpec",
		"dataSourcesSpecBinding[].priceSourceProperty", "markPriceConfiguration.sourceWeights",
		"markPriceConfiguration.sourceStalenessTolerance",
		"external.oracle.signers[].pubKey.key", "external.oracle.signers[].ethAddress.address",
		"external.oracle.filters[].key.name", "external.oracle.filters[].key.numberDecimalPlaces",
		"external.oracle.filters[].conditions[].value",
		"external.ethOracle.args", "external.ethOracle.filters[].conditions", "external.ethOracle.normalisers[].expression",
		"external.ethOracle.trigger.timeTrigger.every", "external.ethOracle.trigger.timeTrigger.initial",
		"external.ethOracle.trigger.timeTrigger.until", "external.ethOracle.abi", "external.ethOracle.sourceChainId",
		"internal.time.conditions", "internal.timeTrigger.triggers[].every", "internal.timeTrigger.triggers[].initial",
		"internal.timeTrigger.conditions",
		"newSpotMarket.changes.instrument.spot.baseAsset", "newSpotMarket.changes.instrument.spot.quoteAsset",
		"newSpotMarket.changes.slaParams.priceRange", "newSpotMarket.changes.targetStakeParameters.scalingFactor",
		"newSpotMarket.changes.simple", "newSpotMarket.changes.logNormal",
		"updateMarket.marketId", "updateMarket.changes.instrument.future.quoteName",
		"updateMarket.changes.instrument.perpetual.quoteName", "updateMarket.changes.instrument.perpetual.fundingRateScalingFactor",
		"updateSpotMarket.changes.slaParams", "updateMarketState.changes.price", "updateMarketState.changes.marketId",
		"updateAsset.assetId", "updateAsset.changes.erc20.lifetimeLimit", "updateAsset.changes.quantum",
		"updateNetworkParameter.changes.key", "cancelTransfer.changes.transferId",
		"newTransfer.changes.oneOff.deliverOn", "newTransfer.changes.recurring.startEpoch", "newTransfer.changes.recurring.endEpoch",
		"newTransfer.changes.destination", "newTransfer.changes.source", "newTransfer.changes.fractionOfBalance",
		"dispatchStrategy.rankTable[].startRank", "dispatchStrategy.rankTable[].shareRatio", "dispatchStrategy.teamScope",
		"dispatchStrategy.markets", "dispatchStrategy.nTopPerformers", "dispatchStrategy.stakingRequirement",
		"dispatchStrategy.notionalTimeWeightedAveragePositionRequirement", "dispatchStrategy.assetForMetric",
		"updateReferralProgram.changes.benefitTiers", "updateVolumeDiscountProgram.changes.benefitTiers",
		// the other described commands.
		"announceNode.ethereumSignature.value", "announceNode.vegaSignature.value", "announceNode.vegaPubKeyIndex",
		"announceNode.vegaPubKey", "announceNode.chainPubKey", "announceNode.fromEpoch", "applyReferralCode.id",
		// failed transactions.
		"error",
	} {
		if !c.hasSuffix(s) {
			t.Errorf("no transaction populates %s", s)
		}
	}

	isNull := func(o map[string]any, k string) bool { v, ok := o[k]; return ok && v == nil }
	absent := func(o map[string]any, k string) bool { _, ok := o[k]; return !ok }
	for _, s := range []struct {
		name, suffix string
		ok           func(map[string]any) bool
	}{
		{"stop order with both sides", "stopOrdersSubmission[]", func(o map[string]any) bool { return o["risesAbove"] != nil && o["fallsBelow"] != nil }},
		{"stop order rising only", "stopOrdersSubmission[]", func(o map[string]any) bool { return o["risesAbove"] != nil && absent(o, "fallsBelow") }},
		{"stop order falling only", "stopOrdersSubmission[]", func(o map[string]any) bool { return absent(o, "risesAbove") && o["fallsBelow"] != nil }},
		{"stop order without expiry", "risesAbove", func(o map[string]any) bool { return absent(o, "expiresAt") && absent(o, "expiryStrategy") }},
		{"submission without iceberg", "submissions[]", func(o map[string]any) bool { return absent(o, "icebergOpts") && isNull(o, "peggedOrder") }},
		{"amendment without size, price and expiry", "amendments[]", func(o map[string]any) bool {
			return absent(o, "size") && absent(o, "price") && absent(o, "expiresAt")
		}},
		{"isolated margin without factor (cross)", "updateMarginMode[]", func(o map[string]any) bool { return absent(o, "marginFactor") }},
		{"stop cancellation of everything", "stopOrdersCancellation[]", func(o map[string]any) bool { return len(o) == 0 }},
		{"new market without successor", "newMarket.changes", func(o map[string]any) bool { return absent(o, "successor") }},
		{"perpetual without composite price", "perpetual", func(o map[string]any) bool { return absent(o, "internalCompositePriceConfiguration") }},
		{"perpetual without funding rate bounds", "perpetual", func(o map[string]any) bool {
			return absent(o, "fundingRateScalingFactor") && absent(o, "fundingRateLowerBound") && absent(o, "fundingRateUpperBound")
		}},
		{"new market without price range", "newMarket.changes", func(o map[string]any) bool { return absent(o, "lpPriceRange") }},
		{"new market with a price range", "newMarket.changes", func(o map[string]any) bool { return o["lpPriceRange"] != nil }},
		{"eth time trigger without until", "timeTrigger", func(o map[string]any) bool { return o["every"] != nil && absent(o, "until") && absent(o, "conditions") }},
		{"internal trigger without initial", "triggers[]", func(o map[string]any) bool { return absent(o, "initial") }},
		{"market state without price", "updateMarketState.changes", func(o map[string]any) bool { return absent(o, "price") }},
		{"recurring transfer without dispatch", "newTransfer.changes.recurring", func(o map[string]any) bool { return absent(o, "dispatchStrategy") }},
		{"party's recurring transfer without dispatch", "command.transfer.recurring", func(o map[string]any) bool { return isNull(o, "dispatchStrategy") }},
		{"party's recurring transfer without end", "command.transfer.recurring", func(o map[string]any) bool { return absent(o, "endEpoch") }},
		{"referral set update leaving the team's name", "updateReferralSet.team", func(o map[string]any) bool { return absent(o, "name") && absent(o, "closed") }},
		{"contract call without chain id and error", "chainEvent.contractCall", func(o map[string]any) bool { return absent(o, "sourceChainId") && absent(o, "error") }},
		{"recurring transfer without end", "newTransfer.changes.recurring", func(o map[string]any) bool { return absent(o, "endEpoch") }},
		{"fee settings without constant", "liquidityFeeSettings", func(o map[string]any) bool { return absent(o, "feeConstant") }},
		{"update market without liquidation strategy", "updateMarket.changes", func(o map[string]any) bool { return isNull(o, "liquidationStrategy") }},
		{"update asset without erc20", "updateAsset.changes", func(o map[string]any) bool { return absent(o, "erc20") }},
		{"empty free-form change", "newFreeform", func(o map[string]any) bool { return len(o) == 0 }},
		{"property key without decimals", "filters[].key", func(o map[string]any) bool { return absent(o, "numberDecimalPlaces") }},
		{"transfer to another party", "command.transfer", func(o map[string]any) bool { return o["toAccountType"] == "ACCOUNT_TYPE_GENERAL" && o["oneOff"] != nil }},
		{"transfer to a reward pool", "command.transfer", func(o map[string]any) bool { return o["recurring"] != nil }},
	} {
		if !c.anyObject(s.suffix, s.ok) {
			t.Errorf("no %s (object at %s)", s.name, s.suffix)
		}
	}
}

func TestCoverageCountsAndMix(t *testing.T) {
	d, txs := genDataset(t)
	byType := map[string]int{}
	codes := map[string]int{}
	for i := range d.Transactions.Len() {
		byType[d.Transactions.Meta(i).Type]++
		codes[fmt.Sprint(txs[i]["code"])]++
	}
	if byType["Batch Proposal"] < 50 {
		t.Errorf("%d batch proposals, want at least a page of 50", byType["Batch Proposal"])
	}
	bmi := byType["Batch Market Instructions"]
	for typ, n := range byType {
		if n > bmi {
			t.Errorf("%s (%d) outnumbers batch market instructions (%d)", typ, n, bmi)
		}
	}
	orders := bmi + byType["Submit Order"] + byType["Cancel Order"] + byType["Amend Order"]
	if orders*2 < d.Transactions.Len() {
		t.Errorf("order commands are %d of %d transactions, want most", orders, d.Transactions.Len())
	}
	governance := byType["Batch Proposal"] + byType["Proposal"]
	if governance*20 > d.Transactions.Len() {
		t.Errorf("%d governance transactions of %d: too common", governance, d.Transactions.Len())
	}
	if codes["70"] < 5 || codes["71"] < 5 || codes["0"] < d.Transactions.Len()*9/10 {
		t.Errorf("result codes %v", codes)
	}
	for code := range codes {
		if code != "0" && code != "70" && code != "71" {
			t.Errorf("unexpected code %s", code)
		}
	}
}

// TestCoverageReferences checks that references name dataset entities and
// that Meta agrees with the transaction.
func TestCoverageReferences(t *testing.T) {
	d, txs := genDataset(t)
	assets := map[string]bool{}
	for _, a := range d.Assets {
		assets[a.ID] = true
	}
	nodes := map[string]bool{}
	for _, n := range d.Nodes {
		nodes[n] = true
	}
	parties := map[string]bool{}
	for _, p := range d.Parties {
		parties[p] = true
	}
	dangling := d.Notable["asset.dangling"]
	danglingKeys := map[string]bool{}
	bySubmitterParty := 0
	for pos, tx := range txs {
		genAssetRefs(tx, func(path, k, s string) {
			if !assets[s] {
				if pos != dangling {
					t.Errorf("transaction %d: %s = %s is not a dataset asset", pos, path, s)
				}
				danglingKeys[k] = true
			}
		})
		if n := genDig(tx, "command", "announceNode"); n != nil {
			if !nodes[genDig(n, "id").(string)] || genDig(n, "vegaPubKey") != tx["submitter"] {
				t.Errorf("transaction %d announces node %v with key %v, submitted by %v", pos, genDig(n, "id"), genDig(n, "vegaPubKey"), tx["submitter"])
			}
		}
		m := d.Transactions.Meta(pos)
		want := []string{tx["submitter"].(string)}
		if to, ok := genDig(tx, "command", "transfer", "to").(string); ok && parties[to] {
			want = append(want, to)
		}
		if !slices.Equal(m.Parties, want) {
			t.Errorf("transaction %d: Meta parties %v, want %v", pos, m.Parties, want)
		}
		if parties[want[0]] {
			bySubmitterParty++
		}
	}
	for _, k := range []string{"settlementAsset", "baseAsset", "assetForMetric", "updateAsset.assetId", "newTransfer.changes.asset"} {
		if !danglingKeys[k] {
			t.Errorf("the dangling-asset transaction has no dangling %s", k)
		}
	}
	if bySubmitterParty*3 < len(txs)*2 {
		t.Errorf("only %d of %d transactions are submitted by dataset parties", bySubmitterParty, len(txs))
	}
}

// genAssetKeys are the keys (path suffixes) of a transaction's asset ids.
var genAssetKeys = []string{"settlementAsset", "baseAsset", "quoteAsset", "assetForMetric", "updateAsset.assetId",
	"newTransfer.changes.asset", "withdrawSubmission.asset", "transfer.asset", "deposit.vegaAssetId"}

// genAssetRefs calls fn with the path, key and value of each asset id in tx.
func genAssetRefs(tx map[string]any, fn func(path, key, id string)) {
	genWalk("", tx, func(path string, v any) {
		s, ok := v.(string)
		if !ok || s == "" {
			return
		}
		for _, k := range genAssetKeys {
			if path == k || strings.HasSuffix(path, "."+k) {
				fn(path, k, s)
			}
		}
	})
}

// genNotableChecks says, for every notable name, what its transaction must
// show.
var genNotableChecks = map[string]func(tx map[string]any, raw []byte) error{
	"enum.unknown": func(tx map[string]any, raw []byte) error {
		return genRequire(raw, `"side":7`, `"timeInForce":12`, `"peggedReference":5`, `"mode":3`)
	},
	"enum.unknownChange": func(tx map[string]any, raw []byte) error {
		return genRequire(raw, `"updateType":9`, `"destinationType":41`, `"metric":23`)
	},
	"size.uint64max": func(tx map[string]any, raw []byte) error {
		return genRequire(raw, `"size":"18446744073709551615"`, `"peakSize":"18446744073709551615"`)
	},
	"size.uint64maxOrder": func(tx map[string]any, raw []byte) error {
		if genDig(tx, "command", "orderSubmission", "size") != "18446744073709551615" {
			return fmt.Errorf("order size %v", genDig(tx, "command", "orderSubmission", "size"))
		}
		return nil
	},
	"rationale.long": func(tx map[string]any, raw []byte) error {
		d, _ := genDig(tx, "command", "batchProposalSubmission", "rationale", "description").(string)
		if n := utf8.RuneCountInString(d); n != maxDescriptionChars || len(d) == n {
			return fmt.Errorf("description of %d characters, %d bytes; want %d characters, some multi-byte", n, len(d), maxDescriptionChars)
		}
		return nil
	},
	"rationale.titleMax": func(tx map[string]any, raw []byte) error {
		s, _ := genDig(tx, "command", "batchProposalSubmission", "rationale", "title").(string)
		if n := utf8.RuneCountInString(s); n != maxTitleChars {
			return fmt.Errorf("title of %d characters", n)
		}
		return nil
	},
	"text.nonASCII": func(tx map[string]any, raw []byte) error { return genRequire(raw, "é", "日本", "🚀") },
	"strings.empty": func(tx map[string]any, raw []byte) error {
		return genRequire(raw, `"reference":""`, `"description":""`, `"title":""`, `"key":""`, `"value":""`)
	},
	"expiresAt.zero": func(tx map[string]any, raw []byte) error {
		b := genDig(tx, "command", "batchMarketInstructions")
		if genDig(b, "amendments", "0", "expiresAt") != "0" || genDig(b, "stopOrdersSubmission", "0", "risesAbove", "expiresAt") != "0" || genDig(b, "submissions", "0", "expiresAt") != "0" {
			return fmt.Errorf("zero expiries missing")
		}
		return nil
	},
	"asset.dangling": func(tx map[string]any, raw []byte) error { return nil }, // TestCoverageReferences
	"failed.code70":  genCode("70"),
	"failed.code71":  genCode("71"),
	"failed.batchProposal": func(tx map[string]any, raw []byte) error {
		if err := genCode("70")(tx, raw); err != nil {
			return err
		}
		return genCommand("batchProposalSubmission")(tx, raw)
	},
	"batch.allLists": func(tx map[string]any, raw []byte) error {
		b, _ := genDig(tx, "command", "batchMarketInstructions").(map[string]any)
		for _, k := range []string{"cancellations", "amendments", "submissions", "stopOrdersCancellation", "stopOrdersSubmission", "updateMarginMode"} {
			if l, _ := b[k].([]any); len(l) == 0 {
				return fmt.Errorf("%s empty", k)
			}
		}
		return nil
	},
	"batch.empty": func(tx map[string]any, raw []byte) error {
		return genRequire(raw, `"cancellations":[]`, `"amendments":[]`, `"submissions":[]`, `"stopOrdersCancellation":[]`, `"stopOrdersSubmission":[]`, `"updateMarginMode":[]`)
	},
	"order.iceberg": func(tx map[string]any, raw []byte) error {
		return genSome(tx, "command.batchMarketInstructions.submissions[].icebergOpts.peakSize", "100")
	},
	"order.pegged": func(tx map[string]any, raw []byte) error {
		return genSome(tx, "command.batchMarketInstructions.submissions[].peggedOrder.reference", "PEGGED_REFERENCE_BEST_BID")
	},
	"amend.negativeSizeDelta": func(tx map[string]any, raw []byte) error { return genRequire(raw, `"sizeDelta":"-5"`) },
	"amend.size": func(tx map[string]any, raw []byte) error {
		return genSome(tx, "command.batchMarketInstructions.amendments[].size", "250")
	},
	"stopOrder.both": func(tx map[string]any, raw []byte) error {
		s := genDig(tx, "command", "batchMarketInstructions", "stopOrdersSubmission", "0")
		if genDig(s, "risesAbove") == nil || genDig(s, "fallsBelow") == nil {
			return fmt.Errorf("first stop order lacks a side")
		}
		return nil
	},
	"stopOrder.risesAboveOnly": func(tx map[string]any, raw []byte) error {
		s := genDig(tx, "command", "batchMarketInstructions", "stopOrdersSubmission", "1")
		if genDig(s, "risesAbove") == nil || genDig(s, "fallsBelow") != nil {
			return fmt.Errorf("second stop order is not rises-above only")
		}
		return nil
	},
	"stopOrder.fallsBelowOnly": func(tx map[string]any, raw []byte) error {
		s := genDig(tx, "command", "batchMarketInstructions", "stopOrdersSubmission", "2")
		if genDig(s, "risesAbove") != nil || genDig(s, "fallsBelow") == nil {
			return fmt.Errorf("third stop order is not falls-below only")
		}
		return nil
	},
	"stopOrder.trailing": func(tx map[string]any, raw []byte) error { return genRequire(raw, `"trailingPercentOffset":"0.05"`) },
	"stopOrder.sizeOverride": func(tx map[string]any, raw []byte) error {
		return genRequire(raw, `"sizeOverrideValue":{"percentage":"0.5"}`)
	},
	"coverage.orders":  genCommand("batchMarketInstructions"),
	"coverage.markets": genChangeKinds("newMarket", "newMarket", "newMarket", "newMarket"),
	"coverage.accountTypes": func(tx map[string]any, raw []byte) error {
		for _, a := range enumAccountType {
			if !bytes.Contains(raw, []byte(`"`+a+`"`)) {
				return fmt.Errorf("no %s", a)
			}
		}
		return nil
	},
	"market.future":           genRequirePaths("newMarket.changes.instrument.future.settlementAsset"),
	"market.successor":        genRequirePaths("newMarket.changes.successor.parentMarketId"),
	"risk.simple":             genRequirePaths("newMarket.changes.simple.factorLong"),
	"dataSource.oracle":       genRequirePaths("external.oracle.signers[].pubKey.key", "external.oracle.signers[].ethAddress.address"),
	"dataSource.internalTime": genRequirePaths("internal.time.conditions[].value"),
	"market.perpetual":        genRequirePaths("newMarket.changes.instrument.perpetual.settlementAsset"),
	"market.noSuccessor": func(tx map[string]any, raw []byte) error {
		if _, ok := genDig(genChanges(tx)[0], "newMarket", "changes").(map[string]any)["successor"]; ok {
			return fmt.Errorf("successor set")
		}
		return nil
	},
	"risk.logNormal":             genRequirePaths("newMarket.changes.logNormal.params.sigma"),
	"dataSource.ethOracle":       genRequirePaths("external.ethOracle.args[]", "external.ethOracle.trigger.timeTrigger.until", "external.ethOracle.normalisers[].name"),
	"dataSource.timeTrigger":     genRequirePaths("internal.timeTrigger.triggers[].every"),
	"compositePrice.dataSources": genRequirePaths("internalCompositePriceConfiguration.dataSourcesSpec[].external.ethOracle.address", "internalCompositePriceConfiguration.dataSourcesSpec[].external.oracle.signers[].pubKey.key"),
	"market.spot":                genRequirePaths("newSpotMarket.changes.instrument.spot.baseAsset"),
	"updateMarket.future":        genRequirePaths("updateMarket.changes.instrument.future.quoteName"),
	"updateMarket.perpetual":     genRequirePaths("updateMarket.changes.instrument.perpetual.quoteName"),
	"marketState.withPrice":      genRequirePaths("updateMarketState.changes.price"),
	"marketState.withoutPrice": func(tx map[string]any, raw []byte) error {
		for _, ch := range genChanges(tx) {
			if c, ok := genDig(ch, "updateMarketState", "changes").(map[string]any); ok {
				if _, has := c["price"]; !has {
					return nil
				}
			}
		}
		return fmt.Errorf("every market state change has a price")
	},
	"transfer.oneOff":    genRequirePaths("newTransfer.changes.oneOff.deliverOn"),
	"transfer.recurring": genRequirePaths("newTransfer.changes.recurring.dispatchStrategy.metric"),
	"transfer.recurringNoDispatch": func(tx map[string]any, raw []byte) error {
		for _, ch := range genChanges(tx) {
			if rec, ok := genDig(ch, "newTransfer", "changes", "recurring").(map[string]any); ok {
				if _, has := rec["dispatchStrategy"]; !has {
					return nil
				}
			}
		}
		return fmt.Errorf("every recurring transfer has a dispatch strategy")
	},
	"transfer.rankTable": genRequirePaths("dispatchStrategy.rankTable[].startRank"),
	"proposal.newAsset":  genRequirePaths("proposalSubmission.terms.newAsset.changes.erc20.contractAddress"),
	"txVersion.v2": func(tx map[string]any, raw []byte) error {
		if tx["version"] != "TX_VERSION_V2" {
			return fmt.Errorf("version %v", tx["version"])
		}
		return nil
	},
	"parties.receiver": genRequirePaths("command.transfer.to"),
	"change.all":       genChangeKinds(),
}

// genSome checks that some value at path (genWalk's form) is want.
func genSome(tx map[string]any, path string, want any) error {
	found := false
	genWalk("", tx, func(p string, v any) {
		found = found || p == path && v == want
	})
	if !found {
		return fmt.Errorf("no %v at %s", want, path)
	}
	return nil
}

func genRequire(raw []byte, subs ...string) error {
	for _, s := range subs {
		if !bytes.Contains(raw, []byte(s)) {
			return fmt.Errorf("JSON lacks %s", s)
		}
	}
	return nil
}

func genRequirePaths(suffixes ...string) func(map[string]any, []byte) error {
	return func(tx map[string]any, _ []byte) error {
		for _, s := range suffixes {
			found := false
			genWalk("", tx, func(path string, v any) {
				if v != nil && (path == s || strings.HasSuffix(path, "."+s)) {
					found = true
				}
			})
			if !found {
				return fmt.Errorf("nothing at %s", s)
			}
		}
		return nil
	}
}

func genCode(code string) func(map[string]any, []byte) error {
	return func(tx map[string]any, _ []byte) error {
		if fmt.Sprint(tx["code"]) != code {
			return fmt.Errorf("code %v, want %s", tx["code"], code)
		}
		if e, _ := tx["error"].(string); e == "" {
			return fmt.Errorf("no error text")
		}
		return nil
	}
}

func genCommand(member string) func(map[string]any, []byte) error {
	return func(tx map[string]any, _ []byte) error {
		got := genMember(tx["command"].(map[string]any), "nonce", "blockHeight")
		if !slices.Equal(got, []string{member}) {
			return fmt.Errorf("command members %v, want %s", got, member)
		}
		return nil
	}
}

// genChangeKinds checks that a batch proposal's changes are of these kinds
// in order; with none given, that it has one change of every kind.
func genChangeKinds(kinds ...string) func(map[string]any, []byte) error {
	return func(tx map[string]any, raw []byte) error {
		if err := genCommand("batchProposalSubmission")(tx, raw); err != nil {
			return err
		}
		want := kinds
		if len(want) == 0 {
			for _, k := range changeKinds {
				want = append(want, k.member)
			}
		}
		var got []string
		for _, ch := range genChanges(tx) {
			got = append(got, genMember(ch, "enactmentTimestamp")...)
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("changes %v, want %v", got, want)
		}
		return nil
	}
}

func TestNotablePositions(t *testing.T) {
	d, txs := genDataset(t)
	checks := maps.Clone(genNotableChecks)
	maps.Copy(checks, genMoreNotableChecks)
	for _, k := range cmdKinds {
		checks["command."+k.member] = genCommand(k.member)
	}
	for _, k := range changeKinds {
		checks["change."+k.member] = genChangeKinds(k.member)
	}
	for name, pos := range d.Notable {
		check, ok := checks[name]
		if !ok {
			t.Errorf("notable %q has no check in genNotableChecks", name)
			continue
		}
		if pos < 0 || pos >= len(txs) {
			t.Errorf("notable %q at %d, out of range", name, pos)
			continue
		}
		if err := check(txs[pos], genRaw[pos]); err != nil {
			t.Errorf("notable %q (position %d): %v", name, pos, err)
		}
	}
	for name := range checks {
		if _, ok := d.Notable[name]; !ok {
			t.Errorf("check %q has no notable transaction", name)
		}
	}
	// The failures are the only ones among notables with a non-zero code.
	for name, pos := range d.Notable {
		if !strings.HasPrefix(name, "failed.") && fmt.Sprint(txs[pos]["code"]) != "0" {
			t.Errorf("notable %q failed with code %v", name, txs[pos]["code"])
		}
	}
}
