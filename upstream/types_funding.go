package upstream

// FundingPayment is what a party gained or lost on a perpetual market when
// a funding period ended (data node /api/v2/funding-payments).
type FundingPayment struct {
	// Amount is a signed decimal integer: positive earned, negative lost.
	Amount           string    `json:"amount"`
	FundingPeriodSeq Uint64    `json:"fundingPeriodSeq"`
	MarketID         string    `json:"marketId"`
	PartyID          string    `json:"partyId"`
	Timestamp        UnixNanos `json:"timestamp"`
}
