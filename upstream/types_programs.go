package upstream

// The reward programs proposed in governance changes
// (updateReferralProgram, updateVolumeDiscountProgram). A change carries
// the program's new terms only: the program's ID and version are the data
// node's, and its end is in Unix seconds (the data node's program records
// use nanoseconds).

// UpdateReferralProgram proposes new terms for the referral program.
type UpdateReferralProgram struct {
	Changes *ReferralProgramChanges `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*UpdateReferralProgram) IsProposalChangeKind() {}

// ReferralProgramChanges are the proposed terms of the referral program.
type ReferralProgramChanges struct {
	// BenefitTiers are in increasing order; the first is tier 1.
	BenefitTiers []BenefitTier `json:"benefitTiers"`
	// EndOfProgramTimestamp: the program ends when the epoch running at this
	// time ends.
	EndOfProgramTimestamp UnixSeconds `json:"endOfProgramTimestamp"`
	// WindowLength is the number of epochs over which a referral set's
	// running volume is measured.
	WindowLength Uint64 `json:"windowLength"`
	// StakingTiers are tiers by the referrer's stake, in increasing order.
	StakingTiers []StakingTier `json:"stakingTiers"`
}

// BenefitTier is one tier of the referral program.
type BenefitTier struct {
	// MinimumRunningNotionalTakerVolume is an integer string in quantum units.
	MinimumRunningNotionalTakerVolume string `json:"minimumRunningNotionalTakerVolume"`
	// MinimumEpochs is an integer sent as a string: the epochs of set
	// membership the tier requires.
	MinimumEpochs string `json:"minimumEpochs"`
	// ReferralRewardFactor is the share of the referee's taker fees paid to
	// the referrer, a decimal string.
	ReferralRewardFactor string `json:"referralRewardFactor"`
	// ReferralDiscountFactor is the share of the referee's taker fees
	// discounted, a decimal string.
	ReferralDiscountFactor string `json:"referralDiscountFactor"`
}

// StakingTier multiplies the referrer's reward by its stake.
type StakingTier struct {
	// MinimumStakedTokens is an integer string of governance tokens.
	MinimumStakedTokens string `json:"minimumStakedTokens"`
	// ReferralRewardMultiplier is a decimal string.
	ReferralRewardMultiplier string `json:"referralRewardMultiplier"`
}

// UpdateVolumeDiscountProgram proposes new terms for the volume discount
// program.
type UpdateVolumeDiscountProgram struct {
	Changes *VolumeDiscountProgramChanges `json:"changes"`
}

// IsProposalChangeKind marks the member of the ProposalChangeKind union.
func (*UpdateVolumeDiscountProgram) IsProposalChangeKind() {}

// VolumeDiscountProgramChanges are the proposed terms of the volume
// discount program.
type VolumeDiscountProgramChanges struct {
	// BenefitTiers are in increasing order.
	BenefitTiers []VolumeBenefitTier `json:"benefitTiers"`
	// EndOfProgramTimestamp: the program ends when the epoch running at this
	// time ends.
	EndOfProgramTimestamp UnixSeconds `json:"endOfProgramTimestamp"`
	// WindowLength is the number of epochs over which running volume is
	// measured.
	WindowLength Uint64 `json:"windowLength"`
}

// VolumeBenefitTier is one tier of the volume discount program.
type VolumeBenefitTier struct {
	// MinimumRunningNotionalTakerVolume is an integer string in quantum units.
	MinimumRunningNotionalTakerVolume string `json:"minimumRunningNotionalTakerVolume"`
	// VolumeDiscountFactor is a decimal string.
	VolumeDiscountFactor string `json:"volumeDiscountFactor"`
}
