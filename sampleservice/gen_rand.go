package sampleservice

import (
	"encoding/base64"
	"math/rand/v2"
	"strconv"
)

// Random streams. Every part of the dataset draws from its own stream,
// derived from the seed and a stream label (and, for a transaction, its
// position), so that any part can be regenerated alone and in any order.
const (
	streamAssets uint64 = iota + 1
	streamParties
	streamNodes
	streamMarkets
	streamFunding
	streamDelegations
	streamLayout
	streamTxIndex
	streamTxBody
	streamMisc
	// Blocks appended while the service runs (live.go), drawn per block
	// height (layout) and per (height, index) (index, body).
	streamLiveLayout
	streamLiveIndex
	streamLiveBody
)

// mix64 is the SplitMix64 finaliser: it spreads nearby inputs far apart.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// newRand returns the random stream for (seed, stream, n).
func newRand(seed int64, stream uint64, n uint64) *rand.Rand {
	hi := mix64(uint64(seed) ^ mix64(stream))
	lo := mix64(hi ^ mix64(n+stream<<56))
	return rand.New(rand.NewPCG(hi, lo))
}

const hexLower = "0123456789abcdef"
const hexUpper = "0123456789ABCDEF"

// hexString returns n random hex digits from the given alphabet.
func hexString(r *rand.Rand, n int, alphabet string) string {
	b := make([]byte, n)
	for i := 0; i < n; {
		v := r.Uint64()
		for j := 0; j < 16 && i < n; j++ {
			b[i] = alphabet[v&15]
			v >>= 4
			i++
		}
	}
	return string(b)
}

// digits returns n random decimal digits.
func digits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// hexID returns a 64-digit lowercase hex id (a public key, market or asset id).
func hexID(r *rand.Rand) string { return hexString(r, 64, hexLower) }

// ethAddress returns a 0x-prefixed 40-digit lowercase hex address.
func ethAddress(r *rand.Rand) string { return "0x" + hexString(r, 40, hexLower) }

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// chance reports true with probability num/den.
func chance(r *rand.Rand, num, den int) bool { return r.IntN(den) < num }

func itoa(n int64) string                      { return strconv.FormatInt(n, 10) }
func utoa(n uint64) string                     { return strconv.FormatUint(n, 10) }
func between(r *rand.Rand, lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }

// scaled returns whole * 10^decimals + a random fraction, as a decimal
// integer string: an amount of `whole` units of an asset with that many
// decimals.
func scaled(r *rand.Rand, whole int64, decimals int) string {
	s := itoa(whole)
	if decimals == 0 {
		return s
	}
	frac := make([]byte, decimals)
	for i := range frac {
		frac[i] = '0'
	}
	// Randomise up to four leading fraction digits.
	for i := 0; i < decimals && i < 4; i++ {
		frac[i] = byte('0' + r.IntN(10))
	}
	if whole == 0 {
		// Trim leading zeros of the fraction.
		i := 0
		for i < len(frac)-1 && frac[i] == '0' {
			i++
		}
		return string(frac[i:])
	}
	return s + string(frac)
}

// weighted draws an index with the given weights.
func weighted(r *rand.Rand, cumulative []int) int {
	x := r.IntN(cumulative[len(cumulative)-1])
	lo, hi := 0, len(cumulative)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if cumulative[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func cumulate(weights []int) []int {
	c := make([]int, len(weights))
	sum := 0
	for i, w := range weights {
		sum += w
		c[i] = sum
	}
	return c
}

// cumulateWeights returns the cumulative weights of n items, weight(i)
// being item i's.
func cumulateWeights(n int, weight func(i int) int) []int {
	w := make([]int, n)
	for i := range w {
		w[i] = weight(i)
	}
	return cumulate(w)
}

func ptr[T any](v T) *T { return &v }

// optional returns an optional string field: absent (nil) when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// unknownEnum is an enum value beyond the schema: upstream's enum types
// keep it as its decimal text and encode it as a bare number.
func unknownEnum(n int32) string { return strconv.FormatInt(int64(n), 10) }

// base64Bytes is a protobuf bytes field as upstream types hold it: its
// standard base64 with padding, nil (null on the wire) when empty.
func base64Bytes(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	return ptr(base64.StdEncoding.EncodeToString(b))
}
