package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/internal/defaults"
)

// Limits bound what one GraphQL request may ask for. A request over a
// limit is refused whole, before any resolver runs, with a
// QUERY_TOO_COMPLEX error that names the limit and its value.
type Limits struct {
	// MaxDepth bounds how deeply fields nest (fragments followed); 0 takes
	// DefaultLimits().MaxDepth: the deepest field path of one list in the
	// schema, plus two.
	MaxDepth int
	// MaxCost bounds the query's cost: each object field costs 1 plus
	// its children, a connection costs 100 (its upstream request) plus its
	// page size (first, last, or the default page size) times its
	// children, scalars cost nothing, and a union's or interface's
	// fragments cost the most expensive member's. 0 takes DefaultMaxCost.
	MaxCost int
	// MaxTokens bounds the query's length in GraphQL tokens, checked while
	// parsing; 0 takes DefaultMaxTokens.
	MaxTokens int
	// MaxAliases bounds the aliased fields of an operation (fragments
	// included); 0 takes DefaultMaxAliases.
	MaxAliases int
	// MaxBodyBytes bounds a request body; 0 takes DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxUpstreamCalls bounds the data-node requests the query can make
	// (an upper bound counted before it runs; see walker.field): what the
	// rate budget serves within the request's deadline, so that no query
	// holds the budget, shared by every client, for longer than its own
	// deadline. 0 takes DefaultMaxUpstreamCalls.
	MaxUpstreamCalls int
	// UpstreamCallsBasis says where MaxUpstreamCalls comes from, for the
	// error message (e.g. "what the rate budget of 15 a second serves
	// within the 30s request deadline"); empty says "maximum data-node
	// requests".
	UpstreamCallsBasis string
	// MaxCallsPerEvent bounds the upstream requests (data node and block
	// explorer) a subscription may make for each transaction it delivers:
	// what it selects beyond the transaction (a submitter's transactions,
	// delegations, asset details not cached), counted before it runs as
	// MaxUpstreamCalls is, and enforced again on every event. 0 takes
	// DefaultMaxCallsPerEvent.
	MaxCallsPerEvent int
}

// Defaults of Limits. DefaultMaxCost admits a full page (1000) of any list
// with all its fields selected (a page of transactions with every field
// of every command costs about 181,000), but no connection nested under
// each row of such a page.
const (
	DefaultMaxCost      = 250_000
	DefaultMaxTokens    = 10_000
	DefaultMaxAliases   = 30
	DefaultMaxBodyBytes = 1 << 20
)

// DefaultMaxUpstreamCalls is what the default rate budget (15 data-node
// requests a second) serves within the default request deadline (30 s).
// The gateway derives its limit from its own settings the same way.
const DefaultMaxUpstreamCalls = 450

// DefaultMaxCallsPerEvent is Limits.MaxCallsPerEvent's default: a
// subscription's event runs like a query of its own, on every
// transaction of the chain, so it gets far less than a query.
const DefaultMaxCallsPerEvent = 10

// Arguments beyond these sizes are refused as BAD_USER_INPUT: a list
// filter of thousands of values or a string of megabytes only makes the
// upstream URL too long to send.
const (
	maxListArgument   = 100
	maxStringArgument = 1024
)

// connectionCost is what a connection costs beyond its rows: it is an
// upstream request.
const connectionCost = 100

// depthMargin is what the default depth admits beyond the schema's own
// deepest path.
const depthMargin = 2

