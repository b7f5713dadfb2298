package graph_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// The whole-schema wire test's machinery: the selection of every field of
// a type, generated from the executable schema (so that types added to the
// schema are selected without editing a test), and the comparison of a
// transaction as the gateway serves it with its wire record, by generic
// rules (see compareTx).

// referenceSelections are the types selected as references
// (docs/contracts.md, Schema: References): the object's id, and for assets
// enough to see that they resolved.
var referenceSelections = map[string]string{
	"Asset":         "id details { symbol }",
	"Party":         "id",
	"ValidatorNode": "id",
}

// fullSelectionLimits lift the query limits for the generated selection,
// which grows with the schema (it selects every field of every command).
var fullSelectionLimits = graph.Limits{MaxDepth: 1000, MaxCost: 1 << 40, MaxTokens: 1 << 24, MaxAliases: 1 << 20, MaxBodyBytes: 1 << 26}

// executableSchema is the schema the gateway serves.
var executableSchema = sync.OnceValue(func() *ast.Schema {
	return graph.NewExecutableSchema(graph.Config{}).Schema()
})

// selObject selects every field of an object type.
type selObject struct {
	def    *ast.Definition
	fields []*selField
}

// selField is one selected field.
type selField struct {
	// key is the response key: the field's name, or an alias where the
	// members of a union disagree on the field's type (GraphQL refuses
	// such fields side by side under one name).
	key  string
	def  *ast.FieldDefinition
	kind ast.DefinitionKind // of the field's named type
	// ref: a reference type (referenceSelections), selected as such.
	ref bool
	// obj is the selection of an object type; members, of an abstract
	// type's possible types, by name.
	obj     *selObject
	members map[string]*selObject
}

func (f *selField) typeName() string { return f.def.Type.Name() }

