package main

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/tradenet/gateway/upstream"
)

// The client key: who a request is for, when the rate budget is shared
// between clients in turn (upstream.FairBudget). It is the address of the
// direct peer, or, when that peer is a trusted proxy (TRUSTED_PROXIES),
// the client address the proxy forwarded.

// trustedProxies is the parsed TRUSTED_PROXIES (parseTrustedProxies, in
// config.go): prefixes of the proxies whose forwarding headers are
// believed. Empty trusts none.
type trustedProxies []netip.Prefix

func (tp trustedProxies) contains(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range tp {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// withClientKey marks each request's context with its client key
// (upstream.WithClient), which the rate budget's fair share uses.
func withClientKey(next http.Handler, tp trustedProxies) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(upstream.WithClient(r.Context(), tp.clientKey(r))))
	})
}

// clientKey is r's client key: the peer's address, or, when the peer is a
// trusted proxy, the rightmost address of X-Forwarded-For (else of the
// Forwarded header's for= parameters) that is not itself a trusted proxy:
// everything left of it was written by the client and can be forged.
func (tp trustedProxies) clientKey(r *http.Request) string {
	peer, ok := parseHost(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if len(tp) == 0 || !tp.contains(peer) {
		return keyOf(peer)
	}
	hops := forwardedFor(r.Header)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHost(hops[i])
		if !ok {
			// Not an address ("unknown", an obfuscated name, garbage):
			// the last trusted hop is as far as can be known.
			break
		}
		client = a
		if !tp.contains(a) {
			break
		}
	}
	return keyOf(client)
}

// forwardedFor lists the client addresses proxies recorded, nearest the
// client first: X-Forwarded-For when present (all its lines, in order),
// else the for= parameters of Forwarded (RFC 7239). A proxy in front must
// write (or overwrite) the one the gateway reads.
func forwardedFor(h http.Header) []string {
	var hops []string
	if xff := h.Values("X-Forwarded-For"); len(xff) > 0 {
		for _, line := range xff {
			for _, hop := range strings.Split(line, ",") {
				hops = append(hops, strings.TrimSpace(hop))
			}
		}
		return hops
	}
	for _, line := range h.Values("Forwarded") {
		for _, element := range strings.Split(line, ",") {
			for _, pair := range strings.Split(element, ";") {
				name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(name, "for") {
					hops = append(hops, strings.Trim(value, `"`))
				}
			}
		}
	}
	return hops
}

// parseHost parses an address with or without a port, IPv6 with or
// without brackets ("192.0.2.1", "192.0.2.1:80", "2001:db8::1",
// "[2001:db8::1]:443").
func parseHost(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

// keyOf is the client key of an address: an IPv4 address by itself, an
// IPv6 address by its /64. One IPv4 address is usually all a client has
// (and many share one behind NAT), but an IPv6 host usually owns a whole
// /64 and can call from any of its 2^64 addresses: keyed by address, one
// client would be countless clients and take countless turns.
func keyOf(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}
