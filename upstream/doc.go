// Package upstream is the gateway's only view of the trading network's data
// service: its wire model and its REST client. Nothing outside this package
// sees a URL, an HTTP status or an upstream cursor's contents.
//
// The wire model (types_*.go, scalars.go, enums.go) decodes what the data
// node and the block explorer really send (see docs/wire.md): 64-bit
// integers as strings or numbers, enums as names or bare numbers, one-of
// groups as sibling member keys, nulls anywhere. The GraphQL schema binds
// to these types directly (gqlgen autobind with struct_tag json), so type
// names match the GraphQL types, json tags are the GraphQL field names, and
// scalars and enums carry their own GraphQL marshalling without importing
// gqlgen.
//
// The client (client.go) has one method per endpoint, typed parameters
// (params.go) and typed pages; every call goes through one request path that
// bounds time and body size, reports to an optional hook, and classifies
// every failure as *Error, *UnavailableError or *DecodeError (errors.go).
// Every answer it returns has a kind (kinds.go: committed history is
// immutable, the explorer's newest rows true until the next block,
// data-node answers recent), reported to the caller (answers.go) and used
// by its cache (cache.go), which serves an answer again while it is true.
//
// The rate budget (budget*.go) is shared between clients in turn
// (FairBudget). Whom a request counts for, its client key (the peer's
// address, or the one a trusted proxy forwarded: TRUSTED_PROXIES), is
// read from the gateway's incoming requests beside it, in client_key.go
// (WithClientKey, WithClient, ClientFrom).
package upstream
