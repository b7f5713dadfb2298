package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
)

// Every enum is a string type holding the value's name as the upstream
// sends it ("SIDE_BUY"). A value the upstream's own schema does not know
// arrives as a bare number and is kept as its decimal text ("7"); a name
// newer than this package is kept as is. Known tells the two apart, and
// MarshalGQLContext refuses unknown values with an *UnknownEnumError, which
// gqlgen reports at the field's path while writing null there: the rest of
// the response stays intact. The empty value means "absent" (an omitted
// optional enum) and is written as null without an error.

// UnknownEnumError reports an enum value the GraphQL schema cannot express.
type UnknownEnumError struct {
	Enum  string // GraphQL enum name, e.g. "Side"
	Value string // the value as received, e.g. "7" or "SIDE_SIDEWAYS"
}

func (e *UnknownEnumError) Error() string {
	return fmt.Sprintf("upstream sent %s value %q, which this schema does not know", e.Enum, e.Value)
}

// enum holds the known values of one enum type and implements the
// behaviour every enum type shares.
type enum[E ~string] struct {
	name   string
	values map[string]E
	typ    reflect.Type
}

func newEnum[E ~string](name string, values ...E) *enum[E] {
	m := make(map[string]E, len(values))
	for _, v := range values {
		m[string(v)] = v
	}
	return &enum[E]{name: name, values: m, typ: reflect.TypeFor[E]()}
}

func (s *enum[E]) known(v E) bool {
	_, ok := s.values[string(v)]
	return ok
}

func (s *enum[E]) unmarshalJSON(dst *E, b []byte) error {
	switch {
	case isNull(b):
		return nil
	case len(b) == 0: // never from encoding/json, but UnmarshalJSON is public
		return &json.UnmarshalTypeError{Value: "empty input", Type: s.typ}
	case len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"':
		// Known names are interned: the map lookup does not allocate.
		if v, ok := s.values[string(b[1:len(b)-1])]; ok {
			*dst = v
			return nil
		}
		var name string
		if err := unmarshal(b, &name); err != nil {
			return &json.UnmarshalTypeError{Value: describe(b), Type: s.typ}
		}
		*dst = E(name)
		return nil
	case b[0] == '-' || ('0' <= b[0] && b[0] <= '9'):
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return &json.UnmarshalTypeError{Value: describe(b) + " (not an enum number)", Type: s.typ}
		}
		*dst = E(strconv.FormatInt(n, 10))
		return nil
	default:
		return &json.UnmarshalTypeError{Value: describe(b), Type: s.typ}
	}
}

func (s *enum[E]) marshalGQL(w io.Writer, v E) error {
	if v == "" {
		_, err := io.WriteString(w, "null")
		return err
	}
	if !s.known(v) {
		return &UnknownEnumError{Enum: s.name, Value: string(v)}
	}
	// Known names are [A-Z0-9_]: no escaping needed.
	buf := append(spareCapacity(w), '"')
	buf = append(buf, v...)
	buf = append(buf, '"')
	_, err := w.Write(buf)
	return err
}

func (s *enum[E]) unmarshalGQL(dst *E, in any) error {
	name, ok := in.(string)
	if !ok {
		return fmt.Errorf("%s must be an enum value name, got %T", s.name, in)
	}
	v, ok := s.values[name]
	if !ok {
		return fmt.Errorf("%q is not a valid %s", name, s.name)
	}
	*dst = v
	return nil
}

// AssetStatus is the lifecycle state of an asset.
type AssetStatus string

// AssetStatus values.
const (
	AssetStatusUnspecified    AssetStatus = "STATUS_UNSPECIFIED"
	AssetStatusProposed       AssetStatus = "STATUS_PROPOSED"
	AssetStatusRejected       AssetStatus = "STATUS_REJECTED"
	AssetStatusPendingListing AssetStatus = "STATUS_PENDING_LISTING"
	AssetStatusEnabled        AssetStatus = "STATUS_ENABLED"
)

var assetStatusEnum = newEnum("AssetStatus",
	AssetStatusUnspecified,
	AssetStatusProposed,
	AssetStatusRejected,
	AssetStatusPendingListing,
	AssetStatusEnabled,
)

