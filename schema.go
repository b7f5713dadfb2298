package main

import (
	"bytes"

	"github.com/vektah/gqlparser/v2/ast"
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

// declaredBuiltins are the directives the gateway accepts beyond those
// every GraphQL implementation knows (@skip, @include, @deprecated,
// @specifiedBy, @oneOf): gqlparser counts them as built in, so its
// formatter leaves them out, and code generators then refuse documents
// that use them.
var declaredBuiltins = []string{"defer"}

// printSchema prints the gateway's executable schema as SDL, with the
// directives of declaredBuiltins declared.
func printSchema() []byte {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	var buf bytes.Buffer
	formatter.NewFormatter(&buf, formatter.WithIndent("  ")).FormatSchema(schema)
	buf.WriteByte('\n')
	doc := &ast.SchemaDocument{}
	for _, name := range declaredBuiltins {
		def := *schema.Directives[name]
		def.Position = nil // printed as if declared here
		doc.Directives = append(doc.Directives, &def)
	}
	formatter.NewFormatter(&buf, formatter.WithIndent("  ")).FormatSchemaDocument(doc)
	return buf.Bytes()
}
