package wazero

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"golang.org/x/sys/unix"
)

// The guest's clocks. wazero's clock_time_get and clock_res_get know only
// the realtime and monotonic clocks and answer EINVAL for the CPU-time
// clocks, so CPython's time.process_time() fell back to wasi-libc's
// emulated times(), which counts nanoseconds where CPython divides by
// sysconf(_SC_CLK_TCK) ticks: 10**7 times too large, and wall time rather
// than CPU time. These two functions replace wazero's: the CPU-time clocks
// read the guest's CPU time (guestCPU), as the native guest's read its
// interpreter's, and the wall clock reports the nanosecond resolution it
// has on Linux, where wazero reports a microsecond everywhere.
//
// They also answer five of Linux's clocks that WASI has not, by Linux's
// ids, which the WASI build's time module hands them
// (python/wasi/_apysup_flags.c): CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME and
// CLOCK_TAI, which the native time module names, and the two coarse
// clocks and the alarm clocks, which a native guest reads by number. They
// are read from this kernel, the native guest's, so they read as natively,
// EINVAL included where it has no such clock; elsewhere they answer
// EINVAL, as an unknown clock does.

// WASI preview 1's clock ids and the errno values these functions return.
const (
	clockRealtime         = 0
	clockMonotonic        = 1
	clockProcessCPUTimeID = 2
	clockThreadCPUTimeID  = 3

	// Linux's ids, past WASI's.
	clockMonotonicRaw    = 4
	clockRealtimeCoarse  = 5
	clockMonotonicCoarse = 6
	clockBoottime        = 7
	clockRealtimeAlarm   = 8
	clockBoottimeAlarm   = 9
	clockTAI             = 11

	wasiErrnoFault = 21
	wasiErrnoInval = 28
)

// kernelClockIDs are the clocks read from the kernel (kernelClock): no
// other id reaches it, a negative one (another process's CPU clock) least
// of all.
var kernelClockIDs = [...]uint32{clockMonotonicRaw, clockRealtimeCoarse, clockMonotonicCoarse,
	clockBoottime, clockRealtimeAlarm, clockBoottimeAlarm, clockTAI}

func isKernelClock(id uint32) bool { return slices.Contains(kernelClockIDs[:], id) }

// cpuKey carries the run's *guestCPU to the clock functions.
type cpuKey struct{}

// exportClocks adds clock_time_get and clock_res_get to the WASI host
// module builder, after wasi_snapshot_preview1's own exports, which they
// override.
func exportClocks(b wazero.HostModuleBuilder) {
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(clockTimeGet),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32},
			[]api.ValueType{api.ValueTypeI32}).
		WithParameterNames("id", "precision", "result.timestamp").
		Export("clock_time_get")
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(clockResGet),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32},
			[]api.ValueType{api.ValueTypeI32}).
		WithParameterNames("id", "result.resolution").
		Export("clock_res_get")
}

// clockTimeGet is clock_time_get(id, precision, result.timestamp) -> errno.
// The precision is a hint, ignored as wazero ignores it.
func clockTimeGet(ctx context.Context, mod api.Module, stack []uint64) {
	var ns int64
	switch id := api.DecodeU32(stack[0]); id {
	case clockRealtime:
		ns = time.Now().UnixNano()
	case clockMonotonic:
		ns = monotonicNow()
	case clockProcessCPUTimeID, clockThreadCPUTimeID:
		cpu, ok := ctx.Value(cpuKey{}).(*guestCPU)
		if !ok {
			stack[0] = wasiErrnoInval
			return
		}
		ns = cpu.now()
	default:
		var ok bool
		if isKernelClock(id) {
			ns, ok = kernelClock(int32(id))
		}
		if !ok {
			stack[0] = wasiErrnoInval
			return
		}
	}
	stack[0] = writeU64(mod, api.DecodeU32(stack[2]), uint64(ns))
}

// clockResGet is clock_res_get(id, result.resolution) -> errno.
func clockResGet(ctx context.Context, mod api.Module, stack []uint64) {
	var res uint64
	switch id := api.DecodeU32(stack[0]); id {
	case clockRealtime:
		res = realtimeResolution()
	case clockMonotonic, clockProcessCPUTimeID, clockThreadCPUTimeID:
		res = 1
	default:
		var r int64
		var ok bool
		if isKernelClock(id) {
			r, ok = kernelClockRes(int32(id))
		}
		if !ok {
			stack[0] = wasiErrnoInval
			return
		}
		res = uint64(r)
	}
	stack[0] = writeU64(mod, api.DecodeU32(stack[1]), res)
}

// realtimeResolution is the wall clock's resolution in nanoseconds:
// time.Now reads clock_gettime(CLOCK_REALTIME) on Linux; elsewhere it is
// wazero's microsecond.
func realtimeResolution() uint64 {
	if runtime.GOOS == "linux" {
		return 1
	}
	return 1000
}

func writeU64(mod api.Module, ptr uint32, v uint64) uint64 {
	if !mod.Memory().WriteUint64Le(ptr, v) {
		return wasiErrnoFault
	}
	return 0
}

// monotonicNow is CLOCK_MONOTONIC (time since boot on Linux, as the native
// guest and wazero's own clock read it), advanced by Go's monotonic clock
// after one system call per process.
func monotonicNow() int64 {
	m := monotonicBase()
	return m.ns + int64(time.Since(m.at))
}

var monotonicBase = sync.OnceValue(func() (m struct {
	ns int64
	at time.Time
}) {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	m.at = time.Now()
	m.ns = ts.Nano()
	return m
})
