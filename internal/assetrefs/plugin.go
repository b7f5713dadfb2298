// Package assetrefs is the gqlgen plugin that finds the schema's asset
// references and derives from them everything that must know them:
//
//   - the forced resolvers (gqlgen.yml lists none: MutateConfig sets them);
//   - the resolvers' bodies, one line each through the request's loader
//     (Implement, called by gqlgen's resolver generator);
//   - the table of references a page's asset batch and the upstream-call
//     bound walk (graph/assetrefs_gen.go: graph/references.go,
//     graph/limits.go).
//
// An asset reference is the schema's rule for references (shared design,
// "Schema conventions"): a field of type Asset, without arguments, on an
// object bound to a Go struct whose wire field holding the asset's id is a
// string named like the field (Future.settlementAsset: json
// "settlementAsset"), like the field plus "Id" (UpdateAsset.asset: json
// "assetId", a sibling field of the schema), or so with the prefix "vega"
// (ERC20Deposit.asset: json "vegaAssetId"). Adding one is adding the
// field to the schema and running `go generate ./...`.
package assetrefs

import (
	"fmt"
	"go/types"
	"reflect"
	"sort"
	"strings"

	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/99designs/gqlgen/codegen/templates"
	"github.com/vektah/gqlparser/v2/ast"
)

// Ref is one asset reference.
type Ref struct {
	Object  string     // the GraphQL object
	Field   string     // and its field
	GoType  types.Type // the object's Go type
	GoField string     // its string field holding the id
}

// Plugin finds the references (MutateConfig) and writes them (Implement,
// GenerateCode).
type Plugin struct {
	Filename string // the table, in the exec package
	Target   string // the referenced GraphQL type: "Asset"
	Loader   string // the exec package's function resolving one id: "loadAsset"

	refs []Ref
}

// New returns the plugin for references to target, resolved by loader,
// writing the table to filename.
func New(filename, target, loader string) *Plugin {
	return &Plugin{Filename: filename, Target: target, Loader: loader}
}

// Name implements plugin.Plugin.
func (p *Plugin) Name() string { return "assetrefs" }

// MutateConfig implements plugin.ConfigMutator: it finds the references
// (after autobind, so that each object's Go type is known) and forces a
// resolver for each.
func (p *Plugin) MutateConfig(cfg *config.Config) error {
	binder := cfg.NewBinder()
	p.refs = nil
	for _, def := range cfg.Schema.Types {
		if def.Kind != ast.Object || def.BuiltIn || cfg.IsRoot(def) {
			continue
		}
		for _, f := range def.Fields {
			if f.Type.Elem != nil || f.Type.NamedType != p.Target || len(f.Arguments) > 0 {
				continue
			}
			for _, model := range cfg.Models[def.Name].Model {
				t, err := binder.FindTypeFromName(model)
				if err != nil {
					return fmt.Errorf("%s.%s: %w", def.Name, f.Name, err)
				}
				if goField, ok := idField(t, f.Name); ok {
					p.refs = append(p.refs, Ref{Object: def.Name, Field: f.Name, GoType: t, GoField: goField})
					break
				}
			}
		}
	}
	sort.SliceStable(p.refs, func(i, j int) bool { return p.refs[i].Object < p.refs[j].Object })
	for _, r := range p.refs {
		entry := cfg.Models[r.Object]
		if entry.Fields == nil {
			entry.Fields = map[string]config.TypeMapField{}
		}
		field := entry.Fields[r.Field]
		field.Resolver = true
		entry.Fields[r.Field] = field
		cfg.Models[r.Object] = entry
	}
	return nil
}

// idField returns the string field of struct type t whose json name is
// name, else name+"Id", else "vega"+Name+"Id" (the chain events' asset
// ids are vegaAssetId, their field asset).
func idField(t types.Type, name string) (string, bool) {
	s, ok := t.Underlying().(*types.Struct)
	if !ok || name == "" {
		return "", false
	}
	for _, want := range []string{name, name + "Id", "vega" + strings.ToUpper(name[:1]) + name[1:] + "Id"} {
		for i := range s.NumFields() {
			f := s.Field(i)
			json, _, _ := strings.Cut(reflect.StructTag(s.Tag(i)).Get("json"), ",")
			if json == want && f.Exported() && types.Identical(f.Type(), types.Typ[types.String]) {
				return f.Name(), true
			}
		}
	}
	return "", false
}

func (p *Plugin) lookup(object, field string) (Ref, bool) {
	for _, r := range p.refs {
		if r.Object == object && r.Field == field {
			return r, true
		}
	}
	return Ref{}, false
}

// Implement implements plugin.ResolverImplementer: a reference's resolver
// is one call of the loader; every other resolver keeps its body (or gets
// gqlgen's stub).
func (p *Plugin) Implement(prev string, f *codegen.Field) string {
	if r, ok := p.lookup(f.Object.Name, f.Name); ok {
		return fmt.Sprintf("return %s(ctx, obj.%s)", p.Loader, r.GoField)
	}
	if prev != "" {
		return prev
	}
	return fmt.Sprintf("panic(fmt.Errorf(%q))", "not implemented: "+f.GoFieldName+" - "+f.Name)
}

// GenerateCode implements plugin.CodeGenerator: it writes the table.
func (p *Plugin) GenerateCode(data *codegen.Data) error {
	return templates.Render(templates.Options{
		PackageName: data.Config.Exec.Package,
		Filename:    p.Filename,
		// The plugin's own header (gqlgen's would name gqlgen).
		PackageDoc: "// Code generated by internal/assetrefs (go generate ./...), DO NOT EDIT.\n",
		FileNotice: "// The schema's asset references: see internal/assetrefs.",
		Data:       p,
		Funcs:      map[string]any{"table": p.table},
		Template:   `{{ reserveImport "reflect" }}{{ table }}`,
		Packages:   data.Config.Packages,
	})
}

func (p *Plugin) table() string {
	var b strings.Builder
	b.WriteString("// assetRefs are the schema's asset references, in the order of their\n")
	b.WriteString("// refSet bits (graph/references.go).\n")
	b.WriteString("var assetRefs = []assetRef{\n")
	for _, r := range p.refs {
		fmt.Fprintf(&b, "\t{reflect.TypeFor[%s](), %q, %q, %q},\n", templates.CurrentImports.LookupType(r.GoType), r.GoField, r.Object, r.Field)
	}
	b.WriteString("}\n")
	return b.String()
}
