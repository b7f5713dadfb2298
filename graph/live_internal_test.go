package graph

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestSubscriptionEventsHaveTheirOwnState: each event of a subscription
// is executed with a request state of its own (loaders, memo, freshness),
// so nothing accumulates over a long subscription; other operations keep
// the request's.
func TestSubscriptionEventsHaveTheirOwnState(t *testing.T) {
	made := 0
	streams := streamingOperations{newState: func() *requestState { made++; return &requestState{fresh: &freshness{}} }}
	request := &requestState{}
	ctx := withRequestState(context.Background(), request)

	var seen []*requestState
	next := func(ctx context.Context) *graphql.Response {
		seen = append(seen, stateFor(ctx))
		return &graphql.Response{}
	}
	sub := graphql.WithOperationContext(ctx, &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: ast.Subscription}})
	streams.operations(sub, func(ctx context.Context) graphql.ResponseHandler {
		for range 3 {
			streams.responses(ctx, next)
		}
		return nil
	})
	if made != 3 || seen[0] == request || seen[0] == seen[1] || seen[1] == seen[2] {
		t.Fatalf("%d states made; events saw %p %p %p (request %p)", made, seen[0], seen[1], seen[2], request)
	}

	seen, made = nil, 0
	query := graphql.WithOperationContext(ctx, &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: ast.Query}})
	streams.operations(query, func(ctx context.Context) graphql.ResponseHandler {
		streams.responses(ctx, next)
		return nil
	})
	if made != 0 || seen[0] != request {
		t.Fatalf("a query got state %p (request %p), %d made", seen[0], request, made)
	}
}
