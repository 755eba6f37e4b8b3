package wazero

import "golang.org/x/sys/unix"

// currentThread is the calling OS thread's id.
func currentThread() int32 { return int32(unix.Gettid()) }

// threadCPUOf reads the CPU clock of thread tid of this process, from any
// of its threads (MAKE_THREAD_CPUCLOCK): its user time alone (virt,
// ITIMER_VIRTUAL's clock: CPUCLOCK_VIRT, which the kernel keeps at its
// ticks, as it checks ITIMER_VIRTUAL), or all the CPU it ran (ITIMER_PROF's
// user and system time: CPUCLOCK_SCHED, exact, the clock the guest reads
// as its own CPU time).
func threadCPUOf(tid int32, virt bool) (int64, bool) {
	kind := int32(2) // CPUCLOCK_SCHED
	if virt {
		kind = 1 // CPUCLOCK_VIRT
	}
	var ts unix.Timespec
	if tid <= 0 || unix.ClockGettime((^tid)<<3|kind|4, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
