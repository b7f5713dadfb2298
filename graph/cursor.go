package graph

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
)

// The gateway's cursors are opaque to clients: base64url (unpadded) of
// "<version>:<list>:<payload>" followed by its MAC (cursorkeys.go). The MAC
// makes a cursor the gateway did not issue, or issued under another key, a
// BAD_USER_INPUT error that is found before the payload is read, and so
// before anything reaches an upstream (docs/contracts.md, Cursors and
// paging). The version lets the format change; the list binds a cursor to
// the connection that issued it, so a cursor given to another list is a
// clear BAD_USER_INPUT error rather than an upstream 500. Payloads: JSON
// for transactions ({"b":…,"i":…}); binary for the data-node lists (the
// upstream cursor packed, upstream.Cursor.Pack) and for funding payments
// (the sort key and position, funding.go). Versions 1 (JSON) and 2 (binary)
// carried the same payloads unsigned; they are refused, with a message of
// their own.
const signedCursorVersion = "v3"

// cursorEncoding is the cursors' base64: strict, so that a cursor has one
// spelling.
var cursorEncoding = base64.RawURLEncoding.Strict()

// cursorList names the connection a cursor belongs to.
type cursorList string

const (
	listAssets          cursorList = "assets"
	listFundingPayments cursorList = "funding-payments"
	listDelegations     cursorList = "delegations"
	listTransactions    cursorList = "transactions"
)

// cursorBuffer sizes the stack buffers cursors are built in: a page of
// cursors then costs one allocation each (the string), however long a
// data-node cursor is (a longer one spills to the heap, still correct).
const cursorBuffer = 512

// appendCursorHeader appends "<version>:<list>:".
func appendCursorHeader(b []byte, list cursorList) []byte {
	b = append(b, signedCursorVersion...)
	b = append(b, ':')
	b = append(b, list...)
	return append(b, ':')
}

// sealCursor returns the cursor of the raw form "<version>:<list>:<payload>".
func (k *CursorKeys) sealCursor(raw []byte) string {
	var buf [(cursorBuffer + cursorMACSize) * 4 / 3]byte
	return string(k.appendSigned(buf[:0], raw))
}

// decodeCursor reads a JSON cursor issued for list into payload. arg
// names the argument ("after" or "before") for the error message.
func decodeCursor(keys *CursorKeys, arg, cursor string, list cursorList, payload any) error {
	body, err := openCursor(keys, arg, cursor, list)
	if err != nil {
		return err
	}
	if json.Unmarshal(body, payload) != nil {
		return malformedCursor(arg, list)
	}
	return nil
}

// malformedCursor is the error for a signed cursor whose payload does not
// read: only a gateway of another version could have issued it.
func malformedCursor(arg string, list cursorList) error {
	return badInput("%s: malformed %s cursor; pass a cursor from edges.cursor or pageInfo", arg, list)
}

// openCursor checks a cursor's encoding and MAC, then its version and
// list, and returns its payload. Nothing of the payload is read before
// the MAC is checked, and no error quotes a cursor: a forged one's
// content is never echoed.
func openCursor(keys *CursorKeys, arg, cursor string, list cursorList) ([]byte, error) {
	signed, err := cursorEncoding.DecodeString(cursor)
	// The decoder skips newlines: insist on the one spelling.
	if err != nil || cursorEncoding.EncodedLen(len(signed)) != len(cursor) {
		return nil, badInput("%s: not a cursor issued by this gateway; pass a cursor from edges.cursor or pageInfo", arg)
	}
	if bytes.HasPrefix(signed, []byte("v1:")) || bytes.HasPrefix(signed, []byte("v2:")) {
		return nil, badInput("%s: this cursor is in the unsigned format of earlier gateway versions, no longer accepted; start again from the first page", arg)
	}
	if !keys.verify(signed) {
		return nil, badInput("%s: this cursor was not issued by this gateway, or was issued under another cursor key (cursors from before a key change are refused); start again from the first page", arg)
	}
	raw := signed[:len(signed)-cursorMACSize]
	version, rest, ok := bytes.Cut(raw, []byte(":"))
	owner, payload, ok2 := bytes.Cut(rest, []byte(":"))
	if !ok || !ok2 || string(version) != signedCursorVersion {
		return nil, malformedCursor(arg, list)
	}
	if cursorList(owner) != list {
		// Signed: the list is the gateway's own word, safe to quote.
		return nil, badInput("%s: this cursor belongs to the %s list, not to %s; cursors only page the list that issued them", arg, owner, list)
	}
	return payload, nil
}
