package transport

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/graph"
)

// eventStreams is graphql-sse's single connection mode (PROTOCOL.md,
// "Single connection mode"), as graphql-sse 2.6.1's client speaks it and
// its handler answers it, where the two differ from the protocol text
// only as noted:
//
//   - PUT /graphql reserves a stream: 201 Created, the reservation's token
//     as text/plain (130 random bits, crypto/rand). Any token the PUT
//     carries is ignored: the server chooses tokens (graphql-sse's handler
//     takes the client's). A reservation no stream fulfils within
//     SubscriptionConfig.InitTimeout (10 s by default; graphql-sse's
//     client connects right after its PUT) expires, with the operations
//     it holds. At most maxPendingReservations wait at once in the
//     process: past it a PUT is refused with 429 (RATE_LIMITED,
//     Retry-After). An Accept that admits neither text/plain nor */* is
//     refused with 406, as graphql-sse's handler does.
//   - GET /graphql accepting text/event-stream with the token (header
//     X-GraphQL-Event-Stream-Token, or URL parameter token for
//     EventSource) is the stream: 200, `next` events {"id", "payload"},
//     `complete` events {"id"}, a comment every KeepAlive, each write
//     bounded by WriteTimeout (a client that does not read is dropped). A
//     token no reservation has: 404 (graphql-sse's handler would serve the
//     request as a distinct connection, and answer 400 for its missing
//     query); a reservation a stream already fulfils: 409, so that one
//     stream at most ever carries a reservation's results. When the
//     stream ends its operations end and the reservation is gone.
//   - A POST (or a GET not accepting text/event-stream) with the token is
//     an operation, named by extensions.operationId. A request error
//     (parse, validation, limits, refusals) is answered on that request as
//     any request's (status and type by Accept: 200 for application/json,
//     400 for application/graphql-response+json, 400 for a request that is
//     not GraphQL); else 202 Accepted, empty, and its results go on the
//     stream, a query's too: `next`, then `complete`. No operationId:
//     400; the id of an operation of the stream that has not completed:
//     409; the stream holds MaxPerConnection operations: 429
//     (RATE_LIMITED); unknown token: 404. Operations may be sent to a
//     reservation before its stream connects: their results wait for it.
//     An operation runs as long as its stream, not its request: its
//     context keeps the request's values (request state, telemetry, the
//     panic logger), not its cancellation.
//   - DELETE /graphql?operationId=<id> with the token stops an operation:
//     200 (whether or not it was under way, as graphql-sse's handler),
//     and, as there, its `complete` follows on the stream. No operationId:
//     400; unknown token: 404.
//
// When the live feed's connections context (conns: graph.Executor.
// Connections) ends, after its drain completed every subscription,
// reservations end, a stream accepts no more operations, stops those under
// way, writes their `complete` and ends.
type eventStreams struct {
	cfg   SubscriptionConfig
	conns context.Context
	max   int // pending reservations

	mu      sync.Mutex
	streams map[string]*eventStream // by token, reserved or connected
	pending int                     // reservations no stream fulfils yet
	closed  bool                    // conns ended
}

// maxPendingReservations bounds the reservations waiting for their stream
// in the process (each a few hundred bytes, plus the operations sent to
// it, at most MaxPerConnection): a reservation is fulfilled within a
// round trip, so this many wait only under a flood of PUTs.
const maxPendingReservations = 10_000

// maxOperationIDBytes bounds an operation id, which each of its events
// repeats (graphql-sse's client sends a UUID).
const maxOperationIDBytes = 128

func newEventStreams(cfg SubscriptionConfig, conns context.Context) *eventStreams {
	s := &eventStreams{cfg: cfg.withDefaults(), conns: conns, max: maxPendingReservations, streams: map[string]*eventStream{}}
	context.AfterFunc(conns, s.shutdown)
	return s
}

var _ graphql.Transport = (*eventStreams)(nil)

