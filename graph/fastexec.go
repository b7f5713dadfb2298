package graph

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	lru "github.com/hashicorp/golang-lru/v2"
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
// It answers a query exactly as gqlgen would or not at all: wherever its
// answer could differ (a null or an error in a non-null position, which
// gqlgen propagates to the parent; introspection; @defer; a panic outside
// a resolver; a field it was not generated for) it gives up, keeps none of
// its output or errors, and gqlgen's executor answers the request (a panic
// in a resolver is handled as gqlgen handles it: an INTERNAL error at the
// field). Upstream calls made before giving up are not repeated: the
// request's memo keeps them. TestDirectExecutorMatchesGqlgen compares the
// two executors on every golden query and on queries written for the
// corners.

// fastSchema is gqlgen's executable schema with Exec answered by the
// direct executor when it can.
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

// Exec implements graphql.ExecutableSchema.
func (s fastSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	if h, ok := s.execStreaming(ctx); ok {
		if op := graphql.GetOperationContext(ctx).Operation; op.Operation == ast.Query {
			s.observe("gqlgen")
		}
		return h
	}
	opCtx := graphql.GetOperationContext(ctx)
	if opCtx.Operation == nil || opCtx.Operation.Operation != ast.Query {
		return s.executableSchema.Exec(ctx)
	}
	done := false
	// gqlgen's handler, once the direct executor gave up: it answers the
	// later calls too (the incremental parts of @defer).
	var gqlgen graphql.ResponseHandler
	return func(rctx context.Context) *graphql.Response {
		if gqlgen != nil {
			return gqlgen(rctx)
		}
		if done {
			return nil
		}
		done = true
		if data, ok := runDirect(rctx, opCtx, s.executableSchema); ok {
			s.observe("direct")
			if sp := spliceFor(rctx); sp != nil {
				sp.data = data
				return &graphql.Response{Data: SpliceMarker}
			}
			return &graphql.Response{Data: data.bytes()}
		}
		s.observe("gqlgen")
		gqlgen = s.executableSchema.Exec(ctx)
		return gqlgen(rctx)
	}
}

// runDirect executes the operation; ok false means it gave up and nothing
// was recorded.
func runDirect(ctx context.Context, opCtx *graphql.OperationContext, es *executableSchema) (data *directData, ok bool) {
	x := &directState{
		opCtx:  opCtx,
		ec:     newExecutionContext(opCtx, es, nil),
		plans:  plansFor(opCtx),
		rootFC: &graphql.FieldContext{Object: "Query"},
	}
	if introspects(x, opCtx.Operation.SelectionSet) {
		return nil, false // gqlgen's executor answers, no resolver run twice
	}
	ctx = graphql.WithLazyInputUnmarshalerIndex(ctx, newInputUnmarshalers)
	ctx = graphql.WithFieldContext(ctx, x.rootFC)
	root := getFxBuffer()
	func() {
		defer func() {
			if r := recover(); r != nil {
				x.giveUp()
			}
		}()
		w := &directWalk{o: root, path: make([]directFrame, 0, 16)}
		if !x.directObject_Query(ctx, w, opCtx.Operation.SelectionSet) {
			x.giveUp()
		}
	}()
	x.wg.Wait()
	data = &directData{root: root}
	if x.failed.Load() {
		data.free()
		return nil, false
	}
	for _, e := range x.errs {
		fctx := withFieldContext(ctx, e.fc, e.fc.Parent)
		if e.located {
			opCtx.Error(fctx, graphql.AddFieldLocationToError(fctx, e.err))
		} else {
			graphql.AddError(fctx, e.err)
		}
	}
	return data, true
}

