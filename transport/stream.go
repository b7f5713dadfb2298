package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/graph"
)

// One operation on a transport that may answer more than once (WebSocket,
// Server-Sent Events, multipart/mixed), from its parameters to its last
// payload. Every streaming transport runs its operations through this, so
// that they all share one encoding of results (the incremental delivery
// format for @defer, docs/transports.md), one refusal of what no stream
// can carry, and one recovery from panics: a panic ends its operation
// with an INTERNAL error and nothing else.

// streamOperation is an operation that was dispatched: Next yields its
// payloads until it ends. Next and Pump are for one goroutine at a time;
// Close may be called from any.
type streamOperation struct {
	ctx         context.Context // the operation's: Close cancels it
	cancel      context.CancelFunc
	opCtx       *graphql.OperationContext
	responses   graphql.ResponseHandler
	incremental bool        // an active @defer: payloads after the first are incremental
	started     bool        // the first payload was taken
	errored     bool        // a payload taken carried errors
	ended       atomic.Bool // the last payload was taken
}

// requestFailure is an operation that never executed (a request error:
// parse, validation, variables, a limit, a refusal), presented.
type requestFailure struct {
	Response *graphql.Response // errors and extensions; no data
	// NotGraphQL: the request had no query, persisted query's hash or
	// document id; it is answered 400 whatever the client accepts.
	NotGraphQL bool
}

// JSON is the failure as a GraphQL response: errors, no data key.
func (f *requestFailure) JSON() []byte {
	body, err := json.Marshal(requestErrorResponse{Errors: f.Response.Errors, Extensions: f.Response.Extensions})
	if err != nil {
		return internalErrorJSON
	}
	return body
}

// write answers the failure as a JSON response: 200 to a client that
// accepts application/json (media) for a GraphQL request, else 400.
func (f *requestFailure) write(w http.ResponseWriter, media mediaType) {
	status := http.StatusBadRequest
	if media == mediaJSON && !f.NotGraphQL {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(f.JSON())
}

// startOperation parses, validates and dispatches one operation under
// ctx (which it derives the operation's context from). It refuses what no
// transport can run: @defer in a subscription (the incremental delivery
// proposal's validation rule: each event is one result).
func startOperation(ctx context.Context, exec graphql.GraphExecutor, params *graphql.RawParams) (op *streamOperation, fail *requestFailure) {
	noQuery := !graph.NamesDocument(params)
	defer func() {
		if p := recover(); p != nil {
			graph.LogPanic(ctx, "operation set-up", p)
			op, fail = nil, &requestFailure{Response: &graphql.Response{Errors: gqlerror.List{internalError()}}}
		}
	}()
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		return nil, presentFailure(ctx, exec, opCtx, errs, noQuery)
	}
	if opCtx.Operation.Operation == ast.Subscription && graph.DefersFragments(opCtx) {
		return nil, presentFailure(ctx, exec, opCtx, gqlerror.List{inputError(deferInSubscriptionMessage)}, false)
	}
	octx, cancel := context.WithCancel(ctx)
	op = &streamOperation{cancel: cancel, opCtx: opCtx}
	op.incremental = opCtx.Operation.Operation == ast.Query && graph.DefersFragments(opCtx)
	func() {
		defer func() {
			if p := recover(); p != nil {
				graph.LogPanic(ctx, "operation dispatch", p)
				op.responses = graphql.OneShot(&graphql.Response{Errors: gqlerror.List{internalError()}})
				op.ctx = graphql.WithOperationContext(octx, opCtx)
			}
		}()
		op.responses, op.ctx = exec.DispatchOperation(octx, opCtx)
	}()
	return op, nil
}

// deferInSubscriptionMessage refuses a subscription that defers fragments.
const deferInSubscriptionMessage = "@defer is not supported in subscriptions: each event is delivered whole; remove @defer, or disable it with @defer(if: false)"

func presentFailure(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext, errs gqlerror.List, noQuery bool) *requestFailure {
	if opCtx != nil {
		ctx = graphql.WithOperationContext(ctx, opCtx)
	} else if !graphql.HasOperationContext(ctx) {
		// Response interceptors (telemetry) read the operation context,
		// which a request that did not parse does not have.
		ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{
			Stats: graphql.Stats{OperationStart: graphql.GetStartTime(ctx)},
		})
	}
	return &requestFailure{Response: exec.DispatchError(ctx, errs), NotGraphQL: noQuery}
}

