package graph

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
)

// The streaming transports of /graphql (issue 17): WebSocket with the
// graphql-transport-ws protocol (and gqlgen's legacy graphql-ws), Server-
// Sent Events (graphql-sse's distinct connections mode), and
// multipart/mixed for @defer. They are gqlgen's; this file configures
// them: the origin check of WebSocket upgrades, the per-connection
// subscription limit, the protocol's close codes, and Supports methods
// that read Accept as guardRequest does.

// SubscriptionConfig configures the subscription transports.
type SubscriptionConfig struct {
	// MaxPerConnection bounds the subscriptions a WebSocket connection
	// holds at once; past it a subscription is RATE_LIMITED. Default 100.
	MaxPerConnection int
	// InitTimeout is how long a WebSocket connection may wait before its
	// connection_init; then it is closed with 4408. Default 10s.
	InitTimeout time.Duration
	// KeepAlive is the interval of the server's pings (graphql-transport-ws
	// ping, expecting a pong within two intervals; graphql-ws "ka"; an SSE
	// comment). Default 15s.
	KeepAlive time.Duration
	// AllowedOrigins are the origins whose pages may open a WebSocket
	// connection: the CORS allowed origins. Empty: the same origin only;
	// ["*"]: any origin; else these exact origins (scheme://host[:port])
	// and the same origin. A request without Origin (not a browser) is
	// accepted.
	AllowedOrigins []string
}

// DefaultSubscriptions are the defaults of SubscriptionConfig's zero
// fields.
var DefaultSubscriptions = SubscriptionConfig{
	MaxPerConnection: 100,
	InitTimeout:      10 * time.Second,
	KeepAlive:        15 * time.Second,
}

func (c SubscriptionConfig) withDefaults() SubscriptionConfig {
	if c.MaxPerConnection <= 0 {
		c.MaxPerConnection = DefaultSubscriptions.MaxPerConnection
	}
	if c.InitTimeout <= 0 {
		c.InitTimeout = DefaultSubscriptions.InitTimeout
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = DefaultSubscriptions.KeepAlive
	}
	return c
}

// anyOrigin reports whether the configuration admits every origin.
func (c SubscriptionConfig) anyOrigin() bool {
	return len(c.AllowedOrigins) == 1 && c.AllowedOrigins[0] == "*"
}

// originAllowed applies AllowedOrigins to a WebSocket upgrade request.
func (c SubscriptionConfig) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || c.anyOrigin() {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, o := range c.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}

// acceptOptions are coder/websocket's, checking origins as originAllowed
// does (guardRequest has already refused the others, with a GraphQL
// error; this is the library's own check, kept as a second line).
func (c SubscriptionConfig) acceptOptions() coderws.AcceptOptions {
	if c.anyOrigin() {
		return coderws.AcceptOptions{InsecureSkipVerify: true}
	}
	var patterns []string
	for _, o := range c.AllowedOrigins {
		// An origin with a scheme is matched against the Origin's
		// scheme://host; path.Match's metacharacters are escaped.
		patterns = append(patterns, escapePattern(strings.TrimSuffix(o, "/")))
	}
	return coderws.AcceptOptions{OriginPatterns: patterns}
}

func escapePattern(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// wsConn is one WebSocket connection's state, in the context of its
// operations.
type wsConn struct {
	max int
	mu  sync.Mutex
	n   int // subscriptions open
}

type wsConnKey struct{}

func wsConnFor(ctx context.Context) *wsConn {
	c, _ := ctx.Value(wsConnKey{}).(*wsConn)
	return c
}

// acquire counts a subscription of the connection until ctx (the
// operation's) ends; false when the connection holds max already.
func (c *wsConn) acquire(ctx context.Context) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= c.max {
		return false
	}
	c.n++
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.n--
		c.mu.Unlock()
	})
	return true
}

// Close codes of graphql-transport-ws
// (https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md).
const (
	wsCloseBadRequest  = 4400
	wsCloseInitTimeout = 4408
	wsCloseGoingAway   = 1001
)

