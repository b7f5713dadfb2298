package graph

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/tradenet/gateway/upstream"
)

// Numeric arguments: page sizes (first, last: Int), block heights (block:
// Uint64) and epochs (epochId: an ID holding an integer). Whatever number
// a client writes, in a literal, a variable or a variable's default, the
// answer is a BAD_USER_INPUT error that names the argument and the range
// it accepts:
//
//   - literals are checked when the query is validated (once per query
//     text: the parsed query is cached), by the rule below, which takes
//     over gqlparser's ValuesOfCorrectType for these values. It must: at
//     execution gqlparser's ast.arg2map panics on an Int or Float literal
//     that does not parse (1e400, 99999999999999999999999), and the
//     original rule checks no custom scalar (Uint64) and names no
//     argument;
//   - variables are checked by gqlparser (Int, Float, ID) before
//     execution, whose errors errorPresenter rewrites
//     (numericArgs.variableMessage), or by the scalar itself (Uint64,
//     Int64, Timestamp: *upstream.InputError, numericArgs.inputMessage);
//   - values of the right type but out of the argument's own range
//     (first: 5000, epochId: "-1") are the resolvers' (paging.go, ids.go).

// numericArgs knows what each numeric argument accepts.
type numericArgs struct {
	// maxPage is the largest first or last (PagingConfig.MaxSize).
	maxPage int
}

var defaultNumericArgs = numericArgs{maxPage: DefaultPaging.MaxSize}

// numericSpec is what a numeric argument accepts.
type numericSpec struct {
	// want says it, for messages: "a block height: an integer from 0 to …".
	want string
	// float: any finite number (Float); otherwise integers from min to
	// max (umax when unsigned).
	float    bool
	unsigned bool
	min, max int64
	umax     uint64
	// strings: a string literal of decimal digits is accepted (Int64,
	// Uint64); stringsLater: string literals are the resolver's to check
	// (epochId).
	strings, stringsLater bool
	// floats: an integral Float literal within ±2^53 is accepted (the
	// 64-bit scalars; GraphQL's Int takes none).
	floats bool
}

// epochRange: the data node reads an epoch as an int64 (a larger one is
// its 400 "failed to parse epoch id").
const epochRange = "an integer from 0 to 9223372036854775807"

// spec returns what argument arg of type typ (a named type) accepts, or
// nil when it is not numeric. Names first, last and epochId mean the same
// on every field of the schema.
func (a numericArgs) spec(arg, typ string) *numericSpec {
	switch {
	case typ == "Int" && (arg == "first" || arg == "last"):
		return &numericSpec{want: fmt.Sprintf("a page size: an integer from 0 to %d", a.maxPage), min: math.MinInt32, max: math.MaxInt32}
	case typ == "ID" && arg == "epochId":
		return &numericSpec{want: "an epoch: " + epochRange, unsigned: true, umax: math.MaxInt64, stringsLater: true}
	case typ == "Uint64" && arg == "block":
		return &numericSpec{want: "a block height: " + upstream.Uint64Range, unsigned: true, umax: math.MaxUint64, strings: true, floats: true}
	}
	switch typ {
	case "Int":
		return &numericSpec{want: upstream.Int32Range, min: math.MinInt32, max: math.MaxInt32}
	case "Float":
		return &numericSpec{want: "a finite number", float: true}
	case "Int64":
		return &numericSpec{want: upstream.Int64Range, min: math.MinInt64, max: math.MaxInt64, strings: true, floats: true}
	case "Uint64":
		return &numericSpec{want: upstream.Uint64Range, unsigned: true, umax: math.MaxUint64, strings: true, floats: true}
	}
	return nil
}

// accepts reports whether literal v (not a variable, not null) is a value
// of s; asString when it is, but only as a string: a Uint64 past the
// int64 range, which gqlparser cannot read as an Int literal.
func (s *numericSpec) accepts(v *ast.Value) (ok, asString bool) {
	switch v.Kind {
	case ast.IntValue:
		if s.float {
			f, err := strconv.ParseFloat(v.Raw, 64)
			return err == nil && !math.IsInf(f, 0), false
		}
		return s.integer(v.Raw)
	case ast.FloatValue:
		f, err := strconv.ParseFloat(v.Raw, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return false, false
		}
		if s.float {
			return true, false
		}
		if !s.floats || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return false, false
		}
		ok, _ := s.integer(strconv.FormatInt(int64(f), 10))
		return ok, false
	case ast.StringValue, ast.BlockValue:
		switch {
		case s.stringsLater:
			return true, false
		case !s.strings:
			return false, false
		}
		ok, _ := s.integer(v.Raw)
		return ok, false
	}
	return false, false
}

// integer reports whether text is a decimal integer in s's range.
func (s *numericSpec) integer(text string) (ok, asString bool) {
	if s.unsigned {
		n, err := strconv.ParseUint(text, 10, 64)
		return err == nil && n <= s.umax, err == nil && n > math.MaxInt64
	}
	n, err := strconv.ParseInt(text, 10, 64)
	return err == nil && s.min <= n && n <= s.max, false
}