// DefaultLimits returns the defaults: MaxDepth is derived from the schema
// (SchemaDepth plus a margin of 2).
func DefaultLimits() Limits {
	return Limits{
		MaxDepth:     SchemaDepth() + depthMargin,
		MaxCost:      DefaultMaxCost,
		MaxTokens:    DefaultMaxTokens,
		MaxAliases:   DefaultMaxAliases,
		MaxBodyBytes: DefaultMaxBodyBytes,

		MaxUpstreamCalls: DefaultMaxUpstreamCalls,
		MaxCallsPerEvent: DefaultMaxCallsPerEvent,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	l.MaxDepth = defaults.Positive(l.MaxDepth, d.MaxDepth)
	l.MaxCost = defaults.Positive(l.MaxCost, d.MaxCost)
	l.MaxTokens = defaults.Positive(l.MaxTokens, d.MaxTokens)
	l.MaxAliases = defaults.Positive(l.MaxAliases, d.MaxAliases)
	l.MaxBodyBytes = defaults.Positive(l.MaxBodyBytes, d.MaxBodyBytes)
	l.MaxUpstreamCalls = defaults.Positive(l.MaxUpstreamCalls, d.MaxUpstreamCalls)
	l.MaxCallsPerEvent = defaults.Positive(l.MaxCallsPerEvent, d.MaxCallsPerEvent)
	return l
}

func init() {
	// Limit errors are the request's fault, like validation errors; the
	// transports answer both as request errors, 200 or 400 by Accept
	// (package transport, http.go).
	errcode.RegisterErrorType(CodeQueryTooComplex, errcode.KindProtocol)
	errcode.RegisterErrorType(CodeBadUserInput, errcode.KindProtocol)
}

// tooComplex is a QUERY_TOO_COMPLEX error for a limit.
func tooComplex(format string, args ...any) *gqlerror.Error {
	msg := fmt.Sprintf(format, args...)
	err := &gqlerror.Error{Message: msg, Err: &Error{Code: CodeQueryTooComplex, Message: msg}}
	errcode.Set(err, CodeQueryTooComplex)
	return err
}

// limitInput is a BAD_USER_INPUT error found while checking limits.
func limitInput(format string, args ...any) *gqlerror.Error {
	msg := fmt.Sprintf(format, args...)
	err := &gqlerror.Error{Message: msg, Err: &Error{Code: CodeBadUserInput, Message: msg}}
	errcode.Set(err, CodeBadUserInput)
	return err
}

// limitsExtension enforces the depth, cost, alias and argument limits on
// each operation, after validation and before execution.
type limitsExtension struct {
	limits Limits
	paging PagingConfig
	// assetRound is what one round of the asset loader can cost in
	// data-node requests (assetRoundCalls).
	assetRound int
	schema     *ast.Schema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = (*limitsExtension)(nil)

func (e *limitsExtension) ExtensionName() string { return "QueryLimits" }

func (e *limitsExtension) Validate(schema graphql.ExecutableSchema) error {
	e.schema = schema.Schema()
	return nil
}

func (e *limitsExtension) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	m := measure(e.schema, opCtx.Operation, opCtx.Variables, e.paging, e.assetRound)
	switch {
	case m.err != nil:
		return m.err
	case m.cycle != "":
		return limitInput("fragment %s spreads itself; fragments cannot form cycles", m.cycle)
	case m.depth > e.limits.MaxDepth:
		return tooComplex("the query is %d levels deep, over the limit of %d (maximum depth); select less deeply nested fields", m.depth, e.limits.MaxDepth)
	case m.aliases > e.limits.MaxAliases:
		return tooComplex("the query has %d aliased fields, over the limit of %d (maximum aliases); send several smaller queries", m.aliases, e.limits.MaxAliases)
	case m.cost > e.limits.MaxCost:
		return tooComplex("the query costs %s, over the limit of %d (maximum cost: each connection costs its page size times its fields); ask for smaller pages (first/last) or fewer nested lists", costString(m.cost), e.limits.MaxCost)
	case m.calls > e.limits.MaxUpstreamCalls:
		basis := e.limits.UpstreamCallsBasis
		if basis == "" {
			basis = "maximum data-node requests"
		}
		return tooComplex("the query could make %s data-node requests, over the limit of %s (%s); ask for smaller pages or fewer nested lists", groupDigits(m.calls), groupDigits(e.limits.MaxUpstreamCalls), basis)
	case m.eventCalls > e.limits.MaxCallsPerEvent:
		return tooComplex("the subscription could make %s upstream requests for each transaction it delivers, over the limit of %d (maximum requests per event); "+
			"select fewer nested lists, or query them when you need them", groupDigits(m.eventCalls), e.limits.MaxCallsPerEvent)
	}
	if opCtx.Operation.Operation == ast.Subscription {
		opCtx.Stats.SetExtension(eventCallsKey, m.eventCalls)
	}
	return nil
}

// eventCallsKey is where the limits leave a subscription's upstream
// requests per event for its resolver (the live feed's admission counts
// them): eventCallsOf reads it.
const eventCallsKey = "gateway.eventCalls"

// eventCallsOf is the upstream requests per event of ctx's subscription,
// as the limits counted them.
func eventCallsOf(ctx context.Context) int {
	if !graphql.HasOperationContext(ctx) {
		return 0
	}
	n, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(eventCallsKey).(int)
	return n
}

// groupDigits writes n with thousands separators: 2,550.
func groupDigits(n int) string {
	if n >= costCap {
		return "more than " + groupDigits(costCap-1)
	}
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func costString(c int) string {
	if c >= costCap {
		return fmt.Sprintf("more than %d", costCap)
	}
	return fmt.Sprint(c)
}

// measurement is what measure finds in an operation.
type measurement struct {
	depth, cost, aliases int
	calls                int // data-node requests, at most
	// eventCalls, in a subscription, is the upstream requests (data node
	// and block explorer) for each transaction it delivers, at most.
	eventCalls int
	cycle      string // a fragment that spreads itself, if any
	err        *gqlerror.Error
}

// costCap keeps cost arithmetic far from overflow: beyond it every query
// is over any sensible limit.
const costCap = 1 << 40

func satAdd(a, b int) int { return min(a+b, costCap) }
func satMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > costCap/b {
		return costCap
	}
	return min(a*b, costCap)
}

// measure computes an operation's depth, cost and aliases in one pass per
// fragment: each fragment's figures are computed once and reused wherever
// it is spread, so that a document of nested, repeated spreads costs
// linear time to measure rather than its exponential expansion.
//
// It also bounds the data-node requests the operation can make (see
// walker.field for the rules); assetRound is what one round of the asset
// loader can cost (assetRoundCalls).
func measure(schema *ast.Schema, op *ast.OperationDefinition, vars map[string]any, paging PagingConfig, assetRound int) (m measurement) {
	w := &walker{schema: schema, vars: vars, paging: paging, assetRound: assetRound, frags: map[fragKey]fragFigures{}, onPath: map[string]bool{}, counted: map[string]bool{},
		explorer: op.Operation == ast.Subscription}
	defer func() {
		// gqlparser's value conversion panics on malformed literals that
		// validation lets through; that is the client's input.
		if p := recover(); p != nil {
			m = measurement{err: limitInput("malformed argument value: %v", p)}
		}
	}()
	f := w.selectionSet(op.SelectionSet, false)
	// Asset references outside any connection make a round of their own.
	calls := satAdd(f.calls, satMul(f.refs, w.assetRound))
	m = measurement{depth: f.depth, cost: f.cost, calls: calls, aliases: w.aliases, cycle: w.cycle, err: w.err}
	if w.explorer {
		// A subscription's figures are those of one event, explorer
		// requests included. Its asset references outside connections
		// are one transaction's: a round of at most f.refs ids, which
		// costs at most one request each.
		m.eventCalls = satAdd(f.calls, min(f.refs, w.assetRound))
	}
	return m
}

type fragKey struct {
	name   string
	inList bool
}

// fragFigures are a selection set's figures for one execution of it (one
// parent object): its depth and cost; calls, the data-node requests it
// makes; refs, the asset references it resolves (each one a loader round,
// which the rows of one page share: counted once per run of the
// enclosing connection, where they are turned into calls).
type fragFigures struct{ depth, cost, calls, refs int }

// add sums the figures of sibling selections (depth: the deeper).
func (f fragFigures) add(o fragFigures) fragFigures {
	return fragFigures{depth: max(f.depth, o.depth), cost: satAdd(f.cost, o.cost), calls: satAdd(f.calls, o.calls), refs: satAdd(f.refs, o.refs)}
}

// most keeps the larger of each figure: of a union's members, whichever
// runs.
func (f fragFigures) most(o fragFigures) fragFigures {
	return fragFigures{depth: max(f.depth, o.depth), cost: max(f.cost, o.cost), calls: max(f.calls, o.calls), refs: max(f.refs, o.refs)}
}

type walker struct {
	schema     *ast.Schema
	vars       map[string]any
	paging     PagingConfig
	assetRound int
	frags      map[fragKey]fragFigures
	onPath     map[string]bool
	counted    map[string]bool // fragments whose aliases are counted
	aliases    int
	cycle      string
	err        *gqlerror.Error
	// explorer counts the block explorer's requests too (a subscription:
	// every request counts per event, whichever service answers it).
	explorer bool
}

// selectionSet measures a selection set. inList is true under a list:
// connections there get the nested page cap.
func (w *walker) selectionSet(set ast.SelectionSet, inList bool) fragFigures {
	var common fragFigures
	typed := map[string]fragFigures{} // fragments on one member of an abstract type
	add := func(cond string, parent *ast.Definition, f fragFigures) {
		if cond == "" || parent == nil || cond == parent.Name || !w.isMemberCondition(cond, parent) {
			common = common.add(f)
			return
		}
		common.depth = max(common.depth, f.depth)
		typed[cond] = typed[cond].add(f)
	}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			common = common.add(w.field(s, inList))
		case *ast.InlineFragment:
			add(s.TypeCondition, s.ObjectDefinition, w.selectionSet(s.SelectionSet, inList))
		case *ast.FragmentSpread:
			if s.Definition == nil {
				continue
			}
			add(s.Definition.TypeCondition, s.ObjectDefinition, w.fragment(s.Definition, inList))
		}
	}
	var most fragFigures
	for _, f := range typed {
		most = most.most(f)
	}
	return common.add(most)
}

