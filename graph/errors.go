package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/internal/clip"
	"github.com/tradenet/gateway/live"
	"github.com/tradenet/gateway/upstream"
)

// Error codes, in extensions.code of every error (docs/contracts.md).
const (
	CodeBadUserInput        = "BAD_USER_INPUT"
	CodeNotFound            = "NOT_FOUND"
	CodeUpstreamError       = "UPSTREAM_ERROR"
	CodeUpstreamUnavailable = "UPSTREAM_UNAVAILABLE"
	CodeRateLimited         = "RATE_LIMITED"
	CodeQueryTooComplex     = "QUERY_TOO_COMPLEX"
	CodeInternal            = "INTERNAL"
	// CodePersistedQueryNotFound answers a request that sent only the
	// hash of a query this gateway does not know (automatic persisted
	// queries): the client sends the hash with the full query next.
	CodePersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
)

// Error is an error the gateway reports to clients as it is: its message is
// meant for them and Code classifies it.
type Error struct {
	Code    string
	Message string
	// Err is the cause, when there is one; it is logged, never shown.
	Err error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// badInput is a BAD_USER_INPUT error whose message says what to change.
func badInput(format string, args ...any) error {
	return &Error{Code: CodeBadUserInput, Message: fmt.Sprintf(format, args...)}
}

// notFound is a NOT_FOUND error.
func notFound(format string, args ...any) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// ErrorPresenter classifies every error once, on its way to the client:
// it gives each one extensions.code, adds extensions.upstream for upstream
// failures, and replaces anything unexpected by "internal error" after
// logging its cause.
func ErrorPresenter(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return errorPresenter(logger, defaultNumericArgs)
}

// errorPresenter is ErrorPresenter with the ranges of the numeric
// arguments (arguments.go).
func errorPresenter(logger *slog.Logger, args numericArgs) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		if msg, ok := argumentMessage(ctx, args, err, gqlErr); ok {
			gqlErr.Message = msg
			gqlErr.Extensions["code"] = CodeBadUserInput
			return gqlErr
		}
		var upErr *upstream.Error
		if logger != nil && errors.As(err, &upErr) && (upErr.Withheld() || upErr.StatusCode >= 500) {
			// The client sees the status and the JSON error's fields
			// (redacted); the answer as received (its body clipped) is
			// for the operator.
			logger.WarnContext(ctx, "upstream error", "error", upErr.Error(), "path", gqlErr.Path.String())
		}
		code, message, ext := classify(err)
		switch {
		case code != "":
			gqlErr.Message = message
			gqlErr.Extensions["code"] = code
			for k, v := range ext {
				gqlErr.Extensions[k] = v
			}
		case gqlErr.Extensions["code"] == CodePersistedQueryNotFound:
			// The APQ protocol's own code: clients resend the full query.
		case gqlErr.Extensions["code"] != nil:
			// Parse and validation errors from gqlgen: the request is wrong.
			gqlErr.Extensions["code"] = CodeBadUserInput
		default:
			if logger != nil {
				logger.ErrorContext(ctx, "internal error", "error", err.Error(), "path", gqlErr.Path.String())
			}
			gqlErr.Message = "internal error"
			gqlErr.Extensions["code"] = CodeInternal
		}
		return gqlErr
	}
}

// classify maps a resolver error to its code, its client message and any
// extra extensions; code is "" for errors it does not know.
func classify(err error) (code, message string, ext map[string]any) {
	var (
		gwErr       *Error
		upErr       *upstream.Error
		unavailable *upstream.UnavailableError
		decodeErr   *upstream.DecodeError
		enumErr     *upstream.UnknownEnumError
		floatErr    *upstream.NonFiniteFloatError
		budgetErr   *upstream.BudgetError
	)
	switch {
	case errors.As(err, &gwErr):
		if gwErr.Code == CodeInternal {
			return "", "", nil
		}
		return gwErr.Code, gwErr.Message, nil
	case errors.As(err, &budgetErr):
		// The gateway holds back its own calls: the upstream is not asked.
		retry := int64(math.Ceil(budgetErr.RetryAfter.Seconds()))
		return CodeRateLimited, budgetErr.Error(), map[string]any{"retryAfter": max(retry, 1)}
	case errors.As(err, &enumErr):
		return CodeUpstreamError, enumErr.Error(), nil
	case errors.As(err, &floatErr):
		return CodeUpstreamError, floatErr.Error(), nil
	case errors.As(err, &upErr):
		return classifyUpstream(upErr)
	case errors.As(err, &unavailable):
		return CodeUpstreamUnavailable, fmt.Sprintf("the %s is unavailable: %s", unavailable.Service, unavailableReason(unavailable)), nil
	case errors.As(err, &decodeErr):
		return CodeUpstreamError, fmt.Sprintf("the %s sent a response the gateway could not read (%s)", decodeErr.Service, decodeErr.Endpoint), nil
	case errors.Is(err, context.DeadlineExceeded):
		return CodeUpstreamUnavailable, "the request took longer than its deadline", nil
	case errors.Is(err, context.Canceled):
		return CodeUpstreamUnavailable, "the request was cancelled", nil
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "introspection disabled" { // gqlgen's, when the extension is off
			return CodeBadUserInput, "introspection is disabled on this gateway (INTROSPECTION=false); see /schema.graphql for the schema", nil
		}
	}
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) && gqlErr.Err == nil {
		if msg, ok := parserLimitMessage(gqlErr.Message); ok {
			return CodeQueryTooComplex, msg, nil
		}
		if msg, ok := requestErrorMessage(gqlErr.Message); ok {
			return CodeBadUserInput, msg, nil
		}
	}
	return "", "", nil
}