// validationRules are gqlparser's default rules with ValuesOfCorrectType
// wrapped by the numeric check (gqlgen asks for them for each query it
// parses).
func (a numericArgs) validationRules() *rules.Rules {
	r := rules.NewDefaultRules()
	r.RemoveRule(rules.ValuesOfCorrectTypeRule.Name)
	r.AddRule(rules.ValuesOfCorrectTypeRule.Name, a.valuesOfCorrectType)
	return r
}

// valuesOfCorrectType checks numeric values itself and leaves every other
// value to gqlparser's rule, whose errors about numeric values it drops.
func (a numericArgs) valuesOfCorrectType(observers *core.Events, addError core.AddErrFunc) {
	c := &numericCheck{args: a, addError: addError}
	// Observers run in the order registered: c.value sees each value
	// first and says whether it owns it.
	observers.OnValue(c.value)
	rules.ValuesOfCorrectTypeRule.RuleFunc(observers, func(options ...core.ErrorOption) {
		if c.owned {
			return
		}
		// gqlparser reports a number it cannot read twice (as unreadable,
		// then as of the wrong kind): once is enough.
		var e gqlerror.Error
		for _, o := range options {
			o(&e)
		}
		c.report(c.current, e.Message, options...)
	})
}

// report adds an error about v once: the walk visits a fragment's values
// at each spread and on its own.
func (c *numericCheck) report(v *ast.Value, msg string, options ...core.ErrorOption) {
	key := reportKey{v, msg}
	if c.reported[key] {
		return
	}
	if c.reported == nil {
		c.reported = map[reportKey]bool{}
	}
	c.reported[key] = true
	c.addError(options...)
}

type reportKey struct {
	v   *ast.Value
	msg string
}

// numericCheck is the numeric check of one validation.
type numericCheck struct {
	args     numericArgs
	addError core.AddErrFunc
	// owned: the value being observed, current, is numeric, checked here.
	owned   bool
	current *ast.Value
	// reported are the errors added, by value and message.
	reported map[reportKey]bool
	// names are the document's argument values and where they are
	// (built when first needed).
	names map[*ast.Value]argPlace
}

// argPlace is where a value is: name for messages ("first", "parties[0]",
// "$v"), arg the argument it belongs to ("" for a variable's default),
// and for a default, the argument that first uses the variable.
type argPlace struct {
	name, arg string
	use       *argPlace
}

func (c *numericCheck) value(w *core.Walker, v *ast.Value) {
	c.owned, c.current = false, v
	if v.Definition == nil || v.ExpectedType == nil || v.Kind == ast.NullValue {
		return
	}
	listType := v.ExpectedType.Elem != nil
	if listType && v.Kind == ast.ListValue {
		return // its elements are observed on their own
	}
	switch v.Definition.Name {
	case "Int", "Float", "Int64", "Uint64", "ID": // ID: epochId
	default:
		if v.Kind == ast.IntValue || v.Kind == ast.FloatValue {
			c.unreadableNumber(v, c.place(w, v))
		}
		return
	}
	place := c.place(w, v)
	arg := place.arg
	if arg == "" && place.use != nil {
		arg = place.use.arg // a variable's default: as the argument it is passed to
	}
	spec := c.args.spec(arg, v.Definition.Name)
	if spec == nil {
		c.unreadableNumber(v, place)
		return
	}
	c.owned = true
	if v.Kind == ast.Variable {
		return // its default is observed on its own, and its value checked at execution
	}
	ok, asString := spec.accepts(v)
	if !ok {
		msg := c.message(v, place, spec)
		c.report(v, msg, core.Message("%s", msg), core.At(v.Position))
		return
	}
	if asString {
		// gqlparser reads an Int literal as an int64 and panics on one
		// past that range; the scalar reads the same digits as a string.
		// The document is not shared yet: it is cached once validated.
		v.Kind = ast.StringValue
	}
}

// unreadableNumber reports a number literal gqlparser cannot read where
// no other rule would: in a custom scalar's value (gqlparser checks none).
func (c *numericCheck) unreadableNumber(v *ast.Value, place argPlace) {
	if v.Kind != ast.IntValue && v.Kind != ast.FloatValue {
		return
	}
	if v.Definition.Kind != ast.Scalar || v.Definition.OneOf("Int", "Float", "String", "Boolean", "ID") {
		return
	}
	if _, err := v.Value(nil); err != nil {
		msg := fmt.Sprintf("%s: the number %s is out of range", place.name, clipValue(v.String()))
		c.report(v, msg, core.Message("%s", msg), core.At(v.Position))
	}
}

func (c *numericCheck) message(v *ast.Value, place argPlace, spec *numericSpec) string {
	if place.arg == "" && place.use != nil {
		return fmt.Sprintf("%s: %s (the default value of %s) is not %s", place.use.name, clipValue(v.String()), place.name, spec.want)
	}
	return fmt.Sprintf("%s: %s is not %s", place.name, clipValue(v.String()), spec.want)
}

