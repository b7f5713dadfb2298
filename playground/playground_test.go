package playground

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"
)

var testOpts = Options{
	Title:        "TradeNet <GraphQL> & Co",
	Endpoint:     "/graphql",
	DefaultQuery: "query Q {\n  instruments(filter: \"<b>&'\") { symbol }\n}\n",
}

func do(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func getPage(t *testing.T, opts Options) (*httptest.ResponseRecorder, string) {
	t.Helper()
	rec := do(t, Handler(opts), http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d, want 200", rec.Code)
	}
	return rec, rec.Body.String()
}

var attrURL = regexp.MustCompile(`(?i)\s(src|href|action|poster|data|srcset)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)`)

// pageURLs returns the value of every src/href-like attribute in the page.
func pageURLs(t *testing.T, html string) []string {
	t.Helper()
	var urls []string
	for _, m := range attrURL.FindAllStringSubmatch(html, -1) {
		v := strings.Trim(m[2], `"'`)
		urls = append(urls, strings.ReplaceAll(v, "&amp;", "&"))
	}
	if len(urls) == 0 {
		t.Fatal("no src/href found in the page")
	}
	return urls
}

func cspDirectives(t *testing.T, csp string) map[string]string {
	t.Helper()
	d := map[string]string{}
	for _, part := range strings.Split(csp, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, _ := strings.Cut(part, " ")
		d[name] = value
	}
	return d
}

func TestPageHeaders(t *testing.T) {
	rec, _ := getPage(t, testOpts)
	h := rec.Header()
	want := map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"Cache-Control":          "no-cache",
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "DENY",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if h.Get("ETag") == "" {
		t.Error("page has no ETag")
	}
	d := cspDirectives(t, h.Get("Content-Security-Policy"))
	for name, value := range map[string]string{
		"default-src":     "'none'",
		"script-src":      "'self'",
		"style-src":       "'self' 'unsafe-inline'",
		"connect-src":     "'self'",
		"font-src":        "'self' data:",
		"img-src":         "'self' data:",
		"object-src":      "'none'",
		"base-uri":        "'none'",
		"frame-ancestors": "'none'",
	} {
		if d[name] != value {
			t.Errorf("CSP %s = %q, want %q", name, d[name], value)
		}
	}
	for name, value := range d {
		if strings.Contains(value, "http") || strings.Contains(value, "*") ||
			(name != "style-src" && strings.Contains(value, "unsafe")) {
			t.Errorf("CSP %s %s is too broad", name, value)
		}
	}
}

func TestPageContent(t *testing.T) {
	_, html := getPage(t, testOpts)
	for _, s := range []string{
		"<title>TradeNet &lt;GraphQL&gt; &amp; Co</title>",
		`data-endpoint="/graphql"`,
		"data-default-query=\"query Q {\n  instruments(filter: &#34;&lt;b&gt;&amp;&#39;&#34;) { symbol }\n}\n\"",
	} {
		if !strings.Contains(html, s) {
			t.Errorf("page lacks %s\n%s", s, html)
		}
	}
	// No inline script or style: every <script> has a src and no body.
	scripts := regexp.MustCompile(`(?is)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(html, -1)
	if len(scripts) != 5 {
		t.Errorf("page has %d scripts, want 5 (react, react-dom, graphiql, graphql-ws, bootstrap)", len(scripts))
	}
	for _, s := range scripts {
		if !strings.Contains(s[1], "src=") || strings.TrimSpace(s[2]) != "" {
			t.Errorf("inline script in page: %s", s[0])
		}
	}
	if regexp.MustCompile(`(?i)<style|\sstyle=|\son[a-z]+=`).MatchString(html) {
		t.Error("page has an inline style or event handler attribute")
	}
}

func TestPageDefaults(t *testing.T) {
	_, html := getPage(t, Options{})
	for _, s := range []string{"<title>" + DefaultTitle + "</title>", `data-endpoint="` + DefaultEndpoint + `"`, "__typename"} {
		if !strings.Contains(html, s) {
			t.Errorf("default page lacks %s", s)
		}
	}
}

func TestPageURLsAreSameOrigin(t *testing.T) {
	_, html := getPage(t, testOpts)
	for _, raw := range pageURLs(t, html) {
		u, err := url.Parse(raw)
		if err != nil {
			t.Errorf("bad URL %q: %v", raw, err)
			continue
		}
		if u.Scheme != "" || u.Host != "" || strings.HasPrefix(raw, "//") || !strings.HasPrefix(raw, AssetsPrefix) {
			t.Errorf("page references %q, want a same-origin path under %s", raw, AssetsPrefix)
		}
	}
	if regexp.MustCompile(`(?i)https?:|//[a-z0-9]`).MatchString(html) {
		t.Errorf("page contains an absolute URL:\n%s", html)
	}
}

func wantContentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "text/plain; charset=utf-8"
}

