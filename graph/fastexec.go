package graph

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/tradenet/gateway/internal/swar"
)

// The direct executor. gqlgen's executor builds a tree of marshalers with a
// FieldContext per field and a goroutine per list element before writing
// anything; for the large, flat pages this gateway serves that costs several
// times the upstream call it answers (BENCHMARKS.md). The functions generated
// into fastexec_gen.go (by internal/fastexec, from gqlgen's own bindings)
// write each value into the response as they read it, and run only resolver
// fields concurrently, one goroutine each, as gqlgen does.
//
// One path: the executor of an operation is chosen once, before it starts
// (fastSchema.Exec), and the one chosen answers it whole:
//
//	request → transport → Executor (limits, documents) → fastSchema.Exec
//	  ├─ query: runDirect → generated directObject_* → bytes (splice.go)
//	  │    └─ @defer: deferAfter → runDeferred → incremental.go's loop
//	  └─ introspection, subscription: gqlgen's generated.go
//
// A query runs on the direct executor, which handles errors and nulls
// itself: an error or a null in a non-null position is recorded once, at
// its path, with gqlgen's message, and the output is rolled back to where
// the nearest nullable ancestor started (a field, a list element, the
// buffer of a resolver field run concurrently, a deferred payload, the
// data), which becomes null; a panic is an INTERNAL error at its field;
// @defer is answered as gqlgen answers it (incremental.go). gqlgen's
// executor runs, alone, only where the direct one is not worth its upkeep:
//
//   - introspection (__schema, __type): the playground's docs pane, a few
//     requests a session, over the schema's static types; the generator
//     writes no code for them, so there is no gain to measure;
//   - subscriptions: an event is one transaction, a few a second. At the
//     heaviest selection gqlgen's executor costs about 0.19 ms of CPU per
//     transaction, the direct one 0.012 ms (BenchmarkHeaviestQuery:
//     handler-gqlgen against handler, per row of the page): at three
//     events a second, about half a millisecond of CPU a second per
//     subscriber, against the upkeep of a second writer of events (their
//     request state, their shared answers, their end errors: live.go);
//   - operations that select a field the generator writes no code for
//     (directUnsupported; none in today's schema);
//   - every operation of an executor built with GqlgenExecutor, or with an
//     extension that intercepts fields (which gqlgen's executor calls
//     around each field, and the direct one does not): known when the
//     executor is built.
//
// TestDirectExecutorMatchesGqlgen compares the two executors on every
// golden query and on queries written for the corners,
// TestDirectExecutorHandlesErrorsAndNullsItself on errors, nulls and
// panics in non-null positions, TestDirectExecutorDefersAsGqlgen on @defer.

// fastSchema is gqlgen's executable schema with Exec answered by the
// direct executor, or by gqlgen's for the operations listed above.
type fastSchema struct {
	*executableSchema
	observe func(executor string)
}

// newFastSchema wraps the generated schema; disabled keeps gqlgen's
// executor for every request.
func newFastSchema(cfg Config, disabled bool, observe func(executor string)) graphql.ExecutableSchema {
	if observe == nil {
		observe = func(string) {}
	}
	es := NewExecutableSchema(cfg).(*executableSchema)
	if disabled {
		return observedSchema{es, observe}
	}
	return fastSchema{es, observe}
}

// observedSchema is gqlgen's executor alone, counted.
type observedSchema struct {
	*executableSchema
	observe func(executor string)
}

func (s observedSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Query {
		s.observe("gqlgen")
	}
	if h, ok := s.execStreaming(ctx); ok {
		return h
	}
	return s.executableSchema.Exec(ctx)
}

// Exec implements graphql.ExecutableSchema: it chooses the executor of the
// operation, once, before anything runs.
func (s fastSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	if opCtx.Operation == nil || opCtx.Operation.Operation != ast.Query {
		if h, ok := s.execStreaming(ctx); ok {
			return h // a subscription
		}
		return s.executableSchema.Exec(ctx)
	}
	plans := plansFor(opCtx)
	if plans.gqlgenOnly(opCtx, s.Schema()) {
		s.observe("gqlgen")
		if h, ok := s.execStreaming(ctx); ok {
			return h
		}
		return s.executableSchema.Exec(ctx)
	}
	s.observe("direct")
	if DefersFragments(opCtx) {
		return s.execDirectIncremental(opCtx, plans)
	}
	done := false
	return func(rctx context.Context) *graphql.Response {
		if done {
			return nil
		}
		done = true
		data := runDirect(rctx, opCtx, s.executableSchema, plans, nil)
		if sp := spliceFor(rctx); sp != nil {
			sp.data = data
			return &graphql.Response{Data: SpliceMarker}
		}
		return &graphql.Response{Data: data.bytes()}
	}
}

