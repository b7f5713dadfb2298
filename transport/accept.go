package transport

import (
	"strings"
)

// Response media types (GraphQL over HTTP, "Accept"). They differ only in
// the status of a request error (an operation that did not execute:
// parse, validation, variable coercion, a limit): application/json, the
// legacy type, answers 200, as clients written before the specification
// expect; application/graphql-response+json answers 400, so that caches,
// proxies and logs see the failure. A well-formed response body is the same
// in both.
type mediaType uint8

const (
	// mediaNone: the client accepts neither type (406).
	mediaNone mediaType = iota
	// mediaJSON is application/json: no Accept, */*, application/*.
	mediaJSON
	// mediaGraphQLResponse is application/graphql-response+json.
	mediaGraphQLResponse
)

const (
	contentTypeJSON            = "application/json"
	contentTypeGraphQLResponse = "application/graphql-response+json"
)

// Header values shared by every response, so that setting them allocates
// nothing. Each has length and capacity 1: a middleware that Adds to the
// header appends into a new array, never into these.
var (
	headerJSON            = []string{contentTypeJSON}
	headerGraphQLResponse = []string{contentTypeGraphQLResponse}
	headerVaryAccept      = []string{"Accept"}
)

// setContentType sets the response's Content-Type to m's (application/json
// for mediaNone) and Vary: Accept, since the status and type depend on it.
func setContentType(h map[string][]string, m mediaType) {
	if m == mediaGraphQLResponse {
		h["Content-Type"] = headerGraphQLResponse
	} else {
		h["Content-Type"] = headerJSON
	}
	switch vary, ok := h["Vary"]; {
	case !ok:
		h["Vary"] = headerVaryAccept
	case !varies(vary, "Accept"):
		h["Vary"] = append(vary, "Accept") // after Accept-Encoding, Origin
	}
}

// varies reports whether the Vary field values (each a comma-separated
// list) name the header field name, in any letter case, or are "*".
func varies(values []string, name string) bool {
	for _, v := range values {
		for rest := v; rest != ""; {
			var f string
			f, rest, _ = strings.Cut(rest, ",")
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, name) {
				return true
			}
		}
	}
	return false
}

// negotiate chooses the response type for an Accept header (RFC 9110,
// 12.5.1) without allocating. The type the client weights highest wins;
// among equal weights the more specific range wins (a type named outright
// over application/* over */*); between the two types named outright with
// equal weights, application/graphql-response+json, the type the
// specification prefers; a wildcard alone, or no Accept, is
// application/json, what clients that predate the specification expect.
// A range with a malformed weight is ignored; mediaNone means nothing
// acceptable.
func negotiate(accept string) mediaType {
	switch accept { // what most clients send, without parsing
	case "", "*/*", contentTypeJSON:
		return mediaJSON
	case contentTypeGraphQLResponse:
		return mediaGraphQLResponse
	}
	var jsonMatch, gqlMatch match // the best range matching each type
	for rest := accept; rest != ""; {
		var r string
		if i := strings.IndexByte(rest, ','); i >= 0 {
			r, rest = rest[:i], rest[i+1:]
		} else {
			r, rest = rest, ""
		}
		typ, params := r, ""
		if i := strings.IndexByte(r, ';'); i >= 0 {
			typ, params = r[:i], r[i+1:]
		}
		typ = strings.TrimSpace(typ)
		q, ok := weight(params)
		if !ok || typ == "" {
			continue
		}
		switch {
		case typ == "*/*":
			jsonMatch.offer(q, 1)
			gqlMatch.offer(q, 1)
		case strings.EqualFold(typ, "application/*"):
			jsonMatch.offer(q, 2)
			gqlMatch.offer(q, 2)
		case strings.EqualFold(typ, contentTypeJSON):
			jsonMatch.offer(q, 3)
		case strings.EqualFold(typ, contentTypeGraphQLResponse):
			gqlMatch.offer(q, 3)
		}
	}
	switch {
	case jsonMatch.q == 0 && gqlMatch.q == 0:
		return mediaNone
	case gqlMatch.q > jsonMatch.q, gqlMatch.q == jsonMatch.q && gqlMatch.specificity == 3:
		return mediaGraphQLResponse
	default:
		return mediaJSON
	}
}

// match is the most specific range of an Accept header that matches a
// type: its weight in thousandths and its specificity (0: none matched;
// 1: */*; 2: application/*; 3: the type itself).
type match struct {
	q, specificity int
}

// offer records a matching range; the most specific one sets the weight
// (RFC 9110: "application/json;q=0, */*" refuses application/json).
func (m *match) offer(q, specificity int) {
	if specificity > m.specificity {
		m.q, m.specificity = q, specificity
	}
}

// weight reads the q parameter of a media range's parameters ("q=0.5;
// charset=utf-8"), in thousandths: 1000 when there is none; ok is false
// when it is malformed.
func weight(params string) (q int, ok bool) {
	for params != "" {
		var p string
		if i := strings.IndexByte(params, ';'); i >= 0 {
			p, params = params[:i], params[i+1:]
		} else {
			p, params = params, ""
		}
		p = strings.TrimSpace(p)
		if len(p) < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' {
			continue
		}
		return qvalue(p[2:])
	}
	return 1000, true
}

// qvalue parses RFC 9110's qvalue: "0" or "1", with up to three decimals
// (not above 1), in thousandths.
func qvalue(s string) (int, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	q := int(s[0]-'0') * 1000
	if len(s) > 1 {
		if s[1] != '.' {
			return 0, false
		}
		scale := 100
		for _, c := range []byte(s[2:]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			q += int(c-'0') * scale
			scale /= 10
		}
	}
	if q > 1000 {
		return 0, false
	}
	return q, true
}
