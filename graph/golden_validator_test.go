package graph_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tradenet/gateway/sampleservice"
)

// validatorCommands are the validator and oracle command members, by wire
// name, with their GraphQL types.
var validatorCommands = map[string]string{
	"chainEvent":                  "ChainEvent",
	"ethereumKeyRotateSubmission": "EthereumKeyRotateSubmission",
	"issueSignatures":             "IssueSignatures",
	"keyRotateSubmission":         "KeyRotateSubmission",
	"nodeSignature":               "NodeSignature",
	"nodeVote":                    "NodeVote",
	"oracleDataSubmission":        "OracleDataSubmission",
	"protocolUpgradeProposal":     "ProtocolUpgradeProposal",
	"stateVariableProposal":       "StateVariableProposal",
	"validatorHeartbeat":          "ValidatorHeartbeat",
}

// TestGoldenValidatorCommands: every validator and oracle command kind
// (the dataset's command.<member>), and every chain event the dataset
// names (chainEvent.<member>…), with every field selected. Golden files:
// testdata/golden/validator/.
func TestGoldenValidatorCommands(t *testing.T) {
	runGolden(t, validatorCases(dataset(t)))
}

func validatorCases(ds *sampleservice.Dataset) []goldenCase {
	var cases []goldenCase
	for _, member := range slices.Sorted(maps.Keys(validatorCommands)) {
		name := "command." + member
		cases = append(cases, oneTx("validator/"+name, txCommand, name, func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, validatorCommands[member], txNode("tx", "command", "__typename")...)
		}))
	}
	// The chain events the dataset names, whatever their number: a name's
	// segments after "chainEvent." are the event's member and, if it names
	// one, the member's action (chainEvent.erc20.deposit), each non-null.
	var events []string
	for name := range ds.Notable {
		if strings.HasPrefix(name, "chainEvent.") {
			events = append(events, name)
		}
	}
	slices.Sort(events)
	for _, name := range events {
		cases = append(cases, oneTx("validator/"+name, txCommand, name, func(t *testing.T, r gqlResponse) {
			expectErrorCount(t, r, 0)
			expectData(t, r, "ChainEvent", txNode("tx", "command", "__typename")...)
			event, _ := dataAt(t, r, txNode("tx", "command")...).(map[string]any)
			segments := strings.Split(strings.TrimPrefix(name, "chainEvent."), ".")
			member, ok := event[segments[0]].(map[string]any)
			if !ok {
				t.Fatalf("%s: command.%s is %v, want the event", name, segments[0], event[segments[0]])
			}
			if len(segments) > 1 {
				if v, named := member[segments[1]]; named && v == nil {
					t.Errorf("%s: command.%s.%s is null", name, segments[0], segments[1])
				}
			}
		}))
	}
	return cases
}

// A page of chain events resolves its asset references in one round: the
// data node sees at most one request per distinct asset, however many rows
// name it.
func TestChainEventAssetsBatched(t *testing.T) {
	sample := startSample(t, sampleservice.Config{})
	g := newGateway(t, sample, gatewayOptions{})
	query := withFragments(t, `{
  transactions(first: 100, cmdTypes: ["Chain Event"]) {
    edges { node { command { ... on ChainEvent { ...ChainEventFields } } } }
  }
}`, loadFragments(t))
	sample.Service.ResetCounters()
	var page struct {
		Transactions struct {
			Edges []struct {
				Node struct {
					Command map[string]any
				}
			}
		}
	}
	g.query(t, query, nil).mustData(t, &page)
	ids := map[string]bool{}
	refs := 0
	for _, e := range page.Transactions.Edges {
		for _, event := range e.Node.Command {
			event, ok := event.(map[string]any)
			if !ok {
				continue
			}
			for _, action := range event {
				action, ok := action.(map[string]any)
				if !ok {
					continue
				}
				if id, ok := action["vegaAssetId"].(string); ok {
					refs++
					ids[id] = true
					asset, _ := action["asset"].(map[string]any)
					if asset == nil || asset["id"] != id {
						t.Errorf("asset %q resolved as %v", id, action["asset"])
					}
				}
			}
		}
	}
	if refs < 2 || len(ids) >= refs {
		t.Fatalf("%d asset references to %d assets in %d chain events: the page proves no batching", refs, len(ids), len(page.Transactions.Edges))
	}
	if n := sample.Service.Requests(sampleservice.EndpointAssets); n == 0 || n > int64(len(ids)) {
		t.Errorf("%d asset references to %d assets made %d asset requests", refs, len(ids), n)
	}
}