// Known reports whether e is a value this package knows.
func (e AssetStatus) Known() bool { return assetStatusEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *AssetStatus) UnmarshalJSON(b []byte) error { return assetStatusEnum.unmarshalJSON(e, b) }

// MarshalGQLContext writes a known value's quoted name.
func (e AssetStatus) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return assetStatusEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *AssetStatus) UnmarshalGQLContext(_ context.Context, v any) error {
	return assetStatusEnum.unmarshalGQL(e, v)
}

// TransactionVersion is the version of a transaction's format.
type TransactionVersion string

// TransactionVersion values.
const (
	TransactionVersionUnspecified TransactionVersion = "TX_VERSION_UNSPECIFIED"
	TransactionVersionV2          TransactionVersion = "TX_VERSION_V2"
	TransactionVersionV3          TransactionVersion = "TX_VERSION_V3"
)

var transactionVersionEnum = newEnum("TransactionVersion",
	TransactionVersionUnspecified,
	TransactionVersionV2,
	TransactionVersionV3,
)

// Known reports whether e is a value this package knows.
func (e TransactionVersion) Known() bool { return transactionVersionEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *TransactionVersion) UnmarshalJSON(b []byte) error {
	return transactionVersionEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e TransactionVersion) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return transactionVersionEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *TransactionVersion) UnmarshalGQLContext(_ context.Context, v any) error {
	return transactionVersionEnum.unmarshalGQL(e, v)
}

// PeggedReference is the price point a pegged order is kept at an offset from.
type PeggedReference string

// PeggedReference values.
const (
	PeggedReferenceUnspecified PeggedReference = "PEGGED_REFERENCE_UNSPECIFIED"
	PeggedReferenceMid         PeggedReference = "PEGGED_REFERENCE_MID"
	PeggedReferenceBestBid     PeggedReference = "PEGGED_REFERENCE_BEST_BID"
	PeggedReferenceBestAsk     PeggedReference = "PEGGED_REFERENCE_BEST_ASK"
)

var peggedReferenceEnum = newEnum("PeggedReference",
	PeggedReferenceUnspecified,
	PeggedReferenceMid,
	PeggedReferenceBestBid,
	PeggedReferenceBestAsk,
)

// Known reports whether e is a value this package knows.
func (e PeggedReference) Known() bool { return peggedReferenceEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *PeggedReference) UnmarshalJSON(b []byte) error {
	return peggedReferenceEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e PeggedReference) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return peggedReferenceEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *PeggedReference) UnmarshalGQLContext(_ context.Context, v any) error {
	return peggedReferenceEnum.unmarshalGQL(e, v)
}

// TimeInForce is how long an order stays on the book.
type TimeInForce string

// TimeInForce values.
const (
	TimeInForceUnspecified TimeInForce = "TIME_IN_FORCE_UNSPECIFIED"
	TimeInForceGTC         TimeInForce = "TIME_IN_FORCE_GTC"
	TimeInForceGTT         TimeInForce = "TIME_IN_FORCE_GTT"
	TimeInForceIOC         TimeInForce = "TIME_IN_FORCE_IOC"
	TimeInForceFOK         TimeInForce = "TIME_IN_FORCE_FOK"
	TimeInForceGFA         TimeInForce = "TIME_IN_FORCE_GFA"
	TimeInForceGFN         TimeInForce = "TIME_IN_FORCE_GFN"
)

var timeInForceEnum = newEnum("TimeInForce",
	TimeInForceUnspecified,
	TimeInForceGTC,
	TimeInForceGTT,
	TimeInForceIOC,
	TimeInForceFOK,
	TimeInForceGFA,
	TimeInForceGFN,
)

// Known reports whether e is a value this package knows.
func (e TimeInForce) Known() bool { return timeInForceEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *TimeInForce) UnmarshalJSON(b []byte) error { return timeInForceEnum.unmarshalJSON(e, b) }

// MarshalGQLContext writes a known value's quoted name.
func (e TimeInForce) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return timeInForceEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *TimeInForce) UnmarshalGQLContext(_ context.Context, v any) error {
	return timeInForceEnum.unmarshalGQL(e, v)
}

// Side is the side of an order.
type Side string