// place returns where v is in the document.
func (c *numericCheck) place(w *core.Walker, v *ast.Value) argPlace {
	if c.names == nil {
		c.names = map[*ast.Value]argPlace{}
		uses := map[string]*argPlace{}
		var defaults []*ast.Value
		eachArgValue(w.Document.Operations, w.Document.Fragments, func(name, arg string, v *ast.Value) {
			p := argPlace{name: name, arg: arg}
			if arg == "" {
				defaults = append(defaults, v)
			} else if v.Kind == ast.Variable && uses[v.Raw] == nil {
				uses[v.Raw] = &p
			}
			c.names[v] = p
		})
		for _, d := range defaults {
			p := c.names[d]
			p.use = uses[strings.TrimPrefix(strings.SplitN(p.name, "[", 2)[0], "$")]
			c.names[d] = p
		}
	}
	if p, ok := c.names[v]; ok {
		return p
	}
	return argPlace{name: "argument"}
}

// eachArgValue calls fn with every argument value of ops and frags (the
// arguments of fields and directives, and variables' defaults), and every
// element and field within them: name says where the value is, arg is the
// argument's name ("" for a variable's default).
func eachArgValue(ops ast.OperationList, frags ast.FragmentDefinitionList, fn func(name, arg string, v *ast.Value)) {
	var value func(name, arg string, v *ast.Value)
	value = func(name, arg string, v *ast.Value) {
		if v == nil {
			return
		}
		fn(name, arg, v)
		for i, c := range v.Children {
			if v.Kind == ast.ListValue {
				value(fmt.Sprintf("%s[%d]", name, i), arg, c.Value)
			} else {
				value(name+"."+c.Name, arg, c.Value)
			}
		}
	}
	arguments := func(args ast.ArgumentList) {
		for _, a := range args {
			value(a.Name, a.Name, a.Value)
		}
	}
	directives := func(ds ast.DirectiveList) {
		for _, d := range ds {
			arguments(d.Arguments)
		}
	}
	var selections func(ss ast.SelectionSet)
	selections = func(ss ast.SelectionSet) {
		for _, s := range ss {
			switch s := s.(type) {
			case *ast.Field:
				arguments(s.Arguments)
				directives(s.Directives)
				selections(s.SelectionSet)
			case *ast.InlineFragment:
				directives(s.Directives)
				selections(s.SelectionSet)
			case *ast.FragmentSpread:
				directives(s.Directives)
			}
		}
	}
	for _, op := range ops {
		for _, d := range op.VariableDefinitions {
			value("$"+d.Variable, "", d.DefaultValue)
			directives(d.Directives)
		}
		directives(op.Directives)
		selections(op.SelectionSet)
	}
	for _, f := range frags {
		directives(f.Directives)
		selections(f.SelectionSet)
	}
}

func clipValue(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// inputMessage is the message of a scalar's refusal of a variable's value
// (*upstream.InputError), at path: the argument is the path's last name.
func (a numericArgs) inputMessage(e *upstream.InputError, path ast.Path) string {
	name, arg := "argument", ""
	for i := len(path) - 1; i >= 0; i-- {
		if n, ok := path[i].(ast.PathName); ok {
			arg = string(n)
			name = ast.Path(path[i:]).String()
			break
		}
	}
	want := e.Want
	if spec := a.spec(arg, e.Scalar); spec != nil {
		want = spec.want
	}
	return fmt.Sprintf("%s: %s is not %s", name, e.Got, want)
}

// variableMessage rewrites gqlparser's refusal of a numeric variable's
// value ("cannot use value 0 as Int", at path variable.v) to name the
// argument the variable is passed to and its range; ok is false for other
// errors.
func (a numericArgs) variableMessage(doc *ast.QueryDocument, op *ast.OperationDefinition, e *gqlerror.Error) (string, bool) {
	if op == nil || len(e.Path) < 2 || e.Path[0] != ast.PathName("variable") || !strings.HasPrefix(e.Message, "cannot use ") {
		return "", false
	}
	variable, ok := e.Path[1].(ast.PathName)
	if !ok {
		return "", false
	}
	def := op.VariableDefinitions.ForName(string(variable))
	if def == nil {
		return "", false
	}
	var use *argPlace
	var frags ast.FragmentDefinitionList
	if doc != nil {
		frags = doc.Fragments
	}
	eachArgValue(ast.OperationList{op}, frags, func(name, arg string, v *ast.Value) {
		if use == nil && arg != "" && v.Kind == ast.Variable && v.Raw == string(variable) {
			use = &argPlace{name: name, arg: arg}
		}
	})
	typ := def.Type.Name()
	if use == nil {
		if spec := a.spec("", typ); spec != nil {
			return fmt.Sprintf("$%s: the value is not %s", variable, spec.want), true
		}
		return "", false
	}
	spec := a.spec(use.arg, typ)
	if spec == nil {
		return "", false
	}
	return fmt.Sprintf("%s: the value of $%s is not %s", use.name, variable, spec.want), true
}
