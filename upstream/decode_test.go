package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// readFixture decodes testdata/name into out.
func readFixture(t *testing.T, name string, out any) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return b
}

// An explorer transaction in the service's own layout (ids shortened with
// "…"): 64-bit integers as strings, zero values written, an unset nested
// object null, the command's member after its plain fields (docs/wire.md,
// JSON encoding).
const specTransaction = `{"block":"34514203","index":2,"hash":"7F72…6409","submitter":"3b6c…a2b3",
 "type":"Batch Market Instructions","code":0,"cursor":"34514203.2",
 "command":{"nonce":"5234298756345283401","blockHeight":"34514201",
   "batchMarketInstructions":{"cancellations":[{"orderId":"","marketId":"e63a…4d13"}],
     "amendments":[{"orderId":"a9f1…","marketId":"e63a…","price":"2651000","sizeDelta":"-5",
       "timeInForce":"TIME_IN_FORCE_UNSPECIFIED","peggedOffset":"","peggedReference":"PEGGED_REFERENCE_UNSPECIFIED"}],
     "submissions":[{"marketId":"e63a…","price":"2650000","size":"100","side":"SIDE_BUY",
       "timeInForce":"TIME_IN_FORCE_GTC","expiresAt":"0","type":"TYPE_LIMIT","reference":"",
       "peggedOrder":null,"postOnly":true,"reduceOnly":false}],
     "stopOrdersCancellation":[],"stopOrdersSubmission":[],"updateMarginMode":[]}},
 "signature":{"value":"9a1f…","algo":"vega/ed25519","version":1},
 "createdAt":"2024-03-14T12:00:02Z","version":"TX_VERSION_V3","pow":{"tid":"6A3C…","nonce":"12946"}}`

func TestDecodeSpecTransaction(t *testing.T) {
	var got Transaction
	if err := json.Unmarshal([]byte(specTransaction), &got); err != nil {
		t.Fatal(err)
	}
	want := Transaction{
		Block: 34514203, Index: 2, Hash: "7F72…6409", Submitter: "3b6c…a2b3",
		Type: "Batch Market Instructions", Code: 0,
		Command: Command{
			Nonce: 5234298756345283401, BlockHeight: 34514201,
			Kind: &BatchMarketInstructions{
				Cancellations: []OrderCancellation{{OrderID: "", MarketID: "e63a…4d13"}},
				Amendments: []OrderAmendment{{
					OrderID: "a9f1…", MarketID: "e63a…", Price: ptr("2651000"), SizeDelta: -5,
					TimeInForce: TimeInForceUnspecified, PeggedOffset: "", PeggedReference: PeggedReferenceUnspecified,
				}},
				Submissions: []OrderSubmission{{
					MarketID: "e63a…", Price: "2650000", Size: 100, Side: SideBuy, TimeInForce: TimeInForceGTC,
					ExpiresAt: 0, Type: OrderTypeLimit, PostOnly: true,
				}},
				StopOrdersCancellation: []StopOrderCancellation{},
				StopOrdersSubmission:   []StopOrdersSubmission{},
				UpdateMarginMode:       []UpdateMarginMode{},
			},
		},
		Signature: &Signature{Value: "9a1f…", Algo: "vega/ed25519", Version: 1},
		CreatedAt: Time{time.Date(2024, 3, 14, 12, 0, 2, 0, time.UTC)},
		Version:   TransactionVersionV3,
		Pow:       &ProofOfWork{Tid: "6A3C…", Nonce: 12946},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	nonce, nonceErr := got.CommandNonce()
	height, heightErr := got.CommandBlockHeight()
	if got.Position() != (TxCursor{Block: 34514203, Index: 2}) || nonce != 5234298756345283401 || height != 34514201 || nonceErr != nil || heightErr != nil {
		t.Errorf("Position/CommandNonce/CommandBlockHeight = %v, %d (%v), %d (%v)", got.Position(), nonce, nonceErr, height, heightErr)
	}
}

// Every fixture survives decoding and re-encoding: each key it holds maps
// to a field (a mistyped json tag or a missing field would drop it) and
// every value comes back, the explorer's cursor included. The comparison
// ignores nulls, compares numbers and numeric strings by value, and reads
// announceNode's vega* names as net* (a fixture may use either).
// TestWireEncoding pins the exact wire form.
func TestFixturesRoundTrip(t *testing.T) {
	tests := []struct {
		file string
		body listBody
	}{
		{"assets.json", new(assetsBody)},
		{"funding_payments.json", new(fundingPaymentsBody)},
		{"delegations.json", new(delegationsBody)},
		{"transactions_commands.json", new(transactionsBody)},
		{"transactions_proposals.json", new(transactionsBody)},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			wire := readFixture(t, tt.file, tt.body)
			again, err := json.Marshal(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(normalizeJSON(t, wire), normalizeJSON(t, again)); diff != "" {
				t.Errorf("wire (-) vs decoded and re-encoded (+)\n%s", diff)
			}
		})
	}
}

func normalizeJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	renames := map[string]string{"vegaPubKey": "netPubKey", "vegaPubKeyIndex": "netPubKeyIndex", "vegaSignature": "netSignature"}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, x := range v {
				if x == nil {
					continue
				}
				if r, ok := renames[k]; ok {
					k = r
				}
				out[k] = walk(x)
			}
			return out
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
			return v
		case json.Number:
			if n, err := v.Int64(); err == nil {
				return strconv.FormatInt(n, 10)
			}
			if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				return strconv.FormatUint(n, 10)
			}
			f, _ := v.Float64()
			return strconv.FormatFloat(f, 'g', -1, 64)
		default:
			return v
		}
	}
	return walk(v)
}

// fixtureTransactions decodes the explorer page in testdata/name.
func fixtureTransactions(t *testing.T, name string) []Transaction {
	t.Helper()
	var body transactionsBody
	readFixture(t, name, &body)
	return *body.Transactions
}

func TestDecodeCommands(t *testing.T) {
	txs := fixtureTransactions(t, "transactions_commands.json")

	var kinds []string
	for _, tx := range txs {
		switch k := tx.Command.Kind.(type) {
		case nil:
			kinds = append(kinds, "nil")
		case *UnknownCommand:
			kinds = append(kinds, "unknown:"+k.Name)
		default:
			kinds = append(kinds, commandNames[reflect.TypeOf(k)])
		}
	}
	wantKinds := []string{"announceNode", "announceNode", "applyReferralCode", "batchMarketInstructions",
		"batchMarketInstructions", "orderSubmission", "transfer", "nodeVote", "unknown:", "nil"}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Fatalf("command kinds (-want +got)\n%s", diff)
	}

	// The real wire's vega* spelling and the interface's net* spelling.
	wantVega := &AnnounceNode{
		ID: "b7c8d9", NetPubKey: "f0e1d2", EthereumAddress: "0x1234abcd", ChainPubKey: "Q2hhaW4=",
		InfoURL: "https://example.com/node", Country: "GB", Name: "Node One", AvatarURL: "https://example.com/a.png",
		NetPubKeyIndex: 3, FromEpoch: 4821,
		EthereumSignature: &Signature{Value: "e7e7", Algo: "eth/secp256k1", Version: 0},
		NetSignature:      &Signature{Value: "5a5a", Algo: "vega/ed25519", Version: 1},
		SubmitterAddress:  "0xfeed",
	}
	if diff := cmp.Diff(wantVega, txs[0].Command.Kind); diff != "" {
		t.Errorf("announceNode with vega* fields (-want +got)\n%s", diff)
	}
	wantNet := &AnnounceNode{ID: "c8d9e0", NetPubKey: "a1b2c3", Name: "Node Two", NetPubKeyIndex: 7,
		NetSignature: &Signature{Value: "6b6b", Algo: "vega/ed25519", Version: 1}}
	if diff := cmp.Diff(wantNet, txs[1].Command.Kind); diff != "" {
		t.Errorf("announceNode with net* fields (-want +got)\n%s", diff)
	}

	// Unknown members keep their JSON, compacted from the explorer's
	// pretty-printing; a command without a member keeps the whole object.
	wantOrder := &OrderSubmission{MarketID: "e63a37edae8b74f1e5ebc6fd55dd5f2e8c7f5b3b0c1d2e3f4a5b6c7d8e9f4d13",
		Price: "2650000", Size: 100, Side: SideBuy, TimeInForce: TimeInForceGTC, Type: OrderTypeLimit, PostOnly: true}
	if diff := cmp.Diff(wantOrder, txs[5].Command.Kind); diff != "" {
		t.Errorf("orderSubmission (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(&UnknownCommand{Name: "", Raw: RawJSON(`{}`)}, txs[8].Command.Kind); diff != "" {
		t.Errorf("command without member (-want +got)\n%s", diff)
	}
	if txs[6].Error == nil || *txs[6].Error != "insufficient funds" || txs[6].Code != 70 {
		t.Errorf("failed transaction: code %d, error %v", txs[6].Code, txs[6].Error)
	}
	if txs[0].Error != nil {
		t.Errorf("error of a successful transaction = %q, want nil", *txs[0].Error)
	}

	// Optional fields: omitted (nil) versus sent.
	bmi := txs[3].Command.Kind.(*BatchMarketInstructions)
	if a := bmi.Amendments[0]; a.Size != nil || a.ExpiresAt != nil || a.Price == nil {
		t.Errorf("amendment 0 optionals: size %v, expiresAt %v, price %v", a.Size, a.ExpiresAt, a.Price)
	}
	if a := bmi.Amendments[1]; a.Size == nil || *a.Size != 42 || a.ExpiresAt == nil || *a.ExpiresAt != 1710446400000000000 || a.Price != nil {
		t.Errorf("amendment 1 optionals: size %v, expiresAt %v, price %v", a.Size, a.ExpiresAt, a.Price)
	}
	wantFull := OrderSubmission{
		MarketID: "e63a37edae8b74f1e5ebc6fd55dd5f2e8c7f5b3b0c1d2e3f4a5b6c7d8e9f4d13", Size: 18446744073709551615,
		Side: SideSell, TimeInForce: TimeInForceGTT, ExpiresAt: 1710446400123456789, Type: OrderTypeLimit,
		Reference: "my-ref", PeggedOrder: &PeggedOrder{Offset: "15", Reference: PeggedReferenceBestAsk},
		ReduceOnly: true, IcebergOpts: &IcebergOpts{MinimumVisibleSize: 10, PeakSize: 50},
	}
	if diff := cmp.Diff(wantFull, bmi.Submissions[1]); diff != "" {
		t.Errorf("submission 1 (-want +got)\n%s", diff)
	}
	rises, falls := bmi.StopOrdersSubmission[0].RisesAbove, bmi.StopOrdersSubmission[0].FallsBelow
	if rises.Price == nil || rises.TrailingPercentOffset != nil || falls.Price != nil || falls.TrailingPercentOffset == nil {
		t.Errorf("stop order trigger one-of: rises %v/%v, falls %v/%v", rises.Price, rises.TrailingPercentOffset, falls.Price, falls.TrailingPercentOffset)
	}
	if diff := cmp.Diff([]UpdateMarginMode{
		{MarketID: wantFull.MarketID, Mode: MarginModeCrossMargin},
		{MarketID: wantFull.MarketID, Mode: MarginModeIsolatedMargin, MarginFactor: ptr("1.5")},
	}, bmi.UpdateMarginMode); diff != "" {
		t.Errorf("updateMarginMode (-want +got)\n%s", diff)
	}
}