func TestReferencedAssetsAreServed(t *testing.T) {
	_, html := getPage(t, testOpts)
	handlers := map[string]http.Handler{"Handler": Handler(testOpts), "AssetsHandler": AssetsHandler()}
	seen := map[string]bool{}
	for _, u := range pageURLs(t, html) {
		hashed := path.Base(u)
		a := assetsByName[hashed]
		if a == nil || a.hashedName != hashed {
			t.Errorf("%s is not a content-hashed asset name", u)
			continue
		}
		seen[a.name] = true
		for hname, h := range handlers {
			rec := do(t, h, http.MethodGet, u, nil)
			if rec.Code != http.StatusOK {
				t.Errorf("%s GET %s = %d", hname, u, rec.Code)
				continue
			}
			hd := rec.Header()
			if got, want := hd.Get("Content-Type"), wantContentType(a.name); got != want {
				t.Errorf("%s %s Content-Type = %q, want %q", hname, u, got, want)
			}
			if got := hd.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
				t.Errorf("%s %s Cache-Control = %q", hname, u, got)
			}
			if hd.Get("ETag") == "" || hd.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s %s lacks ETag or nosniff: %v", hname, u, hd)
			}
			if hd.Get("Content-Encoding") != "" {
				t.Errorf("%s %s compressed without Accept-Encoding", hname, u)
			}
			want, _ := fs.ReadFile(embedded, "assets/"+a.name)
			if !bytes.Equal(rec.Body.Bytes(), want) {
				t.Errorf("%s %s body differs from the embedded file", hname, u)
			}
		}
	}
	for _, name := range []string{"react.production.min.js", "react-dom.production.min.js",
		"graphiql.min.js", "graphql-ws.min.js", "graphiql.min.css", "playground.js", "playground.css", "favicon.svg"} {
		if !seen[name] {
			t.Errorf("page does not reference %s", name)
		}
	}
	// Scripts load in dependency order.
	last := -1
	for _, name := range []string{"/react.production.min.", "/react-dom.production.min.", "/graphiql.min.", "/graphql-ws.min.", "/playground."} {
		i := strings.LastIndex(html, name)
		if i <= last {
			t.Errorf("%s is not loaded after the scripts it needs", name)
		}
		last = i
	}
}

func TestPlainAssetNamesRevalidate(t *testing.T) {
	for _, name := range []string{"LICENSE.graphiql", "THIRD-PARTY-LICENSES.graphiql", "graphiql.min.js"} {
		rec := do(t, AssetsHandler(), http.MethodGet, AssetsPrefix+name, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", name, rec.Code)
		}
		if got := rec.Header().Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s Cache-Control = %q, want no-cache", name, got)
		}
		if got, want := rec.Header().Get("Content-Type"), wantContentType(name); got != want {
			t.Errorf("%s Content-Type = %q, want %q", name, got, want)
		}
	}
	// Mounted behind http.StripPrefix the bare name works too.
	h := http.StripPrefix("/ui/playground/", AssetsHandler())
	if rec := do(t, h, http.MethodGet, "/ui/playground/LICENSE.react", nil); rec.Code != http.StatusOK {
		t.Errorf("StripPrefix mount: %d", rec.Code)
	}
}

func TestConditionalRequests(t *testing.T) {
	target := assetURL(AssetsPrefix, "graphiql.min.css")
	rec := do(t, AssetsHandler(), http.MethodGet, target, nil)
	etag := rec.Header().Get("ETag")
	rec = do(t, AssetsHandler(), http.MethodGet, target, map[string]string{"If-None-Match": etag})
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("asset If-None-Match = %d (%d bytes), want 304", rec.Code, rec.Body.Len())
	}
	h := Handler(testOpts)
	rec = do(t, h, http.MethodGet, "/", nil)
	rec = do(t, h, http.MethodGet, "/", map[string]string{"If-None-Match": rec.Header().Get("ETag")})
	if rec.Code != http.StatusNotModified {
		t.Errorf("page If-None-Match = %d, want 304", rec.Code)
	}
}

