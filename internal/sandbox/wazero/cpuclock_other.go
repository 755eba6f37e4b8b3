//go:build !linux

package wazero

// currentThread is 0 where the kernel offers no per-thread clocks to
// other threads: the CPU-time interval timers are then refused.
func currentThread() int32 { return 0 }

func threadCPUOf(int32, bool) (int64, bool) { return 0, false }