func TestDecodeProposalChanges(t *testing.T) {
	txs := fixtureTransactions(t, "transactions_proposals.json")

	var kinds []string
	for _, tx := range txs {
		for _, c := range tx.Command.Kind.(*BatchProposalSubmission).Terms.Changes {
			switch k := c.Change.(type) {
			case *UnknownProposalChange:
				kinds = append(kinds, "unknown:"+k.Name)
			default:
				kinds = append(kinds, reflectName(k))
			}
		}
	}
	want := []string{"NewMarket", "NewMarket", "NewSpotMarket", "UpdateMarket", "UpdateMarket",
		"NewTransfer", "NewTransfer", "NewTransfer", "CancelTransfer", "NewFreeform", "UpdateAsset",
		"UpdateMarketState", "UpdateMarketState", "UpdateNetworkParameter",
		"UpdateSpotMarket", "UpdateReferralProgram", "UpdateVolumeDiscountProgram"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Fatalf("change kinds (-want +got)\n%s", diff)
	}

	first := txs[0].Command.Kind.(*BatchProposalSubmission)
	if diff := cmp.Diff(&ProposalRationale{Title: "Q1 markets", Description: "Adds the **Q1** markets.\nSee the forum."}, first.Rationale); diff != "" {
		t.Errorf("rationale (-want +got)\n%s", diff)
	}
	if first.Terms.ClosingTimestamp != 1735603200 || first.Terms.Changes[0].EnactmentTimestamp != 1735689600 {
		t.Errorf("closing %d, enactment %d", first.Terms.ClosingTimestamp, first.Terms.Changes[0].EnactmentTimestamp)
	}

	// Each mirrored one-of has exactly its sent member set.
	future := first.Terms.Changes[0].Change.(*NewMarket).Changes
	if i := future.Instrument; i.Future == nil || i.Perpetual != nil || i.Spot != nil || i.Future.SettlementAsset != "fdf0ec11" {
		t.Errorf("future instrument: %+v", i)
	}
	if future.LogNormal == nil || future.Simple != nil || future.LogNormal.Params.Sigma != 1.25 {
		t.Errorf("risk model one-of: logNormal %v, simple %v", future.LogNormal, future.Simple)
	}
	settlement := future.Instrument.Future.DataSourceSpecForSettlementData
	if settlement.External == nil || settlement.Internal != nil || settlement.External.Oracle == nil || settlement.External.EthOracle != nil {
		t.Errorf("settlement data source: %+v", settlement)
	}
	wantSigners := []Signer{{PubKey: &PubKey{Key: "69464e35"}}, {ETHAddress: &ETHAddress{Address: "0xfCEAdAFab14d46e20144F48824d0C09B1a03F2BC"}}}
	if diff := cmp.Diff(wantSigners, settlement.External.Oracle.Signers); diff != "" {
		t.Errorf("signers (-want +got)\n%s", diff)
	}
	termination := future.Instrument.Future.DataSourceSpecForTradingTermination
	if termination.Internal == nil || termination.Internal.Time == nil || termination.Internal.TimeTrigger != nil {
		t.Errorf("termination data source: %+v", termination)
	}
	eth := future.MarkPriceConfiguration.DataSourcesSpec[0].External.EthOracle
	wantEth := &EthCallSpec{
		Address: "0x1b44F3514812d835EB1BDB0acB33d3fA3351Ee43", ABI: `[{"inputs":[],"name":"latestAnswer"}]`, Method: "latestAnswer",
		Args:    []RawJSON{RawJSON(`1`), RawJSON(`"two"`), RawJSON(`{"three":[3]}`), RawJSON(`true`), RawJSON(`null`)},
		Trigger: &EthCallTrigger{TimeTrigger: &EthTimeTrigger{Initial: ptr(UnixSeconds(1735689600)), Every: ptr(Uint64(30)), Until: ptr(UnixSeconds(1767225600))}},
		Filters: []Filter{{Key: &PropertyKey{Name: "price", Type: PropertyKeyTypeDecimal, NumberDecimalPlaces: ptr(Uint64(8))},
			Conditions: []Condition{{Operator: ConditionOperatorLessThanOrEqual, Value: "1000000000000"}}}},
		Normalisers:           []Normaliser{{Name: "price", Expression: "$[0]"}},
		RequiredConfirmations: 3, SourceChainID: 42161,
	}
	if diff := cmp.Diff(wantEth, eth); diff != "" {
		t.Errorf("ethOracle (-want +got)\n%s", diff)
	}

	perp := first.Terms.Changes[1].Change.(*NewMarket).Changes
	if i := perp.Instrument; i.Perpetual == nil || i.Future != nil || i.Spot != nil || perp.Simple == nil || perp.LogNormal != nil {
		t.Errorf("perpetual market one-ofs: %+v", perp)
	}
	schedule := perp.Instrument.Perpetual.DataSourceSpecForSettlementSchedule.Internal.TimeTrigger
	wantTriggers := []InternalTimeTrigger{{Initial: ptr(UnixSeconds(1735689600)), Every: 28800}, {Every: 3600}}
	if diff := cmp.Diff(wantTriggers, schedule.Triggers); diff != "" {
		t.Errorf("time triggers (-want +got)\n%s", diff)
	}
	spot := first.Terms.Changes[2].Change.(*NewSpotMarket).Changes
	if diff := cmp.Diff(&Spot{BaseAsset: "b4f2726", QuoteAsset: "fdf0ec11", Name: "BTC/USDT"}, spot.Instrument.Spot); diff != "" {
		t.Errorf("spot (-want +got)\n%s", diff)
	}
	if spot.SlaParams == nil || spot.TargetStakeParameters.ScalingFactor != 0.25 {
		t.Errorf("spot slaParams %v, targetStake %v", spot.SlaParams, spot.TargetStakeParameters)
	}
	updFuture := first.Terms.Changes[3].Change.(*UpdateMarket)
	if i := updFuture.Changes.Instrument; updFuture.MarketID == "" || i.Future == nil || i.Perpetual != nil || i.Future.QuoteName != "USDT" {
		t.Errorf("update future: %+v", updFuture)
	}
	if i := first.Terms.Changes[4].Change.(*UpdateMarket).Changes.Instrument; i.Perpetual == nil || i.Future != nil {
		t.Errorf("update perpetual instrument: %+v", i)
	}

	misc := txs[1].Command.Kind.(*BatchProposalSubmission).Terms.Changes
	recurring := misc[0].Change.(*NewTransfer).Changes
	if recurring.Recurring == nil || recurring.OneOff != nil || *recurring.Recurring.EndEpoch != 200 {
		t.Errorf("recurring transfer: %+v", recurring)
	}
	if diff := cmp.Diff([]RankTable{{StartRank: 1, ShareRatio: 10}, {StartRank: 2, ShareRatio: 5}}, recurring.Recurring.DispatchStrategy.RankTable); diff != "" {
		t.Errorf("rank table (-want +got)\n%s", diff)
	}
	oneOff := misc[1].Change.(*NewTransfer).Changes
	if oneOff.OneOff == nil || oneOff.Recurring != nil || oneOff.OneOff.DeliverOn != 1735689600000000000 || oneOff.SourceType != AccountTypeInsurance {
		t.Errorf("one-off transfer: %+v", oneOff)
	}
	if open := misc[2].Change.(*NewTransfer).Changes.Recurring; open.EndEpoch != nil || open.DispatchStrategy != nil {
		t.Errorf("open-ended transfer: %+v", open)
	}
	if diff := cmp.Diff(&NewFreeform{Raw: RawJSON(`{}`)}, misc[4].Change); diff != "" {
		t.Errorf("newFreeform (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(&UpdateAsset{AssetID: "fdf0ec11", Changes: &UpdateAssetConfiguration{Quantum: "1000000",
		ERC20: &UpdateERC20{LifetimeLimit: "10000000000", WithdrawThreshold: "500000000"}}}, misc[5].Change); diff != "" {
		t.Errorf("updateAsset (-want +got)\n%s", diff)
	}
	wantState := &UpdateMarketState{Changes: &UpdateMarketStateConfiguration{MarketID: "e63a37edae8b74f1e5ebc6fd55dd5f2e8c7f5b3b0c1d2e3f4a5b6c7d8e9f4d13",
		UpdateType: MarketStateUpdateTypeTerminate, Price: ptr("2650000")}}
	if diff := cmp.Diff(wantState, misc[6].Change); diff != "" {
		t.Errorf("updateMarketState (-want +got)\n%s", diff)
	}
	wantSpot := &UpdateSpotMarket{MarketID: "e63a37edae8b74f1e5ebc6fd55dd5f2e8c7f5b3b0c1d2e3f4a5b6c7d8e9f4d13",
		Changes: &UpdateSpotMarketConfiguration{Metadata: []string{"x"}, TargetStakeParameters: &TargetStakeParameters{TimeWindow: 3600, ScalingFactor: 0.25}}}
	if diff := cmp.Diff(wantSpot, misc[9].Change); diff != "" {
		t.Errorf("updateSpotMarket (-want +got)\n%s", diff)
	}
}