func TestGzip(t *testing.T) {
	target := assetURL(AssetsPrefix, "graphiql.min.js")
	plain := do(t, AssetsHandler(), http.MethodGet, target, nil)
	rec := do(t, AssetsHandler(), http.MethodGet, target, map[string]string{"Accept-Encoding": "br, gzip"})
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding = %q, want gzip", rec.Header().Get("Content-Encoding"))
	}
	if rec.Header().Get("Vary") != "Accept-Encoding" || plain.Header().Get("Vary") != "Accept-Encoding" {
		t.Error("missing Vary: Accept-Encoding")
	}
	if rec.Header().Get("ETag") == plain.Header().Get("ETag") {
		t.Error("gzip and identity responses share an ETag")
	}
	if rec.Body.Len() >= plain.Body.Len() {
		t.Errorf("gzip body %d bytes not smaller than %d", rec.Body.Len(), plain.Body.Len())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, plain.Body.Bytes()) {
		t.Errorf("gunzipped body differs (err %v)", err)
	}
	rec = do(t, AssetsHandler(), http.MethodGet, target, map[string]string{"Accept-Encoding": "*, gzip;q=0"})
	if rec.Header().Get("Content-Encoding") != "" {
		t.Error("gzip sent despite gzip;q=0")
	}
}

func TestMethods(t *testing.T) {
	h := Handler(testOpts)
	targets := []string{"/", assetURL(AssetsPrefix, "graphiql.min.js"), AssetsPrefix + "LICENSE.react"}
	for _, target := range targets {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, "TRACE"} {
			for name, hh := range map[string]http.Handler{"Handler": h, "AssetsHandler": AssetsHandler()} {
				if name == "AssetsHandler" && target == "/" {
					continue
				}
				rec := do(t, hh, m, target, nil)
				if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
					t.Errorf("%s %s %s = %d Allow %q, want 405 Allow \"GET, HEAD\"", name, m, target, rec.Code, rec.Header().Get("Allow"))
				}
			}
		}
		get := do(t, h, http.MethodGet, target, nil)
		head := do(t, h, http.MethodHead, target, nil)
		if head.Code != http.StatusOK || head.Body.Len() != 0 {
			t.Errorf("HEAD %s = %d with %d body bytes, want 200 and none", target, head.Code, head.Body.Len())
		}
		for _, k := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control"} {
			if head.Header().Get(k) != get.Header().Get(k) {
				t.Errorf("HEAD %s %s = %q, GET has %q", target, k, head.Header().Get(k), get.Header().Get(k))
			}
		}
	}
}

func TestNotFound(t *testing.T) {
	h := Handler(testOpts)
	for _, target := range []string{
		"/index.html",
		"/graphql",
		AssetsPrefix,
		AssetsPrefix + "nope.js",
		AssetsPrefix + "README.md",
		AssetsPrefix + "graphiql.min.0000000000000000.js",
		AssetsPrefix + "assets/graphiql.min.js",
		AssetsPrefix + "../playground.go",
		AssetsPrefix + "sub/dir/favicon.svg",
	} {
		for name, hh := range map[string]http.Handler{"Handler": h, "AssetsHandler": AssetsHandler()} {
			if rec := do(t, hh, http.MethodGet, target, nil); rec.Code != http.StatusNotFound {
				t.Errorf("%s GET %s = %d, want 404", name, target, rec.Code)
			}
		}
	}
}

