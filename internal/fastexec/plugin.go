// Package fastexec is a gqlgen plugin that generates the gateway's direct
// executor (graph/fastexec_gen.go): for every object, union and output type
// of the schema, a function that writes the JSON of a selection straight into
// the response buffer, from the same bindings gqlgen's executor uses (its
// codegen.Data: Go types, fields, methods, resolvers, argument parsers).
//
// The generated code does not build gqlgen's result tree (a FieldContext and
// a Marshaler per field, a goroutine per list element); it writes each value
// as it reads it. Resolver fields still run concurrently. Whatever the direct
// executor does not reproduce exactly (a null in a non-null position, a
// resolver error there, introspection, @defer) makes it give up, and the
// runtime (graph/fastexec.go) answers the request with gqlgen's executor
// instead, so answers are always gqlgen's.
package fastexec

import (
	"fmt"
	"go/types"
	"sort"

	"strings"

	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/99designs/gqlgen/codegen/templates"
	"github.com/vektah/gqlparser/v2/ast"
)

// Plugin generates the direct executor into Filename, in the exec package.
type Plugin struct {
	Filename string
}

// New returns the plugin writing to filename.
func New(filename string) *Plugin { return &Plugin{Filename: filename} }

// Name implements plugin.Plugin.
func (p *Plugin) Name() string { return "fastexec" }

// GenerateCode implements plugin.CodeGenerator.
func (p *Plugin) GenerateCode(data *codegen.Data) error {
	g := &gen{data: data}
	return templates.Render(templates.Options{
		PackageName:     data.Config.Exec.Package,
		Filename:        p.Filename,
		GeneratedHeader: true,
		FileNotice:      "// The direct executor: see internal/fastexec and graph/fastexec.go.",
		Data:            g,
		Funcs:           map[string]any{"generate": g.generate},
		Template:        `{{ reserveImport "context" }}{{ reserveImport "github.com/99designs/gqlgen/graphql" }}{{ reserveImport "github.com/vektah/gqlparser/v2/ast" }}{{ generate }}`,
		Packages:        data.Config.Packages,
	})
}

type gen struct {
	data *codegen.Data
	b    strings.Builder
	// marshal functions to write, by name; filled as fields refer to them
	want map[string]*config.TypeReference
	done map[string]bool
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }

// ref is the Go spelling of t in the generated file (imports added).
func ref(t types.Type) string { return templates.CurrentImports.LookupType(t) }

func skipped(name string) bool { return strings.HasPrefix(name, "__") }

// generate writes the whole file body; it runs inside templates.Render so
// that type references register their imports.
func (g *gen) generate() (string, error) {
	g.want = map[string]*config.TypeReference{}
	g.done = map[string]bool{}
	objects := append(codegen.Objects{}, g.data.Objects...)
	sort.Slice(objects, func(i, j int) bool { return objects[i].Name < objects[j].Name })
	for _, o := range objects {
		if skipped(o.Name) || o.Stream {
			continue
		}
		if err := g.object(o); err != nil {
			return "", fmt.Errorf("object %s: %w", o.Name, err)
		}
	}
	names := make([]string, 0, len(g.data.Interfaces))
	for n := range g.data.Interfaces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g.iface(g.data.Interfaces[n])
	}
	for len(g.want) > 0 {
		keys := make([]string, 0, len(g.want))
		for k := range g.want {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t := g.want[k]
			delete(g.want, k)
			if g.done[k] {
				continue
			}
			g.done[k] = true
			if err := g.marshal(t); err != nil {
				return "", fmt.Errorf("type %s (%s): %w", t.GQL.String(), k, err)
			}
		}
	}
	return g.b.String(), nil
}

// fn names the direct marshal function of t, asking for it to be written.
func (g *gen) fn(t *config.TypeReference) string {
	name := "fx" + t.MarshalFunc()
	if !g.done[name] {
		g.want[name] = t
	}
	return name
}

func objFn(name string) string { return "fxo_" + name }

func (g *gen) object(o *codegen.Object) error {
	recv := ""
	if !o.Root {
		recv = ", obj " + ref(o.Reference())
	}
	g.p("func (x *fxState) %s(ctx context.Context, w *fxWalk, sel ast.SelectionSet%s) bool {", objFn(o.Name), recv)
	g.p("fields, ok := x.plan(w, sel, %s)", templates.LcFirst(o.Name)+"Implementors")
	g.p("if !ok { return false }")
	g.p("o := w.o")
	g.p("o.b.WriteByte('{')")
	g.p("for i := range fields {")
	g.p("f := &fields[i]")
	g.p("if i > 0 { o.b.WriteByte(',') }")
	g.p("o.key(f.Alias)")
	g.p("w.push(f)")
	g.p("switch f.Name {")
	g.p("case \"__typename\":")
	g.p("o.str(%q)", o.Name)
	for _, f := range o.Fields {
		if skipped(f.Name) {
			continue
		}
		code, err := g.field(o, f)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if code == "" {
			continue
		}
		g.p("case %q:", f.Name)
		g.b.WriteString(code)
	}
	g.p("default:")
	g.p("return false")
	g.p("}")
	g.p("w.pop()")
	g.p("}")
	g.p("o.b.WriteByte('}')")
	g.p("return true")
	g.p("}")
	g.p("")
	return nil
}