// Supports: PUT and DELETE, which no other transport serves, and any GET
// or POST carrying a reservation's token.
func (*eventStreams) Supports(r *http.Request) bool {
	switch r.Method {
	case http.MethodPut, http.MethodDelete:
		return true
	case http.MethodGet, http.MethodPost:
		return r.Header.Get("Upgrade") == "" && eventStreamToken(r) != ""
	}
	return false
}

// eventStreamToken is the request's token: the header's, else the URL
// parameter's (graphql-sse's order).
func eventStreamToken(r *http.Request) string {
	if t := r.Header.Get(eventStreamTokenHeader); t != "" {
		return t
	}
	return r.URL.Query().Get(eventStreamTokenParam)
}

func (s *eventStreams) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	switch {
	case r.Method == http.MethodPut:
		s.reserve(w, r, exec)
	case r.Method == http.MethodDelete:
		s.stop(w, r, exec)
	case r.Method == http.MethodGet && preferredStream(r.Header.Get("Accept")) == streamSSE:
		s.connect(w, r, exec)
	default:
		s.operation(w, r, exec)
	}
}

// refuseStream answers a request of the mode with a GraphQL error (code, a
// message saying what to do), in the type its Accept prefers.
func refuseStream(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, status int, code, msg string) {
	setContentType(w.Header(), negotiate(r.Header.Get("Accept")))
	writeRequestError(r.Context(), w, exec, status, gqlerror.List{codedError(code, msg)})
}

func codedError(code, msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Err: &graph.Error{Code: code, Message: msg}}
}

const (
	msgNoReservation = "no event stream is reserved under this token (it expired, its stream closed, or it was never issued): reserve one with PUT, then connect to it (GET, Accept: text/event-stream) within the reservation's lifetime"
	msgShuttingDown  = "the gateway is shutting down: reserve a stream again, and retry"
)

// reserve serves PUT: a new reservation.
func (s *eventStreams) reserve(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if accept := r.Header.Get("Accept"); accept != "" && !acceptsType(accept, "text/plain") && !acceptsType(accept, "text/*") && !acceptsType(accept, "*/*") {
		refuseStream(w, r, exec, http.StatusNotAcceptable, graph.CodeBadUserInput, "a reservation's token is text/plain: accept text/plain or */*")
		return
	}
	es := &eventStream{
		token:  rand.Text(),
		max:    s.cfg.MaxPerConnection,
		events: make(chan []byte),
		done:   make(chan struct{}),
		idle:   make(chan struct{}, 1),
		ops:    map[string]*streamOp{},
	}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		refuseStream(w, r, exec, http.StatusServiceUnavailable, graph.CodeUpstreamUnavailable, msgShuttingDown)
		return
	case s.pending >= s.max:
		s.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(s.cfg.InitTimeout.Seconds()))))
		refuseStream(w, r, exec, http.StatusTooManyRequests, graph.CodeRateLimited, fmt.Sprintf(
			"%d event streams are reserved and not yet connected, the most the gateway holds; retry shortly", s.max))
		return
	}
	s.streams[es.token] = es
	s.pending++
	logCtx := graph.DetachPanicLog(r.Context())
	es.expiry = time.AfterFunc(s.cfg.InitTimeout, func() {
		defer recoverGoroutine(logCtx, "event stream reservation expiry")
		s.expire(es)
	})
	s.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(es.token))
}

// recoverGoroutine, deferred first thing in a goroutine of the mode,
// logs a panic (graph.LogPanic) instead of crashing the process.
func recoverGoroutine(ctx context.Context, where string) {
	if p := recover(); p != nil {
		graph.LogPanic(ctx, where, p)
	}
}

// lookup is the reservation of a token; nil when none.
func (s *eventStreams) lookup(token string) *eventStream {
	if token == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streams[token]
}

// expire ends a reservation no stream fulfilled in time.
func (s *eventStreams) expire(es *eventStream) {
	s.mu.Lock()
	if es.open || s.streams[es.token] != es {
		s.mu.Unlock()
		return
	}
	delete(s.streams, es.token)
	s.pending--
	s.mu.Unlock()
	es.end()
}