// runDirect executes the operation on the direct executor: the data, its
// errors recorded in the operation's context. inc, for a query that defers
// fragments, receives the later payloads.
func runDirect(ctx context.Context, opCtx *graphql.OperationContext, es *executableSchema, plans *directPlans, inc *directIncremental) *directData {
	x := &directState{
		opCtx:  opCtx,
		ec:     newExecutionContext(opCtx, es, nil),
		plans:  plans,
		rootFC: &graphql.FieldContext{Object: "Query"},
		inc:    inc,
	}
	if inc != nil {
		// The deferred payloads run after this execution is over, under
		// the request's context with a root field context of their own.
		x.deferCtx = graphql.WithFieldContext(graphql.WithLazyInputUnmarshalerIndex(ctx, newInputUnmarshalers), x.rootFC)
	}
	ctx = graphql.WithLazyInputUnmarshalerIndex(ctx, newInputUnmarshalers)
	ctx = graphql.WithFieldContext(ctx, x.rootFC)
	root := getFxBuffer()
	valid := func() (valid bool) {
		defer func() {
			// The generated functions recover a panic at the field it
			// happened in; one outside any field nulls the data.
			if r := recover(); r != nil {
				x.record(directError{fc: x.rootFC, err: x.opCtx.Recover(ctx, r)})
				valid = false
			}
		}()
		w := &directWalk{o: root, path: make([]directFrame, 0, 16)}
		return x.directObject_Query(ctx, w, opCtx.Operation.SelectionSet)
	}()
	if !valid {
		// A null in a non-null field of Query nulls the data.
		x.rollback(root, directMark{})
		root.null()
	}
	x.wg.Wait()
	x.releaseDiscarded()
	x.addErrors(ctx)
	return &directData{root: root}
}

// addErrors adds the errors recorded to the response context of ctx, in
// the order recorded.
func (x *directState) addErrors(ctx context.Context) {
	for _, e := range x.errs {
		fctx := withFieldContext(ctx, e.fc, e.fc.Parent)
		switch {
		case e.invalidNull != "":
			graphql.AddInvalidNullError(fctx, e.invalidNull)
		case e.located:
			x.opCtx.Error(fctx, graphql.AddFieldLocationToError(fctx, e.err))
		default:
			x.opCtx.Error(fctx, e.err)
		}
	}
}

// gqlgenOnly reports whether the operation is one gqlgen's executor runs
// alone (introspection, a field with no direct code): decided once per
// operation's plans, before any resolver runs.
func (p *directPlans) gqlgenOnly(opCtx *graphql.OperationContext, schema *ast.Schema) bool {
	if p.doc == nil {
		// Plans made per request (selections with directives, which may
		// depend on variables): decided per request, by the same walk.
		return selectsGqlgenOnly(opCtx, schema, opCtx.Operation.SelectionSet, queryImplementors, 0)
	}
	p.gqlgenOnce.Do(func() {
		p.gqlgen = selectsGqlgenOnly(opCtx, schema, opCtx.Operation.SelectionSet, queryImplementors, 0)
	})
	return p.gqlgen
}

// maxDirectWalkDepth bounds selectsGqlgenOnly's walk: deeper than the
// query limits let any operation go.
const maxDirectWalkDepth = 64

