// Package jsonscan holds what the gateway's hand-written JSON scanners
// share: the upstream decoder's one-of scans (package upstream) and the
// request body decoder (package graph).
package jsonscan

// Space is JSON's whitespace, for bytes.Trim and its kin.
const Space = " \t\r\n"

// SkipSpace returns the index of the first byte at or after b[i] that is
// not JSON whitespace (space, tab, newline, carriage return), or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}
