// Package playground serves the gateway's built-in GraphiQL playground from
// assets embedded in the binary: no CDN and no other origin is contacted at
// run time, so it works on machines without internet access.
//
// The vendored browser build (GraphiQL 3.x UMD + React 18 UMD + the
// graphql-ws client's UMD build, see assets/README.md) is served under
// [AssetsPrefix] with content-hashed file names and long-lived cache headers;
// the HTML page references only those same-origin paths and carries a strict
// Content-Security-Policy.
//
// The page POSTs queries and mutations to the endpoint as JSON and runs
// subscriptions over a WebSocket to the same endpoint (graphql-transport-ws,
// the endpoint's URL with ws: or wss: for http: or https:).
//
// Mounting (Go 1.22+ ServeMux):
//
//	mux.Handle("/{$}", playground.Handler(playground.Options{
//		Title:        "TradeNet GraphQL",
//		Endpoint:     "/graphql",
//		DefaultQuery: "{ __typename }",
//	}))
//	mux.Handle(playground.AssetsPrefix, playground.AssetsHandler())
//
// Handler also answers requests under AssetsPrefix itself, so registering the
// same Handler value for both patterns works too. Both handlers accept only
// GET and HEAD (405 with an Allow header otherwise).
package playground

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tradenet/gateway/internal/httpcompress"
)

//go:embed assets
var embedded embed.FS

// AssetsPrefix is the URL path under which the playground's static assets are
// served and from which the page references them (unless Options.AssetsURL
// says otherwise). The gateway must route this prefix to [AssetsHandler] (or
// to the [Handler]). Asset names are flat: AssetsPrefix + file name.
const AssetsPrefix = "/playground/"

// Defaults used for empty Options fields.
const (
	DefaultTitle    = "GraphQL Playground"
	DefaultEndpoint = "/graphql"
	DefaultQuery    = `# Welcome to the GraphQL playground.
#
# Write a query here and run it with Ctrl-Enter (Cmd-Enter on a Mac).
# The Docs panel (book icon, top left) browses the schema; request headers
# such as Authorization go in the Headers tab below the editor.

{
  __typename
}
`
)

// Options configures the playground page.
type Options struct {
	// Title is the page title and the label shown in GraphiQL's top bar.
	// Default DefaultTitle.
	Title string
	// Endpoint is the GraphQL endpoint the page POSTs operations to as JSON,
	// and opens subscriptions' WebSockets to (graphql-transport-ws), normally
	// a same-origin absolute path such as "/graphql" (the default). If it is
	// an absolute http(s) URL, its origin and the matching ws(s) origin are
	// added to the page's connect-src (and that server must allow the page's
	// origin by CORS and in its WebSocket origin check).
	Endpoint string
	// DefaultQuery is the query shown in the editor of a fresh tab (GraphiQL
	// keeps the user's own tabs in the browser's localStorage). Default
	// DefaultQuery.
	DefaultQuery string
	// AssetsURL is the URL path prefix, ending in "/", under which the page
	// references the assets; default AssetsPrefix. Set it only when a
	// reverse proxy or http.StripPrefix exposes AssetsHandler elsewhere (for
	// example "/ui/playground/"). It must be a path, not a URL with a scheme
	// or host: Handler panics otherwise.
	AssetsURL string
}

// Handler returns the playground handler. It serves the HTML page at its
// root path ("/", as seen by the handler) and the embedded assets under
// AssetsPrefix; any other path is 404. It panics if opts.AssetsURL or
// opts.Endpoint is malformed (a programming error, like ServeMux patterns).
func Handler(opts Options) http.Handler {
	p, err := newPage(opts)
	if err != nil {
		panic("playground: " + err.Error())
	}
	return p
}

// AssetsHandler returns the handler for the embedded assets. It expects the
// full request path (AssetsPrefix + name); a path without that prefix (as
// left by http.StripPrefix) is taken as the bare name. Content-hashed names,
// which the page uses, are served with a one-year immutable Cache-Control;
// plain names (e.g. /playground/LICENSE.graphiql) with no-cache. All carry an
// ETag; JS, CSS, SVG and text are sent gzip-compressed to clients that accept it.
func AssetsHandler() http.Handler { return assetsHandler{} }

// ---------------------------------------------------------------------------
// Assets

