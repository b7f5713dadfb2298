package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Execution of the operations that answer more than once: queries with
// @defer (incremental delivery) and subscriptions. gqlgen's generated Exec
// runs them with two defects this file owns instead:
//
//   - a deferred field is written as null in the payload before its own
//     (docs/transports.md: the incremental delivery format leaves it out,
//     and a client cannot tell that null from a value); and the loop that
//     waits for deferred payloads does not watch the context, so an
//     operation whose client left blocks its goroutine for ever;
//   - each subscription event is written into one buffer reused for the
//     next, so a transport that holds two events at once holds the last
//     one twice.
//
// Both loops here watch the operation's context, give each payload bytes
// of its own, and leave deferred fields out of the payloads that come
// before theirs. Queries without @defer do not come here (fastexec.go).
//
// A query with @defer runs on the direct executor (execDirectIncremental),
// which defers what gqlgen's does (the fields it resolves concurrently: a
// deferred fragment's other fields come with their object), writes no
// deferred field before its payload, and delivers the payloads in the
// same order, through the same loop; gqlgen's execIncremental stays for an
// executor that runs gqlgen's alone (ExecutorConfig.GqlgenExecutor).

// execIncremental runs a query that defers fragments: the first response
// holds everything not deferred (HasNext true while payloads are pending),
// each later one the fields of one deferred fragment at its path. A
// payload is sent only once the object at its path has been: a fragment
// deferred inside another can be resolved first, and then waits for it.
func (e *executableSchema) execIncremental(ctx context.Context, opCtx *graphql.OperationContext) graphql.ResponseHandler {
	results := make(chan graphql.DeferredResult)
	ec := newExecutionContext(opCtx, e, results)
	omit := &deferredFields{}
	return incrementalResponses(omit, results, &ec.PendingDeferred,
		func(rctx context.Context) []byte {
			octx := withDeferredFields(graphql.WithLazyInputUnmarshalerIndex(rctx, newInputUnmarshalers), omit)
			var buf bytes.Buffer
			ec._Query(octx, opCtx.Operation.SelectionSet).MarshalGQL(&buf)
			return omit.strip(buf.Bytes(), nil, false)
		},
		func(result graphql.DeferredResult) []byte {
			var buf bytes.Buffer
			result.Result.MarshalGQL(&buf)
			return omit.strip(buf.Bytes(), result.Path, true)
		})
}

// incrementalResponses is the response handler of a query that defers
// fragments, on either executor: first writes the first response's data;
// each later response is one payload of results, in the order omit
// delivers them (a payload waits for its parent's), its data written by
// later; pending counts the payloads still to come (atomic).
func incrementalResponses(omit *deferredFields, results chan graphql.DeferredResult, pending *int32,
	first func(context.Context) []byte, later func(graphql.DeferredResult) []byte,
) graphql.ResponseHandler {
	var held []graphql.DeferredResult // resolved before their parent was sent
	sentFirst := false
	return func(rctx context.Context) *graphql.Response {
		var resp graphql.Response
		if !sentFirst {
			sentFirst = true
			resp.Data = first(rctx)
		} else {
			result, ok := omit.next(rctx, &held, results, pending)
			if !ok {
				return nil
			}
			resp.Data = later(result)
			omit.delivered(result.Path, resp.Data)
			resp.Path, resp.Label, resp.Errors = result.Path, result.Label, result.Errors
		}
		hasNext := atomic.LoadInt32(pending) > 0 || len(held) > 0
		resp.HasNext = &hasNext
		return &resp
	}
}

// directIncremental is the delivery of one query's deferred payloads on
// the direct executor: the payloads as they are written, how many are to
// come, and the deferred fields by path (which orders the payloads).
type directIncremental struct {
	results chan graphql.DeferredResult
	pending int32 // atomic: payloads launched and not yet received
	omit    deferredFields
}

// execDirectIncremental runs a query that defers fragments on the direct
// executor: the first response holds everything not deferred (HasNext true
// while payloads are pending), each later one the fields of one deferred
// label of one object, at its path, sent once the object at its path has
// been (as execIncremental).
func (s fastSchema) execDirectIncremental(opCtx *graphql.OperationContext, plans *directPlans) graphql.ResponseHandler {
	inc := &directIncremental{results: make(chan graphql.DeferredResult)}
	return incrementalResponses(&inc.omit, inc.results, &inc.pending,
		func(rctx context.Context) []byte {
			return runDirect(rctx, opCtx, s.executableSchema, plans, inc).bytes()
		},
		func(result graphql.DeferredResult) []byte {
			var buf bytes.Buffer
			result.Result.MarshalGQL(&buf)
			return buf.Bytes()
		})
}

