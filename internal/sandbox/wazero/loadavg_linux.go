package wazero

import (
	"os"

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
