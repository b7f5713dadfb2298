// Package enumgen generates the Go enum types of package upstream from the
// GraphQL schema's enums: one string type per enum, a constant per value,
// and the five methods every enum shares (Known, UnmarshalJSON, MarshalJSON,
// MarshalGQLContext, UnmarshalGQLContext), which delegate to the generic
// enum[E] of upstream/enums.go. internal/gqlgen runs it before gqlgen's own
// generator, whose autobind then binds each GraphQL enum to its Go type.
//
// Adding an enum is adding it to schema.graphqls and running
// `go generate ./...`. Go names are derived from the values: the type's
// name, then the value without the prefix all the enum's values share,
// each word capitalised (TIME_IN_FORCE_GTC → TimeInForceGTC, see
// initialisms).
package enumgen

import (
	"bytes"
	"fmt"
	"go/format"
	"go/token"
	"os"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// initialisms are the words of value names kept in capitals in Go names
// (TIME_IN_FORCE_GTC is TimeInForceGTC, not TimeInForceGtc).
var initialisms = map[string]bool{
	"FOK": true, "GFA": true, "GFN": true, "GTC": true, "GTT": true, "IOC": true, // times in force
	"ID": true, "LP": true,
}

// Enum is one enum type to generate.
type Enum struct {
	Name        string // GraphQL and Go type name
	Description string
	Values      []Value
}

// Value is one of an enum's values.
type Value struct {
	Name        string // as on the wire and in GraphQL: "SIDE_BUY"
	GoName      string // the Go constant: "SideBuy"
	Description string
}

// Enums returns the schema's enums not bound elsewhere (skip: the names
// gqlgen.yml binds to a model of its own), in the schema's order, with
// their Go names.
func Enums(schema *ast.Schema, skip func(name string) bool) ([]Enum, error) {
	var defs []*ast.Definition
	for _, def := range schema.Types {
		if def.Kind == ast.Enum && !def.BuiltIn && !skip(def.Name) {
			defs = append(defs, def)
		}
	}
	sort.Slice(defs, func(i, j int) bool {
		a, b := defs[i].Position, defs[j].Position
		if a.Src.Name != b.Src.Name {
			return a.Src.Name < b.Src.Name
		}
		return a.Line < b.Line
	})
	enums := make([]Enum, 0, len(defs))
	for _, def := range defs {
		e, err := enumOf(def)
		if err != nil {
			return nil, err
		}
		enums = append(enums, e)
	}
	return enums, nil
}

func enumOf(def *ast.Definition) (Enum, error) {
	e := Enum{Name: def.Name, Description: def.Description}
	if len(def.EnumValues) == 0 {
		return e, fmt.Errorf("enum %s has no values", def.Name)
	}
	prefix := sharedPrefix(def.EnumValues)
	seen := map[string]string{}
	for _, v := range def.EnumValues {
		goName := def.Name + camel(strings.TrimPrefix(v.Name, prefix))
		if !token.IsIdentifier(goName) {
			return e, fmt.Errorf("enum %s: value %s gives no Go identifier (%q)", def.Name, v.Name, goName)
		}
		if other, dup := seen[goName]; dup {
			return e, fmt.Errorf("enum %s: values %s and %s both give the Go name %s", def.Name, other, v.Name, goName)
		}
		seen[goName] = v.Name
		e.Values = append(e.Values, Value{Name: v.Name, GoName: goName, Description: v.Description})
	}
	return e, nil
}

// sharedPrefix is the longest prefix of whole words ("SIDE_") every value
// has, leaving every value at least one word of its own.
func sharedPrefix(values ast.EnumValueList) string {
	prefix := values[0].Name
	for _, v := range values[1:] {
		for !strings.HasPrefix(v.Name, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for _, v := range values {
		if prefix == v.Name { // one value, or one value a prefix of others
			prefix = prefix[:len(prefix)-1]
		}
	}
	return prefix[:strings.LastIndexByte(prefix, '_')+1]
}

// camel turns PENDING_LISTING into PendingListing, keeping initialisms.
func camel(s string) string {
	var b strings.Builder
	for word := range strings.SplitSeq(s, "_") {
		if initialisms[word] {
			b.WriteString(word)
			continue
		}
		if word != "" {
			b.WriteString(strings.ToUpper(word[:1]) + strings.ToLower(word[1:]))
		}
	}
	return b.String()
}

// methods are the methods of every enum type, delegating to the generic
// enum[E] of upstream/enums.go.
var methods = []struct{ doc, recv, sig, call string }{
	{"Known reports whether e is a value this package knows.", "", "Known() bool", "known(e)"},
	{"UnmarshalJSON decodes a value name or a bare number.", "*", "UnmarshalJSON(b []byte) error", "unmarshalJSON(e, b)"},
	{"MarshalJSON writes the wire form: the name, or the bare number of a value beyond the schema.", "", "MarshalJSON() ([]byte, error)", "marshalJSON(e)"},
	{"MarshalGQLContext writes a known value's quoted name.", "", "MarshalGQLContext(_ context.Context, w io.Writer) error", "marshalGQL(w, e)"},
	{"UnmarshalGQLContext accepts a known value's name.", "*", "UnmarshalGQLContext(_ context.Context, v any) error", "unmarshalGQL(e, v)"},
}

// Source returns the Go file declaring enums in package pkg, formatted.
func Source(pkg, origin string, enums []Enum) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("// Code generated by internal/enumgen from %s; DO NOT EDIT.", origin)
	p("")
	p("package %s", pkg)
	p("")
	p(`import (
	"context"
	"io"
)`)
	for _, e := range enums {
		v := strings.ToLower(e.Name[:1]) + e.Name[1:] + "Enum"
		p("")
		p("// %s is the enum %s of the GraphQL schema.", e.Name, e.Name)
		comment(&b, "", e.Description, true)
		p("type %s string", e.Name)
		p("")
		p("// %s values.", e.Name)
		p("const (")
		for _, val := range e.Values {
			comment(&b, "\t", val.Description, false)
			p("\t%s %s = %q", val.GoName, e.Name, val.Name)
		}
		p(")")
		p("")
		p("var %s = newEnum(%q,", v, e.Name)
		for _, val := range e.Values {
			p("\t%s,", val.GoName)
		}
		p(")")
		for _, m := range methods {
			p("")
			p("// %s", m.doc)
			p("func (e %s%s) %s { return %s.%s }", m.recv, e.Name, m.sig, v, m.call)
		}
	}
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format generated enums: %w", err)
	}
	return out, nil
}

// comment writes text as comment lines, after an empty comment line when
// it continues a comment (paragraph).
func comment(b *bytes.Buffer, indent, text string, paragraph bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if paragraph {
		fmt.Fprintf(b, "%s//\n", indent)
	}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			fmt.Fprintf(b, "%s//\n", indent)
			continue
		}
		fmt.Fprintf(b, "%s// %s\n", indent, line)
	}
}

// Write generates filename (package pkg) from the schema's enums that skip
// does not exclude.
func Write(schema *ast.Schema, skip func(name string) bool, pkg, origin, filename string) error {
	enums, err := Enums(schema, skip)
	if err != nil {
		return err
	}
	src, err := Source(pkg, origin, enums)
	if err != nil {
		return err
	}
	return os.WriteFile(filename, src, 0o644)
}
