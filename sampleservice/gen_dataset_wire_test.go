package sampleservice

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// genInt64Keys are the fields of the commands that are 64-bit integers (JSON
// strings); genInt32Paths are the 32-bit ones (JSON numbers) besides the
// transaction's index and code.
var (
	genInt64Keys = []string{
		"nonce", "blockHeight", "block", "size", "sizeDelta", "expiresAt", "closingTimestamp", "enactmentTimestamp",
		"validationTimestamp", "decimalPlaces", "positionDecimalPlaces", "horizon", "auctionExtension", "timeWindow",
		"every", "initial", "until", "requiredConfirmations", "sourceChainId", "numberDecimalPlaces", "fromEpoch",
		"startEpoch", "endEpoch", "windowLength", "lockPeriod", "deliverOn", "peakSize", "minimumVisibleSize",
		"disposalTimeStep", "fullDisposalSize", "decayPower", "performanceHysteresisEpochs", "endOfProgramTimestamp",
		"targetBlock", "upgradeBlockHeight", "blockTime", "decimals",
	}
	genInt32Paths = []string{
		"signature.version", "ethereumSignature.version", "vegaSignature.version",
		"vegaPubKeyIndex", "startRank", "shareRatio", "newPubKeyIndex", "newThreshold",
	}
	genDoubleKeys = []string{"scalingFactor", "factorLong", "factorShort", "maxMoveUp", "minMoveDown", "probabilityOfTrading",
		"riskAversionParameter", "tau", "mu", "r", "sigma"}
	// genStringKeys are fields typed "-" in the interface: strings on the wire.
	genStringKeys = []string{"amount", "asset", "destination", "source", "fractionOfBalance", "nTopPerformers",
		"notionalTimeWeightedAveragePositionRequirement", "stakingRequirement", "marginFactor", "percentage",
		"updateMarketState.changes.marketId", "updateMarketState.changes.price"}
	// genNullable are the keys whose value may be null: unset messages.
	genNullable = []string{"peggedOrder", "dispatchStrategy", "liquidationStrategy",
		"pow", "sig", "payload", "result"}
)

var (
	// genProposalMembers are the 13 members of a single proposal's change.
	genProposalMembers = func() []string {
		out := []string{"newAsset"}
		for _, k := range changeKinds {
			out = append(out, k.member)
		}
		return out
	}()
	genDecimalRe = regexp.MustCompile(`^[0-9]+$`)
	// genLegacyTypes maps the type strings of cores before v0.72.0 to
	// their command member.
	genLegacyTypes = map[string]string{
		"Register new Node":               "announceNode",
		"Cancel LiquidityProvision Order": "liquidityProvisionCancellation",
		"Amend LiquidityProvision Order":  "liquidityProvisionAmendment",
	}
	// genValidatorCommands are the command members the core classes as
	// validator commands: sent without proof of work.
	genValidatorCommands = map[string]bool{
		"nodeVote": true, "nodeSignature": true, "chainEvent": true, "keyRotateSubmission": true,
		"stateVariableProposal": true, "validatorHeartbeat": true, "ethereumKeyRotateSubmission": true,
	}
)

func genPathMatches(path, key string) bool {
	return path == key || strings.HasSuffix(path, "."+key)
}

