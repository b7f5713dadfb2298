package graph

import (
	"math"
	"strconv"

	"github.com/tradenet/gateway/internal/clip"
)

// The data service's ids (parties, nodes, markets, assets) are 64
// hexadecimal characters. Checking them here turns a typo into a clear
// BAD_USER_INPUT error instead of an upstream error or an empty list.
func isHexID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// isLowerHex64 reports 64 lowercase hexadecimal characters: an id as the
// data service writes it, a SHA-256 hash as a persisted document's id.
func isLowerHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkID validates an optional id argument.
func checkID(arg, kind string, id *string) error {
	if id == nil {
		return nil
	}
	if !isHexID(*id) {
		return badInput("%s: %q is not a %s id; %s ids are 64 hexadecimal characters", arg, clip.Cut(*id, 80), kind, kind)
	}
	return nil
}

// checkEpoch validates an epoch argument: an integer from 0 to 2^63-1
// (epochRange).
func checkEpoch(arg string, epoch *string) error {
	if epoch == nil {
		return nil
	}
	if n, err := strconv.ParseUint(*epoch, 10, 64); err != nil || n > math.MaxInt64 {
		return badInput("%s: %q is not an epoch; epochs are integers from 0 to %d such as \"42\"", arg, clip.Cut(*epoch, 80), int64(math.MaxInt64))
	}
	return nil
}

// deref returns *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
