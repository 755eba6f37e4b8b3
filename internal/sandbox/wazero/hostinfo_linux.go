package wazero

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// loadavg is the kernel's 1, 5 and 15 minute load averages as glibc's
// getloadavg computes them (sysinfo's fixed-point loads over 1 << 16).
func loadavg() ([3]float64, bool) {
	var info unix.Sysinfo_t
	if unix.Sysinfo(&info) != nil {
		return [3]float64{}, false
	}
	var avg [3]float64
	for i, l := range info.Loads {
		avg[i] = float64(l) / (1 << unix.SI_LOAD_SHIFT)
	}
	return avg, true
}

// memoryPages is glibc's sysconf answer for the page size, the physical
// pages and the available pages: the machine's page size, and sysinfo's
// total and free memory (counted in its memory units) in pages.
func memoryPages() ([3]uint64, bool) {
	var info unix.Sysinfo_t
	if unix.Sysinfo(&info) != nil {
		return [3]uint64{}, false
	}
	page, unit := uint64(os.Getpagesize()), uint64(max(info.Unit, 1))
	return [3]uint64{page, uint64(info.Totalram) * unit / page, uint64(info.Freeram) * unit / page}, true
}

// atMinSigstksz is AT_MINSIGSTKSZ, the auxiliary vector's entry.
const atMinSigstksz = 51

// kernelLimits is what glibc's sysconf reads of the kernel for
// NGROUPS_MAX (/proc/sys/kernel/ngroups_max) and MINSIGSTKSZ (the
// auxiliary vector's AT_MINSIGSTKSZ, which the kernel sizes for the CPU's
// signal frame): read once, before a wazero child confines itself.
var kernelLimits = sync.OnceValue(func() [2]uint64 {
	limits := [2]uint64{glibcNgroupsMax, glibcMinSigstksz}
	if b, err := os.ReadFile("/proc/sys/kernel/ngroups_max"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 63); err == nil {
			limits[0] = n
		}
	}
	if auxv, err := unix.Auxv(); err == nil {
		for _, kv := range auxv {
			if kv[0] == atMinSigstksz && kv[1] != 0 {
				limits[1] = uint64(kv[1])
			}
		}
	}
	return limits
})

// inheritedLimits is this process's resource limits, which a native
// guest inherits from the supervisor too: the wazero child changes only
// RLIMIT_NOFILE, RLIMIT_FSIZE and RLIMIT_CORE, which the guest's table
// sets as the native sandbox does (rlimit.go). Read with prlimit64 of pid
// 0, which the child's seccomp filter allows (getrlimit, unix.Getrlimit's
// call on amd64, it does not).
func inheritedLimits() rlimitTable {
	var t rlimitTable
	for r := range t {
		var rl unix.Rlimit
		if unix.Prlimit(0, r, nil, &rl) != nil {
			rl = unix.Rlimit{Cur: rlimInfinity, Max: rlimInfinity}
		}
		t[r] = [2]uint64{rl.Cur, rl.Max}
	}
	return t
}

// threadUsage is getrusage(RUSAGE_THREAD) of the calling thread, in
// writeUsage's order (its largest resident size left for the caller).
func threadUsage() ([usageCount]uint64, bool) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return [usageCount]uint64{}, false
	}
	var u [usageCount]uint64
	u[usageUtimeMicros] = uint64(ru.Utime.Sec)*1e6 + uint64(ru.Utime.Usec)
	u[usageStimeMicros] = uint64(ru.Stime.Sec)*1e6 + uint64(ru.Stime.Usec)
	u[usageMinflt] = uint64(ru.Minflt)
	u[usageMajflt] = uint64(ru.Majflt)
	u[usageInblock] = uint64(ru.Inblock)
	u[usageOublock] = uint64(ru.Oublock)
	u[usageNvcsw] = uint64(ru.Nvcsw)
	u[usageNivcsw] = uint64(ru.Nivcsw)
	return u, true
}
