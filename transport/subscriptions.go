package transport

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	coderws "github.com/coder/websocket"

	"github.com/tradenet/gateway/internal/defaults"
)

// The configuration the streaming transports of /graphql share
// (docs/transports.md): WebSocket (graphql-transport-ws, ws.go),
// Server-Sent Events (graphql-sse, both modes, sse.go) and multipart/mixed
// (incremental delivery and Apollo's multipart subscriptions,
// streaming.go): limits, timeouts, the origins WebSocket upgrades are
// accepted from, and which requests are streams.

// SubscriptionConfig configures the subscription transports.
type SubscriptionConfig struct {
	// MaxPerConnection bounds the subscriptions a WebSocket connection
	// holds at once, and the operations under way on a reserved SSE stream
	// (graphql-sse's single connection mode); past it a subscription is
	// RATE_LIMITED (an SSE operation's POST answers 429). Default 100.
	MaxPerConnection int
	// MaxConnectionsPerClient bounds the streams one client (its client
	// key, upstream.ClientFrom: the address the rate budget's fair share
	// uses) holds open at once: WebSocket connections, SSE streams and
	// multipart/mixed responses together; past it a new one is refused
	// before it starts, 429 RATE_LIMITED (clientstreams.go). Default 100.
	MaxConnectionsPerClient int
	// InitTimeout is how long a WebSocket connection may wait before its
	// connection_init (then it is closed with 4408), and how long an SSE
	// reservation (PUT) waits for its stream before it expires with its
	// operations. Default 10s.
	InitTimeout time.Duration
	// KeepAlive is the interval of the server's keep-alive messages: a
	// graphql-transport-ws ping, an SSE comment, an empty multipart part.
	// Default 15s.
	KeepAlive time.Duration
	// WriteTimeout bounds the write of each message or event: a client
	// that does not take it within this long (it stopped reading) has its
	// stream or socket closed, its operations ended and their slots
	// freed. Default 10s.
	WriteTimeout time.Duration
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
	MaxPerConnection:        100,
	MaxConnectionsPerClient: 100,
	InitTimeout:             10 * time.Second,
	KeepAlive:               15 * time.Second,
	WriteTimeout:            10 * time.Second,
}

func (c SubscriptionConfig) withDefaults() SubscriptionConfig {
	c.MaxPerConnection = defaults.Positive(c.MaxPerConnection, DefaultSubscriptions.MaxPerConnection)
	c.MaxConnectionsPerClient = defaults.Positive(c.MaxConnectionsPerClient, DefaultSubscriptions.MaxConnectionsPerClient)
	c.InitTimeout = defaults.Positive(c.InitTimeout, DefaultSubscriptions.InitTimeout)
	c.KeepAlive = defaults.Positive(c.KeepAlive, DefaultSubscriptions.KeepAlive)
	c.WriteTimeout = defaults.Positive(c.WriteTimeout, DefaultSubscriptions.WriteTimeout)
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

// Headers and URL parameter of graphql-sse's single connection mode: the
// reservation's token, on the stream and on each operation.
const (
	eventStreamTokenHeader = "X-GraphQL-Event-Stream-Token"
	eventStreamTokenParam  = "token"
)

// isStream reports a request served as a stream (WebSocket, Server-Sent
// Events, multipart/mixed; an operation of a single connection mode's
// stream), which the request deadline must not cut: its queries get the
// deadline each (graph.Executor.Request).
func isStream(r *http.Request) bool {
	if isWebSocketUpgrade(r) {
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return false
	}
	return preferredStream(r.Header.Get("Accept")) != streamNone ||
		r.Header.Get(eventStreamTokenHeader) != "" ||
		// Parsed only when it may be there: every request passes here.
		(strings.Contains(r.URL.RawQuery, eventStreamTokenParam+"=") && r.URL.Query().Get(eventStreamTokenParam) != "")
}