// TestWireFormsInDataset checks the encoding rules on every transaction of
// the default dataset.
func TestWireFormsInDataset(t *testing.T) {
	_, txs := genDataset(t)
	typeOf := map[string]string{}
	for _, k := range cmdKinds {
		typeOf[k.member] = k.typeName
	}
	hexUpperRe := regexp.MustCompile(`^[0-9A-F]+$`)
	nulls := map[string]int{}
	fail := func(pos int, format string, args ...any) {
		t.Helper()
		t.Fatalf("transaction %d: "+format, append([]any{pos}, args...)...)
	}
	for pos, tx := range txs {
		// Envelope.
		if !genHex64Upper.MatchString(tx["hash"].(string)) || !genHex64Lower.MatchString(tx["submitter"].(string)) {
			fail(pos, "hash %v, submitter %v", tx["hash"], tx["submitter"])
		}
		cmd := tx["command"].(map[string]any)
		members := genMember(cmd, "nonce", "blockHeight")
		switch {
		case len(members) == 0 && pos == genDefault.Notable["command.memberless"]:
		case len(members) == 1 && genLegacyTypes[tx["type"].(string)] == members[0]:
		case len(members) != 1 || typeOf[members[0]] != tx["type"]:
			fail(pos, "command members %v, type %v", members, tx["type"])
		}
		sig := tx["signature"].(map[string]any)
		if sig["algo"] != "vega/ed25519" || sig["version"] != json.Number("1") {
			fail(pos, "signature %v", sig)
		}
		if pow, ok := tx["pow"].(map[string]any); ok {
			if !hexUpperRe.MatchString(pow["tid"].(string)) {
				fail(pos, "pow %v", pow)
			}
		}
		if len(members) == 1 && genValidatorCommands[members[0]] != (tx["pow"] == nil) {
			fail(pos, "%s command with pow %v", members[0], tx["pow"])
		}
		_, hasError := tx["error"]
		if (tx["code"] != json.Number("0")) != hasError {
			fail(pos, "code %v with error %v", tx["code"], tx["error"])
		}
		if v := tx["version"]; v != "TX_VERSION_V2" && v != "TX_VERSION_V3" {
			fail(pos, "version %v", v)
		}
		for _, ch := range genChanges(tx) {
			if m := genMember(ch, "enactmentTimestamp"); len(m) != 1 {
				fail(pos, "change members %v", m)
			}
		}
		if cb := genDig(cmd, "batchProposalSubmission", "terms", "closingTimestamp"); cb != nil {
			if _, err := strconv.ParseInt(cb.(string), 10, 64); err != nil {
				fail(pos, "closingTimestamp %v", cb)
			}
		}

		genWalk("", tx, func(path string, v any) {
			if v == nil {
				nulls[path[strings.LastIndex(path, ".")+1:]]++
				return
			}
			last := path[strings.LastIndex(path, ".")+1:]
			switch {
			case path == "block" || path == "cursor" || path == "hash":
			case path == "index" || path == "code" ||
				slices.ContainsFunc(genInt32Paths, func(k string) bool { return genPathMatches(path, k) }):
				n, ok := v.(json.Number)
				if _, err := strconv.ParseUint(string(n), 10, 32); !ok || err != nil {
					fail(pos, "%s = %#v, want a 32-bit number", path, v)
				}
			case last == "nonce" && strings.Contains(path, ".erc20Multisig."):
				// The multisig contract's nonce: a 256-bit decimal string.
				if s, ok := v.(string); !ok || !genDecimalRe.MatchString(s) {
					fail(pos, "%s = %#v, want a decimal string", path, v)
				}
			case slices.Contains(genInt64Keys, last):
				s, ok := v.(string)
				_, err := strconv.ParseInt(s, 10, 64)
				if _, uerr := strconv.ParseUint(s, 10, 64); !ok || (err != nil && uerr != nil) {
					fail(pos, "%s = %#v, want a 64-bit integer string", path, v)
				}
			case slices.Contains(genDoubleKeys, last):
				if _, ok := v.(json.Number); !ok && v != "NaN" && v != "Infinity" && v != "-Infinity" {
					fail(pos, "%s = %#v, want a number", path, v)
				}
			case slices.ContainsFunc(genStringKeys, func(k string) bool { return genPathMatches(path, k) }):
				if _, ok := v.(string); !ok {
					fail(pos, "%s = %#v, want a string", path, v)
				}
			}
			// One-of groups: exactly one member.
			obj, ok := v.(map[string]any)
			if !ok {
				return
			}
			count := func(members []string) int {
				n := 0
				for _, m := range members {
					if _, ok := obj[m]; ok {
						n++
					}
				}
				return n
			}
			one := func(group string, members ...string) {
				if n := count(members); n != 1 {
					fail(pos, "%s at %s has %d of %v", group, path, n, members)
				}
			}
			atMostOne := func(group string, members ...string) {
				if n := count(members); n > 1 {
					fail(pos, "%s at %s has %d of %v", group, path, n, members)
				}
			}
			switch {
			case last == "instrument":
				if strings.Contains(path, "updateMarket") {
					one("update product", "future", "perpetual")
				} else {
					one("product", "future", "perpetual", "spot")
				}
			case strings.HasSuffix(path, "dataSourceSpecForSettlementData") || strings.HasSuffix(path, "dataSourceSpecForTradingTermination") ||
				strings.HasSuffix(path, "dataSourceSpecForSettlementSchedule") || strings.HasSuffix(path, "dataSourcesSpec[]"):
				one("data source", "internal", "external")
			case last == "internal":
				one("internal source", "time", "timeTrigger")
			case last == "external":
				one("external source", "oracle", "ethOracle")
			case last == "signers[]":
				one("signer", "pubKey", "ethAddress")
			case last == "trigger":
				one("trigger", "timeTrigger")
			case last == "changes" && (strings.HasSuffix(path, "newMarket.changes") || strings.HasSuffix(path, "newSpotMarket.changes") ||
				strings.HasSuffix(path, "updateMarket.changes") || strings.HasSuffix(path, "updateSpotMarket.changes")):
				one("risk model", "simple", "logNormal")
			case strings.HasSuffix(path, "newTransfer.changes"):
				one("transfer kind", "oneOff", "recurring")
			case strings.HasSuffix(path, "stopOrdersSubmission[].risesAbove") || strings.HasSuffix(path, "stopOrdersSubmission[].fallsBelow") ||
				strings.HasSuffix(path, "stopOrdersSubmission.risesAbove") || strings.HasSuffix(path, "stopOrdersSubmission.fallsBelow"):
				atMostOne("stop trigger", "price", "trailingPercentOffset")
			case path == "command.chainEvent":
				one("chain event", "builtin", "erc20", "stakingEvent", "erc20Multisig", "contractCall")
			case path == "command.chainEvent.builtin":
				atMostOne("built-in action", "deposit", "withdrawal")
			case path == "command.chainEvent.erc20":
				one("ERC-20 action", "assetList", "assetDelist", "deposit", "withdrawal", "assetLimitsUpdated", "bridgeStopped", "bridgeResumed")
			case path == "command.chainEvent.stakingEvent":
				one("staking action", "stakeDeposited", "stakeRemoved", "totalSupply")
			case path == "command.chainEvent.erc20Multisig":
				one("multisig action", "signerAdded", "signerRemoved", "thresholdSet")
			case strings.HasSuffix(path, "kvb[].value"):
				one("state variable value", "scalarVal", "vectorVal", "matrixVal")
			case path == "command.withdrawSubmission.ext":
				atMostOne("withdrawal ext", "erc20")
			case path == "command.transfer":
				one("transfer kind", "oneOff", "recurring")
			case path == "command.proposalSubmission.terms":
				atMostOne("proposal change", genProposalMembers...)
			case strings.HasSuffix(path, "newAsset.changes"):
				one("asset source", "builtinAsset", "erc20")
			}
		})
	}
	for k := range nulls {
		if !slices.Contains(genNullable, k) {
			t.Errorf("%s is null in %d transactions; only unset messages may be null", k, nulls[k])
		}
	}
	for _, k := range genNullable {
		if nulls[k] == 0 {
			t.Errorf("%s is never null", k)
		}
	}
}
