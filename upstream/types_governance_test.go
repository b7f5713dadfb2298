package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeProposalSubmission: a single proposal's terms with optional and
// one-of keys present, absent and null, and garbage that must be an error.
func TestDecodeProposalSubmission(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Command
		err  string // substring of the error; "" for success
	}{
		{
			name: "new asset, every key",
			body: `{"nonce":"1","blockHeight":"2","proposalSubmission":{"reference":"r","terms":{"closingTimestamp":"100","enactmentTimestamp":"200","validationTimestamp":"50",
				"newAsset":{"changes":{"name":"Wrapped Dogecoin","symbol":"WDOGE","decimals":"8","quantum":"1","erc20":{"contractAddress":"0xab","lifetimeLimit":"10","withdrawThreshold":"5"}}}},
				"rationale":{"description":"d","title":"t"}}}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &ProposalSubmission{
				Reference: "r",
				Terms: &ProposalTerms{ClosingTimestamp: 100, EnactmentTimestamp: 200, ValidationTimestamp: 50, Change: &NewAsset{Changes: &AssetDetails{
					Name: "Wrapped Dogecoin", Symbol: "WDOGE", Decimals: 8, Quantum: "1",
					ERC20: &ERC20{ContractAddress: "0xab", LifetimeLimit: "10", WithdrawThreshold: "5"}}}},
				Rationale: &ProposalRationale{Description: "d", Title: "t"},
			}},
		},
		{
			name: "member first, built-in asset, times as numbers",
			body: `{"proposalSubmission":{"terms":{"newAsset":{"changes":{"builtinAsset":{"maxFaucetAmountMint":"9"}}},"closingTimestamp":100,"validationTimestamp":"0","enactmentTimestamp":"0"}},"nonce":"1","blockHeight":"2"}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &ProposalSubmission{
				Terms: &ProposalTerms{ClosingTimestamp: 100, Change: &NewAsset{Changes: &AssetDetails{BuiltinAsset: &BuiltinAsset{MaxFaucetAmountMint: "9"}}}},
			}},
		},
		{
			name: "null terms and rationale",
			body: `{"nonce":"1","blockHeight":"2","proposalSubmission":{"reference":"r","terms":null,"rationale":null}}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &ProposalSubmission{Reference: "r"}},
		},
		{
			name: "terms without a change: the whole terms object, unnamed",
			body: `{"nonce":"1","blockHeight":"2","proposalSubmission":{"terms":{"closingTimestamp":"100","enactmentTimestamp":"0","validationTimestamp":"0"}}}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &ProposalSubmission{Terms: &ProposalTerms{ClosingTimestamp: 100,
				Change: &UnknownProposalChange{Raw: RawJSON(`{"closingTimestamp":"100","enactmentTimestamp":"0","validationTimestamp":"0"}`)}}}},
		},
		{
			name: "a change kind newer than this package",
			body: `{"nonce":"1","blockHeight":"2","proposalSubmission":{"terms":{"closingTimestamp":"100","enactmentTimestamp":"0","validationTimestamp":"0","newProtocolAutomatedPurchase":{"changes":{"from":"x"}}}}}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &ProposalSubmission{Terms: &ProposalTerms{ClosingTimestamp: 100,
				Change: &UnknownProposalChange{Name: "newProtocolAutomatedPurchase", Raw: RawJSON(`{"changes":{"from":"x"}}`)}}}},
		},
		{
			name: "freeform, enacted never",
			body: `{"nonce":"1","blockHeight":"2","proposalSubmission":{"terms":{"closingTimestamp":"100","enactmentTimestamp":"0","validationTimestamp":"0","newFreeform":{}}}}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &ProposalSubmission{Terms: &ProposalTerms{ClosingTimestamp: 100, Change: &NewFreeform{Raw: RawJSON(`{}`)}}}},
		},
		{
			name: "update spot market, optional keys absent, log-normal risk",
			body: `{"nonce":"1","blockHeight":"2","proposalSubmission":{"terms":{"closingTimestamp":"1","enactmentTimestamp":"2","validationTimestamp":"0","updateSpotMarket":{"marketId":"m","changes":{"metadata":[],
				"priceMonitoringParameters":null,"targetStakeParameters":{"timeWindow":"3600","scalingFactor":"Infinity"},"logNormal":{"riskAversionParameter":0.01,"tau":"NaN","params":null},
				"slaParams":null,"liquidityFeeSettings":{"method":"METHOD_MARGINAL_COST"}}}}}}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &ProposalSubmission{Terms: &ProposalTerms{ClosingTimestamp: 1, EnactmentTimestamp: 2, Change: &UpdateSpotMarket{MarketID: "m",
				Changes: &UpdateSpotMarketConfiguration{Metadata: []string{},
					TargetStakeParameters: &TargetStakeParameters{TimeWindow: 3600, ScalingFactor: Float64(math.Inf(1))},
					LogNormal:             &LogNormalRiskModel{RiskAversionParameter: 0.01, Tau: Float64(math.NaN())},
					LiquidityFeeSettings:  &LiquidityFeeSettings{Method: LiquidityFeeMethod("METHOD_MARGINAL_COST")},
				}}}}},
		},
		{
			name: "referral program with empty tier lists",
			body: `{"nonce":"1","blockHeight":"2","proposalSubmission":{"terms":{"closingTimestamp":"1","enactmentTimestamp":"2","validationTimestamp":"0","updateReferralProgram":{"changes":{"benefitTiers":[],"endOfProgramTimestamp":"1767225600","windowLength":"3","stakingTiers":[]}}}}}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &ProposalSubmission{Terms: &ProposalTerms{ClosingTimestamp: 1, EnactmentTimestamp: 2, Change: &UpdateReferralProgram{
				Changes: &ReferralProgramChanges{BenefitTiers: []BenefitTier{}, EndOfProgramTimestamp: 1767225600, WindowLength: 3, StakingTiers: []StakingTier{}}}}}},
		},
		{
			name: "volume discount program",
			body: `{"nonce":"1","blockHeight":"2","proposalSubmission":{"terms":{"closingTimestamp":"1","enactmentTimestamp":"2","validationTimestamp":"0","updateVolumeDiscountProgram":{"changes":{"benefitTiers":[{"minimumRunningNotionalTakerVolume":"100","volumeDiscountFactor":"0.01"}],"endOfProgramTimestamp":"5","windowLength":"7"}}}}}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &ProposalSubmission{Terms: &ProposalTerms{ClosingTimestamp: 1, EnactmentTimestamp: 2, Change: &UpdateVolumeDiscountProgram{
				Changes: &VolumeDiscountProgramChanges{BenefitTiers: []VolumeBenefitTier{{MinimumRunningNotionalTakerVolume: "100", VolumeDiscountFactor: "0.01"}}, EndOfProgramTimestamp: 5, WindowLength: 7}}}}},
		},
		{
			name: "lpPriceRange absent, present, rank table as JSON numbers",
			body: `{"nonce":"1","blockHeight":"2","batchProposalSubmission":{"terms":{"closingTimestamp":"1","changes":[
				{"enactmentTimestamp":"2","newMarket":{"changes":{"decimalPlaces":"1","positionDecimalPlaces":"0","metadata":[]}}},
				{"enactmentTimestamp":"2","updateMarket":{"marketId":"m","changes":{"lpPriceRange":"0.8","metadata":[]}}},
				{"enactmentTimestamp":"2","newTransfer":{"changes":{"recurring":{"startEpoch":"1","dispatchStrategy":{"rankTable":[{"startRank":1,"shareRatio":4294967295}]}}}}}]}}}`,
			want: Command{Nonce: 1, BlockHeight: 2, Kind: &BatchProposalSubmission{Terms: &BatchProposalTerms{ClosingTimestamp: 1, Changes: []ProposalChange{
				{EnactmentTimestamp: 2, Change: &NewMarket{Changes: &NewFutureMarketConfig{DecimalPlaces: 1, Metadata: []string{}}}},
				{EnactmentTimestamp: 2, Change: &UpdateMarket{MarketID: "m", Changes: &UpdateMarketConfig{LpPriceRange: ptr("0.8"), Metadata: []string{}}}},
				{EnactmentTimestamp: 2, Change: &NewTransfer{Changes: &GovernanceTransfer{Recurring: &RecurringTransfer{StartEpoch: 1,
					DispatchStrategy: &DispatchStrategy{RankTable: []RankTable{{StartRank: 1, ShareRatio: 4294967295}}}}}}},
			}}}},
		},
		{name: "f64 garbage", body: `{"proposalSubmission":{"terms":{"updateSpotMarket":{"changes":{"simple":{"factorLong":"lots"}}}}}}`, err: "factorLong"},
		{name: "f64 boolean", body: `{"proposalSubmission":{"terms":{"updateSpotMarket":{"changes":{"logNormal":{"tau":true}}}}}}`, err: "tau"},
		{name: "time garbage", body: `{"proposalSubmission":{"terms":{"closingTimestamp":"soon","newFreeform":{}}}}`, err: "closingTimestamp"},
		{name: "terms not an object", body: `{"proposalSubmission":{"terms":[1]}}`, err: "ProposalTerms"},
		{name: "tiers not a list", body: `{"proposalSubmission":{"terms":{"updateReferralProgram":{"changes":{"benefitTiers":{}}}}}}`, err: "benefitTiers"},
	}
	// NaN is not equal to itself: compare floats by their bits.
	floatBits := cmp.Comparer(func(a, b Float64) bool { return math.Float64bits(float64(a)) == math.Float64bits(float64(b)) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Command
			err := unmarshal([]byte(tt.body), &got)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one naming %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, floatBits); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			// The wire form written back decodes to the same value.
			again, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var round Command
			if err := unmarshal(again, &round); err != nil {
				t.Fatalf("re-decoding %s: %v", again, err)
			}
			if diff := cmp.Diff(got, round, floatBits); diff != "" {
				t.Errorf("round trip through %s (-first +second)\n%s", again, diff)
			}
		})
	}
}

// TestProposalTermsEveryChangeKind: each proposal change of the sample
// dataset's batches, moved into single-proposal terms, decodes to the same
// change through the fast path and the general one.
func TestProposalTermsEveryChangeKind(t *testing.T) {
	_, changes := sampleOneOfs(t)
	kinds := map[string]bool{}
	for _, b := range changes {
		var batch ProposalChange
		if err := batch.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		// {"enactmentTimestamp":…,"member":…} becomes single terms, the
		// member last as on the wire.
		terms := append([]byte(`{"closingTimestamp":"100","validationTimestamp":"0",`), bytes.TrimPrefix(bytes.TrimSpace(b), []byte("{"))...)
		var fast ProposalTerms
		if err := fast.UnmarshalJSON(terms); err != nil {
			t.Fatalf("%s: %v", terms, err)
		}
		general, kind, err := changeGeneral(terms, (*ProposalTerms).decodePlain)
		if err != nil {
			t.Fatal(err)
		}
		general.Change = kind
		if !sameDecoded(fast, general) {
			t.Fatalf("%s:\n fast path %#v\n general   %#v", terms, fast, general)
		}
		if !sameDecoded(fast.Change, batch.Change) || fast.EnactmentTimestamp != batch.EnactmentTimestamp || fast.ClosingTimestamp != 100 {
			t.Fatalf("%s: terms %#v, batch change %#v", terms, fast, batch)
		}
		if _, unknown := fast.Change.(*UnknownProposalChange); unknown {
			t.Errorf("sample change %s is not described", b)
		}
		kinds[reflect.TypeOf(fast.Change).Elem().Name()] = true
	}
	// Every batch kind (all but newAsset) is in the sample dataset.
	if len(kinds) != len(proposalChangeMembers.members)-1 {
		t.Errorf("sample batches hold %d change kinds: %v", len(kinds), kinds)
	}
}

func TestFloat64(t *testing.T) {
	for _, tt := range []struct {
		wire    string
		want    float64
		gql     string
		gqlErr  string
		written string // MarshalJSON
	}{
		{wire: `0.25`, want: 0.25, gql: `0.25`, written: `0.25`},
		{wire: `-5`, want: -5, gql: `-5`, written: `-5`},
		{wire: `1e-400`, want: 0, gql: `0`, written: `0`},
		{wire: `"NaN"`, want: math.NaN(), gqlErr: "NaN", written: `"NaN"`},
		{wire: `"Infinity"`, want: math.Inf(1), gqlErr: "Infinity", written: `"Infinity"`},
		{wire: `"-Infinity"`, want: math.Inf(-1), gqlErr: "-Infinity", written: `"-Infinity"`},
	} {
		var f Float64
		if err := f.UnmarshalJSON([]byte(tt.wire)); err != nil {
			t.Fatalf("%s: %v", tt.wire, err)
		}
		if math.Float64bits(float64(f)) != math.Float64bits(tt.want) {
			t.Errorf("%s decoded as %v, want %v", tt.wire, f, tt.want)
		}
		if b, _ := f.MarshalJSON(); string(b) != tt.written {
			t.Errorf("%s written as %s, want %s", tt.wire, b, tt.written)
		}
		var buf bytes.Buffer
		err := f.MarshalGQLContext(context.Background(), &buf)
		var nonFinite *NonFiniteFloatError
		switch {
		case tt.gqlErr != "":
			if !errors.As(err, &nonFinite) || nonFinite.Value != tt.gqlErr {
				t.Errorf("%s: GraphQL error %v, want a NonFiniteFloatError of %s", tt.wire, err, tt.gqlErr)
			}
		case err != nil || buf.String() != tt.gql:
			t.Errorf("%s: GraphQL %q, %v; want %s", tt.wire, buf.String(), err, tt.gql)
		}
	}
	for _, bad := range []string{`"nan"`, `"1.5"`, `true`, `{}`, `1e999`, `""`} {
		var f Float64
		if err := f.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s decoded as %v, want an error", bad, f)
		}
	}
}
