package upstream

import (
	"errors"
	"testing"
)

// The sample data service (package sampleservice), as this package's own
// tests use it: a real upstream on loopback. sampleservice builds its
// transactions from this package's types, so these tests (package
// upstream) cannot import it; sample_external_test.go, in package
// upstream_test, which may, sets StartSampleService when the test binary
// starts. (The names are exported for that file; they exist only in the
// test binary.)

// SampleServer is a running sample service.
type SampleServer struct {
	URL string
	// Parties are the dataset's parties; FundingParties the party of each
	// funding payment, in the dataset's order; Transactions the number of
	// transactions it starts with.
	Parties        []string
	FundingParties []string
	Transactions   int

	Close         func()
	Requests      func(Endpoint) int64
	ResetCounters func()
	SetFault      func(Endpoint, SampleFault)
	// AppendBlockOf appends a block of n transactions (0: 1 to 4).
	AppendBlockOf func(n int) ([]SampleTx, error)
}

// SampleFault is sampleservice.Fault: the shares of requests failed with
// a 500, answered with a body that is not JSON or cut in half, and a
// number of requests to fail before recovering.
type SampleFault struct {
	ErrorRate, MalformedRate, TruncatedRate float64
	FailNext                                int
}

// SampleTx is a transaction the service appended (sampleservice.AppendedTx).
type SampleTx struct {
	Hash, Type, Submitter string
	// Cursor is "<block>.<index>".
	Cursor string
}

// StartSampleService starts the service with the whole generated dataset
// and no block producer, with the real network's defects when defects is
// true.
var StartSampleService func(defects bool) (*SampleServer, error)

// startSampleService starts the service (StartSampleService).
func startSampleService(defects bool) (*SampleServer, error) {
	if StartSampleService == nil {
		return nil, errors.New("no sample service: sample_external_test.go sets StartSampleService")
	}
	return StartSampleService(defects)
}

// startSampleT starts the service for a test and closes it when the test
// ends.
func startSampleT(tb testing.TB, defects bool) *SampleServer {
	tb.Helper()
	srv, err := startSampleService(defects)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	return srv
}

// AppendBlock appends a block of 1 to 4 transactions.
func (s *SampleServer) AppendBlock() ([]SampleTx, error) { return s.AppendBlockOf(0) }