// Side values.
const (
	SideUnspecified Side = "SIDE_UNSPECIFIED"
	SideBuy         Side = "SIDE_BUY"
	SideSell        Side = "SIDE_SELL"
)

var sideEnum = newEnum("Side",
	SideUnspecified,
	SideBuy,
	SideSell,
)

// Known reports whether e is a value this package knows.
func (e Side) Known() bool { return sideEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *Side) UnmarshalJSON(b []byte) error { return sideEnum.unmarshalJSON(e, b) }

// MarshalGQLContext writes a known value's quoted name.
func (e Side) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return sideEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *Side) UnmarshalGQLContext(_ context.Context, v any) error {
	return sideEnum.unmarshalGQL(e, v)
}

// OrderType is the type of an order.
type OrderType string

// OrderType values.
const (
	OrderTypeUnspecified OrderType = "TYPE_UNSPECIFIED"
	OrderTypeLimit       OrderType = "TYPE_LIMIT"
	OrderTypeMarket      OrderType = "TYPE_MARKET"
	OrderTypeNetwork     OrderType = "TYPE_NETWORK"
)

var orderTypeEnum = newEnum("OrderType",
	OrderTypeUnspecified,
	OrderTypeLimit,
	OrderTypeMarket,
	OrderTypeNetwork,
)

// Known reports whether e is a value this package knows.
func (e OrderType) Known() bool { return orderTypeEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *OrderType) UnmarshalJSON(b []byte) error { return orderTypeEnum.unmarshalJSON(e, b) }

// MarshalGQLContext writes a known value's quoted name.
func (e OrderType) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return orderTypeEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *OrderType) UnmarshalGQLContext(_ context.Context, v any) error {
	return orderTypeEnum.unmarshalGQL(e, v)
}

// StopOrderExpiryStrategy is what happens to a stop order when it expires.
type StopOrderExpiryStrategy string

// StopOrderExpiryStrategy values.
const (
	StopOrderExpiryStrategyUnspecified StopOrderExpiryStrategy = "EXPIRY_STRATEGY_UNSPECIFIED"
	StopOrderExpiryStrategyCancels     StopOrderExpiryStrategy = "EXPIRY_STRATEGY_CANCELS"
	StopOrderExpiryStrategySubmit      StopOrderExpiryStrategy = "EXPIRY_STRATEGY_SUBMIT"
)

var stopOrderExpiryStrategyEnum = newEnum("StopOrderExpiryStrategy",
	StopOrderExpiryStrategyUnspecified,
	StopOrderExpiryStrategyCancels,
	StopOrderExpiryStrategySubmit,
)

// Known reports whether e is a value this package knows.
func (e StopOrderExpiryStrategy) Known() bool { return stopOrderExpiryStrategyEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *StopOrderExpiryStrategy) UnmarshalJSON(b []byte) error {
	return stopOrderExpiryStrategyEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e StopOrderExpiryStrategy) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return stopOrderExpiryStrategyEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *StopOrderExpiryStrategy) UnmarshalGQLContext(_ context.Context, v any) error {
	return stopOrderExpiryStrategyEnum.unmarshalGQL(e, v)
}

// SizeOverrideSetting is whether a stop order's size is derived from its order or from the position.
type SizeOverrideSetting string

// SizeOverrideSetting values.
const (
	SizeOverrideSettingUnspecified SizeOverrideSetting = "SIZE_OVERRIDE_SETTING_UNSPECIFIED"
	SizeOverrideSettingNone        SizeOverrideSetting = "SIZE_OVERRIDE_SETTING_NONE"
	SizeOverrideSettingPosition    SizeOverrideSetting = "SIZE_OVERRIDE_SETTING_POSITION"
)

var sizeOverrideSettingEnum = newEnum("SizeOverrideSetting",
	SizeOverrideSettingUnspecified,
	SizeOverrideSettingNone,
	SizeOverrideSettingPosition,
)

// Known reports whether e is a value this package knows.
func (e SizeOverrideSetting) Known() bool { return sizeOverrideSettingEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *SizeOverrideSetting) UnmarshalJSON(b []byte) error {
	return sizeOverrideSettingEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e SizeOverrideSetting) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return sizeOverrideSettingEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *SizeOverrideSetting) UnmarshalGQLContext(_ context.Context, v any) error {
	return sizeOverrideSettingEnum.unmarshalGQL(e, v)
}

