package sampleservice

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// genOneOfGroups lists every one-of group of the commands (docs/wire.md, One-of groups) (besides the
// command member itself, which TestCoverageCommandAndChangeKinds checks):
// where its objects sit (path suffixes), its members, and whether the
// dataset must also hold an object with no member set.
var genOneOfGroups = []struct {
	name     string
	suffixes []string
	members  []string
	none     bool
}{
	{"ChainEvent.event", []string{"command.chainEvent"}, []string{"builtin", "erc20", "stakingEvent", "erc20Multisig", "contractCall"}, false},
	{"BuiltinAssetEvent.action", []string{"command.chainEvent.builtin"}, []string{"deposit", "withdrawal"}, true},
	{"ERC20Event.action", []string{"command.chainEvent.erc20"}, []string{"assetList", "assetDelist", "deposit", "withdrawal", "assetLimitsUpdated", "bridgeStopped", "bridgeResumed"}, false},
	{"StakingEvent.action", []string{"command.chainEvent.stakingEvent"}, []string{"stakeDeposited", "stakeRemoved", "totalSupply"}, false},
	{"ERC20MultiSigEvent.action", []string{"command.chainEvent.erc20Multisig"}, []string{"signerAdded", "signerRemoved", "thresholdSet"}, false},
	{"WithdrawExt.ext", []string{"command.withdrawSubmission.ext"}, []string{"erc20"}, true},
	{"Transfer.kind", []string{"command.transfer"}, []string{"oneOff", "recurring"}, false},
	{"StopOrderSetup.trigger", []string{"risesAbove", "fallsBelow"}, []string{"price", "trailingPercentOffset"}, true},
	{"StateVarValue.value", []string{"kvb[].value"}, []string{"scalarVal", "vectorVal", "matrixVal"}, false},
	{"DataSourceDefinition.sourceType", []string{"dataSourceSpecForSettlementData", "dataSourceSpecForTradingTermination", "dataSourceSpecForSettlementSchedule", "dataSourcesSpec[]"}, []string{"internal", "external"}, false},
	{"DataSourceDefinitionInternal.sourceType", []string{"internal"}, []string{"time", "timeTrigger"}, false},
	{"DataSourceDefinitionExternal.sourceType", []string{"external"}, []string{"oracle", "ethOracle"}, false},
	{"Signer.signer", []string{"signers[]"}, []string{"pubKey", "ethAddress"}, false},
	{"EthCallTrigger.trigger", []string{"ethOracle.trigger"}, []string{"timeTrigger"}, false},
	{"AssetDetails.source (newAsset)", []string{"newAsset.changes"}, []string{"builtinAsset", "erc20"}, false},
	{"AssetDetailsUpdate.source", []string{"updateAsset.changes"}, []string{"erc20"}, true},
	{"NewMarketConfiguration.riskParameters", []string{"newMarket.changes"}, []string{"simple", "logNormal"}, false},
	{"NewSpotMarketConfiguration.riskParameters", []string{"newSpotMarket.changes"}, []string{"simple", "logNormal"}, false},
	{"UpdateMarketConfiguration.riskParameters", []string{"updateMarket.changes"}, []string{"simple", "logNormal"}, false},
	{"UpdateSpotMarketConfiguration.riskParameters", []string{"updateSpotMarket.changes"}, []string{"simple", "logNormal"}, false},
	{"InstrumentConfiguration.product", []string{"newMarket.changes.instrument", "newSpotMarket.changes.instrument"}, []string{"future", "spot", "perpetual"}, false},
	{"UpdateInstrumentConfiguration.product", []string{"updateMarket.changes.instrument"}, []string{"future", "perpetual"}, false},
	{"NewTransferConfiguration.kind", []string{"newTransfer.changes"}, []string{"oneOff", "recurring"}, false},
	{"ProposalTerms.change", []string{"command.proposalSubmission.terms"}, genProposalMembers, true},
	{"BatchProposalTermsChange.change", []string{"command.batchProposalSubmission.terms.changes[]"}, genProposalMembers[1:], false},
}