// shutdown ends the reservations when conns ends; connected streams
// drain themselves (serve).
func (s *eventStreams) shutdown() {
	defer recoverGoroutine(context.Background(), "event streams shutdown")
	s.mu.Lock()
	s.closed = true
	var pending []*eventStream
	for token, es := range s.streams {
		if !es.open {
			es.expiry.Stop()
			delete(s.streams, token)
			s.pending--
			pending = append(pending, es)
		}
	}
	s.mu.Unlock()
	for _, es := range pending {
		es.end()
	}
}

// connect serves the stream: GET accepting text/event-stream.
func (s *eventStreams) connect(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	s.mu.Lock()
	es := s.streams[eventStreamToken(r)]
	switch {
	case s.closed:
		s.mu.Unlock()
		refuseStream(w, r, exec, http.StatusServiceUnavailable, graph.CodeUpstreamUnavailable, msgShuttingDown)
		return
	case es == nil:
		s.mu.Unlock()
		refuseStream(w, r, exec, http.StatusNotFound, graph.CodeBadUserInput, msgNoReservation)
		return
	case es.open:
		s.mu.Unlock()
		refuseStream(w, r, exec, http.StatusConflict, graph.CodeBadUserInput, "a stream is already connected to this reservation, and only one may be: reserve another stream with PUT")
		return
	}
	es.open = true
	es.expiry.Stop()
	s.pending--
	s.mu.Unlock()
	s.serve(w, r, es)
}

// serve writes the stream's events until the client leaves, a write
// fails (the client did not take it within WriteTimeout), or conns ends
// and every operation has written its `complete`. Then the reservation is
// gone, and serve returns once every goroutine of its operations has.
func (s *eventStreams) serve(w http.ResponseWriter, r *http.Request, es *eventStream) {
	defer s.remove(es)
	sw := startStreamResponse(w, streamSSE, s.cfg, false)
	if sw.write(sseKeepAlive) != nil { // the headers go now: the client's fetch resolves
		return
	}
	keepAlive := time.NewTicker(s.cfg.KeepAlive)
	defer keepAlive.Stop()
	conns := s.conns.Done()
	var idle <-chan struct{}
	for {
		select {
		case ev := <-es.events:
			if sw.write(ev) != nil {
				return
			}
		case <-keepAlive.C:
			if sw.write(sseKeepAlive) != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-conns:
			conns = nil
			if es.drain() {
				return
			}
			idle = es.idle
		case <-idle:
			if es.empty() {
				return
			}
		}
	}
}

// remove ends a connected stream: no token finds it any more, its
// operations end, and it waits for their goroutines.
func (s *eventStreams) remove(es *eventStream) {
	s.mu.Lock()
	if s.streams[es.token] == es {
		delete(s.streams, es.token)
	}
	s.mu.Unlock()
	es.end()
	es.wg.Wait()
}

