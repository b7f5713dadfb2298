package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/transport"
	"github.com/tradenet/gateway/upstream"
)

var captureDir = flag.String("capture-dir", "", "TestCaptureFastPathInputs writes the headline queries' real inputs here")

// TestCaptureFastPathInputs records, for each headline query, what the
// gateway's fast paths work on (BENCHMARKS.md "What each fast path buys at
// 1 ms"): the request body the client sends, the response body the gateway
// writes, and every upstream body it reads (as sent, gzipped, and
// decompressed):
//
//	go test ./bench -run CaptureFastPathInputs -args -capture-dir /tmp/inputs
//
// The A/B measurements of BENCHMARKS.md fed these inputs to each fast path
// and its reference path, alternated call by call (the method is there).
//
// Without -capture-dir it still runs every query once through the
// recording transport and checks that each made upstream calls.
func TestCaptureFastPathInputs(t *testing.T) {
	sample := startDefaultSample(t)
	rec := &recorder{next: http.DefaultTransport}
	client, err := upstream.New(upstream.Config{
		DataNodeURL: sample.URL,
		ExplorerURL: sample.URL + "/rest",
		HTTPClient:  &http.Client{Transport: rec},
	})
	if err != nil {
		t.Fatal(err)
	}
	loaders := graph.DefaultLoaderConfig
	loaders.AssetCacheSize = 0
	gw := httptest.NewServer(transport.NewHandler(graph.NewExecutor(graph.ExecutorConfig{
		Upstream: client,
		Loaders:  loaders,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	}), transport.Config{}))
	defer gw.Close()

	party, _ := busiestParty(sample.Service.Dataset())
	for _, q := range []query{transactionsQuery(50), assetsQuery(100), partyQuery(party, 50), delegationsQuery(1000)} {
		reqBody, err := json.Marshal(gqlRequest{Query: q.doc, Variables: q.vars})
		if err != nil {
			t.Fatal(err)
		}
		rec.reset()
		resp, err := http.Post(gw.URL+"/graphql", "application/json", bytes.NewReader(reqBody))
		if err != nil {
			t.Fatal(err)
		}
		respBody, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %v", q.name, resp.StatusCode, err)
		}
		calls := rec.take()
		if len(calls) == 0 {
			t.Fatalf("%s: no upstream call recorded; response %.300s", q.name, respBody)
		}
		t.Logf("%s: request %d B, response %d B, %d upstream bodies", q.name, len(reqBody), len(respBody), len(calls))
		if *captureDir == "" {
			continue
		}
		dir := filepath.Join(*captureDir, q.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{"request.json": reqBody, "response.json": respBody}
		for i, c := range calls {
			plain := c.body
			if c.gzipped {
				if plain, err = gunzip(c.body); err != nil {
					t.Fatalf("%s: %s: %v", q.name, c.url, err)
				}
				files[fmt.Sprintf("upstream-%d.gz", i)] = c.body
			}
			files[fmt.Sprintf("upstream-%d.json", i)] = plain
			files[fmt.Sprintf("upstream-%d.url", i)] = []byte(c.url)
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// recorder is a RoundTripper that keeps every response body it passes on.
type recorder struct {
	next  http.RoundTripper
	mu    sync.Mutex
	calls []recorded
}

type recorded struct {
	url     string
	body    []byte // as sent: gzipped when the service compressed it
	gzipped bool
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.calls = append(r.calls, recorded{url: req.URL.String(), body: b, gzipped: resp.Header.Get("Content-Encoding") == "gzip"})
	r.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

func (r *recorder) reset() { r.mu.Lock(); r.calls = nil; r.mu.Unlock() }

func (r *recorder) take() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
