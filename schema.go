package main

import (
	"bytes"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/tradenet/gateway/graph"
)

// schemaSDL is the SDL served at /schema.graphql: the executable schema
// printed by gqlparser's formatter (types sorted by name, descriptions
// kept, built-in definitions left out), so it is deterministic and is
// exactly what the API executes. A copy is committed at
// schema/schema.graphql; TestSchemaSnapshot fails when they differ (see
// schema/README.md).
var schemaSDL = printSchema()

// printSchema prints the gateway's executable schema as SDL.
func printSchema() []byte {
	var buf bytes.Buffer
	formatter.NewFormatter(&buf, formatter.WithIndent("  ")).FormatSchema(graph.NewExecutableSchema(graph.Config{}).Schema())
	return buf.Bytes()
}
