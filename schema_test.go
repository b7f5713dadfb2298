package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// schemaSnapshot is the committed copy of the SDL served at /schema.graphql.
const schemaSnapshot = "schema/schema.graphql"

var updateSchema = flag.Bool("update", false, "rewrite "+schemaSnapshot+" from the executable schema")

// TestSchemaSnapshot fails when the schema the gateway serves differs from
// the committed snapshot: a schema change must show in the commit that
// makes it. To accept a change: go test . -run TestSchemaSnapshot -update
func TestSchemaSnapshot(t *testing.T) {
	if *updateSchema {
		if err := os.WriteFile(schemaSnapshot, schemaSDL, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", schemaSnapshot, len(schemaSDL))
		return
	}
	committed, err := os.ReadFile(schemaSnapshot)
	if err != nil {
		t.Fatalf("read the committed schema: %v (create it: go test . -run TestSchemaSnapshot -update)", err)
	}
	if msg := snapshotMismatch(schemaSDL, committed); msg != "" {
		t.Fatal(msg)
	}
}

// TestSchemaSnapshotDetectsChange proves the comparison catches a changed
// SDL: a connection that lost its pageInfo, and a changed description.
func TestSchemaSnapshotDetectsChange(t *testing.T) {
	if msg := snapshotMismatch(schemaSDL, append([]byte(nil), schemaSDL...)); msg != "" {
		t.Fatalf("identical SDL reported as changed: %s", msg)
	}
	lost := removeFirstLine(t, string(schemaSDL), "type AssetConnection {", "pageInfo: PageInfo!")
	msg := snapshotMismatch([]byte(lost), schemaSDL)
	if !strings.Contains(msg, "pageInfo: PageInfo!") || !strings.Contains(msg, "-update") {
		t.Fatalf("lost pageInfo: message = %q", msg)
	}
	redescribed := strings.Replace(string(schemaSDL), "A page of assets.", "A page of coins.", 1)
	if msg := snapshotMismatch([]byte(redescribed), schemaSDL); !strings.Contains(msg, "A page of coins.") {
		t.Fatalf("changed description: message = %q", msg)
	}
}

// TestServedSchemaIsTheExecutableSchema checks the printed SDL is a valid
// schema that keeps every type, union member and description of
// schema.graphqls.
func TestServedSchemaIsTheExecutableSchema(t *testing.T) {
	source, err := os.ReadFile("schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	orig, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(source)})
	if gerr != nil {
		t.Fatal(gerr)
	}
	printed, gerr := gqlparser.LoadSchema(&ast.Source{Name: "printed", Input: string(schemaSDL)})
	if gerr != nil {
		t.Fatalf("the served SDL does not parse: %v", gerr)
	}
	for name, def := range orig.Types {
		if def.BuiltIn {
			continue
		}
		got := printed.Types[name]
		if got == nil {
			t.Errorf("type %s missing from the served SDL", name)
			continue
		}
		if got.Kind != def.Kind || got.Description != def.Description {
			t.Errorf("type %s: kind/description differ", name)
		}
		if strings.Join(got.Types, "|") != strings.Join(def.Types, "|") {
			t.Errorf("union %s members = %v, want %v", name, got.Types, def.Types)
		}
		for _, f := range def.Fields {
			gf := got.Fields.ForName(f.Name)
			if gf == nil || gf.Type.String() != f.Type.String() || gf.Description != f.Description || len(gf.Arguments) != len(f.Arguments) {
				t.Errorf("field %s.%s differs in the served SDL", name, f.Name)
			}
		}
	}
	if len(printed.Types) != len(orig.Types) {
		t.Errorf("served SDL has %d types, schema.graphqls %d", len(printed.Types), len(orig.Types))
	}
	if !bytes.Equal(printSchema(), schemaSDL) {
		t.Error("printing the schema twice gave different SDL")
	}
}

// snapshotMismatch returns "" when got equals the committed snapshot, or a
// message naming the first differing line and the update command.
func snapshotMismatch(got, committed []byte) string {
	if bytes.Equal(got, committed) {
		return ""
	}
	g, c := strings.Split(string(got), "\n"), strings.Split(string(committed), "\n")
	line := 0
	for line < len(g) && line < len(c) && g[line] == c[line] {
		line++
	}
	at := func(lines []string) string {
		if line < len(lines) {
			return lines[line]
		}
		return "(end of file)"
	}
	return fmt.Sprintf("the served schema differs from %s at line %d:\n  served:    %q\n  committed: %q\n"+
		"If the change is intended, run: go test . -run TestSchemaSnapshot -update\n"+
		"and commit %s (a breaking change also needs an entry in %s; see schema/README.md)",
		schemaSnapshot, line+1, at(g), at(c), schemaSnapshot, filepath.Join("schema", "CHANGELOG.md"))
}

// removeFirstLine removes the first line containing what after the line
// containing after.
func removeFirstLine(t *testing.T, s, after, what string) string {
	t.Helper()
	i := strings.Index(s, after)
	if i < 0 {
		t.Fatalf("%q not in the SDL", after)
	}
	j := strings.Index(s[i:], what)
	if j < 0 {
		t.Fatalf("%q not after %q", what, after)
	}
	start := i + j
	for start > 0 && s[start-1] != '\n' {
		start--
	}
	end := i + j + strings.Index(s[i+j:], "\n") + 1
	return s[:start] + s[end:]
}
