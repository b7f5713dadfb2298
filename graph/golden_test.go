package graph_test

import (
	"slices"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tradenet/gateway/sampleservice"
)

// TestGolden runs whole GraphQL queries against the gateway over the sample
// service and compares each response with testdata/golden/<name>.json.
// Refresh the files with `go test ./graph -run TestGolden -update` and
// review their diff: they are the reviewed record of what clients receive.
func TestGolden(t *testing.T) {
	runGolden(t, goldenCases())
}

func init() { goldenSuites = append(goldenSuites, goldenCases) }

// goldenCases are TestGolden's cases.
func goldenCases() []goldenCase {
	var cases []goldenCase
	cases = append(cases, listCases()...)
	cases = append(cases, commandCases()...)
	cases = append(cases, changeCases()...)
	cases = append(cases, edgeCases()...)
	cases = append(cases, lookupCases()...) // lookup_e2e_test.go
	return cases
}

const uint64Max = "18446744073709551615"

// Transaction selections.
const (
	// txAll is every field of a transaction, its command included.
	txAll = `...TransactionFields
        command {
          ...CommandFields
        }`
	// txCommand is the command only, with enough of the transaction to
	// read the golden file.
	txCommand = `hash
        type
        code
        command {
          ...CommandFields
        }`
)

// listCases: each list with every field, and asset lookups.
func listCases() []goldenCase {
	return []goldenCase{
		{
			name: "assets.first5",
			query: `{
  assets(first: 5) {
    edges { cursor node { ...AssetFields } }
    pageInfo { ...PageInfoFields }
  }
}`,
			check: func(t *testing.T, r gqlResponse) {
				expectErrorCount(t, r, 0)
				expectData(t, r, true, "assets", "pageInfo", "hasNextPage")
				expectData(t, r, false, "assets", "pageInfo", "hasPreviousPage")
			},
		},
		{
			// Ascending ids: the first five hold all three asset sources
			// (erc20, neither, builtinAsset).
			name: "assets.first5.oldestFirst",
			query: `{
  assets(first: 5, newestFirst: false) {
    edges { cursor node { ...AssetFields } }
    pageInfo { ...PageInfoFields }
  }
}`,
			check: func(t *testing.T, r gqlResponse) {
				expectErrorCount(t, r, 0)
				sources := map[string]bool{}
				for _, e := range dataAt(t, r, "assets", "edges").([]any) {
					d := e.(map[string]any)["node"].(map[string]any)["details"].(map[string]any)
					switch {
					case d["builtinAsset"] != nil && d["erc20"] != nil:
						t.Errorf("asset with both sources: %v", d)
					case d["builtinAsset"] != nil:
						sources["builtinAsset"] = true
					case d["erc20"] != nil:
						sources["erc20"] = true
					default:
						sources["neither"] = true
					}
				}
				if len(sources) != 3 {
					t.Errorf("asset sources on the page: %v, want builtinAsset, erc20 and neither", sources)
				}
			},
		},
		{
			name: "asset.byId",
			query: `query ($erc20: ID!, $builtin: ID!, $neither: ID!, $emptySymbol: ID!, $rejected: ID!, $pendingListing: ID!, $proposed: ID!, $missing: ID!) {
  erc20: asset(id: $erc20) { ...AssetFields }
  builtin: asset(id: $builtin) { ...AssetFields }
  neither: asset(id: $neither) { ...AssetFields }
  emptySymbol: asset(id: $emptySymbol) { ...AssetFields }
  rejected: asset(id: $rejected) { ...AssetFields }
  pendingListing: asset(id: $pendingListing) { ...AssetFields }
  proposed: asset(id: $proposed) { ...AssetFields }
  missing: asset(id: $missing) { ...AssetFields }
  node: node(id: $builtin) { __typename id ... on Asset { details { symbol } } }
}`,
			variables: map[string]any{
				"erc20":       assetBySymbol("USDT"),
				"builtin":     assetBySymbol("tDAI"),
				"neither":     assetBySymbol("LEGACY"),
				"emptySymbol": assetBySymbol(""),
				// The other statuses (enabled and unspecified are above).
				"rejected":       assetBySymbol("TUSD"),
				"pendingListing": assetBySymbol("PYUSD"),
				"proposed":       assetBySymbol("PEPE"),
				"missing":        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
			},
			check: func(t *testing.T, r gqlResponse) {
				expectErrorCount(t, r, 1)
				expectError(t, r, "missing", "NOT_FOUND")
				expectData(t, r, nil, "missing")
				expectData(t, r, nil, "neither", "details", "builtinAsset")
				expectData(t, r, nil, "neither", "details", "erc20")
				expectData(t, r, "STATUS_UNSPECIFIED", "neither", "status")
				expectData(t, r, "", "emptySymbol", "details", "symbol")
				expectData(t, r, "Asset", "node", "__typename")
				expectData(t, r, "STATUS_REJECTED", "rejected", "status")
				expectData(t, r, "STATUS_PENDING_LISTING", "pendingListing", "status")
				expectData(t, r, "STATUS_PROPOSED", "proposed", "status")
			},
		},
		{
			name: "fundingPayments.party",
			query: `query ($party: ID!) {
  fundingPayments(partyId: $party, first: 5) {
    edges { cursor node { ...FundingPaymentFields } }
    pageInfo { ...PageInfoFields }
  }
}`,
			variables: map[string]any{"party": fromDataset(partyWithFunding)},
			check: func(t *testing.T, r gqlResponse) {
				expectErrorCount(t, r, 0)
				edges, _ := dataAt(t, r, "fundingPayments", "edges").([]any)
				if len(edges) != 5 {
					t.Fatalf("%d funding payments, want 5", len(edges))
				}
				// The one case that looks at freshness, which the golden
				// files leave out: a data-node list reports the block.
				ds := dataset(t)
				fresh, _ := r.Extensions["freshness"].(map[string]any)
				if fresh == nil {
					t.Fatalf("no extensions.freshness in %v", r.Extensions)
				}
				if got, want := fresh["blockHeight"], strconv.FormatUint(ds.BlockHeight, 10); got != want {
					t.Errorf("freshness.blockHeight = %v, want %q", got, want)
				}
				if got, want := fresh["blockTime"], time.Unix(0, ds.BlockTime).UTC().Format(time.RFC3339Nano); got != want {
					t.Errorf("freshness.blockTime = %v, want %q", got, want)
				}
			},
		},
		{
			// The lists of a party and of a validator node.
			name: "party.validatorNode.lists",
			query: `query ($party: ID!, $node: ID!) {
  party(id: $party) {
    id
    fundingPayments(first: 2) {
      edges { cursor node { ...FundingPaymentFields } }
      pageInfo { ...PageInfoFields }
    }
    delegations(first: 2) {
      edges { cursor node { ...DelegationFields } }
      pageInfo { ...PageInfoFields }
    }
    transactions(first: 2) {
      edges { cursor node { block index hash type submitter { id } command { __typename } } }
      pageInfo { ...PageInfoFields }
    }
  }
  validatorNode(id: $node) {
    id
    delegations(first: 2) {
      edges { cursor node { ...DelegationFields } }
      pageInfo { ...PageInfoFields }
    }
  }
}`,
			variables: map[string]any{"party": fromDataset(partyWithFundingAndDelegations), "node": fromDataset(func(ds *sampleservice.Dataset) any { return ds.Nodes[0] })},
			check: func(t *testing.T, r gqlResponse) {
				expectErrorCount(t, r, 0)
				party := dataAt(t, r, "party", "id")
				for _, list := range []string{"fundingPayments", "delegations", "transactions"} {
					edges, _ := dataAt(t, r, "party", list, "edges").([]any)
					if len(edges) != 2 {
						t.Errorf("party.%s: %d rows, want 2", list, len(edges))
					}
				}
				expectData(t, r, party, "party", "fundingPayments", "edges", 0, "node", "partyId")
				expectData(t, r, party, "party", "delegations", "edges", 0, "node", "party", "id")
				expectData(t, r, dataAt(t, r, "validatorNode", "id"), "validatorNode", "delegations", "edges", 0, "node", "nodeId")
			},
		},
		{
			name: "delegations.first5",
			query: `{
  delegations(first: 5) {
    edges { cursor node { ...DelegationFields } }
    pageInfo { ...PageInfoFields }
  }
}`,
			check: func(t *testing.T, r gqlResponse) {
				expectErrorCount(t, r, 0)
				for i := range 5 {
					if dataAt(t, r, "delegations", "edges", i, "node", "nodeId") != dataAt(t, r, "delegations", "edges", i, "node", "node", "id") {
						t.Errorf("delegation %d: node.id differs from nodeId", i)
					}
				}
			},
		},
		{
			name: "transactions.first3",
			query: `{
  transactions(first: 3) {
    edges { cursor node { ...TransactionFields command { __typename } } }
    pageInfo { ...PageInfoFields }
  }
}`,
			check: func(t *testing.T, r gqlResponse) {
				expectErrorCount(t, r, 0)
				ds := dataset(t)
				newest := ds.Transactions.Meta(ds.Transactions.Len() - 1)
				expectData(t, r, strconv.FormatUint(newest.Block, 10), "transactions", "edges", 0, "node", "block")
				expectData(t, r, float64(newest.Index), "transactions", "edges", 0, "node", "index")
			},
		},
		{
			// The oldest transactions: backward paging from the end.
			name: "transactions.last2",
			query: `{
  transactions(last: 2) {
    edges { cursor node { ...TransactionFields command { __typename } } }
    pageInfo { ...PageInfoFields }
  }
}`,
			check: func(t *testing.T, r gqlResponse) {
				expectErrorCount(t, r, 0)
				oldest := dataset(t).Transactions.Meta(0)
				expectData(t, r, strconv.FormatUint(oldest.Block, 10), "transactions", "edges", 1, "node", "block")
				// Newest first: the oldest rows are the end of the list.
				expectData(t, r, true, "transactions", "pageInfo", "hasPreviousPage")
				expectData(t, r, false, "transactions", "pageInfo", "hasNextPage")
			},
		},
	}
}

