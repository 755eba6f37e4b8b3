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

// glibc's answers where it cannot read the kernel's: legacy_ARG_MAX, and
// the NGROUPS_MAX and MINSIGSTKSZ of its headers.
const (
	glibcArgMax      = 131072
	glibcNgroupsMax  = 65536
	glibcMinSigstksz = 2048
	atMinSigstksz    = 51 // AT_MINSIGSTKSZ, the auxiliary vector's entry
)

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

// sysconfLimits is glibc's sysconf answer, in writeLimits' order, for the
// names that depend on the process or the kernel, for a guest that may
// hold openFiles files: from the rlimits a native guest inherits from the
// supervisor as this process does (the wazero child sets only
// RLIMIT_NOFILE, RLIMIT_FSIZE and RLIMIT_CORE, and the native sandbox
// only those, RLIMIT_CPU, RLIMIT_NICE and RLIMIT_RTPRIO), read at each
// call as glibc reads them. RLIM_INFINITY is -1 as a 64-bit integer.
// They are read with prlimit64 of pid 0, which the wazero child's seccomp
// filter allows (getrlimit, unix.Getrlimit's call on amd64, it does not).
func sysconfLimits(openFiles uint64) ([limitCount]uint64, bool) {
	var stack, nproc, sigpending unix.Rlimit
	if unix.Prlimit(0, unix.RLIMIT_STACK, nil, &stack) != nil ||
		unix.Prlimit(0, unix.RLIMIT_NPROC, nil, &nproc) != nil ||
		unix.Prlimit(0, unix.RLIMIT_SIGPENDING, nil, &sigpending) != nil {
		return [limitCount]uint64{}, false
	}
	kernel := kernelLimits()
	var limits [limitCount]uint64
	limits[limitArgMax] = max(glibcArgMax, stack.Cur/4)
	limits[limitChildMax] = nproc.Cur
	limits[limitNgroupsMax] = kernel[0]
	limits[limitOpenMax] = openFiles
	limits[limitSigqueueMax] = sigpending.Cur
	limits[limitMinSigstksz] = kernel[1]
	return limits, true
}
