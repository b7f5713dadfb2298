package main

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs up to 8 of the package's parallel tests at once unless
// -parallel says otherwise: they mostly wait (the Redis client's dial
// retries, the rate budget, a shutdown delay, keep-alives), and the
// default, GOMAXPROCS (2 on the project's machines), ran them two at a
// time.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "8")
	}
	os.Exit(m.Run())
}
