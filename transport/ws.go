package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	coderws "github.com/coder/websocket"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/internal/clip"
)

// The WebSocket transport of /graphql: graphql-transport-ws, the protocol
// of graphql-ws (https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md),
// over coder/websocket. Every operation runs through the streaming core
// (startOperation, stream.go), as on the other streaming transports.
//
// A connection is one wsSession, served by the goroutine of the upgrade
// request (Do), which reads the client's messages and answers the
// protocol's own (connection_ack, pong) itself, with beside it:
//
//   - a heartbeat goroutine: the connection_init deadline (InitTimeout,
//     then close 4408), then a `ping` every KeepAlive;
//   - a closer goroutine, which closes the socket once the connection ends
//     (a protocol error, the peer gone, a failed write) and, when the
//     gateway shuts down (conns ends), gives the operations under way up
//     to WriteTimeout to write their last messages (graph.LiveFeed.Shutdown
//     has ended the subscriptions: each writes its `complete`) before
//     closing with 1000;
//   - a goroutine per operation, which starts it (parse, validate, the
//     subscription's resolver) and writes its results as they come
//     (streamOperation.Next, until the operation ends: its context is
//     the connection's child, so it never outlives the connection).
//
// Writes are serialised by one mutex and each is bounded by WriteTimeout:
// a peer that stops reading (even one that keeps sending pongs) fails a
// write once its buffers are full, and the connection ends. No close
// frame can follow a failed write (coder/websocket closes the TCP
// connection when a write's deadline passes: a frame may be half written,
// and the peer is not reading anyway), so such a client sees an abnormal
// closure (1006). Every operation ends with its connection (their
// contexts derive from the connection's), which frees their slots
// (graph.WithConnection: the per-connection subscription limit). Do
// returns once every goroutine of the connection has returned.

// wsSubprotocol is the only subprotocol served.
const wsSubprotocol = "graphql-transport-ws"

// Close codes: graphql-transport-ws's, and RFC 6455's.
const (
	wsCloseNormal           = coderws.StatusNormalClosure // the gateway shuts down
	wsCloseGoingAway        = coderws.StatusGoingAway     // a connection opened while it shuts down
	wsCloseInternal         = coderws.StatusInternalError // a panic in the connection's own code
	wsCloseBadRequest       = 4400
	wsCloseUnauthorized     = 4401
	wsCloseSubprotocol      = 4406
	wsCloseInitTimeout      = 4408
	wsCloseSubscriberExists = 4409
	wsCloseTooManyInits     = 4429
)

const wsShutdownReason = "the gateway is shutting down"

// websocketTransport serves graphql-transport-ws with cfg. Connections
// live until conns ends (the live feed's: graph.LiveFeed.Shutdown closes
// them, after the subscriptions completed); readLimit bounds a message as
// the body limit bounds a request (a larger one closes the connection
// with 1009).
func websocketTransport(cfg SubscriptionConfig, conns context.Context, readLimit int64) graphql.Transport {
	return &wsTransport{cfg: cfg.withDefaults(), conns: conns, readLimit: readLimit}
}

type wsTransport struct {
	cfg       SubscriptionConfig
	conns     context.Context
	readLimit int64
}

var _ graphql.Transport = (*wsTransport)(nil)

func (*wsTransport) Supports(r *http.Request) bool { return isWebSocketUpgrade(r) }