// deferAfter launches the deferred groups of the object on top of w's
// path, once the object is written (valid is what writing it returned):
// none for an invalid object, as gqlgen's executor launches none. write
// writes an object of the same value with the fields given, as the
// execution x (each payload has its own: its goroutines and errors).
func (x *directState) deferAfter(ctx context.Context, w *directWalk, groups []directDeferGroup,
	write func(x *directState, ctx context.Context, w *directWalk, fields []graphql.CollectedField) bool, valid bool,
) bool {
	if !valid || x.inc == nil {
		return valid
	}
	path := x.fieldContext(w, len(w.path), false).Path()
	for _, g := range groups {
		aliases := make([]string, len(g.fields))
		for i := range g.fields {
			aliases[i] = g.fields[i].Alias
		}
		x.inc.omit.add(path, aliases)
		atomic.AddInt32(&x.inc.pending, 1)
		frames := slices.Clone(w.path)
		go x.runDeferred(frames, path, g, write)
	}
	return true
}

// runDeferred writes one deferred payload, with errors of its own (a
// fresh response context), and hands it to the delivery: null when a
// non-null field in it is invalid, as gqlgen's executor nulls it.
func (x *directState) runDeferred(frames []directFrame, path ast.Path, g directDeferGroup,
	write func(x *directState, ctx context.Context, w *directWalk, fields []graphql.CollectedField) bool,
) {
	ctx := x.deferCtx
	job := &directState{opCtx: x.opCtx, ec: x.ec, rootFC: x.rootFC, plans: x.plans, inc: x.inc, deferCtx: x.deferCtx}
	out := getFxBuffer()
	valid := func() (valid bool) {
		defer func() {
			if r := recover(); r != nil {
				w := &directWalk{o: out, path: frames}
				job.record(directError{fc: job.fieldContext(w, len(frames), true), err: x.opCtx.Recover(ctx, r)})
				valid = false
			}
		}()
		return write(job, ctx, &directWalk{o: out, path: frames}, g.fields)
	}()
	job.wg.Wait()
	job.releaseDiscarded()
	rctx := graphql.WithFreshResponseContext(ctx)
	job.addErrors(rctx)
	data := (&directData{root: out}).bytes()
	result := graphql.DeferredResult{Path: path, Label: g.label, Result: rawJSON(data), Errors: graphql.GetErrors(rctx)}
	if !valid {
		result.Result = graphql.Null
	}
	select {
	case x.inc.results <- result:
	case <-ctx.Done():
	}
}

// rawJSON is JSON already written, as a marshaler.
type rawJSON []byte

// MarshalGQL writes the JSON as it is.
func (r rawJSON) MarshalGQL(w io.Writer) { _, _ = w.Write(r) }

// next is the next deferred result whose object has been sent: a held one,
// else the next to arrive (held while its parent is pending); false when
// none is pending or the client left (the deferred work sees the same
// context and stops).
func (d *deferredFields) next(ctx context.Context, held *[]graphql.DeferredResult, results <-chan graphql.DeferredResult, pending *int32) (graphql.DeferredResult, bool) {
	for {
		for i, r := range *held {
			if d.deliverable(r.Path) {
				*held = append((*held)[:i], (*held)[i+1:]...)
				return r, true
			}
		}
		if atomic.LoadInt32(pending) <= 0 {
			return graphql.DeferredResult{}, false // (held ones, if any, have no parent: unreachable)
		}
		select {
		case r := <-results:
			atomic.AddInt32(pending, -1)
			if d.deliverable(r.Path) {
				return r, true
			}
			*held = append(*held, r)
		case <-ctx.Done():
			return graphql.DeferredResult{}, false
		}
	}
}

// execSubscription runs a subscription: one response per event, each with
// data of its own, nil when the source stream ends.
func (e *executableSchema) execSubscription(ctx context.Context, opCtx *graphql.OperationContext) graphql.ResponseHandler {
	ec := newExecutionContext(opCtx, e, make(chan graphql.DeferredResult))
	next := ec._Subscription(ctx, opCtx.Operation.SelectionSet)
	return func(rctx context.Context) *graphql.Response {
		data := next(rctx)
		if data == nil {
			return nil
		}
		var buf bytes.Buffer
		data.MarshalGQL(&buf)
		return &graphql.Response{Data: buf.Bytes()}
	}
}

// execStreaming answers the operations this file owns; ok is false for
// the others (a query without an active @defer).
func (e *executableSchema) execStreaming(ctx context.Context) (graphql.ResponseHandler, bool) {
	opCtx := graphql.GetOperationContext(ctx)
	if opCtx.Operation == nil {
		return nil, false
	}
	switch {
	case opCtx.Operation.Operation == ast.Subscription:
		return e.execSubscription(ctx, opCtx), true
	case opCtx.Operation.Operation == ast.Query && DefersFragments(opCtx):
		return e.execIncremental(ctx, opCtx), true
	}
	return nil, false
}

