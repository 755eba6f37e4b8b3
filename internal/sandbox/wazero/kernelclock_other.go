//go:build !linux

package wazero

// kernelClock: Linux's further clocks exist only on Linux (wasiclock.go).
func kernelClock(int32) (int64, bool) { return 0, false }

// kernelClockRes: as kernelClock.
func kernelClockRes(int32) (int64, bool) { return 0, false }
