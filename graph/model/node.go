package model

// Node is the Go side of the GraphQL interface Node. Its only implementor,
// upstream.Asset, lives in a package that knows nothing of GraphQL, so Node has
// no methods (gqlgen would otherwise require IsNode and GetID on it); the
// generated executor switches on the concrete type, *upstream.Asset or
// upstream.Asset.
type Node any