// ProcessDeferredGroup shadows gqlgen's (the generated code calls it on
// every object that defers fields, after collecting them and before
// marshalling the object): it records which fields of the object at the
// group's path are deferred, so that the payload holding the object can
// leave them out, then hands the group to gqlgen.
func (ec *executionContext) ProcessDeferredGroup(dg graphql.DeferredGroup) {
	if omit := deferredFieldsFor(dg.Context); omit != nil && len(dg.Defers) > 0 {
		omit.add(dg.Path, deferredAliases(dg.FieldSet))
	}
	ec.ExecutionContextState.ProcessDeferredGroup(dg)
}

// deferredAliases are the response names of the fields a deferred group's
// field set resolves. gqlgen keeps them unexported (FieldSet.fields, one
// CollectedField per deferred field, in the order added); reflection reads
// them without writing. TestDeferredFieldsAreAbsentFromEarlierPayloads
// fails if a gqlgen upgrade moves them.
func deferredAliases(fs *graphql.FieldSet) []string {
	fields := reflect.ValueOf(fs).Elem().FieldByName("fields")
	if !fields.IsValid() || fields.Kind() != reflect.Slice {
		return nil
	}
	aliases := make([]string, 0, fields.Len())
	for i := range fields.Len() {
		if alias := fields.Index(i).FieldByName("Alias"); alias.IsValid() && alias.Kind() == reflect.String {
			aliases = append(aliases, alias.String())
		}
	}
	return aliases
}

// deferredFields records, for one operation, the deferred fields of each
// object by the object's response path, and which of them were sent.
type deferredFields struct {
	mu     sync.Mutex
	byPath map[string][]string
	sent   map[string]bool // path key + "." + field: its payload was sent
}

// deliverable reports whether the object at path has been sent: no field
// on the way to it is deferred in a payload not yet sent.
func (d *deferredFields) deliverable(path ast.Path) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	var key strings.Builder
	for _, el := range path {
		if name, ok := el.(ast.PathName); ok {
			if deferred := d.byPath[key.String()]; containsString(deferred, string(name)) && !d.sent[key.String()+"."+string(name)] {
				return false
			}
		}
		key.WriteString(pathKey(ast.Path{el}))
	}
	return true
}

// delivered records the fields of a payload sent at path.
func (d *deferredFields) delivered(path ast.Path, data []byte) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return
	}
	key := pathKey(path)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sent == nil {
		d.sent = map[string]bool{}
	}
	for name := range fields {
		d.sent[key+"."+name] = true
	}
}

func withDeferredFields(ctx context.Context, d *deferredFields) context.Context {
	return withValue(ctx, d)
}

func deferredFieldsFor(ctx context.Context) *deferredFields { return valueOf[deferredFields](ctx) }

func (d *deferredFields) add(path ast.Path, aliases []string) {
	if len(aliases) == 0 {
		return
	}
	key := pathKey(path)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byPath == nil {
		d.byPath = map[string][]string{}
	}
	d.byPath[key] = append(d.byPath[key], aliases...)
}

func (d *deferredFields) at(key string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byPath[key]
}

func (d *deferredFields) empty() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.byPath) == 0
}

