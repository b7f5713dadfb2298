package graph

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The gateway's cursors are opaque to clients: base64url (unpadded) of
// "<version>:<list>:<payload>". The version lets the format change without
// misreading old cursors; the list binds a cursor to the connection that
// issued it, so a cursor given to another list is a clear BAD_USER_INPUT
// error rather than an upstream 500. Version 1 payloads are JSON; version
// 2 is binary: for the data-node lists the upstream cursor packed
// (upstream.Cursor.Pack), for funding payments the sort key and position
// (funding.go). Version 1 cursors of those lists are still read.
const (
	cursorVersion       = "v1"
	packedCursorVersion = "v2"
)

// cursorList names the connection a cursor belongs to.
type cursorList string

const (
	listAssets          cursorList = "assets"
	listFundingPayments cursorList = "funding-payments"
	listDelegations     cursorList = "delegations"
	listTransactions    cursorList = "transactions"
)

// encodeCursor builds the opaque cursor of a row of list from its payload.
// The lists' own payloads (txCursor, dataNodeCursor, fundingCursor) encode
// themselves (txCursor's JSON byte for byte as encoding/json would write
// it); any other payload goes through encoding/json.
func encodeCursor(list cursorList, payload any) string {
	switch p := payload.(type) {
	case txCursor:
		return p.encode()
	case dataNodeCursor:
		return p.encode(list)
	case fundingCursor:
		return p.encode()
	}
	body, err := json.Marshal(payload)
	if err != nil {
		// Payloads are plain structs of strings and numbers.
		panic(fmt.Sprintf("encode %s cursor: %v", list, err))
	}
	var raw [cursorBuffer]byte
	return sealCursor(append(appendCursorHeader(raw[:0], list), body...))
}

// cursorBuffer sizes the stack buffers cursors are built in: a page of
// cursors then costs one allocation each (the string), however long a
// data-node cursor is (a longer one spills to the heap, still correct).
const cursorBuffer = 512

// appendCursorHeader appends "v1:<list>:".
func appendCursorHeader(b []byte, list cursorList) []byte {
	return appendVersionedHeader(b, cursorVersion, list)
}

// appendVersionedHeader appends "<version>:<list>:".
func appendVersionedHeader(b []byte, version string, list cursorList) []byte {
	b = append(b, version...)
	b = append(b, ':')
	b = append(b, list...)
	return append(b, ':')
}

// sealCursor returns the cursor of the raw form "v1:<list>:<payload>".
func sealCursor(raw []byte) string {
	var buf [cursorBuffer * 4 / 3]byte
	return string(appendSealed(buf[:0], raw))
}

// appendSealed appends the cursor of the raw form to dst.
func appendSealed(dst, raw []byte) []byte { return base64.RawURLEncoding.AppendEncode(dst, raw) }

// appendJSONString appends s as a JSON string, exactly as encoding/json
// writes it (HTML characters escaped). Cursor payload strings are ids and
// base64 text, so the fast path is the only one taken in practice.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, err := json.Marshal(s)
			if err != nil {
				panic(fmt.Sprintf("encode cursor string: %v", err)) // cannot fail for a string
			}
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// decodeCursor reads a version 1 cursor issued for list into payload. arg
// names the argument ("after" or "before") for the error message.
func decodeCursor(arg, cursor string, list cursorList, payload any) error {
	version, body, err := openCursor(arg, cursor, list, cursorVersion)
	if err != nil {
		return err
	}
	if version != cursorVersion || json.Unmarshal(body, payload) != nil {
		return badInput("%s: malformed %s cursor; pass a cursor from edges.cursor or pageInfo", arg, list)
	}
	return nil
}

// openCursor checks a cursor's encoding, version (one of versions) and
// list, and returns its version and payload.
func openCursor(arg, cursor string, list cursorList, versions ...string) (version string, body []byte, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", nil, badInput("%s: %q is not a cursor issued by this gateway; pass a cursor from edges.cursor or pageInfo", arg, truncate(cursor, 64))
	}
	version, rest, ok := strings.Cut(string(raw), ":")
	if !ok || !slices.Contains(versions, version) {
		return "", nil, badInput("%s: %q is not a cursor issued by this gateway (unknown format); pass a cursor from edges.cursor or pageInfo", arg, truncate(cursor, 64))
	}
	owner, payload, ok := strings.Cut(rest, ":")
	if !ok {
		return "", nil, badInput("%s: malformed cursor; pass a cursor from edges.cursor or pageInfo", arg)
	}
	if cursorList(owner) != list {
		switch cursorList(owner) {
		case listAssets, listFundingPayments, listDelegations, listTransactions:
			return "", nil, badInput("%s: this cursor belongs to the %s list, not to %s; cursors only page the list that issued them", arg, owner, list)
		}
		// Not one of ours: never echo what a forged cursor carries.
		return "", nil, badInput("%s: malformed cursor; pass a cursor from edges.cursor or pageInfo", arg)
	}
	return version, []byte(payload), nil
}

// truncate shortens s for quoting in an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
