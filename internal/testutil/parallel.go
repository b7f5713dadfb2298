package testutil

import (
	"flag"
	"strconv"
	"testing"
)

// RunParallel runs a package's tests (from its TestMain) with up to n of
// its parallel tests at once, unless -parallel was given: for packages
// whose parallel tests mostly wait (rate budgets, time-outs, Redis dial
// retries), which the default, GOMAXPROCS (2 on the project's machines),
// runs two at a time. It returns m.Run's exit code.
func RunParallel(m *testing.M, n int) int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
	return m.Run()
}