func (t *wsTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	// The server's ReadTimeout and WriteTimeout must not cut the socket:
	// writes have deadlines of their own, reads none (a client may stay
	// silent). net/http clears a hijacked connection's deadlines today,
	// but Hijack's contract lets them stay: cleared here as well.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	opts := t.cfg.acceptOptions() // guardRequest checked origins; this is a second line
	opts.Subprotocols = []string{wsSubprotocol}
	conn, err := coderws.Accept(w, r, &opts)
	if err != nil {
		return // Accept answered the request (403, 400, 426)
	}
	defer func() {
		if p := recover(); p != nil {
			graph.LogPanic(r.Context(), "websocket", p)
			_ = conn.CloseNow()
		}
	}()
	if t.readLimit > 0 {
		conn.SetReadLimit(t.readLimit)
	}
	switch {
	case conn.Subprotocol() != wsSubprotocol:
		// As graphql-ws's own server does: no subprotocol, or only the
		// legacy graphql-ws (subscriptions-transport-ws), which is not
		// served.
		_ = conn.Close(wsCloseSubprotocol, "Subprotocol not acceptable")
		return
	case t.conns.Err() != nil:
		_ = conn.Close(wsCloseGoingAway, wsShutdownReason)
		return
	}
	ctx, cancel := context.WithCancel(graph.WithConnection(r.Context(), t.cfg.MaxPerConnection))
	s := &wsSession{
		t:        t,
		conn:     conn,
		exec:     exec,
		headers:  r.Header,
		ctx:      ctx,
		cancel:   cancel,
		ops:      map[string]*wsOp{},
		idle:     closedChan(),
		initDone: make(chan struct{}),
	}
	s.serve()
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// wsSession is one connection.
type wsSession struct {
	t       *wsTransport
	conn    *coderws.Conn
	exec    graphql.GraphExecutor
	headers http.Header // the upgrade request's, every operation's
	// ctx is the connection's, the parent of its operations': cancelled
	// when the connection ends (end).
	ctx    context.Context
	cancel context.CancelFunc

	wmu sync.Mutex // serialises writes

	mu      sync.Mutex
	ops     map[string]*wsOp // the operations under way, by id
	running int              // operation goroutines
	idle    chan struct{}    // closed while running is 0
	ended   bool             // how the socket is closed, once ended:
	code    coderws.StatusCode
	reason  string
	abort   bool // without a close frame (the peer is gone or not reading)

	// Of the reading goroutine only.
	initReceived bool
	initDone     chan struct{} // closed at connection_init

	wg sync.WaitGroup // the goroutines beside the reader
}

// wsOp is an operation of the connection, from its subscribe message.
type wsOp struct {
	id     string
	ctx    context.Context // the operation's, from the connection's
	cancel context.CancelFunc
	// stopped: the client completed it; nothing more is sent for it.
	stopped atomic.Bool
}

// serve reads the client's messages until the connection ends, then
// waits for every goroutine of the connection.
func (s *wsSession) serve() {
	s.wg.Add(2)
	go s.closer()
	go s.heartbeat()
	defer func() {
		if p := recover(); p != nil {
			graph.LogPanic(s.ctx, "websocket", p)
			s.end(wsCloseInternal, "internal error", false)
		}
		s.end(0, "", true) // the reader is done: the peer is gone
		s.wg.Wait()
	}()
	for {
		_, data, err := s.conn.Read(context.Background())
		if err != nil {
			// The peer closed or went, the connection was closed (end),
			// or a message exceeded the read limit (closed 1009).
			s.end(0, "", true)
			return
		}
		if s.ctx.Err() != nil {
			continue // closing: the close handshake reads on
		}
		s.handle(data)
	}
}

// end ends the connection: it is closed with code and reason (abort: at
// once, without a close frame); the first call decides.
func (s *wsSession) end(code coderws.StatusCode, reason string, abort bool) {
	s.mu.Lock()
	if !s.ended {
		s.ended, s.code, s.reason, s.abort = true, code, closeReason(reason), abort
	}
	s.mu.Unlock()
	s.cancel()
}

// closer closes the socket when the connection ends, or when the gateway
// shuts down once the operations under way have written their last
// messages (within WriteTimeout).
func (s *wsSession) closer() {
	defer s.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			graph.LogPanic(s.ctx, "websocket", p)
			s.end(0, "", true)
			_ = s.conn.CloseNow()
		}
	}()
	select {
	case <-s.ctx.Done():
	case <-s.t.conns.Done():
		s.drain()
		s.end(wsCloseNormal, wsShutdownReason, false)
	}
	s.mu.Lock()
	code, reason, abort := s.code, s.reason, s.abort
	s.mu.Unlock()
	if abort {
		_ = s.conn.CloseNow()
		return
	}
	// Writes the close frame and waits for the peer's (at most 5 s each);
	// the reader discards what arrives meanwhile.
	_ = s.conn.Close(code, reason)
}