// commandCases: every member of the Command union, and failed transactions.
func commandCases() []goldenCase {
	return []goldenCase{
		oneTx("command.announceNode", txAll, "command.announceNode", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "AnnounceNode", txNode("tx", "command", "__typename")...)
			// vegaPubKey etc. on the wire.
			expectData(t, r, "9eab6955a5ffa5a293c144d9416c1fd18160887bd9bd88063f771aa0f15f7131", txNode("tx", "command", "netPubKey")...)
			expectData(t, r, "3", txNode("tx", "command", "netPubKeyIndex")...)
			expectData(t, r, "vega/ed25519", txNode("tx", "command", "netSignature", "algo")...)
			expectData(t, r, dataAt(t, r, txNode("tx", "command", "id")...), txNode("tx", "command", "node", "id")...)
		}),
		oneTx("command.applyReferralCode", txAll, "command.applyReferralCode", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "ApplyReferralCode", txNode("tx", "command", "__typename")...)
		}),
		oneTx("command.batchMarketInstructions", txAll, "command.batchMarketInstructions", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "BatchMarketInstructions", txNode("tx", "command", "__typename")...)
		}),
		oneTx("command.batchProposalSubmission", txAll, "command.batchProposalSubmission", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "BatchProposalSubmission", txNode("tx", "command", "__typename")...)
		}),
		oneTx("batch.allLists", txAll, "batch.allLists", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			cmd := txNode("tx", "command")
			for _, list := range []string{"amendments", "cancellations", "stopOrdersCancellation", "stopOrdersSubmission", "submissions", "updateMarginMode"} {
				if l, _ := dataAt(t, r, append(cmd, list)...).([]any); len(l) == 0 {
					t.Errorf("%s is empty", list)
				}
			}
			// amend.negativeSizeDelta and amend.size.
			expectData(t, r, "-5", append(cmd, "amendments", 0, "sizeDelta")...)
			expectData(t, r, nil, append(cmd, "amendments", 0, "size")...)
			expectData(t, r, "250", append(cmd, "amendments", 1, "size")...)
			expectData(t, r, "0", append(cmd, "amendments", 1, "sizeDelta")...)
			// order.pegged and order.iceberg.
			expectData(t, r, map[string]any{"offset": "150", "reference": "PEGGED_REFERENCE_BEST_BID"}, append(cmd, "submissions", 1, "peggedOrder")...)
			expectData(t, r, map[string]any{"minimumVisibleSize": "20", "peakSize": "100"}, append(cmd, "submissions", 2, "icebergOpts")...)
		}),
		oneTx("batch.empty", txCommand, "batch.empty", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, []any{}, txNode("tx", "command", "submissions")...)
		}),
		oneTx("stopOrder.setups", txCommand, "stopOrder.both", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			so := txNode("tx", "command", "stopOrdersSubmission")
			// Both directions: a price trigger and a trailing one, exactly
			// one of the two set in each.
			expectData(t, r, "385000", append(so, 0, "risesAbove", "price")...)
			expectData(t, r, nil, append(so, 0, "risesAbove", "trailingPercentOffset")...)
			expectData(t, r, nil, append(so, 0, "fallsBelow", "price")...)
			expectData(t, r, "0.05", append(so, 0, "fallsBelow", "trailingPercentOffset")...)
			expectData(t, r, map[string]any{"percentage": "0.5"}, append(so, 0, "fallsBelow", "sizeOverrideValue")...)
			expectData(t, r, "2024-03-15T10:37:31.7Z", append(so, 0, "risesAbove", "expiresAt")...)
			// One direction only.
			expectData(t, r, nil, append(so, 1, "fallsBelow")...)
			expectData(t, r, nil, append(so, 2, "risesAbove")...)
			expectData(t, r, "SIZE_OVERRIDE_SETTING_NONE", append(so, 2, "fallsBelow", "sizeOverrideSetting")...)
		}),
		oneTx("coverage.orders", txCommand, "coverage.orders", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
		}),
		// A command whose kind the explorer's schema predates arrives with
		// no member at all (docs/wire.md, Newer and older networks):
		// UnknownCommand with an empty name and the whole command object,
		// the row intact.
		notableTxs("command.unknown", txCommand, map[string]string{
			"memberless": "command.memberless",
		}, func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "UnknownCommand", txNode("memberless", "command", "__typename")...)
			expectData(t, r, "", txNode("memberless", "command", "name")...)
			expectData(t, r, "Submit AMM", txNode("memberless", "type")...)
			raw, ok := dataAt(t, r, txNode("memberless", "command", "raw")...).(map[string]any)
			if !ok || len(raw) != 2 || raw["nonce"] == nil || raw["blockHeight"] == nil {
				t.Errorf("raw = %v, want the command object with only nonce and blockHeight", raw)
			}
		}),
		notableTxs("transactions.failed", txAll, map[string]string{
			"code70":        "failed.code70",
			"code71":        "failed.code71",
			"batchProposal": "failed.batchProposal",
		}, func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "70", txNode("code70", "code")...)
			expectData(t, r, "OrderError: margin check failed", txNode("code70", "error")...)
			expectData(t, r, "71", txNode("code71", "code")...)
			expectData(t, r, "2 (insufficient funds to pay fees)", txNode("code71", "error")...)
			expectData(t, r, "BatchMarketInstructions", txNode("code71", "command", "__typename")...)
			expectData(t, r, "70", txNode("batchProposal", "code")...)
		}),
		oneTx("transactions.versionV2", `...TransactionFields`, "txVersion.v2", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "TX_VERSION_V2", txNode("tx", "version")...)
		}),
	}
}

