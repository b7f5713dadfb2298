package upstream

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Who a request counts for: its client key, the address of the direct
// peer, or, when that peer is a trusted proxy (the gateway's
// TRUSTED_PROXIES), the client address the proxy forwarded. The gateway's
// HTTP middleware (WithClientKey) puts it in each request's context
// (WithClient); FairBudget shares the rate budget between keys in turn,
// the live feed bounds each key's subscriptions, and the transports each
// key's open streams (package transport, clientstreams.go).

// TrustedProxies are the prefixes of the proxies whose forwarding headers
// are believed (the gateway parses TRUSTED_PROXIES into them). Empty
// trusts none.
type TrustedProxies []netip.Prefix

func (tp TrustedProxies) contains(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range tp {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// WithClientKey marks each request's context with its client key
// (WithClient), which the rate budget's fair share uses.
func WithClientKey(next http.Handler, tp TrustedProxies) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(WithClient(r.Context(), tp.clientKey(r))))
	})
}

// clientKey is r's client key: the peer's address, or, when the peer is a
// trusted proxy, the rightmost address of X-Forwarded-For (else of the
// Forwarded header's for= parameters) that is not itself a trusted proxy:
// everything left of it was written by the client and can be forged.
func (tp TrustedProxies) clientKey(r *http.Request) string {
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

type clientKeyCtx struct{}

// WithClient returns ctx marked as acting for the client key (an address,
// or a network prefix: WithClientKey decides). FairBudget
// shares the rate budget between keys in turn.
//
// Upstream calls are coalesced (coalesce.go): a call shared by several
// requests runs with its first caller's context, and so waits in its first
// caller's queue. That is acceptable: the others ride along for free, and
// the call is made once whoever made it.
func WithClient(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, clientKeyCtx{}, key)
}

// ClientFrom returns the client key WithClient put in ctx, or "" when
// none was set (background work: pollers, readiness checks), which is a
// client key of its own.
func ClientFrom(ctx context.Context) string {
	key, _ := ctx.Value(clientKeyCtx{}).(string)
	return key
}