// field is the code of one case of an object's switch; "" leaves the field
// to gqlgen (the direct executor gives up when it is selected).
func (g *gen) field(o *codegen.Object, f *codegen.Field) (string, error) {
	if f.HasDirectives() || f.IsMap() || f.HasHaser || f.IsBatch() || f.Stream {
		return "", nil
	}
	t := f.TypeReference
	nonNull := t.GQL.NonNull
	var s strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&s, format+"\n", args...) }
	marshal := func(v string) string {
		return fmt.Sprintf("x.%s(ctx, w, f.Selections, %s)", g.fn(t), v)
	}
	switch {
	case f.IsResolver:
		args := "nil"
		if len(f.Args) > 0 {
			w("args, err := x.ec.%s(ctx, f.ArgumentMap(x.ec.Variables))", f.ArgsFunc())
			w("if err != nil { return false }")
			args = "args"
		}
		w("if !x.resolve(ctx, w, %q, %s, %t, func(ctx context.Context, fc *graphql.FieldContext, w *fxWalk) bool {", o.Name, args, nonNull)
		if len(f.Args) == 0 {
			w("_ = fc")
		}
		// A panic in the resolver is gqlgen's: an error at the field, through
		// the recover func, without the field's location.
		w("var v %s", ref(t.GO))
		w("var err error")
		w("panicked := false")
		w("func() {")
		w("defer func() { if r := recover(); r != nil { panicked = true; err = x.opCtx.Recover(ctx, r) } }()")
		w("v, err = x.ec.Resolvers.%s", f.ShortInvocation())
		w("}()")
		w("if err != nil { return x.fieldError(w, err, !panicked, %t) }", nonNull)
		w("return %s", marshal("v"))
		w("}) { return false }")
	case f.IsMethod():
		if len(f.Args) > 0 {
			return "", nil
		}
		call := fmt.Sprintf("%s.%s(%s)", f.GoReceiverName, f.GoFieldName, f.CallArgs())
		w("{")
		switch {
		case f.VOkFunc:
			w("v, ok := %s", call)
			w("if !ok { if %t { return false }; o.null() } else if !%s { return false }", nonNull, marshal("v"))
		case f.NoErr:
			w("if !%s { return false }", marshal(call))
		default:
			w("v, err := %s", call)
			w("if err != nil { if !x.fieldError(w, err, true, %t) { return false } } else if !%s { return false }", nonNull, marshal("v"))
		}
		w("}")
	case f.IsVariable():
		v := f.GoReceiverName + "." + f.GoFieldName
		w("{")
		if isStructObject(t) {
			// Pass the field's address: no copy of the struct.
			w("if !x.%s(ctx, w, f.Selections, &%s) { return false }", objFn(t.Definition.Name), v)
		} else {
			w("if !%s { return false }", marshal(v))
		}
		w("}")
	default:
		return "", nil
	}
	return s.String(), nil
}

// isStructObject: an object type bound to a struct value (not a pointer).
func isStructObject(t *config.TypeReference) bool {
	return t.Definition.Kind == ast.Object && !t.IsNilable() && !t.IsSlice() && !t.IsRoot && !t.IsMarshaler && t.Marshaler == nil
}

func (g *gen) iface(i *codegen.Interface) {
	g.p("func (x *fxState) %s(ctx context.Context, w *fxWalk, sel ast.SelectionSet, obj %s) bool {", objFn(i.Name), ref(i.Type))
	g.p("switch obj := (obj).(type) {")
	g.p("case nil:")
	g.p("return false")
	for _, impl := range i.Implementors {
		if skipped(impl.Name) {
			continue
		}
		g.p("case %s:", ref(impl.Type))
		if impl.CanBeNil() {
			g.p("if obj == nil { return false }")
		}
		amp := ""
		if impl.TakeRef {
			amp = "&"
		}
		g.p("return x.%s(ctx, w, sel, %sobj)", objFn(impl.Name), amp)
	}
	g.p("default:")
	g.p("if m, ok := obj.(graphql.Marshaler); ok { m.MarshalGQL(&w.o.b); return true }")
	g.p("return false")
	g.p("}")
	g.p("}")
	g.p("")
}

