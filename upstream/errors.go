package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Every failed call returns one of three error types, wrapped with what was
// being done (use errors.As):
//   - *Error: the upstream answered with a non-2xx status;
//   - *UnavailableError: no complete answer arrived (connection refused or
//     reset, timeout, cancelled context, body cut short);
//   - *DecodeError: a 2xx answer whose body is not the expected JSON, or is
//     larger than Config.MaxBodyBytes.
// GetAsset also returns ErrNotFound when the answer holds no such asset,
// GetTransaction when the explorer has no such hash (and ErrHashNotUnique
// when it has two), and ListTransactions refuses contradictory parameters with a plain error
// before sending anything (a gateway bug, not an upstream failure).

// ErrNotFound reports that the upstream answered but has no such record.
var ErrNotFound = errors.New("not found")

// ErrHashNotUnique reports that the explorer holds more than one
// transaction with the hash looked up, and so returns none (its 400
// FailedPrecondition).
var ErrHashNotUnique = errors.New("the explorer holds more than one transaction with this hash")

// ErrResponseTooLarge is wrapped in a *DecodeError when a response body
// exceeds Config.MaxBodyBytes.
var ErrResponseTooLarge = errors.New("response body exceeds the configured limit")

// Error is a non-2xx answer from the upstream. Data-node error bodies are
// {"code":<gRPC code>,"message":…,"details":[{"@type":…,"code":…,"message":…,"inner":…}]},
// and the useful text is usually in the first detail.
type Error struct {
	Service  Service
	Endpoint Endpoint
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the gRPC status code from the body (3 InvalidArgument,
	// 5 NotFound, 7 PermissionDenied, 8 ResourceExhausted, …); 0 if none.
	Code int
	// Message is the body's message, e.g. "InvalidArgument error".
	Message string
	// DetailCode, DetailMessage and DetailInner come from the first detail,
	// e.g. 10000, "invalid party id", "".
	DetailCode    int
	DetailMessage string
	DetailInner   string
	// RetryAfter is how long the upstream asks the client to wait, from
	// Ratelimit-Retry-After (seconds) or Retry-After; 0 if not given.
	RetryAfter time.Duration
	// RateLimitReset is when the data node's rate-limit window resets,
	// from Ratelimit-Reset (seconds); 0 if not given.
	RateLimitReset time.Duration
	// Body is the start of a body that was not a JSON error (e.g. a
	// plain-text "404 page not found"); empty otherwise.
	Body string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: HTTP %d", e.Service, e.Endpoint, e.StatusCode)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.DetailMessage != "" {
		b.WriteString(": ")
		b.WriteString(e.DetailMessage)
	}
	if e.DetailCode != 0 {
		fmt.Fprintf(&b, " (code %d)", e.DetailCode)
	}
	if e.DetailInner != "" {
		b.WriteString(": ")
		b.WriteString(e.DetailInner)
	}
	if e.Body != "" {
		fmt.Fprintf(&b, ": %q", e.Body)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// StatusLine is the answer's HTTP status line, e.g. "502 Bad Gateway".
func (e *Error) StatusLine() string {
	if text := http.StatusText(e.StatusCode); text != "" {
		return strconv.Itoa(e.StatusCode) + " " + text
	}
	return strconv.Itoa(e.StatusCode)
}

// PublicDetail is what a client may be told of the answer beyond its
// status: from a JSON error body (docs/upstream-errors.md), the first detail's
// message, else the body's message, with network addresses redacted and
// clipped; "" when the body was not a JSON error (an HTML page from a
// proxy, a plain-text panic: never shown, Body keeps its start for the
// log) or said nothing.
func (e *Error) PublicDetail() string {
	msg := e.DetailMessage
	if msg == "" {
		msg = e.Message
	}
	return publicText(msg)
}

// Withheld reports whether the answer carried text that PublicDetail
// leaves out: a body that is not a JSON error, or network addresses.
func (e *Error) Withheld() bool {
	msg := e.DetailMessage
	if msg == "" {
		msg = e.Message
	}
	return e.Body != "" || publicText(msg) != strings.TrimSpace(msg)
}

// Network addresses an upstream's message may name (a proxy's, a backend
// it failed to dial), with what replaces them: URLs, the targets of Go's
// "dial tcp …" and "lookup … on …", IPv4 and bracketed or full IPv6
// addresses (with their ports), and DNS names (whose last label starts
// with a letter) with a port.
var addressPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`), redacted},
	{regexp.MustCompile(`\b(dial\s+(?:tcp|udp|ip)[46]?\s+)(?:\[[^\]\s]*\]|[^\s"',;:\[]+)(?::\d+)?`), "${1}" + redacted},
	{regexp.MustCompile(`\b(lookup\s+)[^\s"',;:]+(\s+on\s|:)`), "${1}" + redacted + "${2}"},
	{regexp.MustCompile(`\[[0-9a-fA-F:.%]*:[0-9a-fA-F:.%]*\](?::\d{1,5})?`), redacted},
	{regexp.MustCompile(`\b(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}\b`), redacted},
	{regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b`), redacted},
	{regexp.MustCompile(`\b(?:localhost|(?:[a-zA-Z0-9-]+\.)+[a-zA-Z][a-zA-Z0-9-]*):\d{1,5}\b`), redacted},
}

// redacted replaces a network address in a message shown to clients.
const redacted = "[address]"

// publicText is msg as a client may see it: trimmed, with network
// addresses redacted, clipped to maxSnippet bytes.
func publicText(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	for _, p := range addressPatterns {
		msg = p.re.ReplaceAllString(msg, p.with)
	}
	return snippet([]byte(msg))
}

// gRPC codes the client tells apart: the data node's ban, a lookup's
// unknown key, the explorer's duplicate hash.
const (
	grpcNotFound           = 5
	grpcPermissionDenied   = 7
	grpcFailedPrecondition = 9
)

// lookupNotFound reports whether e is a lookup's answer that the key does
// not exist: a 404 with a JSON body of code NotFound. A plain-text 404 (a
// wrong base URL: the explorer without its /rest prefix) and grpc-gateway's
// bare {"code":5,"message":"Not Found"} for an unknown route are not.
func (e *Error) lookupNotFound() bool {
	return e.StatusCode == http.StatusNotFound && e.Code == grpcNotFound && e.Body == "" && e.Message != "Not Found"
}

// banDuration is how long the data node bans a client that keeps calling
// while rate limited (docs/wire.md, Rate limit and ban).
const banDuration = 10 * time.Minute

// rateLimited reports whether e is the data node's rate limiting: 429, or
// 403 for a client banned for calling while limited.
func (e *Error) rateLimited() bool {
	if e.StatusCode == http.StatusTooManyRequests {
		return true
	}
	return e.StatusCode == http.StatusForbidden && (e.RetryAfter > 0 || e.Code == grpcPermissionDenied)
}

// UnavailableError reports that no complete answer arrived from the
// upstream: connection refused or reset, timeout, cancelled context.
type UnavailableError struct {
	Service  Service
	Endpoint Endpoint
	Err      error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%s %s: unavailable: %v", e.Service, e.Endpoint, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// DecodeError reports a 2xx answer whose body could not be used: malformed
// or truncated JSON, an unexpected shape, a malformed value in some field
// (the message names it), or a body over the size limit.
type DecodeError struct {
	Service  Service
	Endpoint Endpoint
	Err      error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s %s: cannot decode response: %v", e.Service, e.Endpoint, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// The data node's 5xx answers to bad input (docs/wire.md, Known defects,
// numbered as there), matched precisely: the same status and detail codes
// also accompany real storage failures.
const (
	// Defect 3: invalid paging on the assets list answers 500 with detail
	// 200001 "failed to get assets" and the validation error, a gRPC
	// InvalidArgument, as its inner text. A 200001 whose inner text says
	// anything else is a failure of the service.
	detailAssetsGetAll = 200001
	innerInvalidPaging = "code = InvalidArgument"
	// Defect 1: any cursor on funding payments answers 500 with this
	// detail message, whatever the cursor.
	fundingCursorDefect = "building cursor predicate: no field matching column name funding_period_seq"
)

// causedByRequest reports whether e answers what was asked rather than
// reporting a failure of the service: any 4xx, 501 Not Implemented (a route
// or method the service does not serve), and the 5xx answers the data node
// gives to bad input (docs/wire.md, Known defects and Errors). The service
// answered, so such an answer is neither retried (it would answer the same
// again) nor counted against the circuit breaker (one client's bad requests
// would otherwise open it for everyone). Rate limiting (429, the 403 ban)
// is included: it is the data node's answer to this gateway's pace, not a
// fault of the service (the budget handles it; retryable decides on 429).
func (e *Error) causedByRequest() bool {
	switch {
	case e.StatusCode >= 400 && e.StatusCode < 500, e.StatusCode == http.StatusNotImplemented:
		return true
	case e.StatusCode != http.StatusInternalServerError || e.Service != ServiceDataNode:
		return false
	case e.Endpoint == EndpointAssets:
		return e.DetailCode == detailAssetsGetAll && strings.Contains(e.DetailInner, innerInvalidPaging)
	case e.Endpoint == EndpointFundingPayments:
		return e.DetailMessage == fundingCursorDefect || (e.DetailMessage == "" && e.Message == fundingCursorDefect)
	}
	return false
}

// IsNotFound reports whether err means the record does not exist: ErrNotFound,
// or a 404 carrying the data node's error detail (such as 200002 "failed to
// get asset for ID"). A 404 without a detail is not one: grpc-gateway
// answers an unknown route with a bare {"code":5,"message":"Not Found"} and
// the explorer with a plain-text 404, both signs of a misconfigured base
// URL (such as an explorer URL without its /rest prefix).
func IsNotFound(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusNotFound && (e.DetailCode != 0 || e.DetailMessage != "")
}

// IsRateLimited reports whether err is the data node's rate limiting (429,
// or a 403 ban for calling while limited) and how long to wait before the
// next call. For a ban without a Retry-After header it returns the
// upstream's documented ban of 10 minutes; for a 429 without one, 0.
func IsRateLimited(err error) (retryAfter time.Duration, ok bool) {
	var e *Error
	if !errors.As(err, &e) || !e.rateLimited() {
		return 0, false
	}
	if e.RetryAfter == 0 && e.StatusCode == http.StatusForbidden {
		return banDuration, true
	}
	return e.RetryAfter, true
}

// IsUnavailable reports whether err means no complete answer arrived.
func IsUnavailable(err error) bool {
	var e *UnavailableError
	return errors.As(err, &e)
}

// maxErrorBody bounds how much of an error body is read, and maxSnippet
// how much of a non-JSON one is kept.
const (
	maxErrorBody = 64 << 10
	maxSnippet   = 256
)

// errorBody is the JSON error body of both services.
type errorBody struct {
	Code    Int64  `json:"code"`
	Message string `json:"message"`
	Details []struct {
		Code    Int64  `json:"code"`
		Message string `json:"message"`
		Inner   string `json:"inner"`
	} `json:"details"`
}

// newError classifies a non-2xx answer. It is the only place that reads
// the upstream's error format.
func newError(r route, resp *http.Response, body []byte) *Error {
	e := &Error{
		Service:    r.service,
		Endpoint:   r.endpoint,
		StatusCode: resp.StatusCode,
		RetryAfter: retryAfter(resp.Header),
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		e.RateLimitReset = seconds(resp.Header.Get("Ratelimit-Reset"))
	}
	trimmed := bytes.TrimSpace(body)
	var eb errorBody
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Unmarshal(trimmed, &eb) == nil &&
		(eb.Code != 0 || eb.Message != "" || len(eb.Details) > 0) {
		e.Code = int(eb.Code)
		e.Message = eb.Message
		for _, d := range eb.Details {
			if d.Code != 0 || d.Message != "" || d.Inner != "" {
				e.DetailCode = int(d.Code)
				e.DetailMessage = d.Message
				e.DetailInner = d.Inner
				break
			}
		}
		return e
	}
	e.Body = snippet(trimmed)
	if e.Body == "" {
		e.Body = http.StatusText(resp.StatusCode)
	}
	return e
}

// retryAfter reads the data node's Ratelimit-Retry-After (seconds), else the
// standard Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header) time.Duration {
	for _, name := range []string{"Ratelimit-Retry-After", "Retry-After"} {
		v := strings.TrimSpace(h.Get(name))
		if v == "" {
			continue
		}
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs > 0 {
			return time.Duration(secs) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			if d := time.Until(t); d > 0 {
				return d.Round(time.Second)
			}
		}
	}
	return 0
}

// seconds reads a header value of whole seconds; 0 if absent or malformed.
func seconds(v string) time.Duration {
	secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || secs <= 0 || secs > 24*3600 {
		return 0
	}
	return time.Duration(secs) * time.Second
}

// snippet returns the start of b as valid UTF-8.
func snippet(b []byte) string {
	suffix := ""
	if len(b) > maxSnippet {
		cut := maxSnippet
		for cut > maxSnippet-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b, suffix = b[:cut], "…"
	}
	return strings.ToValidUTF8(string(b), "\uFFFD") + suffix
}
