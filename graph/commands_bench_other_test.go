//go:build !unix

package graph_test

// processCPU is 0 where the process's CPU time is not read
// (BenchmarkTransactionPageShapes).
func processCPU() float64 { return 0 }
