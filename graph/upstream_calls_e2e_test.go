package graph_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/sampleservice"
)

// dataNodeRequests is what the sample's data node received since its
// counters were reset.
func dataNodeRequests(s *sampleservice.Server) int64 {
	var n int64
	for _, e := range []sampleservice.Endpoint{sampleservice.EndpointAssets, sampleservice.EndpointFundingPayments, sampleservice.EndpointDelegations} {
		n += s.Service.Requests(e)
	}
	return n
}

// aliasedUnderSubmitter is a page of n transactions whose rows each list
// their submitter's delegations under several aliases.
func aliasedUnderSubmitter(n, aliases int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{ transactions(first: %d) { edges { node { hash submitter { ", n)
	for i := range aliases {
		fmt.Fprintf(&b, "d%d: delegations(first: 1) { edges { cursor } } ", i)
	}
	b.WriteString("} } } } }")
	return b.String()
}

// The finding: a page of transactions with aliased, nested connections
// under each row's submitter is within the cost limit but would hold the
// rate budget for minutes. It is refused before any upstream request,
// with both numbers; a query at the limit runs, within its count.
func TestLimitUpstreamCalls(t *testing.T) {
	sample := startSample(t, sampleservice.Config{Defects: sampleservice.DefaultDefects()})
	g := newGateway(t, sample, gatewayOptions{})

	// Per row: three delegations of ten rows, each row's party's
	// delegations (1 + 10 each), and two funding-payment lists: 35.
	finding := `{ transactions(first: 50) { edges { node { hash submitter {
		a: delegations(first: 10) { edges { node { party { delegations(first: 1) { edges { cursor } } } } } }
		b: delegations(first: 10) { edges { node { party { delegations(first: 1) { edges { cursor } } } } } }
		c: delegations(first: 10) { edges { node { party { delegations(first: 1) { edges { cursor } } } } } }
		f: fundingPayments(first: 10) { edges { cursor } }
		g: fundingPayments(first: 10, newestFirst: false) { edges { cursor } }
	} } } } }`
	sample.Service.ResetCounters()
	g.post(t, finding, nil).oneError(t, "QUERY_TOO_COMPLEX",
		"could make 1,750 data-node requests, over the limit of 450", "ask for smaller pages or fewer nested lists")
	noUpstreamCalls(t, sample)

	// At the default limit: 50 rows × 9 lists = 450 runs; 51 rows do not.
	sample.Service.ResetCounters()
	g.post(t, aliasedUnderSubmitter(51, 9), nil).oneError(t, "QUERY_TOO_COMPLEX", "459 data-node requests, over the limit of 450")
	noUpstreamCalls(t, sample)
	g.post(t, aliasedUnderSubmitter(50, 9), nil).mustNoErrors(t)
	if n := dataNodeRequests(sample); n == 0 || n > 450 {
		t.Fatalf("the query admitted at 450 made %d data-node requests", n)
	}

	// A configured limit, and the count is a bound of what runs: funding
	// payments after a cursor (up to three windows) under each of a
	// page of delegations, with asset lookups.
	small := newGateway(t, sample, gatewayOptions{Executor: graph.ExecutorConfig{Limits: graph.Limits{MaxUpstreamCalls: 22}}})
	party := sample.Service.Dataset().FundingPayments[0].PartyID
	var page struct {
		FundingPayments struct {
			PageInfo struct{ EndCursor string }
		}
	}
	small.query(t, fmt.Sprintf(`{ fundingPayments(partyId: %q, first: 2) { pageInfo { endCursor } } }`, party), nil).mustData(t, &page)
	q := `query($n: Int, $after: String) { a: asset(id: "x") { id } delegations(first: $n) { edges { node { party { fundingPayments(first: 2, after: $after) { edges { cursor } } } } } } }`
	vars := func(n int) map[string]any {
		return map[string]any{"n": n, "after": page.FundingPayments.PageInfo.EndCursor}
	}
	sample.Service.ResetCounters()
	small.post(t, q, vars(7)).oneError(t, "QUERY_TOO_COMPLEX", "could make 23 data-node requests, over the limit of 22 (maximum data-node requests)")
	noUpstreamCalls(t, sample)
	r := small.post(t, q, vars(6)) // 1 + 1 + 6×3 = 20
	for _, e := range r.gql.Errors {
		if e.code() == "QUERY_TOO_COMPLEX" {
			t.Fatalf("a query of 20 requests is refused: %s", e.Message)
		}
	}
	if n := dataNodeRequests(sample); n == 0 || n > 20 {
		t.Fatalf("a query counted at 20 made %d data-node requests", n)
	}
}
