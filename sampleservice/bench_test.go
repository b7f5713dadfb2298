package sampleservice

import (
	"io"
	"net/http"
	"net/url"
	"testing"
)

// BenchmarkService measures the service's own cost per request over
// loopback HTTP, to show it is small next to the gateway's.
func BenchmarkService(b *testing.B) {
	for _, bc := range []struct {
		name  string
		cfg   Config
		paths func(d *Dataset) []string
	}{
		{"cached/delegations-1000", Config{}, func(*Dataset) []string {
			return []string{"/api/v2/delegations?pagination.first=1000"}
		}},
		{"cached/explorer-50", Config{}, func(*Dataset) []string {
			return []string{"/rest/transactions?first=50"}
		}},
		{"uncached/assets-by-id", Config{CacheEntries: -1}, func(d *Dataset) []string {
			var out []string
			for _, a := range d.Assets {
				out = append(out, "/api/v2/assets?assetId="+a.ID)
			}
			return out
		}},
		{"uncached/explorer-party-50-scale-20", Config{CacheEntries: -1, Dataset: DatasetOptions{Scale: 20}}, func(d *Dataset) []string {
			var out []string
			for _, p := range d.Parties {
				out = append(out, "/rest/transactions?first=50&parties="+url.QueryEscape(p))
			}
			return out
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv, err := Start(bc.cfg, "")
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			paths := bc.paths(srv.Service.Dataset())
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					resp, err := client.Get(srv.URL + paths[i%len(paths)])
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
					i++
				}
			})
		})
	}
}