// operation serves an operation of a stream: a POST, or a GET that does
// not accept text/event-stream.
func (s *eventStreams) operation(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	es := s.lookup(eventStreamToken(r))
	if es == nil {
		refuseStream(w, r, exec, http.StatusNotFound, graph.CodeBadUserInput, msgNoReservation)
		return
	}
	media := negotiate(r.Header.Get("Accept"))
	setContentType(w.Header(), media)
	ctx := r.Context()
	start := graphql.Now()
	params, ok := readParams(w, r, exec)
	if !ok {
		return
	}
	id, msg := operationID(params.Extensions)
	if msg != "" {
		writeRequestError(ctx, w, exec, http.StatusBadRequest, gqlerror.List{inputError(msg)})
		return
	}
	// Telemetry names the transport from Accept: the operation's results
	// go on the event stream.
	headers := r.Header.Clone()
	headers.Set("Accept", contentTypeEventStream)
	params.Headers = headers
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	octx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o := &streamOp{id: id, ctx: octx, cancel: cancel}
	switch es.add(o) {
	case opGone:
		cancel()
		writeRequestError(ctx, w, exec, http.StatusNotFound, gqlerror.List{codedError(graph.CodeBadUserInput, msgNoReservation)})
		return
	case opClosing:
		cancel()
		writeRequestError(ctx, w, exec, http.StatusServiceUnavailable, gqlerror.List{codedError(graph.CodeUpstreamUnavailable, msgShuttingDown)})
		return
	case opDuplicate:
		cancel()
		writeRequestError(ctx, w, exec, http.StatusConflict, gqlerror.List{inputError(fmt.Sprintf(
			"an operation with id %q is under way on this stream: operation ids must be unique among the stream's operations that have not completed", id))})
		return
	case opFull:
		cancel()
		writeRequestError(ctx, w, exec, http.StatusTooManyRequests, gqlerror.List{codedError(graph.CodeRateLimited, fmt.Sprintf(
			"this stream has %d operations under way, the most a stream may hold: stop one (DELETE), or reserve another stream", es.max))})
		return
	}
	handed := false
	defer func() {
		if !handed {
			es.leave(o)
			es.wg.Done()
		}
	}()
	op, fail := startOperation(octx, exec, params)
	if fail != nil {
		fail.write(w, media)
		return
	}
	if r.Method == http.MethodGet && op.Kind() == ast.Mutation {
		op.Close()
		w.Header().Set("Allow", "POST")
		writeRequestError(op.Context(), w, exec, http.StatusMethodNotAllowed, gqlerror.List{inputError("a mutation cannot be sent with GET: send it with POST")})
		return
	}
	handed = true
	go es.run(o, op)
	w.Header().Del("Content-Type")
	w.WriteHeader(http.StatusAccepted)
}

// operationID is extensions.operationId, or what is wrong with it.
func operationID(ext map[string]any) (id, msg string) {
	v, ok := ext["operationId"]
	if !ok || v == nil {
		return "", "extensions.operationId is missing: on a reserved event stream every operation is named by a unique operationId in its extensions, which its events carry"
	}
	id, ok = v.(string)
	switch {
	case !ok || id == "":
		return "", "extensions.operationId must be a non-empty string"
	case len(id) > maxOperationIDBytes:
		return "", fmt.Sprintf("extensions.operationId is longer than %d bytes", maxOperationIDBytes)
	}
	return id, ""
}

// stop serves DELETE: an operation of the stream ends.
func (s *eventStreams) stop(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	token := eventStreamToken(r)
	if token == "" {
		refuseStream(w, r, exec, http.StatusBadRequest, graph.CodeBadUserInput, "DELETE stops an operation of a reserved event stream: send the reservation's token (header "+eventStreamTokenHeader+") and ?operationId=<id>")
		return
	}
	es := s.lookup(token)
	if es == nil {
		refuseStream(w, r, exec, http.StatusNotFound, graph.CodeBadUserInput, msgNoReservation)
		return
	}
	id := r.URL.Query().Get("operationId")
	if id == "" {
		refuseStream(w, r, exec, http.StatusBadRequest, graph.CodeBadUserInput, "the operationId URL parameter is missing: DELETE ?operationId=<id> stops that operation")
		return
	}
	es.stop(id)
	w.WriteHeader(http.StatusOK)
}

// eventStream is a reservation, and the stream that fulfils it.
type eventStream struct {
	token string
	max   int // operations under way
	// events carries the operations' events to the stream's writer.
	events chan []byte
	// done is closed when the stream, or the reservation, ends: nothing
	// more is written.
	done chan struct{}
	// idle receives a value when an operation leaves (for a drain).
	idle   chan struct{}
	expiry *time.Timer
	// open: a stream fulfils the reservation (under eventStreams.mu).
	open bool

	mu      sync.Mutex
	ops     map[string]*streamOp // under way, by id
	closing bool                 // draining: no new operation
	ended   bool
	wg      sync.WaitGroup // the operations' goroutines
}

// streamOp is an operation of a stream.
type streamOp struct {
	id  string
	ctx context.Context // the operation's, before the executor's
	// cancel ends the operation: DELETE, the end of its stream.
	cancel context.CancelFunc
}

type addResult uint8

const (
	opAdded addResult = iota
	opGone
	opClosing
	opDuplicate
	opFull
)

