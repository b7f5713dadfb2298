package upstream

// DataSourceDefinition defines a data source, a one-of: exactly one of
// Internal and External is set.
type DataSourceDefinition struct {
	Internal *DataSourceDefinitionInternal `json:"internal,omitempty"`
	External *DataSourceDefinitionExternal `json:"external,omitempty"`
}

// DataSourceDefinitionInternal is a data source inside the network, a
// one-of: exactly one of Time and TimeTrigger is set.
type DataSourceDefinitionInternal struct {
	Time        *DataSourceSpecConfigurationTime        `json:"time,omitempty"`
	TimeTrigger *DataSourceSpecConfigurationTimeTrigger `json:"timeTrigger,omitempty"`
}

// DataSourceDefinitionExternal is a data source outside the network, a
// one-of: exactly one of Oracle and EthOracle is set.
type DataSourceDefinitionExternal struct {
	Oracle    *DataSourceSpecConfiguration `json:"oracle,omitempty"`
	EthOracle *EthCallSpec                 `json:"ethOracle,omitempty"`
}

// DataSourceSpecConfigurationTime emits the network time, filtered by conditions.
type DataSourceSpecConfigurationTime struct {
	Conditions []Condition `json:"conditions"`
}

// DataSourceSpecConfigurationTimeTrigger emits the network time on a schedule.
type DataSourceSpecConfigurationTimeTrigger struct {
	Conditions []Condition           `json:"conditions"`
	Triggers   []InternalTimeTrigger `json:"triggers"`
}

// InternalTimeTrigger is a schedule in network time.
type InternalTimeTrigger struct {
	// Initial is omitted when the schedule starts immediately.
	Initial *UnixSeconds `json:"initial,omitempty"`
	// Every is the period in seconds.
	Every Int64 `json:"every"`
}

// DataSourceSpecConfiguration is signed data pushed to the network; all
// signatures or keys in the data must be among Signers.
type DataSourceSpecConfiguration struct {
	Signers []Signer `json:"signers"`
	Filters []Filter `json:"filters"`
}

// EthCallSpec reads a contract on an EVM chain.
type EthCallSpec struct {
	// Address is the contract's address.
	Address string `json:"address"`
	ABI     string `json:"abi"`
	Method  string `json:"method"`
	// Args are arbitrary JSON values, mapped to chain types by the ABI.
	Args        []RawJSON       `json:"args"`
	Trigger     *EthCallTrigger `json:"trigger"`
	Filters     []Filter        `json:"filters"`
	Normalisers []Normaliser    `json:"normalisers"`
	// RequiredConfirmations is the number of block confirmations to wait for.
	RequiredConfirmations Uint64 `json:"requiredConfirmations"`
	// SourceChainID is the ID of the EVM chain.
	SourceChainID Uint64 `json:"sourceChainId"`
}

// EthCallTrigger says when the call is made, a one-of whose only member is
// TimeTrigger.
type EthCallTrigger struct {
	TimeTrigger *EthTimeTrigger `json:"timeTrigger,omitempty"`
}

// EthTimeTrigger is a schedule in chain time. Each field is omitted when unset.
type EthTimeTrigger struct {
	// Initial is the first call; unset means immediately.
	Initial *UnixSeconds `json:"initial,omitempty"`
	// Every is the period in seconds; unset means once.
	Every *Uint64 `json:"every,omitempty"`
	// Until stops the repetition; unset means never.
	Until *UnixSeconds `json:"until,omitempty"`
}

// Normaliser extracts a named property from a call result.
type Normaliser struct {
	Name string `json:"name"`
	// Expression is a JSONPath into the call result.
	Expression string `json:"expression"`
}

// Filter keeps data whose property Key meets all Conditions.
type Filter struct {
	Key        *PropertyKey `json:"key"`
	Conditions []Condition  `json:"conditions"`
}

// Condition compares a property with a value.
type Condition struct {
	Operator ConditionOperator `json:"operator"`
	Value    string            `json:"value"`
}

// PropertyKey names and types a data property.
type PropertyKey struct {
	Name string          `json:"name"`
	Type PropertyKeyType `json:"type"`
	// NumberDecimalPlaces is omitted for non-decimal types.
	NumberDecimalPlaces *Uint64 `json:"numberDecimalPlaces,omitempty"`
}

// Signer is a signer of oracle data, a one-of: exactly one of PubKey and
// ETHAddress is set.
type Signer struct {
	PubKey     *PubKey     `json:"pubKey,omitempty"`
	ETHAddress *ETHAddress `json:"ethAddress,omitempty"`
}

// PubKey is a network public key.
type PubKey struct {
	Key string `json:"key"`
}

// ETHAddress is an address on an EVM chain.
type ETHAddress struct {
	Address string `json:"address"`
}
