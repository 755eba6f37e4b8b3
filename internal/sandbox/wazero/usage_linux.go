package wazero

import "golang.org/x/sys/unix"

// threadCPU reads the calling thread's CPU time.
func threadCPU() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
