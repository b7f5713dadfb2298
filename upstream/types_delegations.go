package upstream

// Delegation is a token delegation from a party to a node (data node
// /api/v2/delegations).
type Delegation struct {
	// Amount is an unsigned decimal integer scaled to the asset's decimals.
	Amount   string `json:"amount"`
	EpochSeq string `json:"epochSeq"`
	NodeID   string `json:"nodeId"`
	// Party is the delegating party's id (the wire says party, not partyId).
	Party string `json:"party"`
}
