package live

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

// The poller never reads the upstream cache: its requests are how new
// blocks are seen. Here the explorer's newest page, exactly as the poller
// asks it, is in the cache for an hour; a new block still reaches the
// subscription, and the feed tells OnHead where the head is.
func TestThePollerBypassesTheUpstreamCache(t *testing.T) {
	srv, err := sampleservice.Start(sampleservice.Config{}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	cache := upstream.NewCache(upstream.CacheConfig{MaxBytes: upstream.DefaultCacheBytes, HeadTTL: time.Hour})
	c, err := upstream.New(upstream.Config{DataNodeURL: srv.URL, ExplorerURL: srv.URL + "/rest",
		HTTPClient: &http.Client{Transport: transport}, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 50
	if _, err := c.ListTransactions(t.Context(), upstream.TransactionsParams{First: pageSize}); err != nil {
		t.Fatal(err)
	}
	if st := cache.Stats(); st.Entries != 1 {
		t.Fatalf("the newest page is not cached: %+v", st)
	}

	var mu sync.Mutex
	var exact []upstream.TxCursor
	f := New(Config{Explorer: c, PageSize: pageSize, Interval: 20 * time.Millisecond, Logger: quiet,
		OnHead: func(head upstream.TxCursor, isExact bool) {
			if isExact {
				mu.Lock()
				exact = append(exact, head)
				mu.Unlock()
			}
		}}, position)
	defer f.Close()
	s, err := f.Subscribe(t.Context(), SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	added, err := srv.Service.AppendBlock()
	if err != nil {
		t.Fatal(err)
	}
	var want, got []upstream.TxCursor
	for _, tx := range added {
		pos, err := upstream.ParseTxCursor(tx.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, pos)
	}
	timeout := time.After(10 * time.Second)
	for len(got) < len(want) {
		select {
		case pos := <-s.C():
			got = append(got, pos)
		case <-timeout:
			t.Fatalf("the new block's transactions did not arrive within 10s (got %v): the poller read the cached newest page", got)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(exact) == 0 || exact[len(exact)-1] != want[len(want)-1] {
		t.Fatalf("OnHead was told the exact heads %v, want the new block's last transaction %v last", exact, want[len(want)-1])
	}
}
