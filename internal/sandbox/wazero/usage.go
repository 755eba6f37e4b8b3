package wazero

import (
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// guestCPU is a run's CPU clock: the CPU time of the OS thread its guest
// runs on, counted from the guest's start. The guest runs synchronously on
// the calling goroutine, host calls included, so this is the guest's CPU
// time: the run's Usage, and what the guest reads as its process's and its
// thread's CPU-time clocks (wasiclock.go).
type guestCPU struct {
	base int64 // the thread's CPU time when the guest started
	// thread is the guest's OS thread, while it runs (0 before): the
	// CPU-time interval timers read its clocks from other threads.
	thread atomic.Int32
}

// run runs f locked to its OS thread and returns the CPU time the thread
// spent in it.
func (c *guestCPU) run(f func()) (cpuNs int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c.base = threadCPU()
	c.thread.Store(currentThread())
	defer c.thread.Store(0)
	f()
	return c.now()
}

// now is the guest's CPU time so far. It reads the calling thread's clock,
// so it holds only inside run's f: on the guest's thread, as host functions
// are called.
func (c *guestCPU) now() int64 { return threadCPU() - c.base }

// threadCPU reads the calling thread's CPU clock, in nanoseconds.
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}
