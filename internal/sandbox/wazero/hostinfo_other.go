//go:build !linux

package wazero

// loadavg is unknown off Linux: the guest's os.getloadavg() then fails as
// a native one that cannot read its load does.
func loadavg() ([3]float64, bool) { return [3]float64{}, false }

// memoryPages is unknown off Linux: the guest's sysconf then answers as
// wasi-libc's.
func memoryPages() ([3]uint64, bool) { return [3]uint64{}, false }

// kernelLimits has nothing to read off Linux: glibc's own defaults.
func kernelLimits() [2]uint64 { return [2]uint64{glibcNgroupsMax, glibcMinSigstksz} }

// inheritedLimits is unknown off Linux: no limit.
func inheritedLimits() rlimitTable {
	var t rlimitTable
	for r := range t {
		t[r] = [2]uint64{rlimInfinity, rlimInfinity}
	}
	return t
}

// threadUsage is unknown off Linux: resource.getrusage fails there.
func threadUsage() ([usageCount]uint64, bool) { return [usageCount]uint64{}, false }