// introspects reports whether the operation asks for __schema or __type,
// which only gqlgen's executor answers: known before any resolver runs.
func introspects(x *directState, sel ast.SelectionSet) bool {
	fields, _ := x.collect(sel, queryImplementors)
	for i := range fields {
		if name := fields[i].Name; name == "__schema" || name == "__type" {
			return true
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
	failed atomic.Bool

	plans *directPlans

	mu   sync.Mutex
	errs []directError
}

type directError struct {
	fc      *graphql.FieldContext
	err     error
	located bool
}

func (x *directState) giveUp() { x.failed.Store(true) }

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

type directPlan struct {
	fields []graphql.CollectedField
	ok     bool
}

// collect is graphql.CollectFields, computed once per selection set and
// type: the rows of a list share their plan (and the merged selection sets
// in it, which the next level keys on), and so do the requests of the same
// parsed operation when its plans cannot depend on variables (plansFor).
func (x *directState) collect(sel ast.SelectionSet, satisfies []string) ([]graphql.CollectedField, bool) {
	if len(sel) == 0 || len(satisfies) == 0 {
		return nil, false
	}
	k := directKey{first: &sel[0], n: len(sel), typ: unsafe.StringData(satisfies[0])}
	if m := x.plans.m.Load(); m != nil {
		if plan, found := (*m)[k]; found {
			return plan.fields, plan.ok
		}
	}
	plan := directPlan{fields: graphql.CollectFields(x.opCtx, sel, satisfies), ok: true}
	for i := range plan.fields {
		if plan.fields[i].IsDeferred() || len(plan.fields[i].Deferrables) > 0 {
			plan.ok = false
		}
	}
	plan = x.plans.store(k, plan)
	return plan.fields, plan.ok
}

// plan is collect through w's recent plans.
func (x *directState) plan(w *directWalk, sel ast.SelectionSet, satisfies []string) ([]graphql.CollectedField, bool) {
	if len(sel) == 0 || len(satisfies) == 0 {
		return nil, false
	}
	if w.recent == nil {
		if w.lookups < 8 {
			w.lookups++
			return x.collect(sel, satisfies)
		}
		w.recent = new([8]directRecent)
	}
	k := directKey{first: &sel[0], n: len(sel), typ: unsafe.StringData(satisfies[0])}
	h := uintptr(unsafe.Pointer(k.first))>>4 ^ uintptr(unsafe.Pointer(k.typ))>>3
	slot := &w.recent[h%uintptr(len(w.recent))]
	if slot.k != k {
		fields, ok := x.collect(sel, satisfies)
		slot.k, slot.plan = k, directPlan{fields: fields, ok: ok}
	}
	return slot.plan.fields, slot.plan.ok
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

func ptrMap(m *map[directKey]directPlan) map[directKey]directPlan {
	if m == nil {
		return nil
	}
	return *m
}

// sharedPlans keeps the plans of the operations recently executed, by
// their parsed operation (gqlgen's query cache gives the same one to every
// request with the same text).
var sharedPlans, _ = lru.New[*ast.OperationDefinition, *directPlans](1000)

// plansFor returns the plans an execution of the operation uses: shared
// with the operation's other executions, unless a directive on a selection
// (@skip, @include, @defer, whose arguments may be variables) could make
// them differ.
func plansFor(opCtx *graphql.OperationContext) *directPlans {
	if p, ok := sharedPlans.Get(opCtx.Operation); ok && p.doc == opCtx.Doc {
		if p.perRequest {
			return &directPlans{}
		}
		return p
	}
	p := &directPlans{doc: opCtx.Doc, perRequest: hasSelectionDirectives(opCtx.Doc)}
	sharedPlans.Add(opCtx.Operation, p)
	if p.perRequest {
		return &directPlans{}
	}
	return p
}

// hasSelectionDirectives reports whether any selection of the document
// carries a directive.
func hasSelectionDirectives(doc *ast.QueryDocument) bool {
	var walk func(ast.SelectionSet) bool
	walk = func(set ast.SelectionSet) bool {
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				if len(s.Directives) > 0 || walk(s.SelectionSet) {
					return true
				}
			case *ast.InlineFragment:
				if len(s.Directives) > 0 || walk(s.SelectionSet) {
					return true
				}
			case *ast.FragmentSpread:
				if len(s.Directives) > 0 {
					return true
				}
			}
		}
		return false
	}
	for _, op := range doc.Operations {
		if walk(op.SelectionSet) {
			return true
		}
	}
	for _, f := range doc.Fragments {
		if walk(f.SelectionSet) {
			return true
		}
	}
	return false
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

type directFrame struct {
	field   *graphql.CollectedField
	index   int
	isIndex bool
	fc      *graphql.FieldContext
}

func (w *directWalk) push(f *graphql.CollectedField) { w.path = append(w.path, directFrame{field: f}) }

func (w *directWalk) pushIndex(i int) { w.path = append(w.path, directFrame{index: i, isIndex: true}) }

func (w *directWalk) pop() { w.path = w.path[:len(w.path)-1] }

// fieldContext builds the gqlgen field context of the first n frames of
// the path (for resolvers and errors: rare, so built on demand).
func (x *directState) fieldContext(w *directWalk, n int) *graphql.FieldContext {
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
		default:
			link(&graphql.FieldContext{Field: *q.field})
		}
	}
	link(x.rootFC)
	return leaf
}

// resolve runs the resolver field on top of w's path: on its own goroutine
// when the field is nullable (its value goes into a hole of w's buffer,
// filled when the walk is over), inline otherwise (a failure there gives
// up anyway).
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
	rctx := withFieldContext(ctx, fc, x.fieldContext(w, top))
	if nonNull {
		return run(rctx, fc, w)
	}
	u := getFxBuffer()
	w.o.holes = append(w.o.holes, directHole{at: w.o.b.Len(), out: u})
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				x.giveUp()
			}
		}()
		if x.failed.Load() {
			return
		}
		uw := &directWalk{o: u, path: make([]directFrame, 1, 16)}
		uw.path[0].fc = fc
		if !run(rctx, fc, uw) {
			x.giveUp()
		}
	}()
	return true
}

// fieldError records err for the field on top of w's path and writes
// null; in a non-null position it gives up instead (gqlgen would null the
// parent).
func (x *directState) fieldError(w *directWalk, err error, located, nonNull bool) bool {
	if nonNull {
		return false
	}
	w.o.null()
	fc := x.fieldContext(w, len(w.path))
	x.mu.Lock()
	x.errs = append(x.errs, directError{fc: fc, err: err, located: located})
	x.mu.Unlock()
	return true
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
