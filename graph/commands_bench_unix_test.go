//go:build unix

package graph_test

import "syscall"

// processCPU is the CPU time the process has used, user and system, in
// seconds (BenchmarkTransactionPageShapes).
func processCPU() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e9
}
