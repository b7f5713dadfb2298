package transport

import (
	"net/http"
	"testing"
)

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		accept string
		want   mediaType
	}{
		{"", mediaJSON},
		{"application/json", mediaJSON},
		{"Application/JSON; charset=utf-8", mediaJSON},
		{"application/graphql-response+json", mediaGraphQLResponse},
		{"application/graphql-response+json; charset=utf-8", mediaGraphQLResponse},
		{"application/graphql-response+json, application/json", mediaGraphQLResponse},
		{"application/json, application/graphql-response+json", mediaGraphQLResponse}, // equal weights: the specification's type
		{"application/graphql-response+json,application/json;q=0.9", mediaGraphQLResponse},
		{"application/graphql-response+json;q=0.5, application/json", mediaJSON},
		{"application/json;q=0.9, application/graphql-response+json;q=0.91", mediaGraphQLResponse},
		{"*/*", mediaJSON},
		{"application/*", mediaJSON},
		{"*/*;q=0.1, application/graphql-response+json", mediaGraphQLResponse},
		{"application/graphql-response+json;q=0.2, */*;q=0.8", mediaJSON},
		{"application/json, multipart/mixed", mediaJSON},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", mediaJSON},
		{"application/json;q=0, */*", mediaGraphQLResponse}, // json refused outright
		{"application/json;q=0", mediaNone},
		{"text/html", mediaNone},
		{"application/graphql", mediaNone},
		{"application/json;q=2", mediaNone}, // malformed weight: the range is ignored
		{"application/json;q=0.1234", mediaNone},
		{"application/json;q=x, application/graphql-response+json", mediaGraphQLResponse},
		{" , ,", mediaNone},
		{"application/json;q=1.000", mediaJSON},
		{"application/json;Q=0.001", mediaJSON},
	} {
		if got := negotiate(tc.accept); got != tc.want {
			t.Errorf("negotiate(%q) = %d, want %d", tc.accept, got, tc.want)
		}
	}
}

// commonAccepts are the Accept headers of most requests: none, curl's and
// fetch's, Apollo Client's, the playground's, and the legacy type.
var commonAccepts = []string{
	"",
	"*/*",
	"application/json",
	"application/graphql-response+json",
	"application/graphql-response+json,application/json;q=0.9",
	"application/graphql-response+json, application/json",
}

// TestNegotiateAllocatesNothing: choosing and setting the response type
// costs no allocation per request.
func TestNegotiateAllocatesNothing(t *testing.T) {
	h := http.Header{"Content-Type": nil, "Vary": {"Accept-Encoding", "Accept"}}
	for _, accept := range commonAccepts {
		if n := testing.AllocsPerRun(100, func() {
			setContentType(h, negotiate(accept))
		}); n != 0 {
			t.Errorf("Accept %q: %.0f allocations, want none", accept, n)
		}
	}
}

func TestSetContentTypeVary(t *testing.T) {
	h := http.Header{}
	h.Add("Vary", "Accept-Encoding") // the compression middleware's
	setContentType(h, mediaGraphQLResponse)
	setContentType(h, mediaGraphQLResponse)
	if got := h.Values("Vary"); len(got) != 2 || got[0] != "Accept-Encoding" || got[1] != "Accept" {
		t.Errorf("Vary %q, want [Accept-Encoding Accept]", got)
	}
	if got := h.Get("Content-Type"); got != "application/graphql-response+json" {
		t.Errorf("Content-Type %q", got)
	}
}

func BenchmarkNegotiate(b *testing.B) {
	h := http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		for _, accept := range commonAccepts {
			setContentType(h, negotiate(accept))
		}
	}
}
