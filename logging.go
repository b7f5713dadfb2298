package main

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/tradenet/gateway/telemetry"
)

func newLogger(cfg *config, w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush and Hijack pass through, for the streams that need them
// (Server-Sent Events and @defer flush each part; WebSocket upgrades
// hijack the connection): their transports assert the interfaces.
func (s *statusRecorder) Flush() {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err == nil && s.status == 0 {
		s.status = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}

// accessLog writes one line per request: method, path (never the query
// string, where GET requests carry their variables), status, size and
// duration, and for GraphQL requests the operation's name, the number of
// upstream requests it caused and its error codes. Variables and headers
// are never logged. Probes and scrapes are logged at debug level only.
func (gw *gateway) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, record := telemetry.WithRequest(r.Context())
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(ctx))
		level := slog.LevelInfo
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			level = slog.LevelDebug
		}
		if !gw.logger.Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Int("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start)),
		}
		if op, ok := record.GraphQL(); ok {
			attrs = append(attrs,
				slog.String("operation", op),
				slog.Int64("upstream_calls", record.UpstreamCalls()),
				slog.Any("errors", record.ErrorCodes()),
			)
			if id := record.TraceID(); id != "" {
				attrs = append(attrs, slog.String("trace_id", id))
			}
		}
		gw.logger.LogAttrs(ctx, level, "request", attrs...)
	})
}
