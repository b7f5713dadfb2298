package upstream

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientKey(t *testing.T) {
	// TRUSTED_PROXIES=10.0.0.0/8,127.0.0.1,fd00::/8
	trusted := TrustedProxies{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("fd00::/8")}
	for _, tc := range []struct {
		name    string
		trusted TrustedProxies
		peer    string
		header  http.Header
		want    string
	}{
		{"peer IPv4", nil, "203.0.113.7:5000", nil, "203.0.113.7"},
		{"peer IPv6 by its /64", nil, "[2001:db8:1:2:aaaa::1]:443", nil, "2001:db8:1:2::/64"},
		{"same /64, same key", nil, "[2001:db8:1:2:ffff::9]:443", nil, "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6 is IPv4", nil, "[::ffff:203.0.113.7]:80", nil, "203.0.113.7"},
		{"no trusted proxies: headers ignored", nil, "203.0.113.7:1", http.Header{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.7"},
		{"untrusted peer: headers ignored", trusted, "203.0.113.7:1", http.Header{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.7"},
		{"trusted peer: the forwarded client", trusted, "127.0.0.1:1", http.Header{"X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"rightmost untrusted hop, forged ones ignored", trusted, "10.1.1.1:1", http.Header{"X-Forwarded-For": {"1.2.3.4, 198.51.100.1, 10.2.2.2"}}, "198.51.100.1"},
		{"several header lines in order", trusted, "10.1.1.1:1", http.Header{"X-Forwarded-For": {"1.2.3.4", "198.51.100.1,10.2.2.2"}}, "198.51.100.1"},
		{"all hops trusted: the leftmost", trusted, "10.1.1.1:1", http.Header{"X-Forwarded-For": {"10.3.3.3, 10.2.2.2"}}, "10.3.3.3"},
		{"garbage: the last trusted hop", trusted, "10.1.1.1:1", http.Header{"X-Forwarded-For": {"198.51.100.1, nonsense, 10.2.2.2"}}, "10.2.2.2"},
		{"trusted peer, no header: the peer", trusted, "10.1.1.1:1", nil, "10.1.1.1"},
		{"Forwarded for=", trusted, "10.1.1.1:1", http.Header{"Forwarded": {`for=1.2.3.4, for=198.51.100.1;proto=https;by=10.1.1.1`}}, "198.51.100.1"},
		{"Forwarded IPv6 quoted with port", trusted, "10.1.1.1:1", http.Header{"Forwarded": {`For="[2001:db8:cafe::17]:4711"`}}, "2001:db8:cafe::/64"},
		{"Forwarded unknown: the proxy", trusted, "10.1.1.1:1", http.Header{"Forwarded": {`for=unknown`}}, "10.1.1.1"},
		{"X-Forwarded-For wins over Forwarded", trusted, "10.1.1.1:1", http.Header{"Forwarded": {`for=192.0.2.9`}, "X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"trusted IPv6 proxy", trusted, "[fd00::1]:1", http.Header{"X-Forwarded-For": {"2001:db8::5"}}, "2001:db8::/64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			h := WithClientKey(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				got = ClientFrom(r.Context())
			}), tc.trusted)
			r := httptest.NewRequest(http.MethodGet, "/graphql", nil)
			r.RemoteAddr = tc.peer
			for k, v := range tc.header {
				r.Header[k] = v
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tc.want {
				t.Fatalf("client key %q, want %q", got, tc.want)
			}
		})
	}
}