// changeCases: every member of ProposalChangeKind, from the batch proposal
// holding a single change of that kind, and the market, data source, risk
// model and transfer shapes.
func changeCases() []goldenCase {
	typename := func(want ...string) func(*testing.T, gqlResponse) {
		return func(t *testing.T, r gqlResponse) {
			t.Helper()
			expectErrorCount(t, r, 0)
			changes := dataAt(t, r, txNode("tx", "command", "terms", "changes")...).([]any)
			if len(changes) != len(want) {
				t.Fatalf("%d changes, want %d", len(changes), len(want))
			}
			for i, w := range want {
				expectData(t, r, w, txNode("tx", "command", "terms", "changes", i, "change", "__typename")...)
			}
		}
	}
	return []goldenCase{
		oneTx("change.cancelTransfer", txCommand, "change.cancelTransfer", typename("CancelTransfer")),
		oneTx("change.newFreeform", txCommand, "change.newFreeform", typename("NewFreeform")),
		oneTx("change.newMarket", txCommand, "change.newMarket", typename("NewMarket")),
		oneTx("change.newSpotMarket", txCommand, "change.newSpotMarket", func(t *testing.T, r gqlResponse) {
			typename("NewSpotMarket")(t, r)
			spot := txNode("tx", "command", "terms", "changes", 0, "change", "changes", "instrument", "spot")
			for _, side := range []string{"baseAsset", "quoteAsset"} {
				if _, ok := dataAt(t, r, append(spot, side, "details", "symbol")...).(string); !ok {
					t.Errorf("spot.%s not resolved", side)
				}
			}
		}),
		oneTx("change.newTransfer", txCommand, "change.newTransfer", typename("NewTransfer")),
		oneTx("change.updateAsset", txCommand, "change.updateAsset", func(t *testing.T, r gqlResponse) {
			typename("UpdateAsset")(t, r)
			c := txNode("tx", "command", "terms", "changes", 0, "change")
			expectData(t, r, dataAt(t, r, append(c, "assetId")...), append(c, "asset", "id")...)
		}),
		oneTx("change.updateMarket", txCommand, "change.updateMarket", typename("UpdateMarket")),
		oneTx("change.updateMarketState", txCommand, "change.updateMarketState", typename("UpdateMarketState")),
		oneTx("change.updateNetworkParameter", txCommand, "change.updateNetworkParameter", typename("UpdateNetworkParameter")),
		// A future: simple risk model, oracle settlement signed by a key and
		// an address, termination on the network clock, a successor.
		oneTx("market.future", txCommand, "market.future", func(t *testing.T, r gqlResponse) {
			typename("NewMarket")(t, r)
			cfg := txNode("tx", "command", "terms", "changes", 0, "change", "changes")
			expectData(t, r, nil, append(cfg, "logNormal")...)
			expectData(t, r, nil, append(cfg, "instrument", "perpetual")...)
			if dataAt(t, r, append(cfg, "successor")...) == nil {
				t.Error("successor is null")
			}
			signers := dataAt(t, r, append(cfg, "instrument", "future", "dataSourceSpecForSettlementData", "external", "oracle", "signers")...).([]any)
			kinds := map[string]bool{}
			for _, s := range signers {
				for k, v := range s.(map[string]any) {
					if v != nil {
						kinds[k] = true
					}
				}
			}
			if !kinds["pubKey"] || !kinds["ethAddress"] {
				t.Errorf("signer kinds %v, want pubKey and ethAddress", kinds)
			}
			if dataAt(t, r, append(cfg, "instrument", "future", "dataSourceSpecForTradingTermination", "internal", "time")...) == nil {
				t.Error("trading termination is not internal time")
			}
		}),
		// A perpetual: log-normal risk model, settlement from an Ethereum
		// call, a funding schedule on the network's time trigger, composite
		// prices fed by an Ethereum call and a signed oracle.
		oneTx("market.perpetual", txCommand, "market.perpetual", func(t *testing.T, r gqlResponse) {
			typename("NewMarket")(t, r)
			cfg := txNode("tx", "command", "terms", "changes", 0, "change", "changes")
			expectData(t, r, nil, append(cfg, "simple")...)
			expectData(t, r, nil, append(cfg, "successor")...)
			perp := append(cfg, "instrument", "perpetual")
			expectData(t, r, "getPriceNoOlderThan", append(perp, "dataSourceSpecForSettlementData", "external", "ethOracle", "method")...)
			if dataAt(t, r, append(perp, "dataSourceSpecForSettlementSchedule", "internal", "timeTrigger")...) == nil {
				t.Error("settlement schedule is not an internal time trigger")
			}
			if l := dataAt(t, r, append(perp, "internalCompositePriceConfiguration", "dataSourcesSpec")...).([]any); len(l) != 2 {
				t.Errorf("%d composite price sources, want 2", len(l))
			}
		}),
		oneTx("coverage.markets", txCommand, "coverage.markets", typename("NewMarket", "NewMarket", "NewMarket", "NewMarket")),
		oneTx("updateMarket.futureAndPerpetual", txCommand, "updateMarket.future", typename("UpdateMarket", "UpdateMarket")),
		oneTx("marketState.withAndWithoutPrice", txCommand, "marketState.withPrice", func(t *testing.T, r gqlResponse) {
			typename("UpdateMarketState", "UpdateMarketState", "UpdateMarketState", "UpdateMarketState", "UpdateMarketState")(t, r)
			changes := txNode("tx", "command", "terms", "changes")
			expectData(t, r, "MARKET_STATE_UPDATE_TYPE_TERMINATE", append(changes, 1, "change", "changes", "updateType")...)
			if p, _ := dataAt(t, r, append(changes, 1, "change", "changes", "price")...).(string); p == "" {
				t.Error("terminate has no price")
			}
			expectData(t, r, nil, append(changes, 2, "change", "changes", "price")...)
		}),
		oneTx("transfer.dispatchCoverage", txCommand, "transfer.recurring", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			changes := dataAt(t, r, txNode("tx", "command", "terms", "changes")...).([]any)
			last := txNode("tx", "command", "terms", "changes", len(changes)-1, "change", "changes")
			expectData(t, r, nil, append(last, "recurring")...)
			if dataAt(t, r, append(last, "oneOff")...) == nil {
				t.Error("last transfer is not one-off")
			}
			noDispatch := txNode("tx", "command", "terms", "changes", len(changes)-2, "change", "changes", "recurring", "dispatchStrategy")
			expectData(t, r, nil, noDispatch...)
		}),
		oneTx("coverage.accountTypes", txCommand, "coverage.accountTypes", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
		}),
	}
}