// drain waits, within WriteTimeout, until no operation is under way.
// graph.LiveFeed.Shutdown has ended the subscriptions before ending conns:
// their goroutines are writing their `complete` (the feed counts a
// subscription as ended as soon as its stream ends, before the transport
// writes it).
func (s *wsSession) drain() {
	timeout := time.NewTimer(s.t.cfg.WriteTimeout)
	defer timeout.Stop()
	for {
		s.mu.Lock()
		idle := s.idle
		s.mu.Unlock()
		select {
		case <-idle:
			s.mu.Lock()
			done := s.running == 0
			s.mu.Unlock()
			if done {
				return
			}
		case <-timeout.C:
			return
		case <-s.ctx.Done():
			return
		}
	}
}

// heartbeat closes the connection with 4408 if connection_init does not
// come within InitTimeout, then sends a ping every KeepAlive.
func (s *wsSession) heartbeat() {
	defer s.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			graph.LogPanic(s.ctx, "websocket", p)
			s.end(wsCloseInternal, "internal error", false)
		}
	}()
	initTimeout := time.NewTimer(s.t.cfg.InitTimeout)
	defer initTimeout.Stop()
	select {
	case <-s.initDone:
	case <-initTimeout.C:
		select {
		case <-s.initDone:
		default:
			s.end(wsCloseInitTimeout, "Connection initialisation timeout", false)
			return
		}
	case <-s.ctx.Done():
		return
	}
	tick := time.NewTicker(s.t.cfg.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if !s.write(nil, wsPingMessage) {
				return
			}
		case <-s.ctx.Done():
			return
		}
	}
}

// write sends one message, unless the connection has ended or the message
// is op's and the client completed op. A failed write (the peer gone, or
// not reading within WriteTimeout) ends the connection.
func (s *wsSession) write(op *wsOp, msg []byte) bool {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.ctx.Err() != nil || (op != nil && op.stopped.Load()) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.t.cfg.WriteTimeout)
	err := s.conn.Write(ctx, coderws.MessageText, msg)
	cancel()
	if err != nil {
		s.end(0, "", true)
		return false
	}
	return true
}

// handle acts on one message of the client.
func (s *wsSession) handle(data []byte) {
	m, problem := parseWSMessage(data)
	if problem != "" {
		s.end(wsCloseBadRequest, problem, false)
		return
	}
	switch m.typ {
	case "connection_init":
		if s.initReceived {
			s.end(wsCloseTooManyInits, "Too many initialisation requests", false)
			return
		}
		s.initReceived = true
		close(s.initDone)
		s.write(nil, wsAckMessage)
	case "ping":
		s.write(nil, wsMessage("pong", "", m.payload))
	case "pong":
	case "subscribe":
		s.subscribe(m.id, m.params)
	case "complete":
		s.complete(m.id)
	}
}

// subscribe starts an operation.
func (s *wsSession) subscribe(id string, params *graphql.RawParams) {
	if !s.initReceived {
		s.end(wsCloseUnauthorized, "Unauthorized", false)
		return
	}
	s.mu.Lock()
	if _, dup := s.ops[id]; dup {
		s.mu.Unlock()
		s.end(wsCloseSubscriberExists, "Subscriber for "+clip.ID(id)+" already exists", false)
		return
	}
	op := &wsOp{id: id}
	op.ctx, op.cancel = context.WithCancel(s.ctx)
	s.ops[id] = op
	if s.running == 0 {
		s.idle = make(chan struct{})
	}
	s.running++
	s.mu.Unlock()
	params.Headers = s.headers
	s.wg.Add(1)
	go s.run(op, params)
}

// complete stops the client's operation id (unknown ids are ignored):
// nothing more is sent for it.
func (s *wsSession) complete(id string) {
	s.mu.Lock()
	op := s.ops[id]
	if op != nil {
		delete(s.ops, id)
		op.stopped.Store(true)
	}
	s.mu.Unlock()
	if op != nil {
		op.cancel()
	}
}