// Kind is the operation's type.
func (op *streamOperation) Kind() ast.Operation { return op.opCtx.Operation.Operation }

// Streams reports whether the operation may answer more than once: a
// subscription, or a query with an active @defer.
func (op *streamOperation) Streams() bool {
	return op.incremental || op.Kind() == ast.Subscription
}

// Incremental reports a query with an active @defer.
func (op *streamOperation) Incremental() bool { return op.incremental }

// Context is the operation's context: cancelled by Close, or when the
// context startOperation was given ends.
func (op *streamOperation) Context() context.Context { return op.ctx }

// Close ends the operation: a subscription stops, deferred work is
// abandoned, Next returns false.
func (op *streamOperation) Close() { op.cancel() }

// Next blocks for the next payload, an execution result encoded as JSON
// (incremental delivery's subsequent payloads for the parts of a query
// with @defer), in bytes the caller owns. false: the operation ended (its
// source stream ended, it was closed, or it panicked after the payload
// carrying the INTERNAL error).
func (op *streamOperation) Next() ([]byte, bool) {
	if op.ended.Load() {
		return nil, false
	}
	if op.ctx.Err() != nil {
		op.ended.Store(true)
		return nil, false
	}
	first := !op.started
	op.started = true
	resp := op.next()
	if resp == nil {
		op.ended.Store(true)
		op.cancel()
		return nil, false
	}
	if resp.HasNext != nil && !*resp.HasNext {
		op.ended.Store(true)
	}
	op.errored = op.errored || len(resp.Errors) > 0
	return encodeResult(resp, op.incremental, first), true
}

// next calls the executor's response handler, turning a panic into a last
// INTERNAL error.
func (op *streamOperation) next() (resp *graphql.Response) {
	defer func() {
		if p := recover(); p != nil {
			graph.LogPanic(op.ctx, "operation", p)
			op.ended.Store(true) // this error is the last payload; Close ends the rest
			resp = &graphql.Response{Errors: gqlerror.List{internalError()}}
			if op.incremental {
				f := false
				resp.HasNext = &f
			}
		}
	}()
	return op.responses(op.ctx)
}

// Pump runs Next on a goroutine of its own and delivers its payloads on
// the channel, closed when the operation ends. The goroutine never
// outlives the operation: once Close is called it stops, whether or not
// anyone reads.
func (op *streamOperation) Pump() <-chan []byte {
	return pump(op, func(payload []byte, _ bool) []byte { return payload })
}

// streamPart is a payload and whether it is the operation's last.
type streamPart struct {
	payload []byte
	last    bool
}

// Parts is Pump with each payload marked when it is known to be the last
// (incremental delivery's hasNext false, an error that ended the
// operation), as the goroutine calling Next knows it.
func (op *streamOperation) Parts() <-chan streamPart {
	return pump(op, func(payload []byte, last bool) streamPart { return streamPart{payload, last} })
}

func pump[T any](op *streamOperation, wrap func(payload []byte, last bool) T) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		for {
			payload, ok := op.Next()
			if !ok {
				return
			}
			select {
			case out <- wrap(payload, op.ended.Load()):
			case <-op.ctx.Done():
				return
			}
		}
	}()
	return out
}

// encodeResult writes a response as its transport carries it: a plain
// execution result, or with @defer the initial payload (hasNext) and the
// subsequent ones ({"incremental": [{data, path, label, errors}],
// "hasNext"}).
func encodeResult(resp *graphql.Response, incremental, first bool) []byte {
	var v any = resp
	switch {
	case !incremental:
		resp.HasNext, resp.Path, resp.Label = nil, nil, ""
	case first || resp.Data == nil:
		// The initial payload, or an error that ended the operation.
		resp.Path, resp.Label = nil, ""
		if resp.HasNext == nil {
			f := false
			resp.HasNext = &f
		}
		if resp.Data == nil && !first {
			v = subsequentErrors{Errors: resp.Errors, HasNext: *resp.HasNext, Extensions: resp.Extensions}
		}
	default:
		hasNext := resp.HasNext != nil && *resp.HasNext
		path := resp.Path
		if path == nil {
			path = ast.Path{}
		}
		v = subsequentPayload{
			Incremental: []incrementalPayload{{Data: resp.Data, Path: path, Label: resp.Label, Errors: resp.Errors}},
			HasNext:     hasNext,
			Extensions:  resp.Extensions,
		}
	}
	body, err := json.Marshal(v)
	if err != nil {
		return internalErrorJSON
	}
	return body
}