// selectsGqlgenOnly walks the selection as the executors collect it, on
// every type a fragment may apply to: introspection at the root, or a
// field the direct executor has no code for (directUnsupported) anywhere.
func selectsGqlgenOnly(opCtx *graphql.OperationContext, schema *ast.Schema, sel ast.SelectionSet, satisfies []string, depth int) bool {
	if depth > maxDirectWalkDepth {
		return true
	}
	for _, f := range graphql.CollectFields(opCtx, sel, satisfies) {
		if depth == 0 && (f.Name == "__schema" || f.Name == "__type") {
			return true
		}
		if len(directUnsupported) == 0 {
			continue // nothing to look for below the root
		}
		if directUnsupported[satisfies[0]+"."+f.Name] {
			return true
		}
		if len(f.Selections) == 0 || f.Definition == nil {
			continue
		}
		def := schema.Types[f.Definition.Type.Name()]
		if def == nil {
			continue
		}
		types := []*ast.Definition{def}
		if def.Kind != ast.Object {
			types = schema.GetPossibleTypes(def)
		}
		for _, t := range types {
			sat := []string{t.Name}
			for _, i := range schema.GetImplements(t) {
				sat = append(sat, i.Name)
			}
			if selectsGqlgenOnly(opCtx, schema, f.Selections, sat, depth+1) {
				return true
			}
		}
	}
	return false
}

func newInputUnmarshalers() *graphql.InputUnmarshalerIndex { return graphql.NewInputUnmarshalerIndex() }

// withFieldContext is graphql.WithFieldContext keeping fc's parent
// (gqlgen's sets it to the context's field context).
func withFieldContext(ctx context.Context, fc, parent *graphql.FieldContext) context.Context {
	ctx = graphql.WithFieldContext(ctx, fc)
	fc.Parent = parent
	return ctx
}

// directState is one request's direct execution.
type directState struct {
	opCtx  *graphql.OperationContext
	ec     *executionContext
	rootFC *graphql.FieldContext
	wg     sync.WaitGroup

	plans *directPlans

	mu   sync.Mutex
	errs []directError
	// discarded are the buffers of resolver fields whose place was rolled
	// back while their goroutines may still write to them: returned to
	// the pool once every goroutine is done.
	discarded []directHole

	// inc receives the deferred payloads of a query that defers
	// fragments (nil otherwise); deferCtx is the context they run under.
	inc      *directIncremental
	deferCtx context.Context
}

// directError is an error recorded during the execution, added to the
// operation's errors when it is over (in the order recorded).
type directError struct {
	fc      *graphql.FieldContext
	err     error
	located bool // with the field's location, as gqlgen adds a resolver's
	// invalidNull, when set, is the declared type of a non-null position
	// that got null: the error is gqlgen's (graphql.AddInvalidNullError).
	invalidNull string
}

// record adds an error.
func (x *directState) record(e directError) {
	x.mu.Lock()
	x.errs = append(x.errs, e)
	x.mu.Unlock()
}

// directKey identifies a selection set (the same slice for every row of a page)
// on a concrete type: by addresses, so that looking a plan up hashes three
// words. typ is the address of the type's name as the generated code's
// implementors lists hold it (one list per type); a caller passing the
// same name from elsewhere only gets a plan of its own.
type directKey struct {
	first *ast.Selection
	n     int
	typ   *byte
}

// collect is graphql.CollectFields, computed once per selection set and
// type: the rows of a list share their plan (and the merged selection sets
// in it, which the next level keys on), and so do the requests of the same
// parsed operation when its plans cannot depend on variables (plansFor).
//
// The fields gqlgen's executor would defer (those it resolves concurrently,
// under an active @defer) are left out of the plan's fields, and grouped by
// label in its deferred groups.
func (x *directState) collect(sel ast.SelectionSet, satisfies []string) directPlan {
	if len(sel) == 0 || len(satisfies) == 0 {
		return directPlan{}
	}
	k := directKey{first: &sel[0], n: len(sel), typ: unsafe.StringData(satisfies[0])}
	if m := x.plans.m.Load(); m != nil {
		if plan, found := (*m)[k]; found {
			return plan
		}
	}
	fields := graphql.CollectFields(x.opCtx, sel, satisfies)
	if x.inc == nil {
		// Not delivered incrementally: nothing is deferred. (A document
		// with @defer has plans of each request's own: plansFor.)
		return x.plans.store(k, directPlan{object: satisfies[0], fields: fields})
	}
	return x.plans.store(k, splitDeferred(fields, satisfies[0]))
}

// directPlan is what an object of one type writes for one selection set:
// its fields now, and its deferred groups later.
type directPlan struct {
	object   string // the type
	fields   []graphql.CollectedField
	deferred []directDeferGroup
}

// directDeferGroup is the fields of an object deferred under one label.
type directDeferGroup struct {
	label  string
	fields []graphql.CollectedField
}

