package sampleservice

import (
	"bytes"
	"compress/gzip"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Response cache bounds: entries, and the largest body worth keeping.
const (
	defaultCacheEntries = 1024
	maxCachedBody       = 8 << 20
)

// cachedBody is an encoded 200 body, with its gzip form made on first use.
type cachedBody struct {
	body []byte

	gzOnce sync.Once
	gz     []byte
}

func (c *cachedBody) gzipped() []byte {
	c.gzOnce.Do(func() { c.gz = gzipBytes(c.body) })
	return c.gz
}

// gzipWriters recycles compressors: a new one allocates about a megabyte.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// gzipBytes compresses b.
func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&buf)
	zw.Write(b)
	zw.Close()
	gzipWriters.Put(zw)
	return buf.Bytes()
}

// responseCache keeps encoded bodies by endpoint and normalised query
// (parameters sorted), so that repeated requests cost a map lookup and the
// benchmarks measure the gateway rather than this service. nil disables it.
type responseCache struct {
	lru *lru.Cache[string, *cachedBody]
}

func newResponseCache(entries int) *responseCache {
	if entries < 0 {
		return nil
	}
	if entries == 0 {
		entries = defaultCacheEntries
	}
	c, err := lru.New[string, *cachedBody](entries)
	if err != nil {
		return nil
	}
	return &responseCache{lru: c}
}

func (c *responseCache) get(key string) (*cachedBody, bool) {
	if c == nil {
		return nil, false
	}
	return c.lru.Get(key)
}

func (c *responseCache) add(key string, b *cachedBody) {
	if c == nil || len(b.body) > maxCachedBody {
		return
	}
	c.lru.Add(key, b)
}

func (c *responseCache) purge() {
	if c != nil {
		c.lru.Purge()
	}
}
