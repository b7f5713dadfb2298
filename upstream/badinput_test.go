package upstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// badInputService starts the sample service with the real network's
// defects, and a client to it that retries (twice) and opens its breaker
// after two consecutive failures.
func badInputService(t *testing.T) (*SampleServer, *Client) {
	t.Helper()
	srv := startSampleT(t, true)
	cfg := Config{DataNodeURL: srv.URL, ExplorerURL: srv.URL + "/rest",
		Retry: RetryConfig{Retries: 2}, Breaker: BreakerConfig{Failures: 2}}
	fastRetries(&cfg)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.httpClient.CloseIdleConnections)
	return srv, c
}

// The data node's 500 answers to bad input (docs/wire.md, Known defects 1
// and 3) reach it once each, are not retried, and leave the breaker closed
// however many there are; the same client then serves a valid request.
func TestAnswersToBadInputNeitherRetryNorOpenTheBreaker(t *testing.T) {
	srv, c := badInputService(t)
	ctx := context.Background()
	svc := srv

	// A funding-payment cursor, from a first page (any cursor triggers
	// the defect; a malformed one would be a 400 instead).
	party := srv.FundingParties[0]
	first := int32(1)
	pg, err := c.ListFundingPayments(ctx, FundingPaymentsParams{PartyID: party, Pagination: Pagination{First: &first}})
	if err != nil || len(pg.Edges) == 0 {
		t.Fatalf("first page of funding payments: %v", err)
	}
	cursor := pg.Edges[0].Cursor
	svc.ResetCounters()

	for i := range 10 {
		_, err := c.ListAssets(ctx, AssetsParams{Pagination: Pagination{After: Cursor(fmt.Sprintf("garbage-%d", i))}})
		var e *Error
		if !errors.As(err, &e) || e.StatusCode != 500 || e.DetailCode != 200001 || !causedByRequest(err) {
			t.Fatalf("assets with a garbage cursor: %v, want the data node's 500 200001 answer to bad input", err)
		}
		if got := svc.Requests(EndpointAssets); got != int64(i+1) {
			t.Fatalf("after %d invalid asset pages the data node got %d requests: retried", i+1, got)
		}
	}
	for i := range 10 {
		_, err := c.ListFundingPayments(ctx, FundingPaymentsParams{PartyID: party, Pagination: Pagination{First: &first, After: cursor}})
		var e *Error
		if !errors.As(err, &e) || e.StatusCode != 500 || !causedByRequest(err) {
			t.Fatalf("funding payments after a cursor: %v, want the data node's 500 cursor defect", err)
		}
		if got := svc.Requests(EndpointFundingPayments); got != int64(i+1) {
			t.Fatalf("after %d funding pages with a cursor the data node got %d requests: retried", i+1, got)
		}
	}
	if got := c.BreakerState(ServiceDataNode); got != BreakerClosed {
		t.Fatalf("breaker %s after 20 answers to bad input, want closed", got)
	}
	if _, err := c.ListAssets(ctx, AssetsParams{}); err != nil {
		t.Fatalf("a valid request after them: %v", err)
	}
}

// A genuine 500 (an injected fault, detail 10000 "injected fault: …") on
// the same endpoints is still retried and still opens the breaker.
func TestGenuineServerErrorsStillRetryAndOpenTheBreaker(t *testing.T) {
	for _, ep := range []Endpoint{EndpointAssets, EndpointFundingPayments} {
		t.Run(string(ep), func(t *testing.T) {
			srv, c := badInputService(t)
			ctx := context.Background()
			party := srv.FundingParties[0]
			srv.SetFault(ep, SampleFault{ErrorRate: 1})
			call := func() error {
				if ep == EndpointAssets {
					_, err := c.ListAssets(ctx, AssetsParams{})
					return err
				}
				_, err := c.ListFundingPayments(ctx, FundingPaymentsParams{PartyID: party})
				return err
			}
			// One call: a 500, a retry and its 500, which opens the
			// breaker, so the second retry is refused without a request.
			if err := call(); !errors.Is(err, ErrCircuitOpen) {
				t.Fatalf("first call: %v, want its retries to open the breaker", err)
			}
			if got := srv.Requests(ep); got != 2 {
				t.Fatalf("%d requests, want 2 (retried, then the breaker opened after 2 failures)", got)
			}
			if got := c.BreakerState(ServiceDataNode); got != BreakerOpen {
				t.Fatalf("breaker %s after genuine 500s, want open", got)
			}
			if err := call(); !errors.Is(err, ErrCircuitOpen) {
				t.Fatalf("next call: %v, want the open breaker", err)
			}
		})
	}
}

// causedByRequest reports whether err wraps an *Error that answers what
// was asked (Error.causedByRequest).
func causedByRequest(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.causedByRequest()
}

// The classification of 5xx answers is precise: the same status and
// detail code with another inner text, or another endpoint, is a fault of
// the service.
func TestCausedByRequestMatchesOnlyTheDocumentedAnswers(t *testing.T) {
	assets := func(detail int, inner string) *Error {
		return &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 500, Code: 13,
			DetailCode: detail, DetailMessage: "failed to get assets", DetailInner: inner}
	}
	funding := func(endpoint Endpoint, msg string) *Error {
		return &Error{Service: ServiceDataNode, Endpoint: endpoint, StatusCode: 500, Code: 13, DetailCode: 10000, DetailMessage: msg}
	}
	for _, tc := range []struct {
		name string
		err  *Error
		want bool
	}{
		{"400", &Error{Service: ServiceDataNode, Endpoint: EndpointDelegations, StatusCode: 400, DetailCode: 10028}, true},
		{"404", &Error{Service: ServiceExplorer, Endpoint: EndpointTransactions, StatusCode: 404}, true},
		{"501", &Error{Service: ServiceDataNode, Endpoint: EndpointAssets, StatusCode: 501}, true},
		{"assets invalid paging", assets(200001, "rpc error: code = InvalidArgument desc = InvalidArgument error"), true},
		{"assets storage failure", assets(200001, "rpc error: code = Internal desc = connection refused"), false},
		{"assets other detail", assets(10000, "rpc error: code = InvalidArgument desc = x"), false},
		{"assets 503", func() *Error { e := assets(200001, "code = InvalidArgument"); e.StatusCode = 503; return e }(), false},
		{"funding cursor", funding(EndpointFundingPayments, fundingCursorDefect), true},
		{"funding other 500", funding(EndpointFundingPayments, "failed to get funding payments"), false},
		{"cursor message elsewhere", funding(EndpointDelegations, fundingCursorDefect), false},
		{"explorer 500", &Error{Service: ServiceExplorer, Endpoint: EndpointTransactions, StatusCode: 500, DetailCode: 200001, DetailInner: "code = InvalidArgument"}, false},
	} {
		if got := causedByRequest(fmt.Errorf("wrapped: %w", tc.err)); got != tc.want {
			t.Errorf("%s: causedByRequest = %v, want %v", tc.name, got, tc.want)
		}
		if got := isServiceFault(tc.err); got != (tc.err.StatusCode >= 500 && !tc.want) {
			t.Errorf("%s: isServiceFault = %v", tc.name, got)
		}
	}
}