// splitDeferred splits the fields of an object of type object into those
// written now and those deferred, by label: gqlgen's executor defers only
// the fields it resolves concurrently (none of Query's), and writes a
// deferred field's other fields with the object. A field deferred under
// several labels is written in the first label's payload.
func splitDeferred(fields []graphql.CollectedField, object string) directPlan {
	plan := directPlan{object: object, fields: fields}
	if object == "Query" {
		return plan
	}
	deferred := func(f *graphql.CollectedField) bool {
		return f.IsDeferred() && directFieldKinds[object+"."+f.Name]&directConcurrent != 0
	}
	if !slices.ContainsFunc(fields, func(f graphql.CollectedField) bool { return deferred(&f) }) {
		return plan
	}
	plan.fields = nil
	for i := range fields {
		f := &fields[i]
		if !deferred(f) {
			plan.fields = append(plan.fields, *f)
			continue
		}
		label := f.Deferrables[0].Label
		at := slices.IndexFunc(plan.deferred, func(g directDeferGroup) bool { return g.label == label })
		if at < 0 {
			at = len(plan.deferred)
			plan.deferred = append(plan.deferred, directDeferGroup{label: label})
		}
		plan.deferred[at].fields = append(plan.deferred[at].fields, *f)
	}
	return plan
}

// plan is collect through w's recent plans.
func (x *directState) plan(w *directWalk, sel ast.SelectionSet, satisfies []string) ([]graphql.CollectedField, []directDeferGroup) {
	if len(sel) == 0 || len(satisfies) == 0 {
		return nil, nil
	}
	if w.recent == nil {
		if w.lookups < 8 {
			w.lookups++
			plan := x.collect(sel, satisfies)
			return plan.fields, plan.deferred
		}
		w.recent = new([8]directRecent)
	}
	k := directKey{first: &sel[0], n: len(sel), typ: unsafe.StringData(satisfies[0])}
	h := uintptr(unsafe.Pointer(k.first))>>4 ^ uintptr(unsafe.Pointer(k.typ))>>3
	slot := &w.recent[h%uintptr(len(w.recent))]
	if slot.k != k {
		slot.k, slot.plan = k, x.collect(sel, satisfies)
	}
	return slot.plan.fields, slot.plan.deferred
}

// directPlans are the plans of one operation, by selection set and type.
type directPlans struct {
	// doc is the parsed document the keys point into: kept alive (and so
	// its addresses unused by anything else) as long as the plans are.
	doc        *ast.QueryDocument
	perRequest bool // plans depend on variables: not shared

	// m is read without a lock (every object of every response looks its
	// plan up) and replaced, copied with one more plan, under mu: an
	// operation has a few hundred plans at most, all made by its first
	// executions.
	m  atomic.Pointer[map[directKey]directPlan]
	mu sync.Mutex

	gqlgenOnce sync.Once
	gqlgen     bool // the operation runs on gqlgen's executor (gqlgenOnly)
}

// store adds the plan of k, unless another execution added one first, and
// returns the plan kept.
func (p *directPlans) store(k directKey, plan directPlan) directPlan {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.m.Load()
	if old != nil {
		if kept, found := (*old)[k]; found {
			return kept
		}
	}
	m := make(map[directKey]directPlan, 1+len(ptrMap(old)))
	maps.Copy(m, ptrMap(old))
	m[k] = plan
	p.m.Store(&m)
	return plan
}

// objectOf is the type of the object whose plan holds f: the plan it was
// collected in (an error's, so rare: a look through the operation's plans).
func (p *directPlans) objectOf(f *graphql.CollectedField) string {
	m := p.m.Load()
	if m == nil {
		return ""
	}
	holds := func(fields []graphql.CollectedField) bool {
		return len(fields) > 0 && uintptr(unsafe.Pointer(f)) >= uintptr(unsafe.Pointer(&fields[0])) &&
			uintptr(unsafe.Pointer(f)) <= uintptr(unsafe.Pointer(&fields[len(fields)-1]))
	}
	for _, plan := range *m {
		if holds(plan.fields) {
			return plan.object
		}
		for _, g := range plan.deferred {
			if holds(g.fields) {
				return plan.object
			}
		}
	}
	return ""
}

func ptrMap(m *map[directKey]directPlan) map[directKey]directPlan {
	if m == nil {
		return nil
	}
	return *m
}

