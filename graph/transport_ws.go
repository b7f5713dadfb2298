package graph

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
)

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