type asset struct {
	name         string // file name in assets/
	hashedName   string // name with content hash, e.g. graphiql.min.0123456789abcdef.js
	contentType  string
	data         []byte
	etag         string
	compressible bool

	gzOnce sync.Once
	gz     []byte // nil if compression does not help
	gzEtag string
}

var (
	assetsByName  map[string]*asset // by plain and by hashed name
	assetsInOrder []*asset          // sorted by name
)

func init() {
	var err error
	assetsByName, assetsInOrder, err = loadAssets(embedded)
	if err != nil {
		panic("playground: " + err.Error())
	}
}

// contentTypeFor returns the Content-Type an embedded file is served with and
// whether it compresses well; "" means the file is not served (README.md).
func contentTypeFor(name string) (ctype string, compressible bool) {
	switch {
	case strings.HasSuffix(name, ".js"):
		return "text/javascript; charset=utf-8", true
	case strings.HasSuffix(name, ".css"):
		return "text/css; charset=utf-8", true
	case strings.HasSuffix(name, ".svg"):
		return "image/svg+xml", true
	case strings.HasPrefix(name, "LICENSE"), strings.HasPrefix(name, "THIRD-PARTY-LICENSES"):
		return "text/plain; charset=utf-8", true
	}
	return "", false
}

func loadAssets(fsys fs.FS) (map[string]*asset, []*asset, error) {
	entries, err := fs.ReadDir(fsys, "assets")
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]*asset)
	var list []*asset
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		name := e.Name()
		ctype, compressible := contentTypeFor(name)
		if ctype == "" {
			continue
		}
		data, err := fs.ReadFile(fsys, "assets/"+name)
		if err != nil {
			return nil, nil, err
		}
		sum := sha256.Sum256(data)
		hash := hex.EncodeToString(sum[:])
		ext := path.Ext(name)
		a := &asset{
			name:         name,
			hashedName:   strings.TrimSuffix(name, ext) + "." + hash[:16] + ext,
			contentType:  ctype,
			data:         data,
			etag:         `"` + hash[:32] + `"`,
			compressible: compressible,
		}
		byName[a.name] = a
		byName[a.hashedName] = a
		list = append(list, a)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	return byName, list, nil
}

// gzipped returns the gzip-compressed body and its ETag, computed on first
// use, or nil if compression does not make it smaller.
func (a *asset) gzipped() ([]byte, string) {
	a.gzOnce.Do(func() {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return
		}
		if _, err := zw.Write(a.data); err != nil {
			return
		}
		if err := zw.Close(); err != nil {
			return
		}
		if buf.Len() < len(a.data) {
			a.gz = buf.Bytes()
			a.gzEtag = strings.TrimSuffix(a.etag, `"`) + `-gzip"`
		}
	})
	return a.gz, a.gzEtag
}

// assetURL is the content-hashed path of the named embedded asset under
// prefix. It panics for an unknown name (a bug in this package).
func assetURL(prefix, name string) string {
	a, ok := assetsByName[name]
	if !ok || a.name != name {
		panic("playground: no embedded asset " + name)
	}
	return prefix + a.hashedName
}

type assetsHandler struct{}

func (assetsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !allowMethod(w, r) {
		return
	}
	name := strings.TrimPrefix(r.URL.Path, AssetsPrefix)
	name = strings.TrimPrefix(name, "/")
	serveAsset(w, r, name)
}

func serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := assetsByName[name]
	if !ok || name == "" || strings.Contains(name, "/") {
		notFound(w)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if name == a.hashedName {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	body, etag := a.data, a.etag
	if a.compressible {
		h.Add("Vary", "Accept-Encoding")
		if httpcompress.AcceptsGzip(r.Header.Values("Accept-Encoding")) {
			if gz, gzEtag := a.gzipped(); gz != nil {
				body, etag = gz, gzEtag
				h.Set("Content-Encoding", "gzip")
			}
		}
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// ---------------------------------------------------------------------------
// Page

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<link rel="icon" type="image/svg+xml" href="{{.Favicon}}">
<link rel="stylesheet" href="{{.GraphiQLCSS}}">
<link rel="stylesheet" href="{{.PageCSS}}">
</head>
<body>
<div id="graphiql" data-title="{{.Title}}" data-endpoint="{{.Endpoint}}" data-default-query="{{.DefaultQuery}}"><p class="playground-message">Loading the GraphQL playground…</p></div>
<noscript><p class="playground-message">The GraphQL playground needs JavaScript. Operations can still be POSTed as JSON to {{.Endpoint}}.</p></noscript>
<script src="{{.ReactJS}}"></script>
<script src="{{.ReactDOMJS}}"></script>
<script src="{{.GraphiQLJS}}"></script>
<script src="{{.GraphQLWSJS}}"></script>
<script src="{{.PageJS}}"></script>
</body>
</html>
`))

type page struct {
	html []byte
	etag string
	csp  string
}

func newPage(opts Options) (*page, error) {
	if opts.Title == "" {
		opts.Title = DefaultTitle
	}
	if opts.Endpoint == "" {
		opts.Endpoint = DefaultEndpoint
	}
	if opts.DefaultQuery == "" {
		opts.DefaultQuery = DefaultQuery
	}
	prefix := opts.AssetsURL
	if prefix == "" {
		prefix = AssetsPrefix
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if u, err := url.Parse(prefix); err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(prefix, "//") {
		return nil, fmt.Errorf("Options.AssetsURL %q must be a same-origin path", opts.AssetsURL)
	}
	// 'self' covers the page's own origin for fetch and, in CSP Level 3
	// (Chromium, Firefox, Safari 15.4+), the WebSocket to the same host and
	// port with ws: for an http: page and wss: for https:.
	connect := "'self'"
	eu, err := url.Parse(opts.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("Options.Endpoint %q: %v", opts.Endpoint, err)
	}
	switch {
	case eu.Scheme == "" && eu.Host == "":
		// same-origin path
	case (eu.Scheme == "http" || eu.Scheme == "https") && eu.Host != "":
		ws := "ws"
		if eu.Scheme == "https" {
			ws = "wss"
		}
		connect += " " + eu.Scheme + "://" + eu.Host + " " + ws + "://" + eu.Host
	default:
		return nil, fmt.Errorf("Options.Endpoint %q must be a path or an http(s) URL", opts.Endpoint)
	}

	data := struct {
		Title, Endpoint, DefaultQuery                        string
		Favicon, GraphiQLCSS, PageCSS                        string
		ReactJS, ReactDOMJS, GraphiQLJS, GraphQLWSJS, PageJS string
	}{
		Title:        opts.Title,
		Endpoint:     opts.Endpoint,
		DefaultQuery: opts.DefaultQuery,
		Favicon:      assetURL(prefix, "favicon.svg"),
		GraphiQLCSS:  assetURL(prefix, "graphiql.min.css"),
		PageCSS:      assetURL(prefix, "playground.css"),
		ReactJS:      assetURL(prefix, "react.production.min.js"),
		ReactDOMJS:   assetURL(prefix, "react-dom.production.min.js"),
		GraphiQLJS:   assetURL(prefix, "graphiql.min.js"),
		GraphQLWSJS:  assetURL(prefix, "graphql-ws.min.js"),
		PageJS:       assetURL(prefix, "playground.js"),
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return &page{
		html: buf.Bytes(),
		etag: `"` + hex.EncodeToString(sum[:16]) + `"`,
		csp:  contentSecurityPolicy(connect),
	}, nil
}

// contentSecurityPolicy is the page's policy. Scripts, styles, fonts and
// images come only from this origin ('self'; GraphiQL's fonts and icons are
// data: URIs inside its stylesheet), operations are POSTed (and
// subscriptions' WebSockets opened) only to connect.
// style-src needs 'unsafe-inline' because GraphiQL's bundled UI libraries
// (react-remove-scroll via Radix dialogs, CodeMirror) inject <style> elements
// and style attributes at run time; scripts stay 'self' only: the bootstrap
// is the separate playground.js file.
func contentSecurityPolicy(connect string) string {
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self' 'unsafe-inline'",
		"img-src 'self' data:",
		"font-src 'self' data:",
		"connect-src " + connect,
		"manifest-src 'none'",
		"worker-src 'none'",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

func (p *page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/" || r.URL.Path == "":
		if !allowMethod(w, r) {
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Security-Policy", p.csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("ETag", p.etag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(p.html))
	case strings.HasPrefix(r.URL.Path, AssetsPrefix):
		assetsHandler{}.ServeHTTP(w, r)
	default:
		notFound(w)
	}
}

// ---------------------------------------------------------------------------
// Helpers

func allowMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
	return false
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.Error(w, "404 page not found", http.StatusNotFound)
}
