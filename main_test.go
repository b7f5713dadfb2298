package main

import (
	"os"
	"testing"

	"github.com/tradenet/gateway/internal/testutil"
)

// TestMain runs up to 8 of the package's parallel tests at once unless
// -parallel says otherwise: they mostly wait (the Redis client's dial
// retries, the rate budget, a shutdown delay, keep-alives).
func TestMain(m *testing.M) { os.Exit(testutil.RunParallel(m, 8)) }
