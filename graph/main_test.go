package graph_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs up to 8 of the package's parallel tests at once unless
// -parallel says otherwise. They run after every other test (none of them
// counts goroutines, allocations or the shared sample's requests): the
// walks over the whole dataset, which use the CPU, and tests that mostly
// wait (the rate-budget load's queue, a pause after a 429, unreachable
// upstreams), which the default, GOMAXPROCS (2 on the project's machines),
// ran after them, two at a time.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "8")
	}
	os.Exit(m.Run())
}
