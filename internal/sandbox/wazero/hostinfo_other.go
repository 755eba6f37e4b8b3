//go:build !linux

package wazero

// loadavg is unknown off Linux: the guest's os.getloadavg() then fails as
// a native one that cannot read its load does.
func loadavg() ([3]float64, bool) { return [3]float64{}, false }

// memoryPages is unknown off Linux: the guest's sysconf then answers as
// wasi-libc's.
func memoryPages() ([3]uint64, bool) { return [3]uint64{}, false }

// kernelLimits has nothing to read off Linux.
func kernelLimits() [2]uint64 { return [2]uint64{} }

// sysconfLimits is unknown off Linux: the guest's sysconf then answers
// wasi-libc's answers for the six names.
func sysconfLimits(uint64) ([limitCount]uint64, bool) { return [limitCount]uint64{}, false }