// plansFor returns the plans an execution of the operation uses: made
// once per distinct document and shared with the operation's other
// executions (perOperation), unless a directive on a selection (@skip,
// @include, @defer, whose arguments may be variables) could make them
// differ.
func plansFor(opCtx *graphql.OperationContext) *directPlans {
	p := perOperation(opCtx, "direct plans", func() *directPlans {
		return &directPlans{doc: opCtx.Doc, perRequest: hasSelectionDirectives(opCtx.Doc)}
	})
	if p.perRequest {
		return &directPlans{}
	}
	return p
}

// hasSelectionDirectives reports whether any selection of the document
// carries a directive.
func hasSelectionDirectives(doc *ast.QueryDocument) bool {
	return anySelection(doc, func(s ast.Selection) bool {
		switch s := s.(type) {
		case *ast.Field:
			return len(s.Directives) > 0
		case *ast.InlineFragment:
			return len(s.Directives) > 0
		case *ast.FragmentSpread:
			return len(s.Directives) > 0
		}
		return false
	})
}

// directWalk is one goroutine's walk: the buffer it writes to, and the path
// of the value being written, as frames pushed and popped (a field, an
// index, or at the bottom of a resolver field's goroutine, that field's
// context).
type directWalk struct {
	o    *directOut
	path []directFrame

	// recent are the plans this walk used last, by a hash of their key:
	// the rows of a list look up the same few plans in turn (measured: 99.9 %
	// hits on a page of 1,000 delegations, 4 plans a row; about half on the
	// heaviest transactions page, whose rows use more plans than there are
	// slots, and where a 32-slot table still missed 43 %). Made once the
	// walk has looked up a few plans: the many walks that write one small
	// object (an asset reference) do not pay for it.
	recent  *[8]directRecent
	lookups int
}

type directRecent struct {
	k    directKey
	plan directPlan
}

// directFrame is one step of a walk's path: a field, an index, or a
// resolver field's context. Four words: every field of every row pushes
// one (the type of the field's object, which errors name, is its plan's:
// objectOf).
type directFrame struct {
	field   *graphql.CollectedField
	index   int
	isIndex bool
	fc      *graphql.FieldContext
}

// push adds the field f to the path.
func (w *directWalk) push(f *graphql.CollectedField) { w.path = append(w.path, directFrame{field: f}) }

func (w *directWalk) pushIndex(i int) { w.path = append(w.path, directFrame{index: i, isIndex: true}) }

func (w *directWalk) pop() { w.path = w.path[:len(w.path)-1] }

// fieldContext builds the gqlgen field context of the first n frames of
// the path (for resolvers and errors: rare, so built on demand); for an
// error, named, each field's context names its object and kind, as
// gqlgen's do (its null errors name the field by them).
func (x *directState) fieldContext(w *directWalk, n int, named bool) *graphql.FieldContext {
	var leaf, child *graphql.FieldContext
	link := func(fc *graphql.FieldContext) {
		if child == nil {
			leaf = fc
		} else {
			child.Parent = fc
		}
		child = fc
	}
	for i := n - 1; i >= 0; i-- {
		q := &w.path[i]
		switch {
		case q.fc != nil:
			link(q.fc)
			return leaf
		case q.isIndex:
			idx := q.index
			link(&graphql.FieldContext{Index: &idx})
		case named:
			object := x.plans.objectOf(q.field)
			kind := directFieldKinds[object+"."+q.field.Name]
			link(&graphql.FieldContext{
				Object:     object,
				Field:      *q.field,
				IsMethod:   kind&directMethod != 0,
				IsResolver: kind&directResolver != 0,
			})
		default:
			link(&graphql.FieldContext{Field: *q.field})
		}
	}
	link(x.rootFC)
	return leaf
}