// TestCoverageOneOfMembers checks that every member of every one-of group
// occurs in the default dataset, that no object sets two members of a
// group, and that groups that may arrive empty do somewhere.
func TestCoverageOneOfMembers(t *testing.T) {
	c := genCovered(t)
	for _, g := range genOneOfGroups {
		seen := map[string]int{}
		empty, objects := 0, 0
		for _, o := range c.objects {
			if !slices.ContainsFunc(g.suffixes, func(s string) bool { return genPathMatches(o.path, s) }) {
				continue
			}
			objects++
			var set []string
			for _, m := range g.members {
				if _, ok := o.obj[m]; ok {
					set = append(set, m)
					seen[m]++
				}
			}
			switch {
			case len(set) > 1:
				t.Errorf("%s: transaction %d sets %v at %s", g.name, o.pos, set, o.path)
			case len(set) == 0:
				empty++
			}
		}
		if objects == 0 {
			t.Errorf("%s: no object at %v", g.name, g.suffixes)
			continue
		}
		for _, m := range g.members {
			if seen[m] == 0 {
				t.Errorf("%s: member %s never occurs (%d objects)", g.name, m, objects)
			}
		}
		if g.none && empty == 0 {
			t.Errorf("%s: never arrives without a member", g.name)
		}
	}
}

