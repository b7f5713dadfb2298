//go:build !race

package httpcompress

const raceEnabled = false
