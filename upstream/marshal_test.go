package upstream

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sameJSON reports whether a and b hold the same JSON value: the same keys
// and values, numbers compared by their text.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// TestWireEncoding pins the wire form of the types on hand-made values:
// what each encodes to is what the upstream sends (64-bit integers as
// strings, 32-bit ones as numbers, enums by name or beyond the schema as
// bare numbers, unset messages null, unset optional fields and one-of
// members absent, empty bytes null), as a JSON value (key order aside;
// where the order matters, TestWireEncodingOrder checks it).
func TestWireEncoding(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"enum by name", SideBuy, `"SIDE_BUY"`},
		{"enum beyond the schema: a bare number", Side("7"), `7`},
		{"zero enum emitted", UpdateMarginMode{MarketID: "m", Mode: MarginModeUnspecified}, `{"marketId":"m","mode":"MODE_UNSPECIFIED"}`},
		{"amendment: optional scalars absent, sizeDelta a string",
			OrderAmendment{OrderID: "o", MarketID: "m", SizeDelta: -5, TimeInForce: TimeInForceUnspecified, PeggedReference: PeggedReferenceUnspecified},
			`{"orderId":"o","marketId":"m","sizeDelta":"-5","timeInForce":"TIME_IN_FORCE_UNSPECIFIED","peggedOffset":"","peggedReference":"PEGGED_REFERENCE_UNSPECIFIED"}`},
		{"amendment: set optional scalars, uint64 maximum, zero expiry",
			OrderAmendment{Price: ptr("10"), Size: ptr(Uint64(math.MaxUint64)), ExpiresAt: ptr(UnixNanos(0)), TimeInForce: TimeInForceGTC, PeggedReference: PeggedReferenceMid},
			`{"orderId":"","marketId":"","price":"10","size":"18446744073709551615","sizeDelta":"0","expiresAt":"0","timeInForce":"TIME_IN_FORCE_GTC","peggedOffset":"","peggedReference":"PEGGED_REFERENCE_MID"}`},
		{"submission: unset pegged order null, unset iceberg absent, zero values emitted",
			OrderSubmission{MarketID: "m", Size: 1, Side: SideSell, TimeInForce: TimeInForceGTC, Type: OrderTypeLimit},
			`{"marketId":"m","price":"","size":"1","side":"SIDE_SELL","timeInForce":"TIME_IN_FORCE_GTC","expiresAt":"0","type":"TYPE_LIMIT","reference":"","peggedOrder":null,"postOnly":false,"reduceOnly":false}`},
		{"empty lists are []", BatchMarketInstructions{Cancellations: []OrderCancellation{}, Amendments: []OrderAmendment{}, Submissions: []OrderSubmission{},
			StopOrdersCancellation: []StopOrderCancellation{}, StopOrdersSubmission: []StopOrdersSubmission{}, UpdateMarginMode: []UpdateMarginMode{}},
			`{"cancellations":[],"amendments":[],"submissions":[],"stopOrdersCancellation":[],"stopOrdersSubmission":[],"updateMarginMode":[]}`},
		{"stop order: an unset side is absent", StopOrdersSubmission{FallsBelow: &StopOrderSetup{OrderSubmission: &OrderSubmission{}, Price: ptr("5")}},
			`{"fallsBelow":{"orderSubmission":{"marketId":"","price":"","size":"0","side":"","timeInForce":"","expiresAt":"0","type":"","reference":"","peggedOrder":null,"postOnly":false,"reduceOnly":false},"price":"5"}}`},
		{"stop cancellation: optional ids absent", StopOrderCancellation{}, `{}`},
		{"one-of change: an empty member is {}", ProposalChange{EnactmentTimestamp: 1710000000, Change: &NewFreeform{}},
			`{"enactmentTimestamp":"1710000000","newFreeform":{}}`},
		{"command: the member beside nonce and block height", Command{Nonce: 5, BlockHeight: 34514201, Kind: &ApplyReferralCode{ID: "abc"}},
			`{"nonce":"5","blockHeight":"34514201","applyReferralCode":{"id":"abc"}}`},
		{"command without a member (a kind newer than the explorer)", Command{Nonce: 5, BlockHeight: 7}, `{"nonce":"5","blockHeight":"7"}`},
		{"proposal terms without a change", ProposalTerms{ClosingTimestamp: 1, EnactmentTimestamp: 2},
			`{"closingTimestamp":"1","enactmentTimestamp":"2","validationTimestamp":"0"}`},
		{"governance recurring transfer: unset dispatch strategy and end absent", RecurringTransfer{StartEpoch: 7}, `{"startEpoch":"7"}`},
		{"command recurring transfer: unset dispatch strategy null", RecurringTransferFunds{StartEpoch: 7, Factor: "1"},
			`{"startEpoch":"7","factor":"1","dispatchStrategy":null}`},
		{"bytes: base64", NodeSignature{ID: "i", Sig: ptr("+/8="), Kind: NodeSignatureKindAssetNew},
			`{"id":"i","sig":"+/8=","kind":"NODE_SIGNATURE_KIND_ASSET_NEW"}`},
		{"bytes: empty is null", OracleDataSubmission{Source: OracleSourceJson}, `{"source":"ORACLE_SOURCE_JSON","payload":null}`},
		{"doubles: non-finite values are strings, others numbers as the upstream formats them",
			SimpleRiskModel{FactorLong: Float64(math.NaN()), FactorShort: 1e-7, MaxMoveUp: Float64(math.Inf(1)), MinMoveDown: Float64(math.Inf(-1)), ProbabilityOfTrading: 1e6},
			`{"factorLong":"NaN","factorShort":1e-7,"maxMoveUp":"Infinity","minMoveDown":"-Infinity","probabilityOfTrading":1000000}`},
		{"chain event: a bool one-of member is written", ChainEvent{TxID: "0x1", Nonce: 2, ERC20: &ERC20Event{Index: 3, Block: 4, BridgeStopped: ptr(true)}},
			`{"txId":"0x1","nonce":"2","erc20":{"index":"3","block":"4","bridgeStopped":true}}`},
		{"chain event: an empty built-in event is {}", ChainEvent{TxID: "0x1", Builtin: &BuiltinAssetEvent{}}, `{"txId":"0x1","nonce":"0","builtin":{}}`},
		{"contract call: optional error and chain id absent, empty result null", EthContractCallEvent{SpecID: "s", BlockHeight: 1, BlockTime: 2},
			`{"specId":"s","blockHeight":"1","blockTime":"2","result":null}`},
		{"multisig threshold: a u32 number, the nonce a string", ERC20ThresholdSet{NewThreshold: 667, Nonce: "123456789012345678901234567890", BlockTime: 5},
			`{"newThreshold":667,"nonce":"123456789012345678901234567890","blockTime":"5"}`},
		{"state variable: a matrix of vectors", StateVarValue{MatrixVal: &MatrixValue{Value: []VectorValue{{Value: []string{"1", "2"}}}}},
			`{"matrixVal":{"value":[{"value":["1","2"]}]}}`},
		{"referral set update: unset team fields absent", UpdateReferralSetTeam{Closed: ptr(false), AllowList: []string{}}, `{"closed":false,"allowList":[]}`},
		{"withdrawal: an empty ext is {}", WithdrawSubmission{Amount: "1", Asset: "a", Ext: &WithdrawExt{}}, `{"amount":"1","asset":"a","ext":{}}`},
		{"perpetual: optional funding bounds and composite price absent", UpdatePerpetualProduct{},
			`{"quoteName":"","marginFundingFactor":"","interestRate":"","clampLowerBound":"","clampUpperBound":"","dataSourceSpecForSettlementSchedule":null,"dataSourceSpecForSettlementData":null,"dataSourceSpecBinding":null}`},
		{"rank table: 32-bit numbers", RankTable{StartRank: 1, ShareRatio: 4294967295}, `{"startRank":1,"shareRatio":4294967295}`},
		{"eth time trigger: optional initial and until", EthTimeTrigger{Every: ptr(Uint64(30))}, `{"every":"30"}`},
		{"internal time trigger: optional initial", InternalTimeTrigger{Initial: ptr(UnixSeconds(1710000000)), Every: 3600}, `{"initial":"1710000000","every":"3600"}`},
		{"property key: optional decimals", PropertyKey{Name: "p", Type: PropertyKeyTypeInteger, NumberDecimalPlaces: ptr(Uint64(0))}, `{"name":"p","type":"TYPE_INTEGER","numberDecimalPlaces":"0"}`},
		{"data source one-of", DataSourceDefinition{Internal: &DataSourceDefinitionInternal{Time: &DataSourceSpecConfigurationTime{Conditions: []Condition{}}}}, `{"internal":{"time":{"conditions":[]}}}`},
		{"signer one-of", Signer{ETHAddress: &ETHAddress{Address: "0xab"}}, `{"ethAddress":{"address":"0xab"}}`},
		{"market state: optional price absent", UpdateMarketStateConfiguration{MarketID: "m", UpdateType: MarketStateUpdateTypeSuspend}, `{"marketId":"m","updateType":"MARKET_STATE_UPDATE_TYPE_SUSPEND"}`},
		{"margin mode: optional factor", UpdateMarginMode{MarketID: "m", Mode: MarginModeIsolatedMargin, MarginFactor: ptr("0.5")}, `{"marketId":"m","mode":"MODE_ISOLATED_MARGIN","marginFactor":"0.5"}`},
		{"doubles are numbers", TargetStakeParameters{TimeWindow: 3600, ScalingFactor: 0.05}, `{"timeWindow":"3600","scalingFactor":0.05}`},
		{"asset details: the source one-of", AssetDetails{Name: "n", Decimals: 18, BuiltinAsset: &BuiltinAsset{MaxFaucetAmountMint: "1"}},
			`{"name":"n","symbol":"","decimals":"18","quantum":"","builtinAsset":{"maxFaucetAmountMint":"1"}}`},
		{"announce node: the wire's names, the key index a number", AnnounceNode{NetPubKey: "k", NetPubKeyIndex: 2, FromEpoch: 9, EthereumSignature: &Signature{}},
			`{"vegaPubKey":"k","ethereumAddress":"","chainPubKey":"","infoUrl":"","country":"","id":"","name":"","avatarUrl":"","vegaPubKeyIndex":2,"fromEpoch":"9","ethereumSignature":{"value":"","algo":"","version":0},"vegaSignature":null,"submitterAddress":""}`},
		{"key rotation: the key index a number", KeyRotateSubmission{NewPubKeyIndex: 3, TargetBlock: 10}, `{"newPubKeyIndex":3,"targetBlock":"10","newPubKey":"","currentPubKeyHash":""}`},
		{"transaction: the cursor, the code and the signature's version numbers, no error when it succeeded",
			Transaction{Block: 34514203, Index: 2, Hash: "7F", Submitter: "3b", Type: "Join Team", Command: Command{Nonce: 1, BlockHeight: 34514201, Kind: &JoinTeam{ID: "t"}},
				Signature: &Signature{Value: "9a", Algo: "vega/ed25519", Version: 1}, CreatedAt: Time{time.Date(2024, 3, 14, 12, 0, 2, 0, time.UTC)}, Version: TransactionVersionV3},
			`{"block":"34514203","index":2,"hash":"7F","submitter":"3b","type":"Join Team","code":0,"cursor":"34514203.2",
			  "command":{"nonce":"1","blockHeight":"34514201","joinTeam":{"id":"t"}},"signature":{"value":"9a","algo":"vega/ed25519","version":1},
			  "createdAt":"2024-03-14T12:00:02Z","version":"TX_VERSION_V3","pow":null}`},
		{"failed transaction: its error", Transaction{Code: 70, Error: ptr("tx already processed"), Pow: &ProofOfWork{Tid: "6A", Nonce: 12946}},
			`{"block":"0","index":0,"hash":"","submitter":"","type":"","code":70,"cursor":"0.0","command":null,"signature":null,"error":"tx already processed",
			  "createdAt":"","version":"","pow":{"tid":"6A","nonce":"12946"}}`},
	} {
		got, err := json.Marshal(c.v)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !sameJSON(t, got, []byte(c.want)) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestWireEncodingOrder: the one-of members a type decodes into an
// interface come last, after the object's other fields, as the upstream
// writes them and as the decoder's fast path reads them; strings are not
// escaped for HTML, as the upstream's encoder does not escape them.
func TestWireEncodingOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"command", Command{Nonce: 5, BlockHeight: 7, Kind: &AnnounceNode{}},
			`{"nonce":"5","blockHeight":"7","announceNode":{"vegaPubKey":"","ethereumAddress":"","chainPubKey":"","infoUrl":"","country":"","id":"","name":"","avatarUrl":"","vegaPubKeyIndex":0,"fromEpoch":"0","ethereumSignature":null,"vegaSignature":null,"submitterAddress":""}}`},
		{"unknown command member", Command{Nonce: 5, BlockHeight: 7, Kind: &UnknownCommand{Name: "submitAmm", Raw: RawJSON(`{"a":1}`)}},
			`{"nonce":"5","blockHeight":"7","submitAmm":{"a":1}}`},
		{"proposal terms", ProposalTerms{ClosingTimestamp: 1, EnactmentTimestamp: 2, Change: &CancelTransfer{Changes: &CancelTransferConfiguration{TransferID: "t"}}},
			`{"closingTimestamp":"1","enactmentTimestamp":"2","validationTimestamp":"0","cancelTransfer":{"changes":{"transferId":"t"}}}`},
		{"batch change", ProposalChange{EnactmentTimestamp: 2, Change: &UpdateNetworkParameter{Changes: &NetworkParameter{Key: "a<b", Value: "x & y"}}},
			`{"enactmentTimestamp":"2","updateNetworkParameter":{"changes":{"key":"a<b","value":"x & y"}}}`},
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c.v); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.TrimSuffix(buf.String(), "\n"); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestWireEncodingRoundTrips: what a value encodes to decodes to the same
// value, so that a body the sample service writes from these types is
// read back as the types it was written from.
func TestWireEncodingRoundTrips(t *testing.T) {
	tx := Transaction{
		Block: 34514203, Index: 2, Hash: "7F", Submitter: "3b", Type: "Register New Node", Code: 70, Error: ptr("internal error"),
		Command: Command{Nonce: math.MaxUint64, BlockHeight: 34514201, Kind: &AnnounceNode{
			NetPubKey: "k", NetPubKeyIndex: 4294967295, FromEpoch: 9, EthereumSignature: &Signature{Value: "e", Algo: "eth", Version: 1}, NetSignature: &Signature{Value: "v", Version: 1},
		}},
		Signature: &Signature{Value: "9a", Algo: "vega/ed25519", Version: 1},
		CreatedAt: Time{time.Date(2024, 3, 14, 12, 0, 2, 0, time.UTC)}, Version: TransactionVersionV2,
	}
	proposal := Transaction{Command: Command{Nonce: 1, Kind: &BatchProposalSubmission{
		Terms: &BatchProposalTerms{ClosingTimestamp: 5, Changes: []ProposalChange{
			{EnactmentTimestamp: 6, Change: &NewTransfer{Changes: &GovernanceTransfer{DestinationType: AccountType("41"), Recurring: &RecurringTransfer{
				StartEpoch: 3, DispatchStrategy: &DispatchStrategy{Metric: DispatchMetric("23"), RankTable: []RankTable{{StartRank: 2147483648, ShareRatio: 1}}}}}}},
			{EnactmentTimestamp: 0, Change: &NewFreeform{}},
		}},
	}}}
	for _, want := range []Transaction{tx, proposal} {
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var got Transaction
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		again, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Errorf("round trip:\n got %s\nwant %s", again, b)
		}
	}
}