// isMemberCondition reports whether a fragment's type condition names one
// object type under an abstract parent, so that of all such fragments
// only one member's apply to each object.
func (w *walker) isMemberCondition(cond string, parent *ast.Definition) bool {
	if parent.Kind != ast.Union && parent.Kind != ast.Interface {
		return false
	}
	t := w.schema.Types[cond]
	return t != nil && t.Kind == ast.Object
}

// fragment measures a named fragment once per list context.
func (w *walker) fragment(def *ast.FragmentDefinition, inList bool) fragFigures {
	key := fragKey{def.Name, inList}
	if f, ok := w.frags[key]; ok {
		return f
	}
	if w.onPath[def.Name] {
		// Validation refuses fragment cycles; never recurse forever if one
		// slips through.
		if w.cycle == "" {
			w.cycle = def.Name
		}
		return fragFigures{}
	}
	w.onPath[def.Name] = true
	countAliases := !w.counted[def.Name]
	w.counted[def.Name] = true
	before := w.aliases
	f := w.selectionSet(def.SelectionSet, inList)
	if !countAliases {
		w.aliases = before
	}
	delete(w.onPath, def.Name)
	w.frags[key] = f
	return f
}

// field measures one field: depth 1 plus its children's, cost per Limits,
// and an upper bound of its data-node requests, each field counted every
// time it runs (aliases and fragment spreads included):
//
//   - a connection makes connectionCalls requests, plus its children's
//     times its page size (each row runs them: a party's delegations under
//     each of a page of transactions), plus one loader round for each
//     asset reference below it (all the rows of one page share the round);
//     an explorer connection makes none itself, but multiplies its
//     children like any other;
//   - an asset reference (assetRefs: settlementAsset, baseAsset, a
//     transfer's asset, …) is one loader round of the connection it is
//     under, costing what a round can (assetRoundCalls), whichever of a
//     page's rows need it;
//   - a root lookup (asset, node) is one request: a round of k ids costs
//     at most k;
//   - a transaction lookup by hash (Query.transaction) is a block-explorer
//     request, which has no rate budget: like the explorer's lists it
//     counts 0 here (the budget is the data node's), and the lookups of
//     one hash in a request are made once (requestUpstream);
//   - every other field (party, submitter, a validator node: keys, not
//     lookups) makes no request of its own.
//
// Plain lists (not connections) hold no connection in this schema
// (TestNoConnectionUnderAPlainList), so their length never multiplies
// requests; asset references in them share their connection's round.
// Coalesced calls and cached assets only make fewer requests.
func (w *walker) field(f *ast.Field, inList bool) fragFigures {
	if f.Alias != "" && f.Alias != f.Name {
		w.aliases++
	}
	w.checkArguments(f)
	if f.Definition == nil || len(f.SelectionSet) == 0 {
		return fragFigures{depth: 1}
	}
	typ := f.Definition.Type
	isList := typ.Elem != nil
	if pageSize, ok := w.connectionPage(f, inList); ok {
		children := w.selectionSet(f.SelectionSet, true)
		calls := satAdd(w.connectionCalls(f), satAdd(satMul(pageSize, children.calls), satMul(children.refs, w.assetRound)))
		return fragFigures{depth: 1 + children.depth, cost: satAdd(1+connectionCost, satMul(pageSize, children.cost)), calls: calls}
	}
	children := w.selectionSet(f.SelectionSet, inList || isList)
	figures := fragFigures{depth: 1 + children.depth, cost: satAdd(1, children.cost), calls: children.calls, refs: children.refs}
	switch {
	case isAssetRef(f) && selectsBeyondID(nil, f.SelectionSet):
		// (its id alone is answered without a lookup: loadAsset)
		figures.refs = satAdd(figures.refs, 1)
	case isRootLookup(f):
		figures.calls = satAdd(figures.calls, 1)
	}
	return figures
}

