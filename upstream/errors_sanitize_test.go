package upstream

import (
	"net/http"
	"strings"
	"testing"
)

// What a client may see of an upstream's error answer: the status line,
// and from a JSON error body (docs/upstream-errors.md) its message or its
// first detail's, with network addresses redacted; never the text of
// another body. The whole answer stays in Error() for the log.
func TestErrorPublicDetail(t *testing.T) {
	long := strings.Repeat("x", 1000)
	cases := []struct {
		name        string
		status      int
		body        string
		wantDetail  string // PublicDetail
		wantWithhed bool
		// leak must not be in PublicDetail, and must be in Error() (the log).
		leak string
	}{
		{"html 502 from a proxy", 502, "<html><body><h1>502</h1>internal proxy 10.1.2.3:8080</body></html>", "", true, "10.1.2.3:8080"},
		{"html 503", 503, "<!DOCTYPE html><html>upstream connect error or disconnect/reset before headers. reset reason: connection failure, transport failure reason: delayed connect error: 111 (backend datanode-7.svc.cluster.local:3008)</html>", "", true, "datanode-7.svc.cluster.local"},
		{"plain-text 500", 500, "panic: runtime error: invalid memory address\n\ngoroutine 1 [running]:\nmain.handler()\n\t/srv/app/main.go:42", "", true, "/srv/app/main.go"},
		{"plain-text 404", 404, "404 page not found\n", "", true, "404 page not found"},
		{"plain-text 400", 400, "bad request from 192.168.0.17", "", true, "192.168.0.17"},
		{"html 400", 400, "<html>400 Bad Request<hr>nginx/1.25.3</html>", "", true, "nginx/1.25.3"},
		{"empty 502", 502, "", "", true, ""},
		{"json detail", 400, `{"code":3,"message":"InvalidArgument error","details":[{"@type":"type.googleapis.com/vega.ErrorDetail","code":10000,"message":"invalid party id","inner":"party 10.1.2.3"}]}`, "invalid party id", false, "party 10.1.2.3"},
		{"json message", 400, `{"code":3,"message":"type mismatch, parameter: pagination.first, error: strconv.ParseInt: parsing \"x\": invalid syntax","details":[]}`,
			`type mismatch, parameter: pagination.first, error: strconv.ParseInt: parsing "x": invalid syntax`, false, ""},
		{"json rate limit", 429, `{"code":8,"message":"api request rate limit exceeded","details":[]}`, "api request rate limit exceeded", false, ""},
		{"json, dial to an IPv4 backend", 503, `{"code":14,"message":"connection error: desc = \"transport: Error while dialing: dial tcp 10.1.2.3:3007: connect: connection refused\"","details":[]}`,
			`connection error: desc = "transport: Error while dialing: dial tcp [address]: connect: connection refused"`, true, "10.1.2.3:3007"},
		{"json, dial to a host name", 503, `{"code":14,"message":"dial tcp datanode:3007: connect: connection refused","details":[]}`,
			"dial tcp [address]: connect: connection refused", true, "datanode:3007"},
		{"json, DNS lookup", 503, `{"code":14,"message":"dial tcp: lookup datanode-internal on 127.0.0.11:53: no such host","details":[]}`,
			"dial tcp: lookup [address] on [address]: no such host", true, "datanode-internal"},
		{"json, URL", 502, `{"code":13,"message":"Get \"http://explorer.internal:3009/rest/transactions?limit=1\": EOF"}`,
			`Get "[address]": EOF`, true, "explorer.internal"},
		{"json, IPv6", 503, `{"code":14,"message":"dial tcp [fd00:10::7]:3007: i/o timeout"}`, "dial tcp [address]: i/o timeout", true, "fd00:10::7"},
		{"json, full IPv6", 503, `{"code":14,"message":"no route to 2001:0db8:85a3:0000:0000:8a2e:0370:7334"}`, "no route to [address]", true, "2001:0db8"},
		{"json, host and port", 500, `{"code":13,"message":"redis db-1.prod.example.com:6379 unreachable"}`, "redis [address] unreachable", true, "db-1.prod.example.com"},
		{"json, localhost", 500, `{"code":13,"message":"postgres at localhost:5432 refused"}`, "postgres at [address] refused", true, "localhost:5432"},
		{"json, long message", 500, `{"code":13,"message":"` + long + `"}`, long[:maxSnippet] + "…", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: c.status, Header: http.Header{}}
			e := newError(route{service: ServiceDataNode, endpoint: EndpointAssets}, resp, []byte(c.body))
			if got := e.PublicDetail(); got != c.wantDetail {
				t.Errorf("PublicDetail = %q, want %q", got, c.wantDetail)
			}
			if got := e.Withheld(); got != c.wantWithhed {
				t.Errorf("Withheld = %v, want %v", got, c.wantWithhed)
			}
			if want := strings.TrimSpace(http.StatusText(c.status)); !strings.HasSuffix(e.StatusLine(), want) {
				t.Errorf("StatusLine = %q", e.StatusLine())
			}
			if c.leak != "" {
				if strings.Contains(e.PublicDetail(), c.leak) {
					t.Errorf("PublicDetail %q carries %q", e.PublicDetail(), c.leak)
				}
				if !strings.Contains(e.Error(), c.leak) {
					t.Errorf("Error() %q lost %q, which the log needs", e.Error(), c.leak)
				}
			}
		})
	}
}

// Messages of the data node's own errors (docs/upstream-errors.md) come
// through untouched.
func TestPublicTextKeepsOrdinaryMessages(t *testing.T) {
	for _, msg := range []string{
		"invalid party id", "invalid market ID", "invalid pagination", "failed to get assets",
		"failed to parse epoch id", "failed to get asset for ID", "Not Found", "Method Not Allowed",
		"temporarily banned for continuing to request while rate limited",
		"first and last cannot be used together", "failed to lookup asset", "epochID: 12: value out of range",
		"the block at height 34505994 is not known", "version 1.2.3 required", "ratio 1.5:2 too high",
	} {
		if got := publicText(msg); got != msg {
			t.Errorf("publicText(%q) = %q", msg, got)
		}
	}
}

func TestStatusLine(t *testing.T) {
	for status, want := range map[int]string{502: "502 Bad Gateway", 500: "500 Internal Server Error", 404: "404 Not Found", 599: "599"} {
		if got := (&Error{StatusCode: status}).StatusLine(); got != want {
			t.Errorf("StatusLine(%d) = %q, want %q", status, got, want)
		}
	}
}