// builtin writers for gqlgen's scalar marshal functions, by name.
var builtin = map[string]string{
	"MarshalString":  "o.str(%s)",
	"MarshalID":      "o.str(%s)",
	"MarshalBoolean": "o.bool(%s)",
	"MarshalInt":     "o.int(int64(%s))",
	"MarshalInt64":   "o.int(int64(%s))",
	"MarshalInt32":   "o.int(int64(%s))",
	"MarshalIntID":   "o.intQuoted(int64(%s))",
}

// marshal writes the direct marshal function of one type reference,
// mirroring gqlgen's type.gotpl case by case.
func (g *gen) marshal(t *config.TypeReference) error {
	name := "fx" + t.MarshalFunc()
	nonNull := t.GQL.NonNull
	g.p("func (x *fxState) %s(ctx context.Context, w *fxWalk, sel ast.SelectionSet, v %s) bool {", name, ref(t.GO))
	g.p("o := w.o")
	g.p("_ = o")
	defer g.p("}\n")
	nullCase := func() {
		if nonNull {
			g.p("if v == nil { return false }")
		} else {
			g.p("if v == nil { o.null(); return true }")
		}
	}
	switch {
	case t.IsPtrToSlice() || t.IsPtrToIntf():
		nullCase()
		g.p("return x.%s(ctx, w, sel, *v)", g.fn(t.Elem()))
	case t.IsSlice():
		if !nonNull {
			g.p("if v == nil { o.null(); return true }")
		}
		e := t.Elem()
		g.p("o.b.WriteByte('[')")
		g.p("for i := range v {")
		g.p("if i > 0 { o.b.WriteByte(',') }")
		if e.IsScalar() || e.Definition.Kind == ast.Scalar || e.Definition.Kind == ast.Enum {
			// gqlgen gives scalar elements no field context of their own:
			// their errors carry the list's path.
			g.p("if !x.%s(ctx, w, sel, v[i]) { return false }", g.fn(e))
		} else {
			g.p("w.pushIndex(i)")
			if isStructObject(e) {
				g.p("if !x.%s(ctx, w, sel, &v[i]) { return false }", objFn(e.Definition.Name))
			} else {
				g.p("if !x.%s(ctx, w, sel, v[i]) { return false }", g.fn(e))
			}
			g.p("w.pop()")
		}
		g.p("}")
		g.p("o.b.WriteByte(']')")
		g.p("return true")
	case t.IsPtrToPtr() && t.Unmarshaler == nil && !t.IsMarshaler:
		nullCase()
		g.p("return x.%s(ctx, w, sel, *v)", g.fn(t.Elem()))
	default:
		if t.IsNilable() {
			nullCase()
		}
		switch {
		case t.IsMarshaler && t.IsContext:
			g.p("mark := o.b.Len()")
			g.p("if err := v.MarshalGQLContext(ctx, &o.b); err != nil {")
			g.p("o.b.Truncate(mark)")
			g.p("return x.fieldError(w, err, false, %t)", nonNull)
			g.p("}")
			g.p("return true")
		case t.IsMarshaler:
			g.p("v.MarshalGQL(&o.b)")
			g.p("return true")
		case t.Marshaler != nil:
			if t.IsContext && t.Marshaler.Name() == "MarshalFloatContext" && t.Marshaler.Pkg().Path() == "github.com/99designs/gqlgen/graphql" {
				v := "v"
				if t.IsNilable() {
					v = "*v"
				}
				g.p("_ = sel")
				g.p("if err := o.float(float64(%s)); err != nil {", v)
				g.p("return x.fieldError(w, err, false, %t)", nonNull)
				g.p("}")
				g.p("return true")
				return nil
			}
			if t.IsContext || t.HasEnumValues() {
				return fmt.Errorf("marshaler %s: not supported by the direct executor", t.Marshaler.Name())
			}
			format, ok := builtin[t.Marshaler.Name()]
			if !ok || t.Marshaler.Pkg().Path() != "github.com/99designs/gqlgen/graphql" {
				return fmt.Errorf("marshaler %s.%s: not supported by the direct executor", t.Marshaler.Pkg().Path(), t.Marshaler.Name())
			}
			v := "v"
			if t.IsTargetNilable() && !t.IsNilable() {
				return fmt.Errorf("marshaler %s of a nilable target: not supported", t.Marshaler.Name())
			} else if !t.IsTargetNilable() && t.IsNilable() {
				v = "*v"
			}
			if t.CastType != nil {
				v = fmt.Sprintf("%s(%s)", ref(t.CastType), v)
			}
			g.p("_ = sel")
			g.p(format, v)
			g.p("return true")
		case t.IsRoot:
			return fmt.Errorf("root type as a field's type: not supported")
		default:
			amp := ""
			if !t.IsNilable() {
				amp = "&"
			}
			g.p("return x.%s(ctx, w, sel, %sv)", objFn(t.Definition.Name), amp)
		}
	}
	return nil
}