func TestLicencesEmbedded(t *testing.T) {
	for _, name := range []string{"LICENSE.graphiql", "LICENSE.react", "LICENSE.react-dom", "LICENSE.graphql-ws", "THIRD-PARTY-LICENSES.graphiql"} {
		b, err := fs.ReadFile(embedded, "assets/"+name)
		if err != nil {
			t.Errorf("licence %s not embedded: %v", name, err)
			continue
		}
		if !bytes.Contains(b, []byte("Permission is hereby granted")) {
			t.Errorf("%s does not look like a licence text", name)
		}
	}
	b, _ := fs.ReadFile(embedded, "assets/THIRD-PARTY-LICENSES.graphiql")
	for _, pkg := range []string{"graphql@", "codemirror@", "markdown-it@", "@graphiql/react@"} {
		if !bytes.Contains(b, []byte("\n"+pkg)) {
			t.Errorf("THIRD-PARTY-LICENSES.graphiql does not list %s", pkg)
		}
	}
}

func TestReadmeNamesVendoredVersions(t *testing.T) {
	readme, err := fs.ReadFile(embedded, "assets/README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The React UMD builds carry their version; the README must name it.
	re := regexp.MustCompile(`"(18\.\d+\.\d+)"`)
	for _, name := range []string{"react.production.min.js", "react-dom.production.min.js"} {
		b, _ := fs.ReadFile(embedded, "assets/"+name)
		m := re.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s: no React 18 version string", name)
			continue
		}
		if !bytes.Contains(readme, m[1]) {
			t.Errorf("README.md does not name version %s of %s", m[1], name)
		}
	}
	if !bytes.Contains(readme, []byte("| graphiql  | 3.")) {
		t.Error("README.md does not name the GraphiQL 3.x version")
	}
	if !regexp.MustCompile(`\| graphql-ws \| \d+\.\d+\.\d+ +\|`).Match(readme) {
		t.Error("README.md does not name the graphql-ws version")
	}
}

var cssComment = regexp.MustCompile(`(?s)/\*.*?\*/`)

// TestNoOtherOriginLoads checks that nothing the browser loads at start-up
// comes from another origin: stylesheets import nothing and reference only
// data: or same-origin URLs; no asset names a CDN or font host, injects a
// remote <script>/<link>, or points devtools at a source map.
func TestNoOtherOriginLoads(t *testing.T) {
	cssURL := regexp.MustCompile(`(?i)url\(\s*['"]?([^'")\s]*)`)
	cssImport := regexp.MustCompile(`(?i)@import`)
	remoteTag := regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]*\s(src|href)\s*=\s*\\?["']?(https?:)?//`)
	hosts := []string{"fonts.googleapis.com", "fonts.gstatic.com", "unpkg.com", "jsdelivr.net", "cdnjs.cloudflare.com", "esm.sh", "cdn.skypack.dev"}
	n := 0
	for _, a := range assetsInOrder {
		ext := path.Ext(a.name)
		if ext != ".js" && ext != ".css" && ext != ".svg" {
			continue
		}
		n++
		src := string(a.data)
		if ext == ".css" {
			css := cssComment.ReplaceAllString(src, "")
			if loc := cssImport.FindStringIndex(css); loc != nil {
				t.Errorf("%s has an @import: %.80s", a.name, css[loc[0]:])
			}
			for _, m := range cssURL.FindAllStringSubmatch(css, -1) {
				u := m[1]
				if strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "#") {
					continue
				}
				if strings.Contains(u, "//") || strings.Contains(u, ":") {
					t.Errorf("%s loads url(%s)", a.name, u)
				}
			}
		}
		if m := remoteTag.FindString(src); m != "" {
			t.Errorf("%s injects a remote element: %s", a.name, m)
		}
		for _, host := range hosts {
			if strings.Contains(src, host) {
				t.Errorf("%s mentions %s", a.name, host)
			}
		}
		if strings.Contains(src, "sourceMappingURL") {
			t.Errorf("%s has a sourceMappingURL comment (the map is not vendored)", a.name)
		}
	}
	if n < 8 {
		t.Errorf("checked %d JS/CSS/SVG assets, want at least 8", n)
	}
}

func TestBootstrapScript(t *testing.T) {
	b, err := fs.ReadFile(embedded, "assets/playground.js")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		"data-endpoint", "data-default-query", "method: 'POST'", "'Content-Type': 'application/json'",
		"credentials: 'same-origin'", "isHeadersEditorEnabled: true", "ReactDOM.createRoot",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("playground.js lacks %s", want)
		}
	}
	if regexp.MustCompile(`\beval\(|new Function|innerHTML`).MatchString(s) {
		t.Error("playground.js uses eval/new Function/innerHTML")
	}
}