// MarginMode is how margin is managed for a party on a market.
type MarginMode string

// MarginMode values.
const (
	MarginModeUnspecified    MarginMode = "MODE_UNSPECIFIED"
	MarginModeCrossMargin    MarginMode = "MODE_CROSS_MARGIN"
	MarginModeIsolatedMargin MarginMode = "MODE_ISOLATED_MARGIN"
)

var marginModeEnum = newEnum("MarginMode",
	MarginModeUnspecified,
	MarginModeCrossMargin,
	MarginModeIsolatedMargin,
)

// Known reports whether e is a value this package knows.
func (e MarginMode) Known() bool { return marginModeEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *MarginMode) UnmarshalJSON(b []byte) error { return marginModeEnum.unmarshalJSON(e, b) }

// MarshalGQLContext writes a known value's quoted name.
func (e MarginMode) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return marginModeEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *MarginMode) UnmarshalGQLContext(_ context.Context, v any) error {
	return marginModeEnum.unmarshalGQL(e, v)
}

// ConditionOperator is the comparison a data source condition applies.
type ConditionOperator string

// ConditionOperator values.
const (
	ConditionOperatorUnspecified        ConditionOperator = "OPERATOR_UNSPECIFIED"
	ConditionOperatorEquals             ConditionOperator = "OPERATOR_EQUALS"
	ConditionOperatorGreaterThan        ConditionOperator = "OPERATOR_GREATER_THAN"
	ConditionOperatorGreaterThanOrEqual ConditionOperator = "OPERATOR_GREATER_THAN_OR_EQUAL"
	ConditionOperatorLessThan           ConditionOperator = "OPERATOR_LESS_THAN"
	ConditionOperatorLessThanOrEqual    ConditionOperator = "OPERATOR_LESS_THAN_OR_EQUAL"
)

var conditionOperatorEnum = newEnum("ConditionOperator",
	ConditionOperatorUnspecified,
	ConditionOperatorEquals,
	ConditionOperatorGreaterThan,
	ConditionOperatorGreaterThanOrEqual,
	ConditionOperatorLessThan,
	ConditionOperatorLessThanOrEqual,
)

// Known reports whether e is a value this package knows.
func (e ConditionOperator) Known() bool { return conditionOperatorEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *ConditionOperator) UnmarshalJSON(b []byte) error {
	return conditionOperatorEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e ConditionOperator) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return conditionOperatorEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *ConditionOperator) UnmarshalGQLContext(_ context.Context, v any) error {
	return conditionOperatorEnum.unmarshalGQL(e, v)
}

// PropertyKeyType is the type of a data source property.
type PropertyKeyType string

// PropertyKeyType values.
const (
	PropertyKeyTypeUnspecified PropertyKeyType = "TYPE_UNSPECIFIED"
	PropertyKeyTypeEmpty       PropertyKeyType = "TYPE_EMPTY"
	PropertyKeyTypeInteger     PropertyKeyType = "TYPE_INTEGER"
	PropertyKeyTypeString      PropertyKeyType = "TYPE_STRING"
	PropertyKeyTypeBoolean     PropertyKeyType = "TYPE_BOOLEAN"
	PropertyKeyTypeDecimal     PropertyKeyType = "TYPE_DECIMAL"
	PropertyKeyTypeTimestamp   PropertyKeyType = "TYPE_TIMESTAMP"
)

var propertyKeyTypeEnum = newEnum("PropertyKeyType",
	PropertyKeyTypeUnspecified,
	PropertyKeyTypeEmpty,
	PropertyKeyTypeInteger,
	PropertyKeyTypeString,
	PropertyKeyTypeBoolean,
	PropertyKeyTypeDecimal,
	PropertyKeyTypeTimestamp,
)

// Known reports whether e is a value this package knows.
func (e PropertyKeyType) Known() bool { return propertyKeyTypeEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *PropertyKeyType) UnmarshalJSON(b []byte) error {
	return propertyKeyTypeEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e PropertyKeyType) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return propertyKeyTypeEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *PropertyKeyType) UnmarshalGQLContext(_ context.Context, v any) error {
	return propertyKeyTypeEnum.unmarshalGQL(e, v)
}

