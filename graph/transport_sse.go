package graph

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
)

// eventStreams is graphql-sse's single connection mode (placeholder: the
// reservation, the stream and the operations it carries).
type eventStreams struct {
	cfg   SubscriptionConfig
	conns context.Context
}

func newEventStreams(cfg SubscriptionConfig, conns context.Context) *eventStreams {
	return &eventStreams{cfg: cfg, conns: conns}
}

func (*eventStreams) Supports(r *http.Request) bool { return false }

func (*eventStreams) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	http.Error(w, "not implemented", http.StatusNotImplemented)
}