// edgeCases: scalar and enum edges, text edges, dangling references.
func edgeCases() []goldenCase {
	return []goldenCase{
		notableTxs("size.uint64max", txCommand, map[string]string{
			"batch": "size.uint64max",
			"order": "size.uint64maxOrder",
		}, func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			cmd := txNode("batch", "command")
			expectData(t, r, uint64Max, append(cmd, "submissions", 0, "size")...)
			expectData(t, r, uint64Max, append(cmd, "submissions", 0, "icebergOpts", "peakSize")...)
			expectData(t, r, uint64Max, append(cmd, "submissions", 0, "icebergOpts", "minimumVisibleSize")...)
			expectData(t, r, uint64Max, append(cmd, "amendments", 0, "size")...)
			expectData(t, r, uint64Max, txNode("order", "command", "size")...)
		}),
		oneTx("expiresAt.zero", txCommand, "expiresAt.zero", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			cmd := txNode("tx", "command")
			expectData(t, r, nil, append(cmd, "amendments", 0, "expiresAt")...)
			expectData(t, r, nil, append(cmd, "submissions", 0, "expiresAt")...)
			expectData(t, r, nil, append(cmd, "stopOrdersSubmission", 0, "risesAbove", "expiresAt")...)
			expectData(t, r, "EXPIRY_STRATEGY_CANCELS", append(cmd, "stopOrdersSubmission", 0, "risesAbove", "expiryStrategy")...)
		}),
		oneTx("text.nonASCII", txCommand, "text.nonASCII", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "réf-日本-🚀", txNode("tx", "command", "reference")...)
			expectData(t, r, "Marché perpétuel « Café » — 日本円 🚀", txNode("tx", "command", "rationale", "title")...)
			expectData(t, r, "Café ☕ / 日本円 Perpétuel 🚀", txNode("tx", "command", "terms", "changes", 0, "change", "changes", "instrument", "name")...)
		}),
		oneTx("strings.empty", txCommand, "strings.empty", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "", txNode("tx", "command", "reference")...)
			expectData(t, r, map[string]any{"description": "", "title": ""}, txNode("tx", "command", "rationale")...)
			expectData(t, r, map[string]any{"key": "", "value": ""}, txNode("tx", "command", "terms", "changes", 1, "change", "changes")...)
		}),
		oneTx("rationale.long", txCommand, "rationale.long", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			desc, _ := dataAt(t, r, txNode("tx", "command", "rationale", "description")...).(string)
			if n := utf8.RuneCountInString(desc); n != 20_000 {
				t.Errorf("description has %d characters, want 20000", n)
			}
			title, _ := dataAt(t, r, txNode("tx", "command", "rationale", "title")...).(string)
			if n := utf8.RuneCountInString(title); n != 100 {
				t.Errorf("title has %d characters, want 100", n)
			}
		}),
		oneTx("enum.unknown", txCommand, "enum.unknown", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 4)
			base := "tx.edges[0].node.command."
			cmd := txNode("tx", "command")
			for _, e := range []struct {
				path  string
				value string
				at    []any
			}{
				{"submissions[0].side", "7", []any{"submissions", 0, "side"}},
				{"submissions[0].timeInForce", "12", []any{"submissions", 0, "timeInForce"}},
				{"amendments[0].peggedReference", "5", []any{"amendments", 0, "peggedReference"}},
				{"updateMarginMode[0].mode", "3", []any{"updateMarginMode", 0, "mode"}},
			} {
				expectError(t, r, base+e.path, "UPSTREAM_ERROR", e.value)
				expectData(t, r, nil, append(cmd, e.at...)...)
			}
			// The rest is intact.
			expectData(t, r, "BatchMarketInstructions", append(cmd, "__typename")...)
			expectData(t, r, "TYPE_LIMIT", append(cmd, "submissions", 0, "type")...)
			expectData(t, r, "22", append(cmd, "submissions", 0, "size")...)
			expectData(t, r, "TIME_IN_FORCE_GTT", append(cmd, "amendments", 0, "timeInForce")...)
			expectData(t, r, "3621dfa951117037873e5424aa034c93b728cef61423a674ffc54189237554fd", append(cmd, "updateMarginMode", 0, "marketId")...)
		}),
		oneTx("enum.unknownChange", txCommand, "enum.unknownChange", func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 3)
			base := "tx.edges[0].node.command.terms.changes"
			changes := txNode("tx", "command", "terms", "changes")
			expectError(t, r, base+"[0].change.changes.updateType", "UPSTREAM_ERROR", "9")
			expectData(t, r, nil, append(changes, 0, "change", "changes", "updateType")...)
			expectError(t, r, base+"[1].change.changes.destinationType", "UPSTREAM_ERROR", "41")
			expectData(t, r, nil, append(changes, 1, "change", "changes", "destinationType")...)
			expectError(t, r, base+"[1].change.changes.recurring.dispatchStrategy.metric", "UPSTREAM_ERROR", "23")
			expectData(t, r, nil, append(changes, 1, "change", "changes", "recurring", "dispatchStrategy", "metric")...)
			// The rest is intact.
			expectData(t, r, "UpdateMarketState", append(changes, 0, "change", "__typename")...)
			expectData(t, r, "b6181d4d83ff593195c13fdf11ab7addb31c5c1b71a534e01850fb65efdfc094", append(changes, 0, "change", "changes", "marketId")...)
			expectData(t, r, "ACCOUNT_TYPE_NETWORK_TREASURY", append(changes, 1, "change", "changes", "sourceType")...)
			expectData(t, r, "DISTRIBUTION_STRATEGY_RANK", append(changes, 1, "change", "changes", "recurring", "dispatchStrategy", "distributionStrategy")...)
		}),
		oneTx("asset.dangling", txCommand, "asset.dangling", func(t *testing.T, r gqlResponse) {
			base := "tx.edges[0].node.command.terms.changes"
			changes := txNode("tx", "command", "terms", "changes")
			dangling := []struct {
				path string
				at   []any
			}{
				{"[0].change.changes.instrument.future.settlementAsset", []any{0, "change", "changes", "instrument", "future", "settlementAsset"}},
				{"[1].change.changes.instrument.spot.baseAsset", []any{1, "change", "changes", "instrument", "spot", "baseAsset"}},
				{"[2].change.changes.asset", []any{2, "change", "changes", "asset"}},
				{"[2].change.changes.recurring.dispatchStrategy.assetForMetric", []any{2, "change", "changes", "recurring", "dispatchStrategy", "assetForMetric"}},
				{"[3].change.asset", []any{3, "change", "asset"}},
			}
			// Each reference is the asset with its wire id; the fields the
			// data service cannot give are null with NOT_FOUND there.
			expectErrorCount(t, r, 2*len(dangling))
			missing := dataAt(t, r, append(changes, 3, "change", "assetId")...).(string)
			for _, d := range dangling {
				expectData(t, r, missing, append(changes, append(d.at, "id")...)...)
				for _, field := range []string{"status", "details"} {
					expectError(t, r, base+d.path+"."+field, "NOT_FOUND", missing)
					expectData(t, r, nil, append(changes, append(d.at, field)...)...)
				}
			}
			// The rest is intact: the spot market's quote asset resolves.
			if _, ok := dataAt(t, r, append(changes, 1, "change", "changes", "instrument", "spot", "quoteAsset", "details", "symbol")...).(string); !ok {
				t.Error("quote asset not resolved")
			}
			expectData(t, r, "GHOST/USDT-JUN24", append(changes, 0, "change", "changes", "instrument", "code")...)
		}),
	}
}