// CompositePriceType is how a composite price combines its sources.
type CompositePriceType string

// CompositePriceType values.
const (
	CompositePriceTypeUnspecified CompositePriceType = "COMPOSITE_PRICE_TYPE_UNSPECIFIED"
	CompositePriceTypeWeighted    CompositePriceType = "COMPOSITE_PRICE_TYPE_WEIGHTED"
	CompositePriceTypeMedian      CompositePriceType = "COMPOSITE_PRICE_TYPE_MEDIAN"
	CompositePriceTypeLastTrade   CompositePriceType = "COMPOSITE_PRICE_TYPE_LAST_TRADE"
)

var compositePriceTypeEnum = newEnum("CompositePriceType",
	CompositePriceTypeUnspecified,
	CompositePriceTypeWeighted,
	CompositePriceTypeMedian,
	CompositePriceTypeLastTrade,
)

// Known reports whether e is a value this package knows.
func (e CompositePriceType) Known() bool { return compositePriceTypeEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *CompositePriceType) UnmarshalJSON(b []byte) error {
	return compositePriceTypeEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e CompositePriceType) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return compositePriceTypeEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *CompositePriceType) UnmarshalGQLContext(_ context.Context, v any) error {
	return compositePriceTypeEnum.unmarshalGQL(e, v)
}

// LiquidityFeeMethod is how the liquidity fee is computed.
type LiquidityFeeMethod string

// LiquidityFeeMethod values.
const (
	LiquidityFeeMethodUnspecified     LiquidityFeeMethod = "METHOD_UNSPECIFIED"
	LiquidityFeeMethodMarginalCost    LiquidityFeeMethod = "METHOD_MARGINAL_COST"
	LiquidityFeeMethodWeightedAverage LiquidityFeeMethod = "METHOD_WEIGHTED_AVERAGE"
	LiquidityFeeMethodConstant        LiquidityFeeMethod = "METHOD_CONSTANT"
)

var liquidityFeeMethodEnum = newEnum("LiquidityFeeMethod",
	LiquidityFeeMethodUnspecified,
	LiquidityFeeMethodMarginalCost,
	LiquidityFeeMethodWeightedAverage,
	LiquidityFeeMethodConstant,
)

// Known reports whether e is a value this package knows.
func (e LiquidityFeeMethod) Known() bool { return liquidityFeeMethodEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *LiquidityFeeMethod) UnmarshalJSON(b []byte) error {
	return liquidityFeeMethodEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e LiquidityFeeMethod) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return liquidityFeeMethodEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *LiquidityFeeMethod) UnmarshalGQLContext(_ context.Context, v any) error {
	return liquidityFeeMethodEnum.unmarshalGQL(e, v)
}

// GovernanceTransferType is whether a governance transfer moves all or nothing, or as much as it can.
type GovernanceTransferType string

// GovernanceTransferType values.
const (
	GovernanceTransferTypeUnspecified  GovernanceTransferType = "GOVERNANCE_TRANSFER_TYPE_UNSPECIFIED"
	GovernanceTransferTypeAllOrNothing GovernanceTransferType = "GOVERNANCE_TRANSFER_TYPE_ALL_OR_NOTHING"
	GovernanceTransferTypeBestEffort   GovernanceTransferType = "GOVERNANCE_TRANSFER_TYPE_BEST_EFFORT"
)

var governanceTransferTypeEnum = newEnum("GovernanceTransferType",
	GovernanceTransferTypeUnspecified,
	GovernanceTransferTypeAllOrNothing,
	GovernanceTransferTypeBestEffort,
)

// Known reports whether e is a value this package knows.
func (e GovernanceTransferType) Known() bool { return governanceTransferTypeEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *GovernanceTransferType) UnmarshalJSON(b []byte) error {
	return governanceTransferTypeEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e GovernanceTransferType) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return governanceTransferTypeEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *GovernanceTransferType) UnmarshalGQLContext(_ context.Context, v any) error {
	return governanceTransferTypeEnum.unmarshalGQL(e, v)
}

// DistributionStrategy is how a reward is distributed among entities.
type DistributionStrategy string