// resolve runs the resolver field on top of w's path: on its own goroutine
// when the field is nullable (its value goes into a hole of w's buffer,
// filled when the walk is over; null when the value is invalid or a panic
// escapes the field's code), inline otherwise (false: the value is
// invalid, and so is the object holding the field).
func (x *directState) resolve(ctx context.Context, w *directWalk, object string, args map[string]any, nonNull bool,
	run func(ctx context.Context, fc *graphql.FieldContext, w *directWalk) bool,
) bool {
	top := len(w.path) - 1
	fc := &graphql.FieldContext{
		Object:     object,
		Field:      *w.path[top].field,
		Args:       args,
		IsMethod:   true,
		IsResolver: true,
	}
	rctx := withFieldContext(ctx, fc, x.fieldContext(w, top, false))
	if nonNull {
		return run(rctx, fc, w)
	}
	u := getFxBuffer()
	w.o.holes = append(w.o.holes, directHole{at: w.o.b.Len(), out: u})
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		uw := &directWalk{o: u, path: make([]directFrame, 1, 16)}
		uw.path[0].fc = fc
		defer func() {
			if r := recover(); r != nil {
				x.record(directError{fc: fc, err: x.opCtx.Recover(rctx, r)})
				x.rollback(u, directMark{})
				u.null()
			}
		}()
		if !run(rctx, fc, uw) {
			x.rollback(u, directMark{})
			u.null()
		}
	}()
	return true
}

// fieldError records err for the field on top of w's path and writes
// null; false in a non-null position (the null is invalid there: its
// nearest nullable ancestor becomes null, as in gqlgen's executor).
func (x *directState) fieldError(w *directWalk, err error, located, nonNull bool) bool {
	w.o.null()
	x.record(directError{fc: x.fieldContext(w, len(w.path), true), err: err, located: located})
	return !nonNull
}

// invalidNull records the error of a nil value in the non-null position
// on top of w's path (declared is its type, as gqlgen's error names it),
// writes null and returns false: the value is invalid.
func (x *directState) invalidNull(w *directWalk, declared string) bool {
	w.o.null()
	x.record(directError{fc: x.fieldContext(w, len(w.path), true), invalidNull: declared})
	return false
}

// fieldPanicked handles a panic recovered while the field at w.path[base]
// was written (generated directFields functions): an INTERNAL error at
// the field, as gqlgen's recover func makes it, the field's output rolled
// back to m and null written; false when the field is non-null (the
// object is invalid).
func (x *directState) fieldPanicked(ctx context.Context, w *directWalk, base int, m directMark, r any) bool {
	w.path = w.path[:base+1]
	fc := x.fieldContext(w, base+1, true)
	x.record(directError{fc: fc, err: x.opCtx.Recover(withFieldContext(ctx, fc, fc.Parent), r)})
	f := w.path[base].field
	w.path = w.path[:base]
	x.rollback(w.o, m)
	w.o.null()
	return f.Definition == nil || !f.Definition.Type.NonNull
}

// directFieldKind is where a field's value comes from, as gqlgen's field
// context tells (IsMethod, IsResolver): directFieldKinds, generated, holds
// the fields that are not a struct's.
type directFieldKind uint8

const (
	directMethod     directFieldKind = 1 << iota // IsMethod
	directResolver                               // IsResolver
	directConcurrent                             // gqlgen resolves it concurrently, and defers it
)

// errNoDirectField is the panic of a generated object function asked for a
// field it has no code for: gqlgenOnly gives the operations that select
// one to gqlgen's executor, so it means a bug.
func errNoDirectField(object, field string) error {
	return errors.New("direct executor: no code for field " + object + "." + field)
}

// directMark is a position in a buffer: its length and its number of holes.
type directMark struct{ at, holes int }

// mark is where o is now, for a rollback to it.
func (o *directOut) mark() directMark { return directMark{at: o.b.Len(), holes: len(o.holes)} }

// rollback truncates o to m: the bytes written since, and the holes made
// since, whose buffers wait in x.discarded until their goroutines are done.
func (x *directState) rollback(o *directOut, m directMark) {
	if len(o.holes) > m.holes {
		x.mu.Lock()
		x.discarded = append(x.discarded, o.holes[m.holes:]...)
		x.mu.Unlock()
		clear(o.holes[m.holes:])
		o.holes = o.holes[:m.holes]
	}
	o.b.Truncate(m.at)
}

// releaseDiscarded returns the buffers rollback set aside to the pool:
// called once every goroutine of the execution is done.
func (x *directState) releaseDiscarded() {
	for _, h := range x.discarded {
		h.out.release()
		putFxBuffer(h.out)
	}
	x.discarded = nil
}

// directOut is a piece of the response: bytes, and holes where the values of
// resolver fields run concurrently go.
type directOut struct {
	b     bytes.Buffer
	holes []directHole
}

type directHole struct {
	at  int
	out *directOut
}

var directBuffers = sync.Pool{New: func() any { return new(directOut) }}

