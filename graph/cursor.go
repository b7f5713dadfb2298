package graph

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// The gateway's cursors are opaque to clients: base64url (unpadded) of
// "v1:<list>:<JSON payload>". The version lets the format change without
// misreading old cursors; the list binds a cursor to the connection that
// issued it, so a cursor given to another list is a clear BAD_USER_INPUT
// error rather than an upstream 500.
const cursorVersion = "v1"

// cursorList names the connection a cursor belongs to.
type cursorList string

const (
	listAssets          cursorList = "assets"
	listFundingPayments cursorList = "funding-payments"
	listDelegations     cursorList = "delegations"
	listTransactions    cursorList = "transactions"
)

// encodeCursor builds the opaque cursor of a row of list from its payload.
func encodeCursor(list cursorList, payload any) string {
	body, err := json.Marshal(payload)
	if err != nil {
		// Payloads are plain structs of strings and numbers.
		panic(fmt.Sprintf("encode %s cursor: %v", list, err))
	}
	raw := make([]byte, 0, len(cursorVersion)+len(list)+len(body)+2)
	raw = append(raw, cursorVersion...)
	raw = append(raw, ':')
	raw = append(raw, list...)
	raw = append(raw, ':')
	raw = append(raw, body...)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodeCursor reads a cursor issued for list into payload. arg names the
// argument ("after" or "before") for the error message.
func decodeCursor(arg, cursor string, list cursorList, payload any) error {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return badInput("%s: %q is not a cursor issued by this gateway; pass a cursor from edges.cursor or pageInfo", arg, truncate(cursor, 64))
	}
	version, rest, ok := strings.Cut(string(raw), ":")
	if !ok || version != cursorVersion {
		return badInput("%s: %q is not a cursor issued by this gateway (unknown format); pass a cursor from edges.cursor or pageInfo", arg, truncate(cursor, 64))
	}
	owner, body, ok := strings.Cut(rest, ":")
	if !ok {
		return badInput("%s: malformed cursor; pass a cursor from edges.cursor or pageInfo", arg)
	}
	if cursorList(owner) != list {
		return badInput("%s: this cursor belongs to the %s list, not to %s; cursors only page the list that issued them", arg, owner, list)
	}
	if err := json.Unmarshal([]byte(body), payload); err != nil {
		return badInput("%s: malformed %s cursor; pass a cursor from edges.cursor or pageInfo", arg, list)
	}
	return nil
}

// truncate shortens s for quoting in an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