// DistributionStrategy values.
const (
	DistributionStrategyUnspecified DistributionStrategy = "DISTRIBUTION_STRATEGY_UNSPECIFIED"
	DistributionStrategyProRata     DistributionStrategy = "DISTRIBUTION_STRATEGY_PRO_RATA"
	DistributionStrategyRank        DistributionStrategy = "DISTRIBUTION_STRATEGY_RANK"
)

var distributionStrategyEnum = newEnum("DistributionStrategy",
	DistributionStrategyUnspecified,
	DistributionStrategyProRata,
	DistributionStrategyRank,
)

// Known reports whether e is a value this package knows.
func (e DistributionStrategy) Known() bool { return distributionStrategyEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *DistributionStrategy) UnmarshalJSON(b []byte) error {
	return distributionStrategyEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e DistributionStrategy) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return distributionStrategyEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *DistributionStrategy) UnmarshalGQLContext(_ context.Context, v any) error {
	return distributionStrategyEnum.unmarshalGQL(e, v)
}

// EntityScope is whether a reward is paid to individuals or to teams.
type EntityScope string

// EntityScope values.
const (
	EntityScopeUnspecified EntityScope = "ENTITY_SCOPE_UNSPECIFIED"
	EntityScopeIndividuals EntityScope = "ENTITY_SCOPE_INDIVIDUALS"
	EntityScopeTeams       EntityScope = "ENTITY_SCOPE_TEAMS"
)

var entityScopeEnum = newEnum("EntityScope",
	EntityScopeUnspecified,
	EntityScopeIndividuals,
	EntityScopeTeams,
)

// Known reports whether e is a value this package knows.
func (e EntityScope) Known() bool { return entityScopeEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *EntityScope) UnmarshalJSON(b []byte) error { return entityScopeEnum.unmarshalJSON(e, b) }

// MarshalGQLContext writes a known value's quoted name.
func (e EntityScope) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return entityScopeEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *EntityScope) UnmarshalGQLContext(_ context.Context, v any) error {
	return entityScopeEnum.unmarshalGQL(e, v)
}

// IndividualScope is which individuals an individual-scope reward covers.
type IndividualScope string

// IndividualScope values.
const (
	IndividualScopeUnspecified IndividualScope = "INDIVIDUAL_SCOPE_UNSPECIFIED"
	IndividualScopeAll         IndividualScope = "INDIVIDUAL_SCOPE_ALL"
	IndividualScopeInTeam      IndividualScope = "INDIVIDUAL_SCOPE_IN_TEAM"
	IndividualScopeNotInTeam   IndividualScope = "INDIVIDUAL_SCOPE_NOT_IN_TEAM"
)

var individualScopeEnum = newEnum("IndividualScope",
	IndividualScopeUnspecified,
	IndividualScopeAll,
	IndividualScopeInTeam,
	IndividualScopeNotInTeam,
)

// Known reports whether e is a value this package knows.
func (e IndividualScope) Known() bool { return individualScopeEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *IndividualScope) UnmarshalJSON(b []byte) error {
	return individualScopeEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e IndividualScope) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return individualScopeEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *IndividualScope) UnmarshalGQLContext(_ context.Context, v any) error {
	return individualScopeEnum.unmarshalGQL(e, v)
}

// DispatchMetric is the metric a reward transfer is dispatched by.
type DispatchMetric string

// DispatchMetric values.
const (
	DispatchMetricUnspecified       DispatchMetric = "DISPATCH_METRIC_UNSPECIFIED"
	DispatchMetricMakerFeesPaid     DispatchMetric = "DISPATCH_METRIC_MAKER_FEES_PAID"
	DispatchMetricMakerFeesReceived DispatchMetric = "DISPATCH_METRIC_MAKER_FEES_RECEIVED"
	DispatchMetricLPFeesReceived    DispatchMetric = "DISPATCH_METRIC_LP_FEES_RECEIVED"
	DispatchMetricMarketValue       DispatchMetric = "DISPATCH_METRIC_MARKET_VALUE"
	DispatchMetricAveragePosition   DispatchMetric = "DISPATCH_METRIC_AVERAGE_POSITION"
	DispatchMetricRelativeReturn    DispatchMetric = "DISPATCH_METRIC_RELATIVE_RETURN"
	DispatchMetricReturnVolatility  DispatchMetric = "DISPATCH_METRIC_RETURN_VOLATILITY"
	DispatchMetricValidatorRanking  DispatchMetric = "DISPATCH_METRIC_VALIDATOR_RANKING"
)