func getFxBuffer() *directOut { return directBuffers.Get().(*directOut) }

func putFxBuffer(o *directOut) {
	if o.b.Cap() > 4<<20 {
		return // let the pool keep only ordinary sizes
	}
	o.b.Reset()
	o.holes = o.holes[:0]
	directBuffers.Put(o)
}

// directData is the data of a response: the root buffer and its holes, in
// pooled buffers until written.
type directData struct {
	root *directOut
}

func (d *directData) size() int { return d.root.size() }

// bytes returns the data as one slice, and frees the buffers.
func (d *directData) bytes() []byte {
	b := d.root.appendTo(make([]byte, 0, d.root.size()))
	d.free()
	return b
}

// appendEscaped appends the data escaped as json.Marshal escapes a
// json.RawMessage (splice.go), and frees the buffers.
func (d *directData) appendEscaped(dst []byte) []byte {
	dst = d.root.appendEscapedTo(dst)
	d.free()
	return dst
}

func (d *directData) free() {
	d.root.release()
	putFxBuffer(d.root)
}

// release returns the holes' buffers to the pool (the root is returned by
// its owner).
func (o *directOut) release() {
	for _, h := range o.holes {
		h.out.release()
		putFxBuffer(h.out)
	}
}

func (o *directOut) size() int {
	n := o.b.Len()
	for _, h := range o.holes {
		n += h.out.size()
	}
	return n
}

func (o *directOut) appendTo(dst []byte) []byte {
	b := o.b.Bytes()
	prev := 0
	for _, h := range o.holes {
		dst = append(dst, b[prev:h.at]...)
		dst = h.out.appendTo(dst)
		prev = h.at
	}
	return append(dst, b[prev:]...)
}

func (o *directOut) appendEscapedTo(dst []byte) []byte {
	b := o.b.Bytes()
	prev := 0
	for _, h := range o.holes {
		dst = appendHTMLEscaped(dst, b[prev:h.at])
		dst = h.out.appendEscapedTo(dst)
		prev = h.at
	}
	return appendHTMLEscaped(dst, b[prev:])
}

func (o *directOut) null() { o.b.WriteString("null") }

// key writes `"name":`; names are GraphQL names, nothing to escape.
func (o *directOut) key(name string) {
	o.b.WriteByte('"')
	o.b.WriteString(name)
	o.b.WriteString(`":`)
}

func (o *directOut) bool(v bool) {
	if v {
		o.b.WriteString("true")
	} else {
		o.b.WriteString("false")
	}
}

func (o *directOut) int(v int64) { o.b.Write(strconv.AppendInt(o.b.AvailableBuffer(), v, 10)) }

// float writes f as gqlgen's MarshalFloatContext does (%g), refusing
// infinities and NaN with its error.
func (o *directOut) float(f float64) error {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return errFloat
	}
	o.b.Write(strconv.AppendFloat(o.b.AvailableBuffer(), f, 'g', -1, 64))
	return nil
}

var errFloat = errors.New("cannot marshal infinite no NaN float values")

func (o *directOut) intQuoted(v int64) {
	b := o.b.AvailableBuffer()
	b = append(b, '"')
	b = strconv.AppendInt(b, v, 10)
	o.b.Write(append(b, '"'))
}

// str writes s as gqlgen's MarshalString does: quotes, backslashes and
// control characters escaped, everything else as it is.
func (o *directOut) str(s string) {
	const hex = "0123456789ABCDEF"
	o.b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		// Eight bytes at a time while none needs escaping.
		for i+8 <= len(s) {
			x := swar.LoadString(s, i)
			if swar.HasLess(x, 0x20) || swar.HasByte(x, '"') || swar.HasByte(x, '\\') {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		o.b.WriteString(s[start:i])
		switch c {
		case '\t':
			o.b.WriteString(`\t`)
		case '\r':
			o.b.WriteString(`\r`)
		case '\n':
			o.b.WriteString(`\n`)
		case '\\':
			o.b.WriteString(`\\`)
		case '"':
			o.b.WriteString(`\"`)
		default:
			o.b.WriteString(`\u00`)
			o.b.WriteByte(hex[c>>4])
			o.b.WriteByte(hex[c&0xf])
		}
		start = i + 1
	}
	o.b.WriteString(s[start:])
	o.b.WriteByte('"')
}