// argumentMessage is the message of a refused argument value: a scalar's
// refusal of a variable's value, or gqlparser's of a numeric variable's.
func argumentMessage(ctx context.Context, args numericArgs, err error, gqlErr *gqlerror.Error) (string, bool) {
	var inputErr *upstream.InputError
	if errors.As(err, &inputErr) {
		return args.inputMessage(inputErr, gqlErr.Path), true
	}
	if !graphql.HasOperationContext(ctx) {
		return "", false
	}
	opCtx := graphql.GetOperationContext(ctx)
	return args.variableMessage(opCtx.Doc, opCtx.Operation, gqlErr)
}

// classifyUpstream: a client learns the status of an upstream's error
// answer and, from a JSON error body, its code and message (or its first
// detail's), with network addresses redacted; never the text of another
// body (an HTML page of a proxy, a plain-text panic): the message then
// says the status line only (upstream.Error.PublicDetail).
func classifyUpstream(e *upstream.Error) (code, message string, ext map[string]any) {
	detail := e.PublicDetail()
	answered := e.StatusLine() // no JSON error: the status line alone
	if detail != "" {
		answered = fmt.Sprintf("%d: %s", e.StatusCode, detail)
	}
	up := map[string]any{
		"service": e.Service,
		"status":  e.StatusCode,
		"code":    e.Code,
		"message": cmp.Or(detail, e.StatusLine()),
	}
	if e.DetailCode != 0 {
		up["detailCode"] = e.DetailCode
	}
	ext = map[string]any{"upstream": up}
	switch e.StatusCode {
	case 429:
		ext["retryAfter"] = int64(max(math.Ceil(max(e.RateLimitReset, e.RetryAfter).Seconds()), 1))
		return CodeRateLimited, "the data node's rate limit is reached; retry shortly", ext
	case 403:
		if wait, banned := upstream.IsRateLimited(e); banned {
			ext["retryAfter"] = int64(math.Ceil(wait.Seconds()))
			return CodeRateLimited, fmt.Sprintf("the data node refuses requests for %s (rate-limit ban)", wait), ext
		}
	case 404:
		// A 404 with the data node's error detail is a missing resource; a
		// bare one is an unknown route: a misconfigured base URL.
		if upstream.IsNotFound(e) {
			return CodeNotFound, fmt.Sprintf("the %s has no such resource: %s", e.Service, detail), ext
		}
		if detail == "" {
			return CodeUpstreamError, fmt.Sprintf("the %s answered %s for its own route (check the configured base URL)", e.Service, answered), ext
		}
		return CodeUpstreamError, fmt.Sprintf("the %s answered 404 for its own route (check the configured base URL): %s", e.Service, detail), ext
	}
	return CodeUpstreamError, fmt.Sprintf("the %s answered %s", e.Service, answered), ext
}

func unavailableReason(e *upstream.UnavailableError) string {
	if errors.Is(e, live.ErrNoHead) {
		return fmt.Sprintf("the live feed could not read the newest transaction from it within %s, so the subscription cannot start; subscribe again later", live.HeadTimeout)
	}
	if errors.Is(e, upstream.ErrCircuitOpen) {
		return "it failed repeatedly, so the gateway stops calling it for a few seconds (circuit breaker open)"
	}
	if errors.Is(e, context.DeadlineExceeded) {
		return "no answer before the deadline"
	}
	return "the connection failed"
}

// requestErrorMessage rewrites the messages of the transports' errors
// about a body that does not read or decode (worded as gqlgen's own
// transports word them), which carry no code, into BAD_USER_INPUT
// messages; ok is false for any other error. The decode error quotes the
// whole body: the rewrite drops it.
func requestErrorMessage(msg string) (string, bool) {
	switch {
	case strings.HasPrefix(msg, "json request body could not be decoded: "):
		cause := strings.TrimPrefix(msg, "json request body could not be decoded: ")
		if i := strings.Index(cause, " body:"); i >= 0 {
			cause = cause[:i]
		}
		return "the request body is not a GraphQL request in JSON (" + clip.Cut(cause, 200) + "); send {\"query\": …, \"variables\": {…}}", true
	case strings.HasPrefix(msg, "could not read request body"):
		return "could not read the request body", true
	}
	return "", false
}

// parserLimitMessage recognises the parser's own limits (tokens, nesting)
// and says which limit was hit.
func parserLimitMessage(msg string) (string, bool) {
	var n int
	if _, err := fmt.Sscanf(msg, "exceeded token limit of %d", &n); err == nil {
		return fmt.Sprintf("the query has more than %d tokens, the limit (maximum tokens); send a shorter query", n), true
	}
	if _, err := fmt.Sscanf(msg, "exceeded maximum nesting depth of %d", &n); err == nil {
		return fmt.Sprintf("the query nests more than %d levels, the parser's limit; select less deeply nested fields", n), true
	}
	return "", false
}
