package wazero

import "golang.org/x/sys/unix"

// threadCPU reads the calling thread's CPU clock: macOS has no
// getrusage(RUSAGE_THREAD).
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}
