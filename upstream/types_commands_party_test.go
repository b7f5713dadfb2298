package upstream

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodePartyCommands decodes each party command kind from a wire
// record with every optional key present and from one with every optional
// key absent (null message fields, empty lists, an enum number the
// explorer did not know), as the wire writes them (docs/wire.md, JSON
// encoding).
func TestDecodePartyCommands(t *testing.T) {
	expires := UnixNanos(1710499051700000000)
	tests := []struct {
		name   string
		member string
		wire   string
		want   CommandKind
	}{
		{"orderSubmission/all", "orderSubmission",
			`{"marketId":"m1","price":"100","size":"18446744073709551615","side":"SIDE_BUY","timeInForce":"TIME_IN_FORCE_GTT",
			"expiresAt":"1710499051700000000","type":"TYPE_LIMIT","reference":"r","peggedOrder":{"reference":"PEGGED_REFERENCE_MID","offset":"5"},
			"postOnly":true,"reduceOnly":true,"icebergOpts":{"peakSize":"10","minimumVisibleSize":"2"}}`,
			&OrderSubmission{MarketID: "m1", Price: "100", Size: 18446744073709551615, Side: SideBuy, TimeInForce: TimeInForceGTT,
				ExpiresAt: expires, Type: OrderTypeLimit, Reference: "r", PeggedOrder: &PeggedOrder{Reference: PeggedReferenceMid, Offset: "5"},
				PostOnly: true, ReduceOnly: true, IcebergOpts: &IcebergOpts{PeakSize: 10, MinimumVisibleSize: 2}}},
		{"orderSubmission/absent", "orderSubmission",
			`{"marketId":"m1","price":"","size":"1","side":9,"timeInForce":"TIME_IN_FORCE_IOC","expiresAt":"0","type":"TYPE_MARKET",
			"reference":"","peggedOrder":null,"postOnly":false,"reduceOnly":false}`,
			&OrderSubmission{MarketID: "m1", Size: 1, Side: "9", TimeInForce: TimeInForceIOC, Type: OrderTypeMarket}},
		{"orderCancellation/all", "orderCancellation", `{"orderId":"o1","marketId":"m1"}`,
			&OrderCancellation{OrderID: "o1", MarketID: "m1"}},
		{"orderCancellation/absent", "orderCancellation", `{"orderId":"","marketId":""}`, &OrderCancellation{}},
		{"orderAmendment/all", "orderAmendment",
			`{"orderId":"o1","marketId":"m1","price":"7","size":"3","sizeDelta":"-2","expiresAt":"1710499051700000000",
			"timeInForce":"TIME_IN_FORCE_GTT","peggedOffset":"4","peggedReference":"PEGGED_REFERENCE_BEST_ASK"}`,
			&OrderAmendment{OrderID: "o1", MarketID: "m1", Price: ptr("7"), Size: ptr(Uint64(3)), SizeDelta: -2, ExpiresAt: &expires,
				TimeInForce: TimeInForceGTT, PeggedOffset: "4", PeggedReference: PeggedReferenceBestAsk}},
		{"orderAmendment/absent", "orderAmendment",
			`{"orderId":"o1","marketId":"m1","sizeDelta":"0","timeInForce":"TIME_IN_FORCE_UNSPECIFIED","peggedOffset":"",
			"peggedReference":"PEGGED_REFERENCE_UNSPECIFIED"}`,
			&OrderAmendment{OrderID: "o1", MarketID: "m1", TimeInForce: TimeInForceUnspecified, PeggedReference: PeggedReferenceUnspecified}},
		{"withdrawSubmission/all", "withdrawSubmission", `{"amount":"10","asset":"a1","ext":{"erc20":{"receiverAddress":"0xab"}}}`,
			&WithdrawSubmission{Amount: "10", Asset: "a1", Ext: &WithdrawExt{Erc20: &Erc20WithdrawExt{ReceiverAddress: "0xab"}}}},
		{"withdrawSubmission/emptyExt", "withdrawSubmission", `{"amount":"10","asset":"a1","ext":{}}`,
			&WithdrawSubmission{Amount: "10", Asset: "a1", Ext: &WithdrawExt{}}},
		{"withdrawSubmission/absent", "withdrawSubmission", `{"amount":"10","asset":"a1","ext":null}`,
			&WithdrawSubmission{Amount: "10", Asset: "a1"}},
		{"voteSubmission/all", "voteSubmission", `{"proposalId":"p1","value":"VALUE_YES"}`,
			&VoteSubmission{ProposalID: "p1", Value: VoteValueYes}},
		{"voteSubmission/absent", "voteSubmission", `{"proposalId":"p1","value":7}`,
			&VoteSubmission{ProposalID: "p1", Value: "7"}},
		{"liquidityProvisionSubmission/all", "liquidityProvisionSubmission",
			`{"marketId":"m1","commitmentAmount":"1000","fee":"0.001","reference":"lp"}`,
			&LiquidityProvisionSubmission{MarketID: "m1", CommitmentAmount: "1000", Fee: "0.001", Reference: "lp"}},
		{"liquidityProvisionAmendment/absent", "liquidityProvisionAmendment",
			`{"marketId":"m1","commitmentAmount":"","fee":"","reference":""}`,
			&LiquidityProvisionAmendment{MarketID: "m1"}},
		{"liquidityProvisionAmendment/all", "liquidityProvisionAmendment",
			`{"marketId":"m1","commitmentAmount":"5","fee":"0.01","reference":"r"}`,
			&LiquidityProvisionAmendment{MarketID: "m1", CommitmentAmount: "5", Fee: "0.01", Reference: "r"}},
		{"liquidityProvisionCancellation/all", "liquidityProvisionCancellation", `{"marketId":"m1"}`,
			&LiquidityProvisionCancellation{MarketID: "m1"}},
		{"delegateSubmission/all", "delegateSubmission", `{"nodeId":"n1","amount":"5"}`,
			&DelegateSubmission{NodeID: "n1", Amount: "5"}},
		{"undelegateSubmission/all", "undelegateSubmission", `{"nodeId":"n1","amount":"5","method":"METHOD_AT_END_OF_EPOCH"}`,
			&UndelegateSubmission{NodeID: "n1", Amount: "5", Method: UndelegateMethodAtEndOfEpoch}},
		{"undelegateSubmission/absent", "undelegateSubmission", `{"nodeId":"n1","amount":"","method":3}`,
			&UndelegateSubmission{NodeID: "n1", Method: "3"}},
		{"transfer/recurring", "transfer",
			`{"fromAccountType":"ACCOUNT_TYPE_GENERAL","to":"k","toAccountType":"ACCOUNT_TYPE_REWARD_AVERAGE_POSITION","asset":"a1",
			"amount":"9","reference":"r","recurring":{"startEpoch":"4","endEpoch":"18446744073709551615","factor":"0.5",
			"dispatchStrategy":{"assetForMetric":"a2","metric":"DISPATCH_METRIC_AVERAGE_POSITION","markets":[],"entityScope":"ENTITY_SCOPE_INDIVIDUALS",
			"individualScope":"INDIVIDUAL_SCOPE_ALL","teamScope":[],"nTopPerformers":"","stakingRequirement":"","notionalTimeWeightedAveragePositionRequirement":"",
			"windowLength":"1","lockPeriod":"0","distributionStrategy":"DISTRIBUTION_STRATEGY_RANK","rankTable":[{"startRank":1,"shareRatio":4294967295}]}}}`,
			&TransferFunds{FromAccountType: AccountTypeGeneral, To: "k", ToAccountType: AccountTypeRewardAveragePosition, Asset: "a1",
				Amount: "9", Reference: "r", Recurring: &RecurringTransferFunds{StartEpoch: 4, EndEpoch: ptr(Uint64(18446744073709551615)), Factor: "0.5",
					DispatchStrategy: &DispatchStrategy{AssetForMetric: "a2", Metric: DispatchMetricAveragePosition, Markets: []string{},
						EntityScope: EntityScopeIndividuals, IndividualScope: IndividualScopeAll, TeamScope: []string{}, WindowLength: 1,
						DistributionStrategy: DistributionStrategyRank, RankTable: []RankTable{{StartRank: 1, ShareRatio: 4294967295}}}}}},
		{"transfer/recurringAbsent", "transfer",
			`{"fromAccountType":"ACCOUNT_TYPE_GENERAL","to":"k","toAccountType":"ACCOUNT_TYPE_GLOBAL_REWARD","asset":"a1","amount":"9",
			"reference":"","recurring":{"startEpoch":"4","factor":"1","dispatchStrategy":null}}`,
			&TransferFunds{FromAccountType: AccountTypeGeneral, To: "k", ToAccountType: AccountTypeGlobalReward, Asset: "a1", Amount: "9",
				Recurring: &RecurringTransferFunds{StartEpoch: 4, Factor: "1"}}},
		{"transfer/oneOff", "transfer",
			`{"fromAccountType":"ACCOUNT_TYPE_GENERAL","to":"k","toAccountType":"ACCOUNT_TYPE_GENERAL","asset":"a1","amount":"9",
			"reference":"","oneOff":{"deliverOn":"1710499051700000000"}}`,
			&TransferFunds{FromAccountType: AccountTypeGeneral, To: "k", ToAccountType: AccountTypeGeneral, Asset: "a1", Amount: "9",
				OneOff: &OneOffTransfer{DeliverOn: expires}}},
		{"cancelTransfer/all", "cancelTransfer", `{"transferId":"t1"}`, &CancelTransferFunds{TransferID: "t1"}},
		{"stopOrdersSubmission/all", "stopOrdersSubmission",
			`{"risesAbove":{"orderSubmission":{"marketId":"m1","price":"","size":"1","side":"SIDE_SELL","timeInForce":"TIME_IN_FORCE_IOC",
			"expiresAt":"0","type":"TYPE_MARKET","reference":"","peggedOrder":null,"postOnly":false,"reduceOnly":true},
			"expiresAt":"1710499051700000000","expiryStrategy":"EXPIRY_STRATEGY_SUBMIT","sizeOverrideSetting":"SIZE_OVERRIDE_SETTING_POSITION",
			"sizeOverrideValue":{"percentage":"0.5"},"price":"105"},
			"fallsBelow":{"orderSubmission":null,"trailingPercentOffset":"0.05"}}`,
			&StopOrdersSubmission{
				RisesAbove: &StopOrderSetup{OrderSubmission: &OrderSubmission{MarketID: "m1", Size: 1, Side: SideSell, TimeInForce: TimeInForceIOC,
					Type: OrderTypeMarket, ReduceOnly: true}, ExpiresAt: &expires, ExpiryStrategy: ptr(StopOrderExpiryStrategySubmit),
					SizeOverrideSetting: ptr(SizeOverrideSettingPosition), SizeOverrideValue: &SizeOverrideValue{Percentage: "0.5"}, Price: ptr("105")},
				FallsBelow: &StopOrderSetup{TrailingPercentOffset: ptr("0.05")}}},
		{"stopOrdersSubmission/absent", "stopOrdersSubmission", `{"fallsBelow":{"orderSubmission":null}}`,
			&StopOrdersSubmission{FallsBelow: &StopOrderSetup{}}},
		{"stopOrdersCancellation/all", "stopOrdersCancellation", `{"marketId":"m1","stopOrderId":"s1"}`,
			&StopOrderCancellation{MarketID: ptr("m1"), StopOrderID: ptr("s1")}},
		{"stopOrdersCancellation/absent", "stopOrdersCancellation", `{}`, &StopOrderCancellation{}},
		{"createReferralSet/all", "createReferralSet",
			`{"isTeam":true,"team":{"name":"Fox","teamUrl":"https://t","avatarUrl":"https://a","closed":true,"allowList":["k1","k2"]}}`,
			&CreateReferralSet{IsTeam: true, Team: &CreateReferralSetTeam{Name: "Fox", TeamURL: ptr("https://t"), AvatarURL: ptr("https://a"),
				Closed: true, AllowList: []string{"k1", "k2"}}}},
		{"createReferralSet/absent", "createReferralSet", `{"isTeam":false}`, &CreateReferralSet{}},
		{"createReferralSet/teamAbsent", "createReferralSet", `{"isTeam":true,"team":{"name":"Fox","closed":false,"allowList":[]}}`,
			&CreateReferralSet{IsTeam: true, Team: &CreateReferralSetTeam{Name: "Fox", AllowList: []string{}}}},
		{"updateReferralSet/all", "updateReferralSet",
			`{"id":"s1","isTeam":true,"team":{"name":"Fox","teamUrl":"https://t","avatarUrl":"https://a","closed":false,"allowList":[]}}`,
			&UpdateReferralSet{ID: "s1", IsTeam: true, Team: &UpdateReferralSetTeam{Name: ptr("Fox"), TeamURL: ptr("https://t"),
				AvatarURL: ptr("https://a"), Closed: ptr(false), AllowList: []string{}}}},
		{"updateReferralSet/absent", "updateReferralSet", `{"id":"s1","isTeam":true,"team":{"allowList":["k1"]}}`,
			&UpdateReferralSet{ID: "s1", IsTeam: true, Team: &UpdateReferralSetTeam{AllowList: []string{"k1"}}}},
		{"updateMarginMode/all", "updateMarginMode", `{"marketId":"m1","mode":"MODE_ISOLATED_MARGIN","marginFactor":"0.25"}`,
			&UpdateMarginMode{MarketID: "m1", Mode: MarginModeIsolatedMargin, MarginFactor: ptr("0.25")}},
		{"updateMarginMode/absent", "updateMarginMode", `{"marketId":"m1","mode":"MODE_CROSS_MARGIN"}`,
			&UpdateMarginMode{MarketID: "m1", Mode: MarginModeCrossMargin}},
		{"joinTeam/all", "joinTeam", `{"id":"team1"}`, &JoinTeam{ID: "team1"}},
		{"updatePartyProfile/all", "updatePartyProfile", `{"alias":"🐋","metadata":[{"key":"x","value":"@y"}]}`,
			&UpdatePartyProfile{Alias: "🐋", Metadata: []Metadata{{Key: "x", Value: "@y"}}}},
		{"updatePartyProfile/absent", "updatePartyProfile", `{"alias":"","metadata":[]}`,
			&UpdatePartyProfile{Metadata: []Metadata{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The member last (the fast path) and first (the general one).
			for _, b := range []string{
				`{"nonce":"1","blockHeight":"2","` + tt.member + `":` + tt.wire + `}`,
				`{"` + tt.member + `":` + tt.wire + `,"nonce":"1","blockHeight":"2"}`,
			} {
				var c Command
				if err := unmarshal([]byte(b), &c); err != nil {
					t.Fatalf("decode: %v", err)
				}
				if diff := cmp.Diff(Command{Nonce: 1, BlockHeight: 2, Kind: tt.want}, c); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}
		})
	}
}

// TestDecodePartyCommandErrors: a malformed party command is an error that
// names the member and the field, never a panic.
func TestDecodePartyCommandErrors(t *testing.T) {
	for _, tt := range []struct{ wire, want string }{
		{`{"transfer":{"amount":9}}`, "transfer.amount"},
		{`{"transfer":{"recurring":{"startEpoch":"-1"}}}`, "transfer.recurring.startEpoch"},
		{`{"createReferralSet":{"isTeam":"yes"}}`, "createReferralSet.isTeam"},
		{`{"updateReferralSet":{"team":{"allowList":"k1"}}}`, "updateReferralSet.team.allowList"},
		{`{"withdrawSubmission":{"ext":[]}}`, "withdrawSubmission.ext"},
		{`{"voteSubmission":{"value":true}}`, "voteSubmission.value"},
		{`{"updatePartyProfile":{"metadata":[{"key":1}]}}`, "updatePartyProfile.metadata"},
		{`{"orderAmendment":{"size":"1.5"}}`, "orderAmendment.size"},
		{`{"stopOrdersSubmission":"x"}`, "stopOrdersSubmission"},
	} {
		var c Command
		err := unmarshal([]byte(tt.wire), &c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one naming %s", tt.wire, err, tt.want)
		}
	}
}

// TestMarshalPartyCommand: the wire form names the member, after nonce
// and blockHeight.
func TestMarshalPartyCommand(t *testing.T) {
	b, err := Command{Nonce: 1, BlockHeight: 2, Kind: &JoinTeam{ID: "t"}}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"nonce":"1","blockHeight":"2","joinTeam":{"id":"t"}}`; string(b) != want {
		t.Errorf("MarshalJSON = %s, want %s", b, want)
	}
}
