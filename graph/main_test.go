package graph_test

import (
	"os"
	"testing"

	"github.com/tradenet/gateway/internal/testutil"
)

// TestMain runs up to 8 of the package's parallel tests at once unless
// -parallel says otherwise. They run after every other test (none of them
// counts goroutines, allocations or the shared sample's requests): the
// walks over the whole dataset, which use the CPU, and tests that mostly
// wait (the rate-budget load's queue, a pause after a 429, unreachable
// upstreams).
func TestMain(m *testing.M) { os.Exit(testutil.RunParallel(m, 8)) }