var dispatchMetricEnum = newEnum("DispatchMetric",
	DispatchMetricUnspecified,
	DispatchMetricMakerFeesPaid,
	DispatchMetricMakerFeesReceived,
	DispatchMetricLPFeesReceived,
	DispatchMetricMarketValue,
	DispatchMetricAveragePosition,
	DispatchMetricRelativeReturn,
	DispatchMetricReturnVolatility,
	DispatchMetricValidatorRanking,
)

// Known reports whether e is a value this package knows.
func (e DispatchMetric) Known() bool { return dispatchMetricEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *DispatchMetric) UnmarshalJSON(b []byte) error { return dispatchMetricEnum.unmarshalJSON(e, b) }

// MarshalGQLContext writes a known value's quoted name.
func (e DispatchMetric) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return dispatchMetricEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *DispatchMetric) UnmarshalGQLContext(_ context.Context, v any) error {
	return dispatchMetricEnum.unmarshalGQL(e, v)
}

// MarketStateUpdateType is the change a market state update makes.
type MarketStateUpdateType string

// MarketStateUpdateType values.
const (
	MarketStateUpdateTypeUnspecified MarketStateUpdateType = "MARKET_STATE_UPDATE_TYPE_UNSPECIFIED"
	MarketStateUpdateTypeTerminate   MarketStateUpdateType = "MARKET_STATE_UPDATE_TYPE_TERMINATE"
	MarketStateUpdateTypeSuspend     MarketStateUpdateType = "MARKET_STATE_UPDATE_TYPE_SUSPEND"
	MarketStateUpdateTypeResume      MarketStateUpdateType = "MARKET_STATE_UPDATE_TYPE_RESUME"
)

var marketStateUpdateTypeEnum = newEnum("MarketStateUpdateType",
	MarketStateUpdateTypeUnspecified,
	MarketStateUpdateTypeTerminate,
	MarketStateUpdateTypeSuspend,
	MarketStateUpdateTypeResume,
)

// Known reports whether e is a value this package knows.
func (e MarketStateUpdateType) Known() bool { return marketStateUpdateTypeEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *MarketStateUpdateType) UnmarshalJSON(b []byte) error {
	return marketStateUpdateTypeEnum.unmarshalJSON(e, b)
}

// MarshalGQLContext writes a known value's quoted name.
func (e MarketStateUpdateType) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return marketStateUpdateTypeEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *MarketStateUpdateType) UnmarshalGQLContext(_ context.Context, v any) error {
	return marketStateUpdateTypeEnum.unmarshalGQL(e, v)
}

// AccountType is the kind of an account a transfer moves funds from or to.
type AccountType string

