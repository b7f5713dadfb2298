package graph

import (
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// DocumentWork is what the executor's document cache has done: the
// documents it parsed and validated (each added once), the limit plans
// made, and the documents it keeps now.
func DocumentWork(e *Executor) (parsed, planned int64, kept int) {
	return e.docs.parsed.Load(), e.docs.planned.Load(), e.docs.Len()
}

// CompareLimitPlan measures the operation of query with the raw variables
// vars (as a request's, decoded from JSON) twice: from its limit plan,
// made without the variables, and by walking the document with them
// (measure). Each measurement is written out whole; ok is false when the
// query does not parse or validate, or its variables do not coerce
// (nothing to measure).
func CompareLimitPlan(query string, vars map[string]any) (planned, measured string, ok bool) {
	schema := NewExecutableSchema(Config{}).Schema()
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, DefaultMaxTokens)
	if err != nil || len(doc.Operations) == 0 {
		return "", "", false
	}
	if errs := validator.ValidateWithRules(schema, doc, defaultNumericArgs.validationRules()); len(errs) > 0 {
		return "", "", false
	}
	op := doc.Operations[0]
	coerced, err := validator.VariableValues(schema, op, vars)
	if err != nil {
		return "", "", false
	}
	assetRound := assetRoundCalls(DefaultLoaderConfig)
	plan := planLimits(schema, op, DefaultPaging, assetRound)
	return plan.measure(coerced).String(), measure(schema, op, coerced, DefaultPaging, assetRound).String(), true
}

// String writes a measurement out, for comparisons.
func (m measurement) String() string {
	msg := "<nil>"
	if m.err != nil {
		msg = m.err.Message
	}
	return fmt.Sprintf("depth %d cost %d calls %d eventCalls %d aliases %d cycle %q err %s", m.depth, m.cost, m.calls, m.eventCalls, m.aliases, m.cycle, msg)
}

// DocumentTextChecks is how many checks of a text (an APQ hash, the
// trusted documents' verdict) the executor made and kept with a document.
func DocumentTextChecks(e *Executor) int64 { return e.docs.memoized.Load() }
