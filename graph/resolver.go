package graph

// Resolver is the root resolver: it holds the dependencies of every resolver.
type Resolver struct{}
