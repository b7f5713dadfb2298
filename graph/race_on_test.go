//go:build race

package graph

// raceEnabled: under the race detector sync.Pool drops items at random, so
// allocation counts of pooled code are not meaningful.
const raceEnabled = true