// genMoreNotableChecks are the checks of the notable transactions of
// notables.json's "later" and "history" lists.
var genMoreNotableChecks = func() map[string]func(map[string]any, []byte) error {
	m := map[string]func(map[string]any, []byte) error{
		"chainEvent.builtin.empty": func(tx map[string]any, _ []byte) error {
			if b, ok := genDig(tx, "command", "chainEvent", "builtin").(map[string]any); !ok || len(b) != 0 {
				return fmt.Errorf("builtin %v, want {}", genDig(tx, "command", "chainEvent", "builtin"))
			}
			return nil
		},
		"chainEvent.erc20.bridgeStopped": func(_ map[string]any, raw []byte) error { return genRequire(raw, `"bridgeStopped":true`) },
		"chainEvent.erc20.bridgeResumed": func(_ map[string]any, raw []byte) error { return genRequire(raw, `"bridgeResumed":true`) },
		"chainEvent.contractCall": func(tx map[string]any, raw []byte) error {
			if genDig(tx, "command", "chainEvent", "contractCall", "result") == nil {
				return fmt.Errorf("no result")
			}
			return genRequire(raw, `"sourceChainId":"100"`)
		},
		"chainEvent.contractCall.error": func(tx map[string]any, raw []byte) error {
			if _, has := genDig(tx, "command", "chainEvent", "contractCall").(map[string]any)["sourceChainId"]; has {
				return fmt.Errorf("sourceChainId set")
			}
			return genRequire(raw, `"result":null,"error":"execution reverted`)
		},
		"bytes.emptyResult": func(_ map[string]any, raw []byte) error { return genRequire(raw, `"result":null`) },
		"bytes.emptySig":    func(_ map[string]any, raw []byte) error { return genRequire(raw, `"sig":null`) },
		"bytes.emptyPayload": func(_ map[string]any, raw []byte) error {
			return genRequire(raw, `"payload":null`)
		},
		"proposal.newAsset.erc20":        genRequirePaths("proposalSubmission.terms.newAsset.changes.erc20.contractAddress"),
		"proposal.newAsset.builtinAsset": genRequirePaths("proposalSubmission.terms.newAsset.changes.builtinAsset.maxFaucetAmountMint"),
		"proposal.noChange": func(tx map[string]any, raw []byte) error {
			terms, _ := genDig(tx, "command", "proposalSubmission", "terms").(map[string]any)
			if got := genMember(terms, "closingTimestamp", "enactmentTimestamp", "validationTimestamp"); terms == nil || len(got) != 0 {
				return fmt.Errorf("terms %v with members %v", terms, got)
			}
			return nil
		},
		"withdrawSubmission.ext.erc20": genRequirePaths("command.withdrawSubmission.ext.erc20.receiverAddress"),
		"withdrawSubmission.ext.empty": func(_ map[string]any, raw []byte) error { return genRequire(raw, `"ext":{}`) },
		"transferFunds.oneOff": func(tx map[string]any, _ []byte) error {
			if d := genDig(tx, "command", "transfer", "oneOff", "deliverOn"); d == nil || d == "0" {
				return fmt.Errorf("deliverOn %v", d)
			}
			return nil
		},
		"transferFunds.recurring": genRequirePaths("command.transfer.recurring.dispatchStrategy.metric", "command.transfer.recurring.endEpoch"),
		"transferFunds.recurringNoDispatch": func(tx map[string]any, raw []byte) error {
			rec, _ := genDig(tx, "command", "transfer", "recurring").(map[string]any)
			if _, hasEnd := rec["endEpoch"]; rec == nil || hasEnd {
				return fmt.Errorf("recurring %v", rec)
			}
			return genRequire(raw, `"dispatchStrategy":null`)
		},
		"stopOrdersSubmission.price":                 genRequirePaths("command.stopOrdersSubmission.risesAbove.price"),
		"stopOrdersSubmission.trailingPercentOffset": genRequirePaths("command.stopOrdersSubmission.fallsBelow.trailingPercentOffset"),
		"stopOrdersSubmission.noTrigger": func(tx map[string]any, _ []byte) error {
			so, _ := genDig(tx, "command", "stopOrdersSubmission").(map[string]any)
			rises, _ := so["risesAbove"].(map[string]any)
			_, price := rises["price"]
			_, trailing := rises["trailingPercentOffset"]
			_, falls := so["fallsBelow"]
			if rises == nil || price || trailing || falls {
				return fmt.Errorf("stop order %v", so)
			}
			return nil
		},
		"updateReferralSet.teamPartial": func(_ map[string]any, raw []byte) error {
			return genRequire(raw, `"team":{"name":"Renamed Rangers","allowList":[]}`)
		},
		"command.memberless": func(tx map[string]any, _ []byte) error {
			if got := genMember(tx["command"].(map[string]any), "nonce", "blockHeight"); len(got) != 0 || tx["type"] != "Submit AMM" {
				return fmt.Errorf("type %v, members %v", tx["type"], got)
			}
			return nil
		},
		"enum.unknownNodeVote": func(_ map[string]any, raw []byte) error {
			return genRequire(raw, `"nodeVote":{"reference":`, `"type":14}`)
		},
		"f64.nonFinite": func(_ map[string]any, raw []byte) error {
			return genRequire(raw, `"maxMoveUp":"Infinity"`, `"minMoveDown":"-Infinity"`, `"scalingFactor":"NaN"`)
		},
		"u32.large": func(_ map[string]any, raw []byte) error {
			return genRequire(raw, `{"startRank":1,"shareRatio":4294967295}`, `{"startRank":2147483648,"shareRatio":1}`)
		},
		"signer.pubKey":     genRequirePaths("external.oracle.signers[].pubKey.key"),
		"signer.ethAddress": genRequirePaths("external.oracle.signers[].ethAddress.address"),
	}
	for _, k := range chainEventKinds {
		name := "chainEvent." + k.name
		if m[name] == nil {
			m[name] = genRequirePaths("command.chainEvent." + k.name)
		}
	}
	for _, k := range changeKinds {
		m["proposal."+k.member] = func(tx map[string]any, _ []byte) error {
			terms, _ := genDig(tx, "command", "proposalSubmission", "terms").(map[string]any)
			got := genMember(terms, "closingTimestamp", "enactmentTimestamp", "validationTimestamp")
			if !slices.Equal(got, []string{k.member}) {
				return fmt.Errorf("proposal changes %v, want %s", got, k.member)
			}
			if free := k.member == "newFreeform"; free != (terms["enactmentTimestamp"] == "0") {
				return fmt.Errorf("%s enacted at %v", k.member, terms["enactmentTimestamp"])
			}
			return nil
		}
	}
	for _, v := range []string{"scalarVal", "vectorVal", "matrixVal"} {
		m["stateVariableProposal."+v] = genRequirePaths("command.stateVariableProposal.proposal.kvb[].value." + v)
	}
	for typ, member := range genLegacyTypes {
		name := "legacy." + map[string]string{
			"announceNode":                   "registerNewNode",
			"liquidityProvisionCancellation": "cancelLiquidityProvision",
			"liquidityProvisionAmendment":    "amendLiquidityProvision",
		}[member]
		m[name] = func(tx map[string]any, raw []byte) error {
			if tx["type"] != typ {
				return fmt.Errorf("type %v, want %q", tx["type"], typ)
			}
			return genCommand(member)(tx, raw)
		}
	}
	return m
}()

// TestNotableHistory checks that the legacy type strings sit among the
// oldest transactions, and that Meta (which the filters use) reports them.
func TestNotableHistory(t *testing.T) {
	d, txs := genDataset(t)
	for name, pos := range d.Notable {
		if !strings.HasPrefix(name, "legacy.") {
			continue
		}
		if pos >= len(txs)/50 {
			t.Errorf("%s at position %d of %d: not among the oldest", name, pos, len(txs))
		}
		if m := d.Transactions.Meta(pos); genLegacyTypes[m.Type] == "" || m.Type != txs[pos]["type"] {
			t.Errorf("%s: Meta type %q, JSON type %v", name, m.Type, txs[pos]["type"])
		}
	}
}
