// Package clip shortens a client's values before the gateway quotes them
// in an error message or a close reason (packages graph and transport), so
// that a long value does not make a long message.
package clip

import "unicode/utf8"

// IDLength is how much of a client's id a message quotes.
const IDLength = 64

// Cut returns s if it has at most n bytes; otherwise its first n bytes or
// fewer, cut at the start of a character, followed by "…".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ID is Cut(id, IDLength): a client's id (a document's, a subscription's,
// a message type) as a message quotes it.
func ID(id string) string { return Cut(id, IDLength) }
