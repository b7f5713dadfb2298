package testutil

import (
	"strings"
	"sync"
	"testing"
)

// TestLockedBufferConcurrentWrites: concurrent writes all land, whole
// (run with -race).
func TestLockedBufferConcurrentWrites(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 {
		t.Fatalf("%d lines, want 800", got)
	}
}