// release frees op's id; true when op's last message is to be written
// (the client has not completed it). The id is free before that message
// goes out, so the client may reuse it as soon as it reads it.
func (s *wsSession) release(op *wsOp) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ops[op.id] != op {
		return false
	}
	delete(s.ops, op.id)
	return !op.stopped.Load()
}

// run starts an operation and writes its results: a `next` each, then
// `complete`; or `error` for an operation that never executed (a request
// error), with no `complete` after it.
func (s *wsSession) run(o *wsOp, params *graphql.RawParams) {
	var (
		op   *streamOperation
		last [][]byte // the messages after the results
	)
	defer func() {
		if p := recover(); p != nil {
			// Ends this operation only, with an INTERNAL error.
			graph.LogPanic(o.ctx, "websocket", p)
			if op != nil {
				last = [][]byte{wsMessage("next", o.id, internalErrorJSON), wsMessage("complete", o.id, nil)}
			} else {
				last = [][]byte{wsMessage("error", o.id, internalErrorsJSON)}
			}
		}
		if op != nil {
			op.Close()
		}
		if s.release(o) {
			for _, m := range last {
				if !s.write(o, m) {
					break
				}
			}
		}
		o.cancel()
		s.mu.Lock()
		if s.running--; s.running == 0 {
			close(s.idle)
		}
		s.mu.Unlock()
		s.wg.Done()
	}()
	params.ReadTime.End = graphql.Now()
	op, fail := startOperation(graphql.StartOperationTrace(o.ctx), s.exec, params)
	if fail != nil {
		errs, err := json.Marshal(fail.Response.Errors)
		if err != nil || len(fail.Response.Errors) == 0 {
			errs = internalErrorsJSON
		}
		last = [][]byte{wsMessage("error", o.id, errs)}
		return
	}
	// This goroutine is the operation's: it takes the results itself
	// (Next returns once the operation's context ends), rather than
	// through op.Pump, whose select may drop a last payload that Next
	// returns with the context already cancelled (a panic's INTERNAL
	// error).
	for {
		payload, ok := op.Next()
		if !ok {
			break
		}
		if !s.write(o, wsMessage("next", o.id, payload)) {
			return // completed by the client, or the connection ended
		}
	}
	// The operation ended (unless the client completed it, or the
	// connection ended: then nothing is written).
	last = [][]byte{wsMessage("complete", o.id, nil)}
}

var internalErrorsJSON = []byte(`[{"message":"internal error","extensions":{"code":"INTERNAL"}}]`)

// Messages of the server's own.
var (
	wsAckMessage  = []byte(`{"type":"connection_ack"}`)
	wsPingMessage = []byte(`{"type":"ping"}`)
)

// wsMessage encodes a message; id and payload are left out when empty.
func wsMessage(typ, id string, payload json.RawMessage) []byte {
	b := make([]byte, 0, len(`{"type":"","id":"","payload":}`)+len(typ)+len(id)+len(payload)+8)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, '"')
	if id != "" {
		quoted, _ := json.Marshal(id) // a decoded string: valid UTF-8
		b = append(b, `,"id":`...)
		b = append(b, quoted...)
	}
	if len(payload) > 0 {
		b = append(b, `,"payload":`...)
		b = append(b, payload...)
	}
	return append(b, '}')
}

// wsIncoming is a client message, checked.
type wsIncoming struct {
	typ     string
	id      string
	payload json.RawMessage    // an object, or nil
	params  *graphql.RawParams // subscribe's
}

