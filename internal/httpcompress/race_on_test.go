//go:build race

package httpcompress

// raceEnabled: under the race detector sync.Pool drops items at random, so
// the bytes pooled code allocates are not meaningful.
const raceEnabled = true
