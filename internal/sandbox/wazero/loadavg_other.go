//go:build !linux

package wazero

// loadavg is unknown off Linux: the guest's os.getloadavg() then fails as
// a native one that cannot read its load does.
func loadavg() ([3]float64, bool) { return [3]float64{}, false }

// memoryPages is unknown off Linux: the guest's sysconf then answers as
// wasi-libc's.
func memoryPages() ([3]uint64, bool) { return [3]uint64{}, false }
