// Package sampleservice is a faithful simulation of the trading network's
// REST data service: the data node's /api/v2 lists and the block
// explorer's transaction list, served over real HTTP from a generated (or
// hand-made) dataset, with the real wire format, paging rules, errors,
// rate limit and known defects of interface v0.74. It is the gateway's
// embedded default upstream and the upstream of its tests and benchmarks;
// faults can be injected per endpoint at run time. README.md describes it
// from the outside.
//
// # One wire model
//
// The service declares no wire types of its own. A transaction is an
// upstream.Transaction whose command member is package upstream's type for
// its kind (upstream.OrderSubmission, upstream.ChainEvent, …); an asset is
// an upstream.Asset, a funding payment an upstream.FundingPayment, a
// delegation embeds an upstream.Delegation. Each encodes itself
// (upstream/marshal.go and the types' json tags), so the gateway decodes
// exactly what this service encodes, and a field added to upstream's type
// is served as soon as a builder sets it. testdata/wire holds answers
// written by hand from the wire documentation; TestWireBodiesFromTheDocumentation
// compares the service's answers with them, the independent check that the
// shared model encodes what the real service sends.
//
// # Layout
//
// The HTTP side: server.go (Config, Start, routes, counters), datanode.go
// and paging.go (the data node's three lists and their cursors),
// explorer.go (the explorer's transactions, filters and lookup by hash),
// errors.go, ratelimit.go, faults.go, cache.go (the response cache),
// live.go (new blocks while the service runs), main.go (the standalone
// command). dataset.go is the contract between that side and the
// generator: the Dataset it serves.
//
// The generator (gen_*.go), deterministic from the seed, each part drawn
// from its own random stream (gen_rand.go): gen_dataset.go (assets,
// parties, nodes, markets, funding payments, delegations);
// gen_transactions.go (the chain's layout, each transaction's envelope,
// generated on demand from its position); gen_kinds.go (one entry per
// command kind and per proposal change kind); the bodies in
// gen_commands.go (party commands), gen_governance.go (proposals, markets,
// data sources, governance transfers) and gen_validator.go (validator,
// node-operator and oracle commands, chain events); gen_enums.go (the
// enum values drawn); notables.json and gen_notable.go (the notable
// transactions).
//
// # Adding a command kind
//
// docs/recipes.md names every file a new command kind touches; here and
// in package upstream:
//
//  1. In package upstream: its type (types_commands*.go) with its IsCommand
//     method, and its member in commandMembers (types_transactions.go). Its
//     json tags give its wire form (omitempty on a field the wire omits when
//     unset, or on a one-of member); a form tags cannot give (a u32 the Go
//     type holds in a 64-bit scalar, a key named otherwise on the wire)
//     goes into marshal.go, pinned by marshal_test.go.
//  2. Here: its constant and its entry in cmdKinds (gen_kinds.go): the
//     member name, the explorer's type string, how often it is drawn, who
//     sends it, and its builder, a txCtx method returning the upstream type
//     (beside its peers in gen_commands.go or gen_validator.go).
//
// Nothing else in the generator: the notable transaction
// "command.<member>", the draws, the explorer's type filter and the
// coverage of every kind follow from the entry. The tests keep their own
// lists of the validator commands and of the nested one-of groups
// (gen_dataset_wire_test.go, gen_oneof_test.go), as an independent check:
// a kind that is one, or brings a new group, is added there too. (Then the
// schema and the resolvers: graph/doc.go.) A proposal change kind
// is the same: its type in upstream with its member in
// proposalChangeMembers, then its constant and its entry in changeKinds.
//
// # Notable transactions
//
// notables.json lists the transactions tests look up by name
// (Dataset.Notable) as data: each one's names, what it shows, its kind, how
// its body is made (drawn like any of its kind, a literal body, or a named
// scenario of gen_notable.go), and the edge values it carries, as edits of
// the body as the wire shows it (JSON pointers and values: an enum value
// beyond the schema, a size at the uint64 maximum, a double that is NaN).
// A new edge case is usually an entry there, not code.
package sampleservice
