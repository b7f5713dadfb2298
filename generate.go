package main

// Regenerates the GraphQL executor (graph/generated.go), the models (graph/model/models_gen.go)
// and the resolver stubs (graph/*.resolvers.go) from schema.graphqls and gqlgen.yml.
//go:generate go tool gqlgen generate