// pathKey writes a response path as a map key: ".name" per field, "[i]"
// per list index.
func pathKey(path ast.Path) string {
	var b strings.Builder
	for _, el := range path {
		switch el := el.(type) {
		case ast.PathName:
			b.WriteByte('.')
			b.WriteString(string(el))
		case ast.PathIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(int(el)))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// strip returns data, the JSON of the value at path base, without the
// members recorded as deferred at their objects' paths; a deferred
// payload (deferred) keeps its own members, the ones deferred at base.
// data is valid JSON written by the executor; a malformed document is
// returned as it is.
func (d *deferredFields) strip(data []byte, base ast.Path, deferred bool) []byte {
	if d.empty() || len(data) == 0 {
		return data
	}
	s := stripper{in: data, d: d, out: make([]byte, 0, len(data)), keepRoot: deferred}
	var key strings.Builder
	key.WriteString(pathKey(base))
	if !s.value(&key) {
		return data
	}
	return s.out
}

// stripper copies a JSON document, dropping deferred members.
type stripper struct {
	in       []byte
	pos      int
	out      []byte
	d        *deferredFields
	keepRoot bool // the root object's members are all kept
}

func (s *stripper) ws() {
	for s.pos < len(s.in) {
		switch s.in[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value copies the value at pos, whose path is key; false on malformed
// input.
func (s *stripper) value(key *strings.Builder) bool {
	s.ws()
	if s.pos >= len(s.in) {
		return false
	}
	switch s.in[s.pos] {
	case '{':
		return s.object(key)
	case '[':
		return s.array(key)
	case '"':
		start := s.pos
		if !s.skipString() {
			return false
		}
		s.out = append(s.out, s.in[start:s.pos]...)
		return true
	default:
		start := s.pos
		for s.pos < len(s.in) && !strings.ContainsRune(",]} \t\n\r", rune(s.in[s.pos])) {
			s.pos++
		}
		s.out = append(s.out, s.in[start:s.pos]...)
		return s.pos > start
	}
}

func (s *stripper) skipString() bool {
	s.pos++ // opening quote
	for s.pos < len(s.in) {
		switch s.in[s.pos] {
		case '\\':
			s.pos += 2
		case '"':
			s.pos++
			return true
		default:
			s.pos++
		}
	}
	return false
}

func (s *stripper) object(key *strings.Builder) bool {
	s.pos++
	s.out = append(s.out, '{')
	var omit []string
	if s.keepRoot {
		s.keepRoot = false
	} else {
		omit = s.d.at(key.String())
	}
	prefix := key.Len()
	first := true
	for {
		s.ws()
		if s.pos >= len(s.in) {
			return false
		}
		if s.in[s.pos] == '}' {
			s.pos++
			s.out = append(s.out, '}')
			return true
		}
		if s.in[s.pos] == ',' {
			s.pos++
			s.ws()
		}
		if s.pos >= len(s.in) || s.in[s.pos] != '"' {
			return false
		}
		nameStart := s.pos
		if !s.skipString() {
			return false
		}
		rawName := s.in[nameStart:s.pos]
		name, err := strconv.Unquote(string(rawName))
		if err != nil {
			return false
		}
		s.ws()
		if s.pos >= len(s.in) || s.in[s.pos] != ':' {
			return false
		}
		s.pos++
		mark := len(s.out)
		if !first {
			s.out = append(s.out, ',')
		}
		s.out = append(s.out, rawName...)
		s.out = append(s.out, ':')
		key.WriteByte('.')
		key.WriteString(name)
		ok := s.value(key)
		resetBuilder(key, prefix)
		if !ok {
			return false
		}
		if containsString(omit, name) {
			s.out = s.out[:mark] // deferred: its own payload carries it
			continue
		}
		first = false
	}
}

func (s *stripper) array(key *strings.Builder) bool {
	s.pos++
	s.out = append(s.out, '[')
	prefix := key.Len()
	for i := 0; ; i++ {
		s.ws()
		if s.pos >= len(s.in) {
			return false
		}
		if s.in[s.pos] == ']' {
			s.pos++
			s.out = append(s.out, ']')
			return true
		}
		if i > 0 {
			if s.in[s.pos] != ',' {
				return false
			}
			s.pos++
			s.out = append(s.out, ',')
		}
		key.WriteByte('[')
		key.WriteString(strconv.Itoa(i))
		key.WriteByte(']')
		ok := s.value(key)
		resetBuilder(key, prefix)
		if !ok {
			return false
		}
	}
}

// resetBuilder truncates b to its first n bytes.
func resetBuilder(b *strings.Builder, n int) {
	if b.Len() == n {
		return
	}
	s := b.String()[:n]
	b.Reset()
	b.WriteString(s)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// DefersFragments reports whether the operation holds an active @defer:
// one whose `if` argument is not false once variables are applied. Such a
// query answers incrementally, which the transports need to know before
// they run it (a response in JSON cannot carry it).
func DefersFragments(opCtx *graphql.OperationContext) bool {
	if d := documentOf(opCtx); d != nil && !d.holdsDefer() {
		return false // known once per document (documents_cache.go)
	}
	return activeDefer(opCtx.Doc, opCtx.Operation.SelectionSet, opCtx.Variables, map[string]bool{})
}

func activeDefer(doc *ast.QueryDocument, set ast.SelectionSet, vars map[string]any, seen map[string]bool) bool {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if activeDefer(doc, s.SelectionSet, vars, seen) {
				return true
			}
		case *ast.InlineFragment:
			if deferOn(s.Directives, vars) || activeDefer(doc, s.SelectionSet, vars, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if deferOn(s.Directives, vars) {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if def := doc.Fragments.ForName(s.Name); def != nil && activeDefer(doc, def.SelectionSet, vars, seen) {
				return true
			}
		}
	}
	return false
}

// deferOn reports a @defer among directives whose `if` is not false.
func deferOn(directives ast.DirectiveList, vars map[string]any) bool {
	d := directives.ForName("defer")
	if d == nil {
		return false
	}
	if v, ok := d.ArgumentMap(vars)["if"]; ok {
		if b, isBool := v.(bool); isBool && !b {
			return false
		}
	}
	return true
}
