package sampleservice

import (
	"encoding/json"
	"net/http"
)

// gRPC status codes, as they appear in the "code" of an error body. The
// real services are gRPC servers behind grpc-gateway, so every HTTP error
// carries one of these.
const (
	grpcInvalidArgument   = 3
	grpcNotFound          = 5
	grpcPermissionDenied  = 7
	grpcResourceExhausted = 8
	// grpcFailedPrecondition: the explorer's answer to a hash it holds
	// twice.
	grpcFailedPrecondition = 9
	grpcUnimplemented      = 12
	grpcInternal           = 13
)

// grpcNames are the status names the services put in the top-level
// message ("InvalidArgument error").
var grpcNames = map[int]string{
	grpcInvalidArgument:    "InvalidArgument",
	grpcNotFound:           "NotFound",
	grpcPermissionDenied:   "PermissionDenied",
	grpcResourceExhausted:  "ResourceExhausted",
	grpcFailedPrecondition: "FailedPrecondition",
	grpcUnimplemented:      "Unimplemented",
	grpcInternal:           "Internal",
}

// Vega error-detail codes used by the endpoints served here
// (docs/wire.md, Errors; docs/upstream-errors.md). Messages missing from the real service's
// error table, such as "invalid party id", fall back to 10000.
const (
	detailNotMapped         = 10000
	detailInvalidPagination = 10028
	detailEpochIDParse      = 10036
	detailAssetsGetAll      = 200001
	detailAssetGetByID      = 200002
)

const errorDetailType = "type.googleapis.com/vega.ErrorDetail"

// errorDetail is vega.ErrorDetail packed in a google.protobuf.Any.
type errorDetail struct {
	Type    string `json:"@type"`
	Code    int32  `json:"code"`
	Message string `json:"message"`
	Inner   string `json:"inner"`
}

// errorBody is grpc-gateway's rendering of a gRPC status. Details is
// always present, an empty array when there are none.
type errorBody struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Details []errorDetail `json:"details"`
}

// banBody is the one error without a details key: the data node's rate
// limiter writes it itself, outside grpc-gateway (docs/wire.md, Rate limit and ban).
type banBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// apiError is an error response before encoding.
type apiError struct {
	status int
	body   any
}

// vegaError is the usual service error: "<Code> error" as the message and
// one vega.ErrorDetail saying what went wrong.
func vegaError(status, code int, detailCode int32, message, inner string) *apiError {
	return &apiError{status: status, body: errorBody{
		Code:    code,
		Message: grpcNames[code] + " error",
		Details: []errorDetail{{Type: errorDetailType, Code: detailCode, Message: message, Inner: inner}},
	}}
}

// plainError is an error with no details, as grpc-gateway itself produces
// for routing and parameter-parsing failures.
func plainError(status, code int, message string) *apiError {
	return &apiError{status: status, body: errorBody{Code: code, Message: message, Details: []errorDetail{}}}
}

// Errors shared by both services.
var (
	errNotFoundRoute    = plainError(http.StatusNotFound, grpcNotFound, "Not Found")
	errMethodNotAllowed = plainError(http.StatusNotImplemented, grpcUnimplemented, "Method Not Allowed")
)

// typeMismatch is grpc-gateway's answer to a query parameter that does not
// parse as its field's type.
func typeMismatch(param string, err error) *apiError {
	return plainError(http.StatusBadRequest, grpcInvalidArgument,
		"type mismatch, parameter: "+param+", error: "+err.Error())
}

// injectedError is the 500 a Fault produces: an Internal status as a
// failing data store would cause.
func injectedError() *apiError {
	return vegaError(http.StatusInternalServerError, grpcInternal, detailNotMapped,
		"injected fault: simulated internal error", "")
}

// encode renders the error body, compact for the data node and indented
// for the explorer.
func (e *apiError) encode(pretty bool) []byte {
	var b []byte
	if pretty {
		b, _ = json.MarshalIndent(e.body, "", "  ")
	} else {
		b, _ = json.Marshal(e.body)
	}
	return b
}