// websocketTransport is gqlgen's WebSocket transport for cfg. Connections
// live in conns' context (the LiveFeed's: its Shutdown closes them);
// readLimit bounds a message as the body limit bounds a request.
func websocketTransport(cfg SubscriptionConfig, conns context.Context, readLimit int64) transport.Websocket {
	return transport.Websocket{
		Implementation:        wsImplementation{transport.CoderWebsocketImplementation{AcceptOptions: cfg.acceptOptions()}},
		InitTimeout:           cfg.InitTimeout,
		KeepAlivePingInterval: cfg.KeepAlive,
		PingPongInterval:      cfg.KeepAlive,
		PayloadReadLimit:      &readLimit,
		InitFunc: func(ctx context.Context, _ transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			if conns.Err() != nil {
				return transport.WithWebsocketCloseCode(ctx, wsCloseGoingAway), nil, errors.New("the gateway is shutting down")
			}
			ctx, cancel := context.WithCancel(context.WithValue(ctx, wsConnKey{}, &wsConn{max: cfg.MaxPerConnection}))
			stop := context.AfterFunc(conns, cancel)
			context.AfterFunc(ctx, func() { stop() })
			return ctx, nil, nil
		},
	}
}

// wsImplementation accepts connections with coder/websocket and closes
// them with graphql-transport-ws's codes where gqlgen uses 1002 (protocol
// error): 4408 for the connection-init timeout, 4400 for the others.
type wsImplementation struct {
	transport.CoderWebsocketImplementation
}

func (i wsImplementation) Accept(w http.ResponseWriter, r *http.Request, options transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := i.CoderWebsocketImplementation.Accept(w, r, options)
	if err != nil {
		return nil, err
	}
	return wsCloseCodes{conn}, nil
}

type wsCloseCodes struct {
	transport.WebsocketConn
}

func (c wsCloseCodes) WriteClose(code int, message string) error {
	if code == transport.WebsocketCloseProtocolError && c.Subprotocol() == "graphql-transport-ws" {
		code = wsCloseBadRequest
		if message == "connection initialisation timeout" {
			code, message = wsCloseInitTimeout, "Connection initialisation timeout"
		}
	}
	return c.WebsocketConn.WriteClose(code, message)
}

// SetReadLimit and SetReadDeadline pass gqlgen's optional interfaces on.
func (c wsCloseCodes) SetReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

func (c wsCloseCodes) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// isWebSocketUpgrade reports a WebSocket opening handshake.
func isWebSocketUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// Stream media types a POST may accept (guardRequest admits them).
const (
	contentTypeEventStream = "text/event-stream"
	contentTypeMultipart   = "multipart/mixed"
)

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

// sseTransport is gqlgen's SSE transport for POST requests that accept
// text/event-stream.
type sseTransport struct{ transport.SSE }

func (sseTransport) Supports(r *http.Request) bool {
	return r.Method == http.MethodPost && acceptsType(r.Header.Get("Accept"), contentTypeEventStream)
}

// Do serves the stream with its connection's deadlines lifted: the
// server's ReadTimeout and WriteTimeout bound ordinary requests, and
// would end a stream that outlives them (a read deadline passing cancels
// the request; a write deadline fails its writes). WebSocket connections
// need nothing: hijacking clears the deadlines.
func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if !decodeStreamPOST(w, r, exec) {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	t.SSE.Do(w, r, exec)
}

// multipartTransport is gqlgen's multipart/mixed transport (incremental
// delivery of @defer) for POST requests that accept multipart/mixed.
type multipartTransport struct{ transport.MultipartMixed }

func (multipartTransport) Supports(r *http.Request) bool {
	return r.Method == http.MethodPost && acceptsType(r.Header.Get("Accept"), contentTypeMultipart)
}

func (t multipartTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if decodeStreamPOST(w, r, exec) {
		t.MultipartMixed.Do(w, r, exec)
	}
}

// decodeStreamPOST answers a stream request whose body is not a GraphQL
// request as any POST's (decodePOST: 400, BAD_USER_INPUT, no data), before
// gqlgen's stream transports, which would answer it with data null and
// without the operation context response interceptors read.
func decodeStreamPOST(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) bool {
	var params graphql.RawParams
	setContentType(w.Header(), negotiate(r.Header.Get("Accept"))) // the transport sets its own when it streams
	return decodePOST(w, r, exec, &params)
}

var (
	_ graphql.Transport = sseTransport{}
	_ graphql.Transport = multipartTransport{}
)

// isStream reports a request served as a stream (WebSocket, SSE), which
// the request deadline must not cut.
func isStream(r *http.Request) bool {
	return isWebSocketUpgrade(r) || (r.Method == http.MethodPost && acceptsType(r.Header.Get("Accept"), contentTypeEventStream))
}