// assetBySymbol is the id of the dataset's asset with that symbol.
func assetBySymbol(symbol string) fromDataset {
	return func(ds *sampleservice.Dataset) any {
		for _, a := range ds.Assets {
			if a.Details.Symbol == symbol {
				return a.ID
			}
		}
		panic("no asset with symbol " + strconv.Quote(symbol))
	}
}

// partyWithFunding is the first dataset party with funding payments.
func partyWithFunding(ds *sampleservice.Dataset) any {
	for _, p := range ds.Parties {
		for _, f := range ds.FundingPayments {
			if f.PartyID == p {
				return p
			}
		}
	}
	panic("no party with funding payments")
}

// partyWithFundingAndDelegations is the first dataset party with funding
// payments and delegations.
func partyWithFundingAndDelegations(ds *sampleservice.Dataset) any {
	for _, p := range ds.Parties {
		if slices.ContainsFunc(ds.FundingPayments, func(f sampleservice.FundingPayment) bool { return f.PartyID == p }) &&
			slices.ContainsFunc(ds.Delegations, func(d sampleservice.Delegation) bool { return d.Party == p }) {
			return p
		}
	}
	panic("no party with funding payments and delegations")
}

// dataset is the shared sample service's dataset.
func dataset(t *testing.T) *sampleservice.Dataset {
	t.Helper()
	s, err := sharedSample()
	if err != nil {
		t.Fatal(err)
	}
	return s.Service.Dataset()
}
