package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnumDecodeAndMarshal(t *testing.T) {
	tests := []struct {
		name      string
		wire      string
		want      Side
		wantKnown bool
		wantGQL   string // "" when MarshalGQLContext must fail
	}{
		{"known name", `"SIDE_BUY"`, SideBuy, true, `"SIDE_BUY"`},
		{"zero value name", `"SIDE_UNSPECIFIED"`, SideUnspecified, true, `"SIDE_UNSPECIFIED"`},
		{"unknown name", `"SIDE_SIDEWAYS"`, "SIDE_SIDEWAYS", false, ""},
		{"bare number", `7`, "7", false, ""},
		{"number of a known value is still a number", `1`, "1", false, ""},
		{"escaped name", `"SIDE_\u0042UY"`, SideBuy, true, `"SIDE_BUY"`},
		{"null is absent", `null`, "", false, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Side
			if err := json.Unmarshal([]byte(tt.wire), &got); err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.wire, err)
			}
			if got != tt.want || got.Known() != tt.wantKnown {
				t.Errorf("got %q (known %v), want %q (known %v)", got, got.Known(), tt.want, tt.wantKnown)
			}
			out, err := gql(t, got)
			if tt.wantGQL != "" {
				if err != nil || out != tt.wantGQL {
					t.Errorf("MarshalGQLContext = %s, %v; want %s", out, err, tt.wantGQL)
				}
				return
			}
			var unknown *UnknownEnumError
			if !errors.As(err, &unknown) || out != "" {
				t.Fatalf("MarshalGQLContext = %q, %v; want nothing written and an *UnknownEnumError", out, err)
			}
			if diff := cmp.Diff(&UnknownEnumError{Enum: "Side", Value: string(tt.want)}, unknown); diff != "" {
				t.Errorf("error (-want +got)\n%s", diff)
			}
		})
	}
}

func TestUnknownEnumErrorMessage(t *testing.T) {
	err := &UnknownEnumError{Enum: "Side", Value: "7"}
	want := `upstream sent Side value "7", which this schema does not know`
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestEnumDecodeErrors(t *testing.T) {
	for _, wire := range []string{`1.5`, `true`, `{}`, `["SIDE_BUY"]`} {
		var got Side
		err := json.Unmarshal([]byte(wire), &got)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			t.Errorf("Unmarshal(%s) = %v, want a *json.UnmarshalTypeError", wire, err)
		}
	}
}

func TestEnumGQLInput(t *testing.T) {
	ctx := context.Background()
	var s AccountType
	if err := s.UnmarshalGQLContext(ctx, "ACCOUNT_TYPE_ORDER_MARGIN"); err != nil || s != AccountTypeOrderMargin {
		t.Errorf("UnmarshalGQLContext = %q, %v", s, err)
	}
	for _, bad := range []any{"ACCOUNT_TYPE_NOPE", "7", 7, nil} {
		if err := s.UnmarshalGQLContext(ctx, bad); err == nil {
			t.Errorf("UnmarshalGQLContext(%#v) succeeded", bad)
		}
	}
}

// Each enum type knows exactly the values of the interface document (and
// the real asset statuses); the GraphQL enums must list the same names.
func TestEnumValueSets(t *testing.T) {
	got := map[string]int{
		"AssetStatus":             len(assetStatusEnum.values),
		"TransactionVersion":      len(transactionVersionEnum.values),
		"PeggedReference":         len(peggedReferenceEnum.values),
		"TimeInForce":             len(timeInForceEnum.values),
		"Side":                    len(sideEnum.values),
		"OrderType":               len(orderTypeEnum.values),
		"StopOrderExpiryStrategy": len(stopOrderExpiryStrategyEnum.values),
		"SizeOverrideSetting":     len(sizeOverrideSettingEnum.values),
		"MarginMode":              len(marginModeEnum.values),
		"ConditionOperator":       len(conditionOperatorEnum.values),
		"PropertyKeyType":         len(propertyKeyTypeEnum.values),
		"CompositePriceType":      len(compositePriceTypeEnum.values),
		"LiquidityFeeMethod":      len(liquidityFeeMethodEnum.values),
		"GovernanceTransferType":  len(governanceTransferTypeEnum.values),
		"DistributionStrategy":    len(distributionStrategyEnum.values),
		"EntityScope":             len(entityScopeEnum.values),
		"IndividualScope":         len(individualScopeEnum.values),
		"DispatchMetric":          len(dispatchMetricEnum.values),
		"MarketStateUpdateType":   len(marketStateUpdateTypeEnum.values),
		"AccountType":             len(accountTypeEnum.values),
	}
	want := map[string]int{
		"AssetStatus": 5, "TransactionVersion": 3, "PeggedReference": 4, "TimeInForce": 7, "Side": 3,
		"OrderType": 4, "StopOrderExpiryStrategy": 3, "SizeOverrideSetting": 3, "MarginMode": 3,
		"ConditionOperator": 6, "PropertyKeyType": 7, "CompositePriceType": 4, "LiquidityFeeMethod": 4,
		"GovernanceTransferType": 3, "DistributionStrategy": 3, "EntityScope": 3, "IndividualScope": 4,
		"DispatchMetric": 9, "MarketStateUpdateType": 4, "AccountType": 29,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("value counts (-want +got)\n%s", diff)
	}
	// Both OrderType and PropertyKeyType have TYPE_* names; they stay apart.
	if !OrderTypeLimit.Known() || PropertyKeyType(OrderTypeLimit).Known() {
		t.Error("TYPE_LIMIT must be an OrderType and not a PropertyKeyType")
	}
}