// fundingCursorWindows is the most windows a page of funding payments
// after (or before) a cursor takes: from the end the cursor was seen at,
// sized to reach it; that end at full size; the other end at full size
// (keyedPaging.from). A first page takes one.
const fundingCursorWindows = 3

// connectionCalls is the data-node requests a connection makes itself.
func (w *walker) connectionCalls(f *ast.Field) int {
	switch f.Definition.Type.Name() {
	case "TransactionConnection":
		if w.explorer {
			// Its first request; the follow-ups over rows the explorer
			// skips are rare, and bounded on each event (eventUpstream).
			return 1
		}
		return 0 // the block explorer, which has no rate limit
	case "FundingPaymentConnection":
		if w.hasArgument(f, "after") || w.hasArgument(f, "before") {
			return fundingCursorWindows
		}
		return 1
	}
	// Assets, delegations, and any list added later until said otherwise.
	return 1
}

// hasArgument reports whether f is given a non-null argument name,
// variables applied.
func (w *walker) hasArgument(f *ast.Field, name string) bool {
	arg := f.Arguments.ForName(name)
	if arg == nil {
		return false
	}
	v, err := arg.Value.Value(w.vars)
	return err != nil || v != nil
}

// isAssetRef reports whether f resolves an asset id through the loader.
func isAssetRef(f *ast.Field) bool {
	if f.ObjectDefinition == nil {
		return false
	}
	for _, r := range assetRefs {
		if r.object == f.ObjectDefinition.Name && r.field == f.Name {
			return true
		}
	}
	return false
}

