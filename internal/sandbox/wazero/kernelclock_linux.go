package wazero

import "golang.org/x/sys/unix"

// kernelClock reads Linux's clock id, one the native guest reads too
// (wasiclock.go): its time in nanoseconds, or false where this kernel
// has no such clock.
func kernelClock(id int32) (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(id, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// kernelClockRes is that clock's resolution in nanoseconds.
func kernelClockRes(id int32) (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGetres(id, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