// TestSubscriptionsOverWebSocket checks the pieces the playground's
// subscriptions rest on (the browser test e2e/test/playground-live.test.mjs
// runs one end to end): the graphql-ws client is embedded, served as
// JavaScript and referenced by the page before the bootstrap; it defines the
// global the bootstrap uses and speaks graphql-transport-ws; the bootstrap
// sends subscriptions to the endpoint's ws(s) URL with the headers as the
// connection_init payload; and the CSP lets the page open that WebSocket
// ('self', which in CSP Level 3 matches ws: and wss: of the page's own host
// and port) and nothing else.
func TestSubscriptionsOverWebSocket(t *testing.T) {
	rec, html := getPage(t, testOpts)
	d := cspDirectives(t, rec.Header().Get("Content-Security-Policy"))
	if d["connect-src"] != "'self'" {
		t.Errorf("connect-src = %q, want 'self' (same-origin fetch and WebSocket only)", d["connect-src"])
	}
	if d["script-src"] != "'self'" {
		t.Errorf("script-src = %q, want 'self'", d["script-src"])
	}

	u := assetURL(AssetsPrefix, "graphql-ws.min.js")
	if !strings.Contains(html, `<script src="`+u+`"></script>`) {
		t.Errorf("page does not load %s", u)
	}
	got := do(t, Handler(testOpts), http.MethodGet, u, nil)
	if got.Code != http.StatusOK || got.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("GET %s = %d %q", u, got.Code, got.Header().Get("Content-Type"))
	}
	js := got.Body.String()
	for _, want := range []string{
		".graphqlWs={}",          // the UMD wrapper's global
		`"graphql-transport-ws"`, // the WebSocket subprotocol
		"createClient",
		"connection_init",
	} {
		if !strings.Contains(js, want) {
			t.Errorf("graphql-ws.min.js lacks %s", want)
		}
	}
	if regexp.MustCompile(`\brequire\(`).MatchString(js) {
		t.Error("graphql-ws.min.js requires a module (it must be self-contained)")
	}

	// GraphiQL's bundle exposes its graphql-js, which the bootstrap parses
	// operations with.
	gi, _ := fs.ReadFile(embedded, "assets/graphiql.min.js")
	if !regexp.MustCompile(`\.GraphQL=[\w$]+,`).Match(gi) {
		t.Error("graphiql.min.js no longer assigns GraphiQL.GraphQL")
	}

	b, _ := fs.ReadFile(embedded, "assets/playground.js")
	boot := string(b)
	for _, want := range []string{
		"graphqlWs.createClient(", "lazy: true", "retryAttempts:", "connectionParams:",
		"window.GraphiQL.GraphQL", "=== 'subscription'", "'wss:' : 'ws:'", "new URL(endpoint, window.location.href)",
	} {
		if !strings.Contains(boot, want) {
			t.Errorf("playground.js lacks %s", want)
		}
	}
}

func TestOptionsAssetsURLAndEndpoint(t *testing.T) {
	_, html := getPage(t, Options{AssetsURL: "/ui/playground"})
	for _, u := range pageURLs(t, html) {
		if !strings.HasPrefix(u, "/ui/playground/") {
			t.Errorf("custom AssetsURL not used: %s", u)
		}
	}
	rec, _ := getPage(t, Options{Endpoint: "https://api.example.test/graphql"})
	if d := cspDirectives(t, rec.Header().Get("Content-Security-Policy")); d["connect-src"] != "'self' https://api.example.test wss://api.example.test" {
		t.Errorf("connect-src = %q", d["connect-src"])
	}
	rec, _ = getPage(t, Options{Endpoint: "http://127.0.0.1:8080/graphql"})
	if d := cspDirectives(t, rec.Header().Get("Content-Security-Policy")); d["connect-src"] != "'self' http://127.0.0.1:8080 ws://127.0.0.1:8080" {
		t.Errorf("connect-src = %q", d["connect-src"])
	}
	for _, bad := range []Options{{AssetsURL: "https://cdn.example.test/"}, {AssetsURL: "//cdn.example.test/"}, {Endpoint: "javascript:alert(1)"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Handler(%+v) did not panic", bad)
				}
			}()
			Handler(bad)
		}()
	}
}