// isRootLookup reports whether f looks one asset up by id.
func isRootLookup(f *ast.Field) bool {
	return f.ObjectDefinition != nil && f.ObjectDefinition.Name == "Query" && (f.Name == "asset" || f.Name == "node")
}

// assetRoundCalls is what one round of the asset loader can cost in
// data-node requests: up to cfg.FewAssets ids are looked up one by one;
// more are served by listing every asset, one request per 5000 assets,
// which is one on any network of today (a few dozen assets; a network
// with more than 5000 would need this bound raised).
func assetRoundCalls(cfg LoaderConfig) int {
	return max(cfg.FewAssets, 1)
}

// connectionPage is the number of rows a connection field asks for: first
// or last, else the default page size, capped as the resolver caps it.
func (w *walker) connectionPage(f *ast.Field, inList bool) (int, bool) {
	if !isConnectionField(f.Definition) {
		return 0, false
	}
	maxSize, defSize := w.paging.MaxSize, w.paging.DefaultSize
	if inList {
		maxSize, defSize = min(maxSize, w.paging.NestedMaxSize), min(defSize, w.paging.NestedMaxSize)
	}
	size := -1
	for _, name := range []string{"first", "last"} {
		if n, ok := w.intArgument(f, name); ok {
			size = max(size, n)
		}
	}
	if size < 0 {
		size = defSize
	}
	return min(max(size, 0), maxSize), true
}

