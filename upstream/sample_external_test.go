package upstream_test

import (
	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// The sample service for package upstream's own tests (sample_test.go):
// this file may import sampleservice, which imports upstream.
func init() {
	upstream.StartSampleService = startSample
}

func startSample(defects bool) (*upstream.SampleServer, error) {
	cfg := sampleservice.Config{}
	if defects {
		cfg.Defects = sampleservice.DefaultDefects()
	}
	srv, err := sampleservice.Start(cfg, "")
	if err != nil {
		return nil, err
	}
	svc := srv.Service
	data := svc.Dataset()
	s := &upstream.SampleServer{
		URL:          srv.URL,
		Parties:      data.Parties,
		Transactions: data.Transactions.Len(),
		Close:        func() { srv.Close() },
		Requests: func(e upstream.Endpoint) int64 {
			return svc.Requests(sampleservice.Endpoint(e))
		},
		ResetCounters: svc.ResetCounters,
		SetFault: func(e upstream.Endpoint, f upstream.SampleFault) {
			svc.SetFault(sampleservice.Endpoint(e), sampleservice.Fault{
				ErrorRate: f.ErrorRate, MalformedRate: f.MalformedRate, TruncatedRate: f.TruncatedRate, FailNext: f.FailNext,
			})
		},
		AppendBlockOf: func(n int) ([]upstream.SampleTx, error) {
			var added []sampleservice.AppendedTx
			var err error
			if n == 0 {
				added, err = svc.AppendBlock()
			} else {
				added, err = svc.AppendBlockOf(n)
			}
			out := make([]upstream.SampleTx, len(added))
			for i, a := range added {
				out[i] = upstream.SampleTx{Hash: a.Hash, Type: a.Type, Submitter: a.Submitter, Cursor: a.Cursor}
			}
			return out, err
		},
	}
	for _, f := range data.FundingPayments {
		s.FundingParties = append(s.FundingParties, f.PartyID)
	}
	return s, nil
}