// parseWSMessage decodes and checks a client message as graphql-ws does;
// problem, when not empty, is why it is not acceptable (the reason of the
// 4400 close).
func parseWSMessage(data []byte) (m wsIncoming, problem string) {
	if !isJSONObject(data) {
		return m, "Invalid message received: not a JSON object"
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return m, "Invalid message received: not a JSON object"
	}
	typ, ok := fields["type"]
	if !ok || isJSONNull(typ) {
		return m, `Invalid message received: missing "type"`
	}
	if json.Unmarshal(typ, &m.typ) != nil {
		return m, `Invalid message received: "type" must be a string`
	}
	if p, ok := fields["payload"]; ok && !isJSONNull(p) {
		m.payload = p
	}
	switch m.typ {
	case "connection_init", "ping", "pong":
		if m.payload != nil && !isJSONObject(m.payload) {
			return m, fmt.Sprintf(`Invalid message received: the payload of %q must be an object`, m.typ)
		}
		return m, ""
	case "subscribe", "complete":
		raw, ok := fields["id"]
		if !ok || isJSONNull(raw) || json.Unmarshal(raw, &m.id) != nil || m.id == "" {
			return m, fmt.Sprintf(`Invalid message received: %q requires a non-empty string "id"`, m.typ)
		}
		if m.typ == "complete" {
			return m, ""
		}
		var problem string
		m.params, problem = parseSubscribePayload(m.payload)
		return m, problem
	case "connection_ack", "next", "error":
		return m, fmt.Sprintf("Unexpected message of type %s received", m.typ)
	}
	return m, fmt.Sprintf(`Invalid message received: unknown "type" %q`, clip.ID(m.typ))
}

// parseSubscribePayload decodes a subscribe message's payload: an object
// with a string query, or a persisted document's id instead (a string
// documentId or doc_id: documents.go), and optional operationName (a
// string), variables and extensions (objects).
func parseSubscribePayload(payload json.RawMessage) (*graphql.RawParams, string) {
	const invalid = "Invalid message received: "
	start := graphql.Now()
	if payload == nil || !isJSONObject(payload) {
		return nil, invalid + `the payload of "subscribe" must be an object`
	}
	var fields struct {
		Query         json.RawMessage `json:"query"`
		OperationName json.RawMessage `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
		Extensions    json.RawMessage `json:"extensions"`
		DocumentID    json.RawMessage `json:"documentId"`
		DocID         json.RawMessage `json:"doc_id"`
	}
	if err := json.Unmarshal(payload, &fields); err != nil {
		return nil, invalid + `the payload of "subscribe" must be an object`
	}
	params := &graphql.RawParams{ReadTime: graphql.TraceTiming{Start: start}}
	var ref documentRef
	if !isJSONNull(fields.DocumentID) && json.Unmarshal(fields.DocumentID, &ref.DocumentID) != nil {
		return nil, invalid + `"documentId" must be a string`
	}
	if !isJSONNull(fields.DocID) && json.Unmarshal(fields.DocID, &ref.DocID) != nil {
		return nil, invalid + `"doc_id" must be a string`
	}
	byID := ref != documentRef{}
	if (isJSONNull(fields.Query) && !byID) || (!isJSONNull(fields.Query) && json.Unmarshal(fields.Query, &params.Query) != nil) {
		return nil, invalid + `"query" must be a string`
	}
	if !isJSONNull(fields.OperationName) && json.Unmarshal(fields.OperationName, &params.OperationName) != nil {
		return nil, invalid + `"operationName" must be a string`
	}
	if !isJSONNull(fields.Variables) && (!isJSONObject(fields.Variables) || jsonDecode(fields.Variables, &params.Variables) != nil) {
		return nil, invalid + `"variables" must be an object`
	}
	if !isJSONNull(fields.Extensions) && (!isJSONObject(fields.Extensions) || jsonDecode(fields.Extensions, &params.Extensions) != nil) {
		return nil, invalid + `"extensions" must be an object`
	}
	if msg := ref.apply(params); msg != "" {
		return nil, invalid + msg
	}
	return params, ""
}

// isJSONNull reports an absent member or null.
func isJSONNull(raw json.RawMessage) bool {
	return raw == nil || string(raw) == "null"
}

// isJSONObject reports whether raw starts as an object (after whitespace).
func isJSONObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

// maxCloseReason is the longest close reason a close frame carries.
const maxCloseReason = 123

// closeReason fits a reason in a close frame (cut at a character).
func closeReason(s string) string {
	if len(s) <= maxCloseReason {
		return s
	}
	return clip.Cut(s, maxCloseReason-len("…"))
}