// isConnectionField reports whether a field returns a Relay connection.
func isConnectionField(def *ast.FieldDefinition) bool {
	return def != nil && strings.HasSuffix(def.Type.Name(), "Connection") &&
		(def.Arguments.ForName("first") != nil || def.Arguments.ForName("last") != nil)
}

// intArgument reads an integer argument, variables applied.
func (w *walker) intArgument(f *ast.Field, name string) (int, bool) {
	arg := f.Arguments.ForName(name)
	if arg == nil {
		return 0, false
	}
	v, err := arg.Value.Value(w.vars)
	if err != nil {
		return 0, false
	}
	return toInt(v)
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(max(min(n, math.MaxInt32), math.MinInt32)), true
	case float64:
		return int(max(min(n, math.MaxInt32), math.MinInt32)), true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return toInt(i)
		}
	}
	return 0, false
}

// checkArguments refuses list arguments of more than maxListArgument
// values and strings longer than maxStringArgument bytes.
func (w *walker) checkArguments(f *ast.Field) {
	if w.err != nil {
		return
	}
	for _, arg := range f.Arguments {
		v, err := arg.Value.Value(w.vars)
		if err != nil {
			continue
		}
		if msg := oversized(v); msg != "" {
			w.err = limitInput("%s.%s: %s", f.Name, arg.Name, msg)
			return
		}
	}
}

func oversized(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > maxStringArgument {
			return fmt.Sprintf("a string of %d bytes, over the limit of %d", len(x), maxStringArgument)
		}
	case []any:
		if len(x) > maxListArgument {
			return fmt.Sprintf("a list of %d values, over the limit of %d", len(x), maxListArgument)
		}
		for _, e := range x {
			if msg := oversized(e); msg != "" {
				return msg
			}
		}
	case map[string]any:
		for _, e := range x {
			if msg := oversized(e); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// SchemaDepth is the depth of the deepest field path of one list in the
// schema: the longest chain of fields from a root field down to a scalar
// that enters at most one connection and no object type twice (a path
// that comes back to a type it already passed through, or enters a second
// list, is navigation, which the cost limit bounds). A transaction's
// proposal data-source filters are this deep.
func SchemaDepth() int { return schemaDepth() }

var schemaDepth = sync.OnceValue(func() int {
	return typeDepth(NewExecutableSchema(Config{}).Schema())
})

// typeDepth computes SchemaDepth for a schema.
func typeDepth(s *ast.Schema) int {
	onPath := map[string]bool{}
	var walk func(t *ast.Definition, connections int) int
	walk = func(t *ast.Definition, connections int) int {
		best := 0
		for _, f := range t.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			ft := s.Types[f.Type.Name()]
			if ft == nil || (ft.Kind != ast.Object && ft.Kind != ast.Interface && ft.Kind != ast.Union) {
				best = max(best, 1)
				continue
			}
			c := connections
			if isConnectionField(f) {
				if c++; c > 1 {
					continue
				}
			}
			members := []*ast.Definition{ft}
			if ft.Kind != ast.Object {
				members = s.PossibleTypes[ft.Name]
			}
			for _, m := range members {
				if onPath[m.Name] {
					best = max(best, 2) // the object's id, say
					continue
				}
				onPath[m.Name] = true
				best = max(best, 1+walk(m, c))
				delete(onPath, m.Name)
			}
		}
		return best
	}
	onPath[s.Query.Name] = true
	return walk(s.Query, 0)
}
