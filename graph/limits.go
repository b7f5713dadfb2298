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
	// docs keeps each document's plans (nil: every request plans its
	// own).
	docs *documentCache
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

// MutateOperationContext refuses an operation over a limit, with the
// request's variables, from its document's limit plan.
func (e *limitsExtension) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	m := e.plan(opCtx).measure(opCtx.Variables)
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

// plan returns the limit plan of the request's operation: its
// document's, made by the first request of the document.
func (e *limitsExtension) plan(opCtx *graphql.OperationContext) *limitPlan {
	make := func() *limitPlan {
		if e.docs != nil {
			e.docs.planned.Add(1)
		}
		return planLimits(e.schema, opCtx.Operation, e.paging, e.assetRound)
	}
	if d := e.docs.of(opCtx.Doc); d != nil {
		// The rest of the request finds the document's entry there.
		opCtx.Stats.SetExtension(parsedDocumentKey, d)
		return d.limitPlan(opCtx.Operation, make)
	}
	return make()
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
//
// measure walks the whole document with the request's variables: the
// executor measures each request from the operation's limitPlan instead,
// made once per document, and measure is the reference the plan is tested
// against (and what a plan falls back to when its walk failed).
func measure(schema *ast.Schema, op *ast.OperationDefinition, vars map[string]any, paging PagingConfig, assetRound int) (m measurement) {
	w := newWalker(schema, op, vars, paging, assetRound)
	defer func() {
		// gqlparser's value conversion panics on malformed literals that
		// validation lets through; that is the client's input.
		if p := recover(); p != nil {
			m = measurement{err: limitInput("malformed argument value: %v", p)}
		}
	}()
	f := w.selectionSet(op.SelectionSet, false)
	m = w.finish(f.fragFigures)
	m.aliases, m.cycle, m.err = w.aliases, w.cycle, w.err
	return m
}

// limitPlan is what the limits need of one operation of a parsed document,
// made once per document (documentCache) by a walk without the
// variables: the figures the document alone decides (depth, aliases, a
// fragment cycle, the first literal argument over its size, and the cost
// and requests of everything that holds no variable), and the few parts
// the variables decide, kept as costNodes to evaluate on each request. A
// request's measurement is then work in the number of its variables'
// uses, not in the length of its text; it is measure's exactly
// (TestLimitPlanMatchesMeasure).
type limitPlan struct {
	op         *ast.OperationDefinition
	schema     *ast.Schema
	paging     PagingConfig
	assetRound int
	explorer   bool

	// fixed is the operation's measurement without its variables' part:
	// all of it when root is nil. fixed.err is not used: argErr says it.
	fixed measurement
	// fixedFigures are the selection set's figures the document decides;
	// root is the part the variables decide (nil: none), nodes the
	// number of costNodes.
	fixedFigures fragFigures
	root         *costNode
	nodes        int

	// args are the field arguments that hold variables, in the order the
	// walk checks arguments, up to the first argument whose literal value
	// is over its size, whose message argErr is ("" for none).
	args   []variableArgument
	argErr string
	// literalOversized: an argument of args is over its size whatever
	// its variables' values.
	literalOversized bool

	// perRequest: the walk without variables failed (a value it could
	// not read); each request is measured in full (measure).
	perRequest bool
}

// variableArgument is a field argument that holds variables, and the
// field's name, for the error.
type variableArgument struct {
	field string
	arg   *ast.Argument
}

// planLimits makes the limit plan of op.
func planLimits(schema *ast.Schema, op *ast.OperationDefinition, paging PagingConfig, assetRound int) (p *limitPlan) {
	p = &limitPlan{op: op, schema: schema, paging: paging, assetRound: assetRound, explorer: op.Operation == ast.Subscription}
	w := newWalker(schema, op, nil, paging, assetRound)
	w.planning, w.plan = true, p
	defer func() {
		if r := recover(); r != nil {
			p.perRequest = true
		}
	}()
	f := w.selectionSet(op.SelectionSet, false)
	p.fixedFigures, p.root, p.nodes = f.fragFigures, f.dyn, w.nodes
	p.fixed = w.finish(f.fragFigures)
	p.fixed.aliases, p.fixed.cycle = w.aliases, w.cycle
	if w.err != nil {
		p.argErr = w.err.Message
	}
	return p
}

// measure is the operation's measurement with the request's variables,
// as measure finds it.
func (p *limitPlan) measure(vars map[string]any) measurement {
	if p.perRequest {
		return measure(p.schema, p.op, vars, p.paging, p.assetRound)
	}
	m := p.fixed
	if p.root != nil {
		e := costEval{
			w:    walker{schema: p.schema, vars: vars, paging: p.paging, assetRound: p.assetRound, explorer: p.explorer},
			memo: make([]costMemo, p.nodes),
		}
		figures := p.fixedFigures.add(e.node(p.root))
		figures.depth = p.fixedFigures.depth
		m = e.w.finish(figures)
		m.aliases, m.cycle = p.fixed.aliases, p.fixed.cycle
	}
	m.err = p.argumentError(vars)
	return m
}

// argumentError is the error of the first argument over its size, with
// the request's variables, as the walk finds it: the arguments holding
// variables are read only when a value could be over its size.
func (p *limitPlan) argumentError(vars map[string]any) *gqlerror.Error {
	if len(p.args) > 0 && (p.literalOversized || anyOversized(vars)) {
		for _, a := range p.args {
			v, err := a.arg.Value.Value(vars)
			if err != nil {
				continue
			}
			if msg := oversized(v); msg != "" {
				return limitInput("%s.%s: %s", a.field, a.arg.Name, msg)
			}
		}
	}
	if p.argErr != "" {
		return limitInput("%s", p.argErr)
	}
	return nil
}

// costEval evaluates a plan's costNodes with one request's variables,
// each node once.
type costEval struct {
	w    walker // the variables and settings (no document walk)
	memo []costMemo
}

// costMemo is a node's figures once evaluated.
type costMemo struct {
	done bool
	f    fragFigures
}

// node evaluates n (nil: nothing), each node once per evaluation.
func (e *costEval) node(n *costNode) fragFigures {
	if n == nil {
		return fragFigures{}
	}
	if m := &e.memo[n.slot]; m.done {
		return m.f
	}
	var f fragFigures
	switch n.kind {
	case costSum:
		f = n.fixed
		for _, k := range n.kids {
			f = f.add(e.node(k))
		}
	case costMost:
		for _, k := range n.kids {
			f = f.most(e.node(k))
		}
	case costConnection:
		f = e.w.connection(n.field, n.inList, n.fixed.add(e.node(n.rows)))
	}
	e.memo[n.slot] = costMemo{done: true, f: f}
	return f
}

// newWalker starts a walk of op; vars nil when planning.
func newWalker(schema *ast.Schema, op *ast.OperationDefinition, vars map[string]any, paging PagingConfig, assetRound int) *walker {
	return &walker{schema: schema, vars: vars, paging: paging, assetRound: assetRound, frags: map[fragKey]figs{}, onPath: map[string]bool{}, counted: map[string]bool{},
		explorer: op.Operation == ast.Subscription}
}

// finish turns the figures of the operation's selection set into its
// measurement (cost, calls and eventCalls; depth).
func (w *walker) finish(f fragFigures) measurement {
	// Asset references outside any connection make a round of their own.
	m := measurement{depth: f.depth, cost: f.cost, calls: satAdd(f.calls, satMul(f.refs, w.assetRound))}
	if w.explorer {
		// A subscription's figures are those of one event, explorer
		// requests included. Its asset references outside connections
		// are one transaction's: a round of at most f.refs ids, which
		// costs at most one request each.
		m.eventCalls = satAdd(f.calls, min(f.refs, w.assetRound))
	}
	return m
}

// fragKey is a fragment in a list context: its figures differ by it
// (nested connections take the nested page cap).
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

// figs are a selection's figures as the walker finds them: fixed, what the
// document alone decides, plus dyn, what the request's variables decide
// (nil when nothing does; always nil when the walker has the variables).
// The depth is never the variables': fixed holds all of it.
type figs struct {
	fragFigures
	dyn *costNode
}

// costNode is a part of an operation's figures that depends on its
// variables: a connection whose arguments hold variables (its page size,
// its own requests), or a sum or maximum of parts that include one. The
// plan keeps these nodes only; everything else is folded into constants
// when the plan is made. A fragment's nodes are shared by its spreads.
type costNode struct {
	kind costKind
	// fixed is added to the operands (costSum); for a connection, the
	// fixed figures of its rows, to which rows' are added.
	fixed fragFigures
	kids  []*costNode // costSum, costMost: the operands
	// costConnection: the field, whether it is under a list, and the
	// variable part of its rows' figures (nil: none).
	field  *ast.Field
	inList bool
	rows   *costNode
	// slot is the node's place in an evaluation's memo.
	slot int
}

// costKind says how a costNode combines its operands.
type costKind uint8

const (
	costSum costKind = iota
	costMost
	costConnection
)

// newNode makes a node of the plan being made.
func (w *walker) newNode(kind costKind) *costNode {
	n := &costNode{kind: kind, slot: w.nodes}
	w.nodes++
	return n
}

// figSum adds up sibling figures.
type figSum struct {
	fixed fragFigures
	dyn   []*costNode
}

// add adds a sibling's figures.
func (s *figSum) add(f figs) {
	s.fixed = s.fixed.add(f.fragFigures)
	if f.dyn != nil {
		s.dyn = append(s.dyn, f.dyn)
	}
}

// figs is the sum as figures: one node for its variable parts.
func (s *figSum) figs(w *walker) figs {
	switch len(s.dyn) {
	case 0:
		return figs{fragFigures: s.fixed}
	case 1:
		return figs{fragFigures: s.fixed, dyn: s.dyn[0]}
	}
	n := w.newNode(costSum)
	n.kids = s.dyn
	return figs{fragFigures: s.fixed, dyn: n}
}

// node is the sum as one node, fixed part included (an operand of a
// maximum).
func (s *figSum) node(w *walker) *costNode {
	n := w.newNode(costSum)
	n.fixed, n.kids = s.fixed, s.dyn
	return n
}

// walker measures an operation's selection sets (measure, planLimits).
type walker struct {
	schema     *ast.Schema
	vars       map[string]any
	paging     PagingConfig
	assetRound int
	frags      map[fragKey]figs
	onPath     map[string]bool
	counted    map[string]bool // fragments whose aliases are counted
	aliases    int
	cycle      string
	err        *gqlerror.Error
	// explorer counts the block explorer's requests too (a subscription:
	// every request counts per event, whichever service answers it).
	explorer bool

	// planning: the walker makes a limitPlan, without the variables.
	// What depends on them becomes costNodes (nodes counts them), and the
	// field arguments that hold them are listed (limitPlan.args).
	planning bool
	nodes    int
	plan     *limitPlan
}

// selectionSet measures a selection set. inList is true under a list:
// connections there get the nested page cap.
func (w *walker) selectionSet(set ast.SelectionSet, inList bool) figs {
	var common figSum
	var typed map[string]*figSum // fragments on one member of an abstract type
	add := func(cond string, parent *ast.Definition, f figs) {
		if cond == "" || parent == nil || cond == parent.Name || !w.isMemberCondition(cond, parent) {
			common.add(f)
			return
		}
		common.fixed.depth = max(common.fixed.depth, f.depth)
		if typed == nil {
			typed = map[string]*figSum{}
		}
		if typed[cond] == nil {
			typed[cond] = &figSum{}
		}
		typed[cond].add(f)
	}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			common.add(w.field(s, inList))
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
	variable := false
	for _, f := range typed {
		most = most.most(f.fixed)
		variable = variable || len(f.dyn) > 0
	}
	if !variable {
		common.fixed = common.fixed.add(most)
		return common.figs(w)
	}
	// Which member's fragments cost the most depends on the variables.
	n := w.newNode(costMost)
	for _, f := range typed {
		n.kids = append(n.kids, f.node(w))
	}
	common.add(figs{fragFigures: fragFigures{depth: most.depth}, dyn: n})
	return common.figs(w)
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
func (w *walker) fragment(def *ast.FragmentDefinition, inList bool) figs {
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
		return figs{}
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
func (w *walker) field(f *ast.Field, inList bool) figs {
	if f.Alias != "" && f.Alias != f.Name {
		w.aliases++
	}
	w.checkArguments(f)
	if f.Definition == nil || len(f.SelectionSet) == 0 {
		return figs{fragFigures: fragFigures{depth: 1}}
	}
	typ := f.Definition.Type
	isList := typ.Elem != nil
	if isConnectionField(f.Definition) {
		rows := w.selectionSet(f.SelectionSet, true)
		if rows.dyn == nil && !(w.planning && argumentsHoldVariables(f.Arguments)) {
			return figs{fragFigures: w.connection(f, inList, rows.fragFigures)}
		}
		// Its page size, its own requests or its rows' figures depend on
		// the variables.
		n := w.newNode(costConnection)
		n.field, n.inList, n.fixed, n.rows = f, inList, rows.fragFigures, rows.dyn
		return figs{fragFigures: fragFigures{depth: 1 + rows.depth}, dyn: n}
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
	// The variable part of the children's figures adds to the field's as
	// it is: the field adds constants only.
	return figs{fragFigures: figures, dyn: children.dyn}
}

// connection is the figures of a connection field whose rows have the
// figures rows: its page size, and its own requests, read from its
// arguments with w's variables.
func (w *walker) connection(f *ast.Field, inList bool, rows fragFigures) fragFigures {
	pageSize, _ := w.connectionPage(f, inList)
	calls := satAdd(w.connectionCalls(f), satAdd(satMul(pageSize, rows.calls), satMul(rows.refs, w.assetRound)))
	return fragFigures{depth: 1 + rows.depth, cost: satAdd(1+connectionCost, satMul(pageSize, rows.cost)), calls: calls}
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
		if w.planning && valueHoldsVariable(arg.Value) {
			// Checked on each request, in this order, before the first
			// literal's error (limitPlan.argumentError).
			w.plan.args = append(w.plan.args, variableArgument{field: f.Name, arg: arg})
			if v, err := arg.Value.Value(nil); err == nil && oversized(v) != "" {
				// Too long whatever the variables: its literal part,
				// or a variable's default.
				w.plan.literalOversized = true
			}
			continue
		}
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

// argumentsHoldVariables reports whether any of args holds a variable.
func argumentsHoldVariables(args ast.ArgumentList) bool {
	for _, a := range args {
		if valueHoldsVariable(a.Value) {
			return true
		}
	}
	return false
}

// valueHoldsVariable reports whether v is or holds a variable.
func valueHoldsVariable(v *ast.Value) bool {
	if v == nil {
		return false
	}
	if v.Kind == ast.Variable {
		return true
	}
	for _, c := range v.Children {
		if valueHoldsVariable(c.Value) {
			return true
		}
	}
	return false
}

// anyOversized reports whether any variable's value is one oversized
// refuses.
func anyOversized(vars map[string]any) bool {
	for _, v := range vars {
		if oversized(v) != "" {
			return true
		}
	}
	return false
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
