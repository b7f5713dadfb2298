package main

// Regenerates the enums of package upstream (upstream/enums_gen.go, from the schema's enums), the
// GraphQL executor (graph/generated.go), the models (graph/model/models_gen.go), the resolver
// stubs (graph/*.resolvers.go) and the direct executor (graph/fastexec_gen.go) from
// schema.graphqls and gqlgen.yml: gqlgen's generator with this repository's generators and
// plugins (internal/gqlgen, internal/enumgen, internal/fastexec).
//go:generate go run ./internal/gqlgen