// AccountType values.
const (
	AccountTypeUnspecified                    AccountType = "ACCOUNT_TYPE_UNSPECIFIED"
	AccountTypeInsurance                      AccountType = "ACCOUNT_TYPE_INSURANCE"
	AccountTypeSettlement                     AccountType = "ACCOUNT_TYPE_SETTLEMENT"
	AccountTypeMargin                         AccountType = "ACCOUNT_TYPE_MARGIN"
	AccountTypeGeneral                        AccountType = "ACCOUNT_TYPE_GENERAL"
	AccountTypeFeesInfrastructure             AccountType = "ACCOUNT_TYPE_FEES_INFRASTRUCTURE"
	AccountTypeFeesLiquidity                  AccountType = "ACCOUNT_TYPE_FEES_LIQUIDITY"
	AccountTypeFeesMaker                      AccountType = "ACCOUNT_TYPE_FEES_MAKER"
	AccountTypeBond                           AccountType = "ACCOUNT_TYPE_BOND"
	AccountTypeExternal                       AccountType = "ACCOUNT_TYPE_EXTERNAL"
	AccountTypeGlobalInsurance                AccountType = "ACCOUNT_TYPE_GLOBAL_INSURANCE"
	AccountTypeGlobalReward                   AccountType = "ACCOUNT_TYPE_GLOBAL_REWARD"
	AccountTypePendingTransfers               AccountType = "ACCOUNT_TYPE_PENDING_TRANSFERS"
	AccountTypeRewardMakerPaidFees            AccountType = "ACCOUNT_TYPE_REWARD_MAKER_PAID_FEES"
	AccountTypeRewardMakerReceivedFees        AccountType = "ACCOUNT_TYPE_REWARD_MAKER_RECEIVED_FEES"
	AccountTypeRewardLPReceivedFees           AccountType = "ACCOUNT_TYPE_REWARD_LP_RECEIVED_FEES"
	AccountTypeRewardMarketProposers          AccountType = "ACCOUNT_TYPE_REWARD_MARKET_PROPOSERS"
	AccountTypeHolding                        AccountType = "ACCOUNT_TYPE_HOLDING"
	AccountTypeLPLiquidityFees                AccountType = "ACCOUNT_TYPE_LP_LIQUIDITY_FEES"
	AccountTypeLiquidityFeesBonusDistribution AccountType = "ACCOUNT_TYPE_LIQUIDITY_FEES_BONUS_DISTRIBUTION"
	AccountTypeNetworkTreasury                AccountType = "ACCOUNT_TYPE_NETWORK_TREASURY"
	AccountTypeVestingRewards                 AccountType = "ACCOUNT_TYPE_VESTING_REWARDS"
	AccountTypeVestedRewards                  AccountType = "ACCOUNT_TYPE_VESTED_REWARDS"
	AccountTypeRewardAveragePosition          AccountType = "ACCOUNT_TYPE_REWARD_AVERAGE_POSITION"
	AccountTypeRewardRelativeReturn           AccountType = "ACCOUNT_TYPE_REWARD_RELATIVE_RETURN"
	AccountTypeRewardReturnVolatility         AccountType = "ACCOUNT_TYPE_REWARD_RETURN_VOLATILITY"
	AccountTypeRewardValidatorRanking         AccountType = "ACCOUNT_TYPE_REWARD_VALIDATOR_RANKING"
	AccountTypePendingFeeReferralReward       AccountType = "ACCOUNT_TYPE_PENDING_FEE_REFERRAL_REWARD"
	AccountTypeOrderMargin                    AccountType = "ACCOUNT_TYPE_ORDER_MARGIN"
)

var accountTypeEnum = newEnum("AccountType",
	AccountTypeUnspecified,
	AccountTypeInsurance,
	AccountTypeSettlement,
	AccountTypeMargin,
	AccountTypeGeneral,
	AccountTypeFeesInfrastructure,
	AccountTypeFeesLiquidity,
	AccountTypeFeesMaker,
	AccountTypeBond,
	AccountTypeExternal,
	AccountTypeGlobalInsurance,
	AccountTypeGlobalReward,
	AccountTypePendingTransfers,
	AccountTypeRewardMakerPaidFees,
	AccountTypeRewardMakerReceivedFees,
	AccountTypeRewardLPReceivedFees,
	AccountTypeRewardMarketProposers,
	AccountTypeHolding,
	AccountTypeLPLiquidityFees,
	AccountTypeLiquidityFeesBonusDistribution,
	AccountTypeNetworkTreasury,
	AccountTypeVestingRewards,
	AccountTypeVestedRewards,
	AccountTypeRewardAveragePosition,
	AccountTypeRewardRelativeReturn,
	AccountTypeRewardReturnVolatility,
	AccountTypeRewardValidatorRanking,
	AccountTypePendingFeeReferralReward,
	AccountTypeOrderMargin,
)

// Known reports whether e is a value this package knows.
func (e AccountType) Known() bool { return accountTypeEnum.known(e) }

// UnmarshalJSON decodes a value name or a bare number.
func (e *AccountType) UnmarshalJSON(b []byte) error { return accountTypeEnum.unmarshalJSON(e, b) }

// MarshalGQLContext writes a known value's quoted name.
func (e AccountType) MarshalGQLContext(_ context.Context, w io.Writer) error {
	return accountTypeEnum.marshalGQL(w, e)
}

// UnmarshalGQLContext accepts a known value's name.
func (e *AccountType) UnmarshalGQLContext(_ context.Context, v any) error {
	return accountTypeEnum.unmarshalGQL(e, v)
}
