package wazero

import "runtime"

// onThread runs f locked to its OS thread and returns the CPU time the
// thread spent in it: the guest runs synchronously on the calling
// goroutine, so this is the guest's CPU time (with its host calls).
func onThread(f func()) (cpuNs int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadCPU()
	f()
	return threadCPU() - before
}