func reflectName(v any) string {
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).Elem().Name()
}

// Nulls anywhere, omitted optionals, integers as numbers, unknown fields,
// unknown enum values and unknown one-of members: none fails the decode.
func TestDecodeEdgeCases(t *testing.T) {
	var body transactionsBody
	readFixture(t, "transactions_edge_cases.json", &body)

	want := []Transaction{
		{
			Block: 34514300, Index: 1, Hash: "AA01", Submitter: "3b6c", Type: "Batch Proposal",
			Command: Command{Nonce: 17, BlockHeight: 34514299, Kind: &BatchProposalSubmission{
				Reference: "edge",
				Terms: &BatchProposalTerms{ClosingTimestamp: 1735603200, Changes: []ProposalChange{
					{Change: &NewMarket{Changes: &NewFutureMarketConfig{
						DecimalPlaces: 1,
						// An unknown product member leaves every member nil.
						Instrument: &Instrument{Code: "X", Name: "X"},
						MarkPriceConfiguration: &CompositePriceConfiguration{DataSourcesSpec: []DataSourceDefinition{
							{Internal: &DataSourceDefinitionInternal{}},
							{},
						}},
					}}},
					{EnactmentTimestamp: 1735689600, Change: &UnknownProposalChange{
						Name: "newProtocolAutomatedPurchase", Raw: RawJSON(`{"marketId":"e63a","changes":{"metadata":["a","b"]}}`)}},
					{EnactmentTimestamp: 1735689601, Change: &UnknownProposalChange{Raw: RawJSON(`{"enactmentTimestamp":"1735689601"}`)}},
					{EnactmentTimestamp: 1735689602, Change: &NewFreeform{Raw: RawJSON(`{"note":"kept as sent"}`)}},
					// A null member is no member.
					{EnactmentTimestamp: 1735689603, Change: &UpdateMarketState{}},
					{},
				}},
			}},
			Version: "5",
		},
		{
			Block: 34514299, Index: 0, Hash: "AA00", Submitter: "3b6c", Type: "Batch Market Instructions",
			Code: 71, Error: ptr("margin check failed"),
			Command: Command{Nonce: 10454318557551928637, BlockHeight: 2, Kind: &BatchMarketInstructions{
				Submissions: []OrderSubmission{{
					MarketID: "e63a", Price: "1", Size: 18446744073709551615, Side: "SIDE_SIDEWAYS",
					TimeInForce: "7", Type: OrderTypeLimit,
				}},
				Cancellations:        []OrderCancellation{{}},
				StopOrdersSubmission: []StopOrdersSubmission{{FallsBelow: &StopOrderSetup{TrailingPercentOffset: ptr("0.1")}}},
			}},
			Signature: &Signature{Value: "ff", Algo: "vega/ed25519", Version: 2},
			CreatedAt: Time{time.Date(2024, 3, 14, 12, 0, 2, 500_000_000, time.UTC)},
			Version:   TransactionVersionV2,
			Pow:       &ProofOfWork{Tid: "01", Nonce: 5},
		},
	}
	if diff := cmp.Diff(want, *body.Transactions); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// BenchmarkDecodeTransactions decodes an explorer page; the "any" case is
// the cost of merely parsing the same bytes with encoding/json.
func BenchmarkDecodeTransactions(b *testing.B) {
	for _, name := range []string{"transactions_commands.json", "transactions_proposals.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var body transactionsBody
				if err := json.Unmarshal(data, &body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/any", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The one-of decoders scan objects by hand: whatever they are given, they
// return an error or a value, never panic, and agree with encoding/json on
// what is valid.
func FuzzOneOfDecoders(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"nonce":"1","orderSubmission":{"a":[1,{"b":"}"}]}}`, `{"a\"b":1,"announceNode":{"id":"x"}}`,
		`{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":"x}`, `{"a":[1,2}`, `[]`, `"x"`, `{"a":1,}`, `{"a" 1}`, `{"a":1 "b":2}`,
		` { "enactmentTimestamp" : "5" , "newFreeform" : { } } `, `{"x":tru}`, `{"\u006eonce":"7"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Command
		cmdErr := c.UnmarshalJSON(b)
		var p ProposalChange
		pErr := p.UnmarshalJSON(b)
		if json.Valid(b) && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
			if cmdErr != nil && !isTypeError(cmdErr) {
				t.Errorf("Command.UnmarshalJSON(%s): %v", b, cmdErr)
			}
			if pErr != nil && !isTypeError(pErr) {
				t.Errorf("ProposalChange.UnmarshalJSON(%s): %v", b, pErr)
			}
		}
	})
}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}