// add makes o an operation of the stream; when added, the caller owes
// es.wg.Done (run's, or its own after leave).
func (es *eventStream) add(o *streamOp) addResult {
	es.mu.Lock()
	defer es.mu.Unlock()
	switch {
	case es.ended:
		return opGone
	case es.closing:
		return opClosing
	case es.ops[o.id] != nil:
		return opDuplicate
	case len(es.ops) >= es.max:
		return opFull
	}
	es.ops[o.id] = o
	es.wg.Add(1)
	return opAdded
}

// leave removes an operation: its id is free again.
func (es *eventStream) leave(o *streamOp) {
	es.mu.Lock()
	if es.ops[o.id] == o {
		delete(es.ops, o.id)
	}
	es.mu.Unlock()
	o.cancel()
	select {
	case es.idle <- struct{}{}:
	default:
	}
}

// stop ends the operation id, if under way.
func (es *eventStream) stop(id string) {
	es.mu.Lock()
	o := es.ops[id]
	es.mu.Unlock()
	if o != nil {
		o.cancel()
	}
}

// drain stops every operation and refuses new ones; true when none is
// left.
func (es *eventStream) drain() bool {
	es.mu.Lock()
	es.closing = true
	ops := make([]*streamOp, 0, len(es.ops))
	for _, o := range es.ops {
		ops = append(ops, o)
	}
	es.mu.Unlock()
	for _, o := range ops {
		o.cancel()
	}
	return len(ops) == 0
}

func (es *eventStream) empty() bool {
	es.mu.Lock()
	defer es.mu.Unlock()
	return len(es.ops) == 0
}

// end ends the stream or reservation: nothing more is written, every
// operation ends. Idempotent.
func (es *eventStream) end() {
	es.mu.Lock()
	if es.ended {
		es.mu.Unlock()
		return
	}
	es.ended = true
	ops := make([]*streamOp, 0, len(es.ops))
	for _, o := range es.ops {
		ops = append(ops, o)
	}
	es.mu.Unlock()
	close(es.done)
	for _, o := range ops {
		o.cancel()
	}
}

// run carries an operation's results to the stream, each a `next` event,
// then its `complete`, also when it was stopped (DELETE, a drain),
// unless the stream ended first. It returns once the operation's own
// goroutine (Pump's) has.
func (es *eventStream) run(o *streamOp, op *streamOperation) {
	defer es.wg.Done()
	results := op.Pump()
	defer func() {
		op.Close()
		for range results { // until Pump's goroutine returns
		}
	}()
	defer es.leave(o)
	defer recoverGoroutine(o.ctx, "event stream operation")
	id, _ := json.Marshal(o.id)
	for stopped := false; !stopped; {
		select {
		case payload, ok := <-results:
			switch {
			case !ok:
				stopped = true
			case o.ctx.Err() != nil:
				stopped = true // stopped meanwhile: nothing more
			default:
				stopped = !es.deliver(o.ctx.Done(), sseOperationEvent("next", id, payload))
			}
		case <-o.ctx.Done():
			stopped = true
		case <-es.done:
			return
		}
	}
	es.deliver(nil, sseOperationEvent("complete", id, nil))
}

// deliver hands an event to the stream's writer, waiting for the stream
// to connect if need be; false when the stream ended, or stop was closed,
// first.
func (es *eventStream) deliver(stop <-chan struct{}, ev []byte) bool {
	select {
	case es.events <- ev:
		return true
	case <-stop:
		return false
	case <-es.done:
		return false
	}
}

// sseOperationEvent is an event of a reserved stream: data
// {"id":…,"payload":…} for `next`, {"id":…} for `complete`.
func sseOperationEvent(event string, id, payload []byte) []byte {
	b := make([]byte, 0, len(event)+len(id)+len(payload)+40)
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, `
data: {"id":`...)
	b = append(b, id...)
	if payload != nil {
		b = append(b, `,"payload":`...)
		b = append(b, payload...)
	}
	return append(b, "}\n\n"...)
}

// sseKeepAlive is an empty comment: it keeps proxies from closing an idle
// stream, and fails a write to a client that left.
var sseKeepAlive = []byte(":\n\n")