// subsequentPayload is incremental delivery's payload after the first.
type subsequentPayload struct {
	Incremental []incrementalPayload `json:"incremental"`
	HasNext     bool                 `json:"hasNext"`
	Extensions  map[string]any       `json:"extensions,omitempty"`
}

type incrementalPayload struct {
	Data   json.RawMessage `json:"data"`
	Path   ast.Path        `json:"path"`
	Label  string          `json:"label,omitempty"`
	Errors gqlerror.List   `json:"errors,omitempty"`
}

// subsequentErrors is a payload after the first that carries only the
// errors that ended the operation.
type subsequentErrors struct {
	Errors     gqlerror.List  `json:"errors"`
	HasNext    bool           `json:"hasNext"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// internalError is the error a panic becomes, as graph's error presenter
// would present it.
func internalError() *gqlerror.Error {
	return &gqlerror.Error{Message: "internal error", Extensions: map[string]any{"code": graph.CodeInternal}}
}

var internalErrorJSON = []byte(`{"errors":[{"message":"internal error","extensions":{"code":"INTERNAL"}}]}`)

// Stream media types a request may accept.
const (
	contentTypeEventStream = "text/event-stream"
	contentTypeMultipart   = "multipart/mixed"
)

// streamKind is a streamed response form.
type streamKind uint8

const (
	streamNone streamKind = iota
	streamSSE
	streamMultipart
)

// preferredStream is the stream form an Accept header weighs highest
// (the first listed among equal weights), or streamNone.
func preferredStream(accept string) streamKind {
	best, bestQ := streamNone, 0
	for r := range strings.SplitSeq(accept, ",") {
		name, params, _ := strings.Cut(r, ";")
		var kind streamKind
		switch name = strings.TrimSpace(name); {
		case strings.EqualFold(name, contentTypeEventStream):
			kind = streamSSE
		case strings.EqualFold(name, contentTypeMultipart):
			kind = streamMultipart
		default:
			continue
		}
		if q, ok := weight(params); ok && q > bestQ {
			best, bestQ = kind, q
		}
	}
	return best
}

// acceptsType reports whether an Accept header admits typ (named outright,
// with a weight above 0).
func acceptsType(accept, typ string) bool {
	for r := range strings.SplitSeq(accept, ",") {
		name, params, _ := strings.Cut(r, ";")
		if !strings.EqualFold(strings.TrimSpace(name), typ) {
			continue
		}
		if q, ok := weight(params); ok && q > 0 {
			return true
		}
	}
	return false
}

// mediaParam is the value of parameter name of the first range of accept
// whose type is typ ("" when absent), unquoted.
func mediaParam(accept, typ, name string) string {
	for r := range strings.SplitSeq(accept, ",") {
		t, params, _ := strings.Cut(r, ";")
		if !strings.EqualFold(strings.TrimSpace(t), typ) {
			continue
		}
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(p, "=")
			if strings.EqualFold(strings.TrimSpace(k), name) {
				return strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
		return ""
	}
	return ""
}

// streamWriter writes a stream's parts to an HTTP response, each flushed
// and bounded by a write deadline: a client that stops reading fails the
// write within the timeout, and its operation ends.
type streamWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// newStreamWriter lifts the connection's read deadline (the server's
// ReadTimeout would cancel a long stream's request) and bounds each write
// by timeout instead of the server's WriteTimeout.
func newStreamWriter(w http.ResponseWriter, timeout time.Duration) *streamWriter {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	return &streamWriter{w: w, rc: rc, timeout: timeout}
}

// write sends b now; an error means the client is gone or too slow.
func (s *streamWriter) write(b ...[]byte) error {
	if s.timeout > 0 {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	}
	for _, p := range b {
		if _, err := s.w.Write(p); err != nil {
			return fmt.Errorf("write a stream part: %w", err)
		}
	}
	if err := s.rc.Flush(); err != nil {
		return fmt.Errorf("flush a stream part: %w", err)
	}
	return nil
}