// fullSelection selects every field of the object type name, recursively.
func fullSelection(t *testing.T, name string) *selObject {
	t.Helper()
	s := executableSchema()
	def := s.Types[name]
	if def == nil {
		t.Fatalf("schema has no type %s", name)
	}
	o, err := buildObject(s, def, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// buildObject selects every field of def; aliases maps a field name to its
// response key (inside a union's member); stack holds the enclosing types.
func buildObject(s *ast.Schema, def *ast.Definition, aliases map[string]string, stack []string) (*selObject, error) {
	if slices.Contains(stack, def.Name) {
		return nil, fmt.Errorf("type %s contains itself (%s): the full selection would not end; select it as a reference (referenceSelections)", def.Name, strings.Join(append(stack, def.Name), " > "))
	}
	stack = append(stack, def.Name)
	o := &selObject{def: def}
	for _, fd := range def.Fields {
		if strings.HasPrefix(fd.Name, "__") || hasRequiredArgument(fd) {
			continue
		}
		f := &selField{key: fd.Name, def: fd}
		if a, ok := aliases[fd.Name]; ok {
			f.key = a
		}
		td := s.Types[fd.Type.Name()]
		if td == nil {
			return nil, fmt.Errorf("%s.%s: no type %s", def.Name, fd.Name, fd.Type.Name())
		}
		f.kind = td.Kind
		switch {
		case referenceSelections[td.Name] != "":
			f.ref = true
		case td.Kind == ast.Object:
			obj, err := buildObject(s, td, nil, stack)
			if err != nil {
				return nil, err
			}
			f.obj = obj
		case td.Kind == ast.Union || td.Kind == ast.Interface:
			members, err := buildMembers(s, td, stack)
			if err != nil {
				return nil, err
			}
			f.members = members
		}
		o.fields = append(o.fields, f)
	}
	return o, nil
}

func hasRequiredArgument(fd *ast.FieldDefinition) bool {
	for _, a := range fd.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil {
			return true
		}
	}
	return false
}

// buildMembers selects every field of each possible type of an abstract
// type. A field name that two members give different types gets an alias
// per member (name__Member).
func buildMembers(s *ast.Schema, td *ast.Definition, stack []string) (map[string]*selObject, error) {
	possible := s.GetPossibleTypes(td)
	types := map[string]map[string]bool{} // field name → its type strings
	for _, m := range possible {
		for _, fd := range m.Fields {
			if types[fd.Name] == nil {
				types[fd.Name] = map[string]bool{}
			}
			types[fd.Name][fd.Type.String()] = true
		}
	}
	out := map[string]*selObject{}
	for _, m := range possible {
		aliases := map[string]string{}
		for _, fd := range m.Fields {
			if len(types[fd.Name]) > 1 {
				aliases[fd.Name] = fd.Name + "__" + m.Name
			}
		}
		obj, err := buildObject(s, m, aliases, stack)
		if err != nil {
			return nil, err
		}
		out[m.Name] = obj
	}
	return out, nil
}

// String renders the selection set, braces included.
func (o *selObject) String() string {
	var b strings.Builder
	o.render(&b)
	return b.String()
}

func (o *selObject) render(b *strings.Builder) {
	b.WriteString("{")
	for _, f := range o.fields {
		b.WriteByte(' ')
		if f.key != f.def.Name {
			b.WriteString(f.key + ": ")
		}
		b.WriteString(f.def.Name)
		switch {
		case f.ref:
			b.WriteString(" { " + referenceSelections[f.typeName()] + " }")
		case f.obj != nil:
			b.WriteByte(' ')
			f.obj.render(b)
		case f.members != nil:
			b.WriteString(" { __typename")
			for _, name := range slices.Sorted(maps.Keys(f.members)) {
				b.WriteString(" ... on " + name + " ")
				f.members[name].render(b)
			}
			b.WriteString(" }")
		}
	}
	b.WriteString(" }")
}

// memberTypeNames are the union members whose type is not their wire
// member's name in PascalCase (the naming rule for clashes, in the header
// comment of schema.graphqls).
var memberTypeNames = map[string]string{
	"Command.transfer":       "TransferFunds",
	"Command.cancelTransfer": "CancelTransferFunds",
	// The interface's name for the proto's StopOrdersCancellation, kept.
	"Command.stopOrdersCancellation": "StopOrderCancellation",
}

// derivedFields are GraphQL fields with no wire key of their own, computed
// from their object's wire keys, and the check of each.
var derivedFields = map[string]func(served any, wm map[string]any) error{
	// The oracle payload's bytes decoded, when they are one JSON value.
	"OracleDataSubmission.payloadJson": func(served any, wm map[string]any) error {
		var want any
		if p, _ := wm["payload"].(string); p != "" {
			raw, err := base64.StdEncoding.DecodeString(p)
			if err != nil {
				return fmt.Errorf("wire payload is not base64: %v", err)
			}
			if json.Valid(raw) {
				if err := json.Unmarshal(raw, &want); err != nil {
					return err
				}
			}
		}
		if !reflect.DeepEqual(normalizeJSON(served), normalizeJSON(want)) {
			return fmt.Errorf("served %s, want the decoded payload %s", short(served), short(want))
		}
		return nil
	},
}

// normalizeJSON re-decodes v so that numbers compare alike whichever
// decoder produced them.
func normalizeJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// referenceSources are the references whose wire id is under a key the
// generic rule (name, nameId, vegaNameId) does not find.
var referenceSources = map[string]string{
	"AnnounceNode.node": "id",
}

// wireRenames are GraphQL fields whose wire key has another name (the
// field's description says so).
var wireRenames = map[string]string{
	"AnnounceNode.netPubKey":      "vegaPubKey",
	"AnnounceNode.netPubKeyIndex": "vegaPubKeyIndex",
	"AnnounceNode.netSignature":   "vegaSignature",
}

// wireOnlyKeys are wire keys that are not fields of their GraphQL type,
// and the check of each instead.
var wireOnlyKeys = map[string]func(wm map[string]any) error{
	// The explorer's paging cursor "<block>.<index>": the edge's (opaque,
	// signed) cursor stands for it.
	"Transaction.cursor": func(wm map[string]any) error {
		block, _ := asText(wm["block"])
		index, _ := asText(wm["index"])
		if c, _ := wm["cursor"].(string); c != block+"."+index {
			return fmt.Errorf("cursor %q is not <block>.<index> (%s.%s)", wm["cursor"], block, index)
		}
		return nil
	},
}

// allowNullSuffixLessAssets lets a suffix-less asset reference
// (settlementAsset, a transfer's asset) to an asset the data service does
// not know be null with NOT_FOUND, as the gateway once served it. The
// reference rule (docs/contracts.md, Schema: References; the Asset.details
// entry of schema/CHANGELOG.md) makes such a reference the object with its
// wire id, details null with NOT_FOUND: once every such reference is served
// that way, set this to false.
const allowNullSuffixLessAssets = true

// wireChecker compares transactions served by the gateway with their wire
// records.
type wireChecker struct {
	sel *selObject
	// symbols of the dataset's assets by id: a reference to one of them
	// must resolve, a reference to any other must say NOT_FOUND.
	symbols map[string]string
}

func newWireChecker(t *testing.T, ds *sampleservice.Dataset) *wireChecker {
	t.Helper()
	c := &wireChecker{sel: fullSelection(t, "Transaction"), symbols: map[string]string{}}
	for _, a := range ds.Assets {
		c.symbols[a.ID] = a.Details.Symbol
	}
	return c
}

// txComparison is the state of one transaction's comparison.
type txComparison struct {
	c        *wireChecker
	problems []string
	// errs are the response's errors under the transaction, by path
	// relative to it; the comparison consumes those it expects.
	errs map[string][]gqlError
	// unknown are the union members served as Unknown…: "Command.<member>",
	// "ProposalChangeKind.<member>" ("" for a one-of with no member).
	unknown map[string]bool
}

// txResult is what compareTx found.
type txResult struct {
	problems []string
	unknown  map[string]bool
}

// compareTx compares node (a transaction selected with c.sel, decoded with
// UseNumber) with wire (its record as the explorer serves it); errs are
// the response's errors under the node, by relative path. The rules:
//   - each GraphQL field corresponds to the wire key of its name
//     (wireRenames name the exceptions); a wire key no field reads is a
//     problem (so every wire field must be typed);
//   - an absent or null wire key is a null field;
//   - a reference (Asset, Party, ValidatorNode) field x reads the wire key
//     x (suffix-less: its id is the wire string), xId or vegaXId (its id
//     is the sibling's string); an asset in the dataset must resolve (its
//     symbol), any other must have details null with NOT_FOUND (a sibling
//     reference may instead be null with NOT_FOUND, its id being in the
//     sibling);
//   - a union field x reads the one wire key that no other field reads,
//     inside the wire object x when there is one (the transaction's
//     command: the fields xNonce… read its other keys). The member's type
//     is the key in PascalCase (memberTypeNames); an Unknown… member has
//     name the key and raw the member's JSON (no key: name "" and raw the
//     whole object);
//   - leaves compare as text (strings, ids, enums, 64-bit integers), as
//     numbers (Int, Float), as JSON (JSON), as instants (Timestamp, in the
//     unit of the upstream Go type that decodes the wire key, found by
//     reflection; a zero instant is null); an enum the wire sends as a
//     bare number is null with an error naming the number;
//   - an object's field raw of type JSON that has no wire key is the whole
//     wire object (the placeholder of an empty message, NewFreeform);
//   - an error the rules do not expect is a problem.
func (c *wireChecker) compareTx(node any, wire []byte, errs map[string][]gqlError) txResult {
	cmp := &txComparison{c: c, errs: errs, unknown: map[string]bool{}}
	var wv any
	if err := decodeNumbers(wire, &wv); err != nil {
		return txResult{problems: []string{fmt.Sprintf("wire record is not JSON: %v", err)}}
	}
	var tx upstream.Transaction
	if err := json.Unmarshal(wire, &tx); err != nil {
		cmp.problemf("", "package upstream cannot decode the wire record: %v", err)
	}
	cmp.object("", c.sel, node, wv, reflect.ValueOf(&tx).Elem())
	for _, p := range slices.Sorted(maps.Keys(cmp.errs)) {
		for _, e := range cmp.errs[p] {
			cmp.problemf(p, "unexpected error %q (%s)", e.Message, e.code())
		}
	}
	return txResult{problems: cmp.problems, unknown: cmp.unknown}
}

func decodeNumbers(b []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(into)
}

func (x *txComparison) problemf(path, format string, args ...any) {
	if path == "" {
		path = "(transaction)"
	}
	x.problems = append(x.problems, path+": "+fmt.Sprintf(format, args...))
}

// expectError consumes an error at path whose message contains text and
// whose code is code (any code when ""); it reports whether there was one.
func (x *txComparison) expectError(path, code, text string) bool {
	for i, e := range x.errs[path] {
		if (code == "" || e.code() == code) && strings.Contains(e.Message, text) {
			x.errs[path] = slices.Delete(x.errs[path], i, i+1)
			if len(x.errs[path]) == 0 {
				delete(x.errs, path)
			}
			return true
		}
	}
	return false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// object compares an object's fields with a wire object.
func (x *txComparison) object(path string, sel *selObject, gv, wv any, gov reflect.Value) {
	if wv == nil {
		if gv != nil {
			x.problemf(path, "wire null or absent, served %s", short(gv))
		}
		return
	}
	wm, ok := wv.(map[string]any)
	if !ok {
		x.problemf(path, "wire value %s is not an object (GraphQL %s)", short(wv), sel.def.Name)
		return
	}
	gm, ok := gv.(map[string]any)
	if !ok {
		x.problemf(path, "served %s, wire has an object", short(gv))
		return
	}
	claimed := map[string]bool{}
	// Union fields whose members sit in a wire object of their own name
	// (the command): the object's other keys are read by the fields
	// named <union><Key>.
	containers := map[string]map[string]any{}
	flattened := map[string][2]string{} // field name → container, key
	for _, f := range sel.fields {
		if f.members == nil {
			continue
		}
		v, present := wm[f.def.Name]
		if !present {
			continue
		}
		claimed[f.def.Name] = true
		inner, isObject := v.(map[string]any)
		if !isObject {
			continue // null: the union field must be null
		}
		containers[f.def.Name] = inner
		for k := range inner {
			for _, g := range sel.fields {
				if g.members == nil && g.def.Name == f.def.Name+upperFirst(k) {
					flattened[g.def.Name] = [2]string{f.def.Name, k}
				}
			}
		}
	}
	containerClaimed := map[string]map[string]bool{}
	for _, f := range sel.fields {
		if f.members != nil {
			continue
		}
		p := joinPath(path, f.key)
		if fl, ok := flattened[f.def.Name]; ok {
			if containerClaimed[fl[0]] == nil {
				containerClaimed[fl[0]] = map[string]bool{}
			}
			containerClaimed[fl[0]][fl[1]] = true
			x.value(p, f, f.def.Type, gm[f.key], containers[fl[0]][fl[1]], goChild(goChild(gov, fl[0]), fl[1]), false)
			continue
		}
		if f.ref {
			src := x.refSource(sel.def.Name, f.def.Name, wm)
			if src == "" {
				x.problemf(p, "reference with no wire id (none of the keys %s, %sId, vega%sId)", f.def.Name, f.def.Name, upperFirst(f.def.Name))
				continue
			}
			claimed[src] = true
			x.value(p, f, f.def.Type, gm[f.key], wm[src], reflect.Value{}, src == f.def.Name)
			continue
		}
		if check, ok := derivedFields[sel.def.Name+"."+f.def.Name]; ok {
			if err := check(gm[f.key], wm); err != nil {
				x.problemf(p, "%v", err)
			}
			continue
		}
		key := f.def.Name
		if r, ok := wireRenames[sel.def.Name+"."+f.def.Name]; ok {
			key = r
		}
		if _, present := wm[key]; !present && key == "raw" && f.typeName() == "JSON" {
			x.jsonEqual(p, gm[f.key], wm) // the placeholder of an empty message
			continue
		}
		claimed[key] = true
		x.value(p, f, f.def.Type, gm[f.key], wm[key], goChild(gov, key), false)
	}
	for _, f := range sel.fields {
		if f.members == nil {
			continue
		}
		p := joinPath(path, f.key)
		container, nested := containers[f.def.Name]
		taken := containerClaimed[f.def.Name]
		containerGo := goChild(gov, f.def.Name)
		if !nested {
			if v, present := wm[f.def.Name]; present { // null, or not an object
				if v != nil || gm[f.key] != nil {
					x.problemf(p, "wire %s, served %s", short(v), short(gm[f.key]))
				}
				continue
			}
			container, taken, containerGo = wm, claimed, gov
		}
		var keys []string
		for k := range container {
			if !taken[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			claimed[k] = claimed[k] || !nested
		}
		x.member(p, f, gm[f.key], container, keys, goMember(containerGo))
	}
	for _, k := range slices.Sorted(maps.Keys(wm)) {
		if check, ok := wireOnlyKeys[sel.def.Name+"."+k]; ok && !claimed[k] {
			if err := check(wm); err != nil {
				x.problemf(joinPath(path, k), "%v", err)
			}
			continue
		}
		if !claimed[k] {
			x.problemf(joinPath(path, k), "wire key %q has no GraphQL field in %s", k, sel.def.Name)
		}
	}
}

// refSource is the wire key holding the id of reference field name of
// type owner, or "".
func (x *txComparison) refSource(owner, name string, wm map[string]any) string {
	if k, ok := referenceSources[owner+"."+name]; ok {
		return k
	}
	switch wm[name].(type) {
	case string, []any: // an id, or a list of ids
		return name
	}
	for _, k := range []string{name + "Id", "vega" + upperFirst(name) + "Id"} {
		if _, ok := wm[k]; ok {
			return k
		}
	}
	return ""
}

// member compares a union field with its wire one-of: keys are the
// container's keys no other field reads.
func (x *txComparison) member(path string, f *selField, gv any, container map[string]any, keys []string, gov reflect.Value) {
	union := f.typeName()
	if len(keys) > 1 {
		x.problemf(path, "wire has several members of one-of %s: %v", union, keys)
		return
	}
	gm, ok := gv.(map[string]any)
	if !ok {
		x.problemf(path, "served %s for a %s", short(gv), union)
		return
	}
	typename, _ := gm["__typename"].(string)
	key := ""
	if len(keys) == 1 {
		key = keys[0]
	}
	if strings.HasPrefix(typename, "Unknown") {
		x.unknown[union+"."+key] = true
		want := any(container)
		if key != "" {
			want = container[key]
		}
		if gm["name"] != key {
			x.problemf(joinPath(path, "name"), "served %s, wire member %q", short(gm["name"]), key)
		}
		x.jsonEqual(joinPath(path, "raw"), gm["raw"], want)
		return
	}
	if key == "" {
		x.problemf(path, "wire has no member of one-of %s, served %s instead of its Unknown… member", union, typename)
		return
	}
	want, ok := memberTypeNames[union+"."+key]
	if !ok {
		want = upperFirst(key)
	}
	if typename != want {
		x.problemf(path, "wire member %q served as %s, want %s", key, typename, want)
	}
	sel := f.members[typename]
	if sel == nil {
		x.problemf(path, "served type %q is not a member of %s", typename, union)
		return
	}
	x.object(path, sel, gv, container[key], gov)
}

// value compares a field's value (of type t, a list or named) with the
// wire value; suffixLess says a reference's wire value is under its own
// name.
func (x *txComparison) value(path string, f *selField, t *ast.Type, gv, wv any, gov reflect.Value, suffixLess bool) {
	if t.Elem != nil {
		if wv == nil {
			if gv != nil {
				x.problemf(path, "wire null or absent, served %s", short(gv))
			}
			return
		}
		wl, ok := wv.([]any)
		if !ok {
			x.problemf(path, "wire value %s is not a list", short(wv))
			return
		}
		gl, ok := gv.([]any)
		if !ok {
			x.problemf(path, "served %s, wire has a list of %d", short(gv), len(wl))
			return
		}
		if len(gl) != len(wl) {
			x.problemf(path, "served %d elements, wire has %d", len(gl), len(wl))
			return
		}
		for i := range wl {
			x.value(fmt.Sprintf("%s[%d]", path, i), f, t.Elem, gl[i], wl[i], goIndex(gov, i), suffixLess)
		}
		return
	}
	switch {
	case f.ref:
		x.reference(path, f.typeName(), gv, wv, suffixLess)
	case f.obj != nil:
		x.object(path, f.obj, gv, wv, gov)
	default:
		x.leaf(path, f, gv, wv, gov)
	}
}

// reference compares a reference object with the wire id.
func (x *txComparison) reference(path, typeName string, gv, wv any, suffixLess bool) {
	id, _ := wv.(string)
	if id == "" {
		if gv != nil {
			x.problemf(path, "wire id %s, served %s", short(wv), short(gv))
		}
		return
	}
	symbol, known := x.c.symbols[id]
	if gv == nil {
		if typeName == "Asset" && !known && (!suffixLess || allowNullSuffixLessAssets) && x.expectError(path, "NOT_FOUND", "") {
			return
		}
		x.problemf(path, "served null for the %s %s", typeName, id)
		return
	}
	gm, ok := gv.(map[string]any)
	if !ok {
		x.problemf(path, "served %s for the %s %s", short(gv), typeName, id)
		return
	}
	if gm["id"] != id {
		x.problemf(joinPath(path, "id"), "served %s, wire %q", short(gm["id"]), id)
	}
	if typeName != "Asset" {
		return
	}
	details, _ := gm["details"].(map[string]any)
	switch {
	case known && (details == nil || details["symbol"] != symbol):
		x.problemf(joinPath(path, "details"), "asset %s did not resolve: served %s, want symbol %q", id, short(gm["details"]), symbol)
	case !known && (gm["details"] != nil || !x.expectError(joinPath(path, "details"), "NOT_FOUND", "")):
		x.problemf(joinPath(path, "details"), "asset %s is not in the dataset: want null with NOT_FOUND, served %s", id, short(gm["details"]))
	}
}

// leaf compares a scalar or enum value with the wire value.
func (x *txComparison) leaf(path string, f *selField, gv, wv any, gov reflect.Value) {
	if wv == nil {
		if gv != nil {
			x.problemf(path, "wire null or absent, served %s", short(gv))
		}
		return
	}
	switch {
	case f.kind == ast.Enum:
		if n, ok := wv.(json.Number); ok {
			// A value unknown to the explorer: null, and an error naming it.
			if gv != nil || !x.expectError(path, "", n.String()) {
				x.problemf(path, "wire sends the bare number %s: want null and an error naming it, served %s", n, short(gv))
			}
			return
		}
		x.textEqual(path, gv, wv)
	case f.typeName() == "Timestamp":
		x.instant(path, gv, wv, gov)
	case f.typeName() == "JSON":
		x.jsonEqual(path, gv, wv)
	case f.typeName() == "Boolean":
		if gv != wv {
			x.problemf(path, "served %s, wire %s", short(gv), short(wv))
		}
	case f.typeName() == "Float" && (wv == "NaN" || wv == "Infinity" || wv == "-Infinity"):
		// A GraphQL Float is finite: null, and an error naming the value.
		if gv != nil || !x.expectError(path, "UPSTREAM_ERROR", wv.(string)) {
			x.problemf(path, "wire sends %s: want null and an UPSTREAM_ERROR naming it, served %s", wv, short(gv))
		}
	case f.typeName() == "Int" || f.typeName() == "Float":
		gn, gok := gv.(json.Number)
		wn, wok := wv.(json.Number)
		if gok && wok {
			g, gerr := strconv.ParseFloat(gn.String(), 64)
			w, werr := strconv.ParseFloat(wn.String(), 64)
			if gerr == nil && werr == nil && g == w {
				return
			}
		}
		x.textEqual(path, gv, wv)
	default:
		x.textEqual(path, gv, wv)
	}
}

// textEqual compares values as text: a string as it is, a number as its
// JSON text.
func (x *txComparison) textEqual(path string, gv, wv any) {
	g, gok := asText(gv)
	w, wok := asText(wv)
	if !gok || !wok || g != w {
		x.problemf(path, "served %s, wire %s", short(gv), short(wv))
	}
}

func asText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

func (x *txComparison) jsonEqual(path string, gv, wv any) {
	if !reflect.DeepEqual(gv, wv) {
		x.problemf(path, "served %s, wire %s", short(gv), short(wv))
	}
}

// instant compares a Timestamp with the wire value, read in the unit of
// the upstream type that decodes it.
func (x *txComparison) instant(path string, gv, wv any, gov reflect.Value) {
	if !gov.IsValid() {
		x.problemf(path, "no upstream Go field decodes this wire key: its time unit is unknown")
		return
	}
	t := gov.Type()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var want time.Time
	switch t {
	case reflect.TypeFor[upstream.Time]():
		s, _ := wv.(string)
		if s != "" {
			w, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				x.problemf(path, "wire %s is not RFC 3339: %v", short(wv), err)
				return
			}
			want = w
		}
	case reflect.TypeFor[upstream.UnixNanos](), reflect.TypeFor[upstream.UnixSeconds]():
		s, _ := asText(wv)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			x.problemf(path, "wire %s is not an integer: %v", short(wv), err)
			return
		}
		if n != 0 {
			if t == reflect.TypeFor[upstream.UnixNanos]() {
				want = time.Unix(0, n)
			} else {
				want = time.Unix(n, 0)
			}
		}
	default:
		x.problemf(path, "upstream type %v decodes this Timestamp: its unit is not known to this test", t)
		return
	}
	if want.IsZero() {
		if gv != nil {
			x.problemf(path, "wire %s is unset, served %s", short(wv), short(gv))
		}
		return
	}
	s, _ := gv.(string)
	got, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !got.Equal(want) {
		x.problemf(path, "served %s, wire %s is %s", short(gv), short(wv), want.UTC().Format(time.RFC3339Nano))
	}
}

// goChild is the field of struct v (through pointers and interfaces)
// whose JSON name is key, or the invalid Value.
func goChild(v reflect.Value, key string) reflect.Value {
	v = goDeref(v)
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	if index, ok := jsonFields(v.Type())[key]; ok {
		return v.FieldByIndex(index)
	}
	return reflect.Value{}
}

// jsonFieldIndexes caches jsonFields: reflect.Type → JSON name → index.
var jsonFieldIndexes sync.Map

// jsonFields maps the JSON names of struct type t's fields to their
// indexes.
func jsonFields(t reflect.Type) map[string][]int {
	if m, ok := jsonFieldIndexes.Load(t); ok {
		return m.(map[string][]int)
	}
	m := map[string][]int{}
	for _, sf := range reflect.VisibleFields(t) {
		if sf.Anonymous || !sf.IsExported() {
			continue
		}
		if name, _, _ := strings.Cut(sf.Tag.Get("json"), ","); name != "" && name != "-" {
			m[name] = sf.Index
		}
	}
	jsonFieldIndexes.Store(t, m)
	return m
}

// goMember is the one-of member of struct v: its interface field that the
// wire does not name (`json:"-"`).
func goMember(v reflect.Value) reflect.Value {
	v = goDeref(v)
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	for _, sf := range reflect.VisibleFields(v.Type()) {
		if sf.Type.Kind() == reflect.Interface && sf.Tag.Get("json") == "-" {
			return v.FieldByIndex(sf.Index)
		}
	}
	return reflect.Value{}
}

func goIndex(v reflect.Value, i int) reflect.Value {
	v = goDeref(v)
	if !v.IsValid() || (v.Kind() != reflect.Slice && v.Kind() != reflect.Array) || i >= v.Len() {
		return reflect.Value{}
	}
	return v.Index(i)
}

// goDeref follows pointers and interfaces; a nil one keeps its static
// type only through the caller (goChild's field type).
func goDeref(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// short renders a value for a message, cut to a readable length.
func short(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 120
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// errorsUnder groups the errors whose path starts with prefix by the rest
// of their path (rendered as pathString does); the others are returned
// apart.
func errorsUnder(errs []gqlError, prefix []any) (under map[string][]gqlError, other []gqlError) {
	under = map[string][]gqlError{}
	for _, e := range errs {
		if len(e.Path) < len(prefix) || !reflect.DeepEqual(normalisePath(e.Path[:len(prefix)]), normalisePath(prefix)) {
			other = append(other, e)
			continue
		}
		p := pathString(e.Path[len(prefix):])
		under[p] = append(under[p], e)
	}
	return under, other
}

func normalisePath(p []any) []any {
	out := make([]any, len(p))
	for i, s := range p {
		switch s := s.(type) {
		case int:
			out[i] = float64(s)
		default:
			out[i] = s
		}
	}
	return out
}

// explorerTx fetches the wire record of the dataset's transaction at pos
// from the sample explorer, as one row of a page.
func explorerTx(t *testing.T, sampleURL string, ds *sampleservice.Dataset, pos int) []byte {
	t.Helper()
	q := url.Values{}
	if pos == 0 {
		q.Set("last", "1") // the oldest
	} else {
		prev := ds.Transactions.Meta(pos - 1)
		q.Set("first", "1") // the one just newer than prev
		q.Set("after", fmt.Sprintf("%d.%d", prev.Block, prev.Index))
	}
	resp, err := http.Get(sampleURL + "/rest/transactions?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("explorer: status %d, %v: %.300s", resp.StatusCode, err, body)
	}
	var page struct {
		Transactions []json.RawMessage `json:"transactions"`
	}
	if err := json.Unmarshal(body, &page); err != nil || len(page.Transactions) != 1 {
		t.Fatalf("explorer page: %v, %d rows: %.300s", err, len(page.Transactions), body)
	}
	var key struct {
		Block upstream.Uint64 `json:"block"`
		Index upstream.Int32  `json:"index"`
	}
	m := ds.Transactions.Meta(pos)
	if err := json.Unmarshal(page.Transactions[0], &key); err != nil || uint64(key.Block) != m.Block || uint32(key.Index) != m.Index {
		t.Fatalf("explorer returned %d.%d (%v), want %d.%d", key.Block, key.Index, err, m.Block, m.Index)
	}
	return page.Transactions[0]
}
