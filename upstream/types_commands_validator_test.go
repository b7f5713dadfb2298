package upstream

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeCommand decodes one command object as the client does, inside a
// page of transactions.
func decodeCommand(t *testing.T, command string) (CommandKind, error) {
	t.Helper()
	var body struct {
		Transactions []Transaction `json:"transactions"`
	}
	if err := unmarshal([]byte(`{"transactions":[{"command":`+command+`}]}`), &body); err != nil {
		return nil, err
	}
	return body.Transactions[0].Command.Kind, nil
}

// validatorCommandCases are wire commands of the validator and oracle
// kinds, optional keys present and absent, each with its decoded member.
var validatorCommandCases = []struct {
	name    string
	command string
	want    CommandKind
}{
	{"nodeVote", `{"nonce":"1","blockHeight":"2","nodeVote":{"reference":"ab12","type":"TYPE_BRIDGE_STOPPED"}}`,
		&NodeVote{Reference: "ab12", Type: NodeVoteTypeBridgeStopped}},
	{"nodeVote unknown enum number", `{"nodeVote":{"reference":"","type":14}}`,
		&NodeVote{Type: "14"}},
	{"nodeSignature", `{"nodeSignature":{"id":"w1","sig":"AAEC/w==","kind":"NODE_SIGNATURE_KIND_ASSET_WITHDRAWAL"}}`,
		&NodeSignature{ID: "w1", Sig: ptr("AAEC/w=="), Kind: NodeSignatureKindAssetWithdrawal}},
	{"nodeSignature empty sig", `{"nodeSignature":{"id":"w1","sig":null,"kind":"NODE_SIGNATURE_KIND_UNSPECIFIED"}}`,
		&NodeSignature{ID: "w1", Kind: NodeSignatureKindUnspecified}},
	{"keyRotateSubmission u32 max", `{"keyRotateSubmission":{"newPubKeyIndex":4294967295,"targetBlock":"18446744073709551615","newPubKey":"k","currentPubKeyHash":"h"}}`,
		&KeyRotateSubmission{NewPubKeyIndex: 4294967295, TargetBlock: 18446744073709551615, NewPubKey: "k", CurrentPubKeyHash: "h"}},
	{"stateVariableProposal null proposal", `{"stateVariableProposal":{"proposal":null}}`,
		&StateVariableProposal{}},
	{"stateVariableProposal every value kind", `{"stateVariableProposal":{"proposal":{"stateVarId":"m_pot","eventId":"time_1","kvb":[
		{"key":"s","tolerance":"0.1","value":{"scalarVal":{"value":"0.5"}}},
		{"key":"v","tolerance":"0","value":{"vectorVal":{"value":["1","2"]}}},
		{"key":"m","tolerance":"0","value":{"matrixVal":{"value":[{"value":["1","2"]},{"value":[]}]}}},
		{"key":"none","tolerance":"0","value":null},
		{"key":"empty","tolerance":"0","value":{}}]}}}`,
		&StateVariableProposal{Proposal: &StateValueProposal{StateVarID: "m_pot", EventID: "time_1", Kvb: []KeyValueBundle{
			{Key: "s", Tolerance: "0.1", Value: &StateVarValue{ScalarVal: &ScalarValue{Value: "0.5"}}},
			{Key: "v", Tolerance: "0", Value: &StateVarValue{VectorVal: &VectorValue{Value: []string{"1", "2"}}}},
			{Key: "m", Tolerance: "0", Value: &StateVarValue{MatrixVal: &MatrixValue{Value: []VectorValue{{Value: []string{"1", "2"}}, {Value: []string{}}}}}},
			{Key: "none", Tolerance: "0"},
			{Key: "empty", Tolerance: "0", Value: &StateVarValue{}},
		}}}},
	{"validatorHeartbeat", `{"validatorHeartbeat":{"nodeId":"n1","ethereumSignature":{"value":"ee","algo":"eth","version":1},"vegaSignature":null,"message":"m"}}`,
		&ValidatorHeartbeat{NodeID: "n1", EthereumSignature: &Signature{Value: "ee", Algo: "eth", Version: 1}, Message: "m"}},
	{"ethereumKeyRotateSubmission", `{"ethereumKeyRotateSubmission":{"targetBlock":"9","newAddress":"0xa","currentAddress":"0xb","submitterAddress":"","ethereumSignature":null}}`,
		&EthereumKeyRotateSubmission{TargetBlock: 9, NewAddress: "0xa", CurrentAddress: "0xb"}},
	{"protocolUpgradeProposal", `{"protocolUpgradeProposal":{"upgradeBlockHeight":"100000","vegaReleaseTag":"v0.74.1"}}`,
		&ProtocolUpgradeProposal{UpgradeBlockHeight: 100000, VegaReleaseTag: "v0.74.1"}},
	{"issueSignatures", `{"issueSignatures":{"submitter":"0xs","kind":"NODE_SIGNATURE_KIND_ERC20_MULTISIG_SIGNER_REMOVED","validatorNodeId":"n2"}}`,
		&IssueSignatures{Submitter: "0xs", Kind: NodeSignatureKindErc20MultisigSignerRemoved, ValidatorNodeID: "n2"}},
	{"oracleDataSubmission", `{"oracleDataSubmission":{"source":"ORACLE_SOURCE_JSON","payload":"eyJhIjogIjEifQ=="}}`,
		&OracleDataSubmission{Source: OracleSourceJson, Payload: ptr("eyJhIjogIjEifQ==")}},
	{"oracleDataSubmission empty payload", `{"oracleDataSubmission":{"source":"ORACLE_SOURCE_UNSPECIFIED","payload":null}}`,
		&OracleDataSubmission{Source: OracleSourceUnspecified}},

	{"chainEvent builtin deposit", `{"chainEvent":{"txId":"0x1","nonce":"18446744073709551615","builtin":{"deposit":{"vegaAssetId":"a","partyId":"p","amount":"5"}}}}`,
		&ChainEvent{TxID: "0x1", Nonce: 18446744073709551615, Builtin: &BuiltinAssetEvent{Deposit: &BuiltinAssetDeposit{VegaAssetID: "a", PartyID: "p", Amount: "5"}}}},
	{"chainEvent builtin withdrawal", `{"chainEvent":{"txId":"0x1","nonce":"0","builtin":{"withdrawal":{"vegaAssetId":"a","partyId":"p","amount":"5"}}}}`,
		&ChainEvent{TxID: "0x1", Builtin: &BuiltinAssetEvent{Withdrawal: &BuiltinAssetWithdrawal{VegaAssetID: "a", PartyID: "p", Amount: "5"}}}},
	{"chainEvent empty builtin", `{"chainEvent":{"txId":"0x1","nonce":"3","builtin":{}}}`,
		&ChainEvent{TxID: "0x1", Nonce: 3, Builtin: &BuiltinAssetEvent{}}},
	{"chainEvent no event", `{"chainEvent":{"txId":"","nonce":"3"}}`,
		&ChainEvent{Nonce: 3}},
	{"chainEvent erc20 assetList", `{"chainEvent":{"txId":"t","nonce":"1","erc20":{"index":"4","block":"19430000","assetList":{"vegaAssetId":"a","assetSource":"0xc"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20: &ERC20Event{Index: 4, Block: 19430000, AssetList: &ERC20AssetList{VegaAssetID: "a", AssetSource: "0xc"}}}},
	{"chainEvent erc20 assetDelist", `{"chainEvent":{"txId":"t","nonce":"1","erc20":{"index":"0","block":"1","assetDelist":{"vegaAssetId":"a"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20: &ERC20Event{Block: 1, AssetDelist: &ERC20AssetDelist{VegaAssetID: "a"}}}},
	{"chainEvent erc20 deposit", `{"chainEvent":{"txId":"t","nonce":"1","erc20":{"index":"0","block":"1","deposit":{"vegaAssetId":"a","sourceEthereumAddress":"0xs","targetPartyId":"p","amount":"7"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20: &ERC20Event{Block: 1, Deposit: &ERC20Deposit{VegaAssetID: "a", SourceEthereumAddress: "0xs", TargetPartyID: "p", Amount: "7"}}}},
	{"chainEvent erc20 withdrawal", `{"chainEvent":{"txId":"t","nonce":"1","erc20":{"index":"0","block":"1","withdrawal":{"vegaAssetId":"a","targetEthereumAddress":"0xt","referenceNonce":"99"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20: &ERC20Event{Block: 1, Withdrawal: &ERC20Withdrawal{VegaAssetID: "a", TargetEthereumAddress: "0xt", ReferenceNonce: "99"}}}},
	{"chainEvent erc20 assetLimitsUpdated", `{"chainEvent":{"txId":"t","nonce":"1","erc20":{"index":"0","block":"1","assetLimitsUpdated":{"vegaAssetId":"a","sourceEthereumAddress":"0xs","lifetimeLimits":"10","withdrawThreshold":"2"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20: &ERC20Event{Block: 1, AssetLimitsUpdated: &ERC20AssetLimitsUpdated{VegaAssetID: "a", SourceEthereumAddress: "0xs", LifetimeLimits: "10", WithdrawThreshold: "2"}}}},
	{"chainEvent erc20 bridgeStopped", `{"chainEvent":{"txId":"t","nonce":"1","erc20":{"index":"0","block":"1","bridgeStopped":true}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20: &ERC20Event{Block: 1, BridgeStopped: ptr(true)}}},
	{"chainEvent erc20 bridgeResumed false", `{"chainEvent":{"txId":"t","nonce":"1","erc20":{"index":"0","block":"1","bridgeResumed":false}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20: &ERC20Event{Block: 1, BridgeResumed: ptr(false)}}},
	{"chainEvent stakeDeposited", `{"chainEvent":{"txId":"t","nonce":"1","stakingEvent":{"index":"2","block":"3","stakeDeposited":{"ethereumAddress":"0xe","vegaPublicKey":"k","amount":"1","blockTime":"1700000000"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, StakingEvent: &StakingEvent{Index: 2, Block: 3, StakeDeposited: &StakeDeposited{EthereumAddress: "0xe", VegaPublicKey: "k", Amount: "1", BlockTime: 1700000000}}}},
	{"chainEvent stakeRemoved", `{"chainEvent":{"txId":"t","nonce":"1","stakingEvent":{"index":"2","block":"3","stakeRemoved":{"ethereumAddress":"0xe","vegaPublicKey":"k","amount":"1","blockTime":"0"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, StakingEvent: &StakingEvent{Index: 2, Block: 3, StakeRemoved: &StakeRemoved{EthereumAddress: "0xe", VegaPublicKey: "k", Amount: "1"}}}},
	{"chainEvent totalSupply", `{"chainEvent":{"txId":"t","nonce":"1","stakingEvent":{"index":"2","block":"3","totalSupply":{"tokenAddress":"0xt","totalSupply":"64999723000000000000000000"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, StakingEvent: &StakingEvent{Index: 2, Block: 3, TotalSupply: &StakeTotalSupply{TokenAddress: "0xt", TotalSupply: "64999723000000000000000000"}}}},
	{"chainEvent signerAdded", `{"chainEvent":{"txId":"t","nonce":"1","erc20Multisig":{"index":"0","block":"5","signerAdded":{"newSigner":"0xn","nonce":"4242424242424242424242","blockTime":"1700000000"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20Multisig: &ERC20MultiSigEvent{Block: 5, SignerAdded: &ERC20SignerAdded{NewSigner: "0xn", Nonce: "4242424242424242424242", BlockTime: 1700000000}}}},
	{"chainEvent signerRemoved", `{"chainEvent":{"txId":"t","nonce":"1","erc20Multisig":{"index":"0","block":"5","signerRemoved":{"oldSigner":"0xo","nonce":"1","blockTime":"1700000000"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20Multisig: &ERC20MultiSigEvent{Block: 5, SignerRemoved: &ERC20SignerRemoved{OldSigner: "0xo", Nonce: "1", BlockTime: 1700000000}}}},
	{"chainEvent thresholdSet", `{"chainEvent":{"txId":"t","nonce":"1","erc20Multisig":{"index":"0","block":"5","thresholdSet":{"newThreshold":667,"nonce":"2","blockTime":"1700000000"}}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ERC20Multisig: &ERC20MultiSigEvent{Block: 5, ThresholdSet: &ERC20ThresholdSet{NewThreshold: 667, Nonce: "2", BlockTime: 1700000000}}}},
	{"chainEvent contractCall minimal", `{"chainEvent":{"txId":"t","nonce":"1","contractCall":{"specId":"s","blockHeight":"19430001","blockTime":"1700000000","result":null}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ContractCall: &EthContractCallEvent{SpecID: "s", BlockHeight: 19430001, BlockTime: 1700000000}}},
	{"chainEvent contractCall every key", `{"chainEvent":{"txId":"t","nonce":"1","contractCall":{"specId":"s","blockHeight":"1","blockTime":"2","result":"AAAA","error":"reverted","sourceChainId":"100"}}}`,
		&ChainEvent{TxID: "t", Nonce: 1, ContractCall: &EthContractCallEvent{SpecID: "s", BlockHeight: 1, BlockTime: 2, Result: ptr("AAAA"), Error: ptr("reverted"), SourceChainID: ptr(Uint64(100))}}},
}

func TestDecodeValidatorCommands(t *testing.T) {
	for _, tt := range validatorCommandCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeCommand(t, tt.command)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded member (-want +got)\n%s", diff)
			}
		})
	}
}

// Encoding a decoded command and decoding it again gives the same member:
// MarshalJSON writes each member under its wire name.
func TestValidatorCommandsRoundTrip(t *testing.T) {
	for _, tt := range validatorCommandCases {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(Command{Nonce: 1, Kind: tt.want})
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeCommand(t, string(b))
			if err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: decoded again (-want +got)\n%s", b, diff)
			}
		})
	}
}

// A wrong value anywhere in these commands fails the decoding with an
// error that names the value and where it was, never a panic.
func TestDecodeValidatorCommandsGarbage(t *testing.T) {
	for _, tt := range []struct {
		name, command, want string
	}{
		{"enum of the wrong type", `{"nodeVote":{"reference":"r","type":true}}`, "cannot unmarshal bool"},
		{"sig not a string", `{"nodeSignature":{"id":"i","sig":12,"kind":"NODE_SIGNATURE_KIND_ASSET_NEW"}}`, "nodeSignature.sig"},
		{"negative u32", `{"keyRotateSubmission":{"newPubKeyIndex":-1}}`, `cannot unmarshal number -1`},
		{"kvb not a list", `{"stateVariableProposal":{"proposal":{"kvb":{}}}}`, "stateVariableProposal.proposal.kvb"},
		{"matrix of strings", `{"stateVariableProposal":{"proposal":{"kvb":[{"value":{"matrixVal":{"value":["1"]}}}]}}}`, "cannot unmarshal string"},
		{"nonce not an integer", `{"chainEvent":{"txId":"t","nonce":"abc"}}`, `cannot unmarshal string "abc"`},
		{"bool member not a bool", `{"chainEvent":{"erc20":{"bridgeStopped":"yes"}}}`, "chainEvent.erc20.bridgeStopped"},
		{"event not an object", `{"chainEvent":{"stakingEvent":[1]}}`, "chainEvent.stakingEvent"},
		{"block time not an integer", `{"chainEvent":{"stakingEvent":{"stakeDeposited":{"blockTime":"1.5"}}}}`, `cannot unmarshal string "1.5" (not an integer)`},
		{"threshold not a number", `{"chainEvent":{"erc20Multisig":{"thresholdSet":{"newThreshold":{}}}}}`, "cannot unmarshal object"},
		{"multisig nonce a number", `{"chainEvent":{"erc20Multisig":{"signerAdded":{"nonce":5}}}}`, "chainEvent.erc20Multisig.signerAdded.nonce"},
		{"chain id negative", `{"chainEvent":{"contractCall":{"sourceChainId":"-1"}}}`, `cannot unmarshal string "-1"`},
		{"payload an object", `{"oracleDataSubmission":{"payload":{}}}`, "oracleDataSubmission.payload"},
		{"member an array", `{"validatorHeartbeat":[]}`, "cannot unmarshal array"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeCommand(t, tt.command)
			if err == nil {
				t.Fatalf("decoded %#v, want an error", got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestOraclePayloadJSON(t *testing.T) {
	for _, tt := range []struct {
		name    string
		payload *string
		want    string // "" for none
	}{
		{"JSON object", ptr("eyJhIjogIjEifQ=="), `{"a":"1"}`}, // {"a": "1"}
		{"empty", nil, ""},
		{"not base64", ptr("%%%"), ""},
		{"not JSON", ptr("AAEC"), ""},
		{"two JSON values", ptr("MSAy"), ""}, // "1 2"
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := (&OracleDataSubmission{Payload: tt.payload}).PayloadJSON()
			if string(got) != tt.want {
				t.Errorf("PayloadJSON() = %q, want %q", got, tt.want)
			}
		})
	}
}
