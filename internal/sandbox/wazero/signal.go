package wazero

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"syscall"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// A guest that signals itself to death ends as killed by the signal, as
// the native guest does. WASI has no signals: wasi-libc emulates them in
// the process, and a signal whose default action ends the process
// (os.kill(os.getpid(), SIGTERM), signal.raise_signal, os.abort) printed a
// line and trapped. The WASI build's raise and abort
// (python/wasi/_apysup_signal.c) call apysup_proc.exit_by_signal(sig)
// instead, which ends the guest; the run is then an error
// killed_by_signal:SIGNAME with exit status 128+sig, as natively.
//
// Like an exit status, the signal is the guest's own choice, evidence
// about the guest only (classify): a guest that calls the function itself
// only claims the ending it could have had by raising the signal.

const (
	procModule       = "apysup_proc"
	exitBySignalName = "exit_by_signal"
	// memoryRefusedName is called by the WASI build's interpreter for
	// every MemoryError it raises for an allocation it could not make
	// (python/wasi/patches/python3.11/wasi-memory-refused.patch).
	memoryRefusedName = "memory_refused"
	// maxSignal is the highest signal number (Linux's _NSIG - 1).
	maxSignal = 64
)

// signaledKey carries a guest's *int32, where exit_by_signal records the
// signal, from startGuest to hostExitBySignal.
type signaledKey struct{}

func exportProc(ctx context.Context, rt wazero.Runtime) error {
	_, err := rt.NewHostModuleBuilder(procModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostExitBySignal), []api.ValueType{api.ValueTypeI32}, nil).
		WithParameterNames("sig").
		Export(exitBySignalName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostItimer),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI64, api.ValueTypeI32, api.ValueTypeI32},
			[]api.ValueType{api.ValueTypeI32}).
		WithParameterNames("which", "set", "value_ns", "interval_ns", "old", "words").
		Export(itimerName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostMemoryRefused), nil, nil).
		Export(memoryRefusedName).
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("wazero: proc module: %w", err)
	}
	return nil
}

// hostExitBySignal is apysup_proc.exit_by_signal(sig): it never returns.
// It ends the module as WASI's proc_exit does, with 128+sig, after
// recording sig; a number that is no signal is a trap.
func hostExitBySignal(ctx context.Context, mod api.Module, stack []uint64) {
	sig := api.DecodeI32(stack[0])
	if sig < 1 || sig > maxSignal {
		panic(fmt.Errorf("%s.%s: %d is no signal", procModule, exitBySignalName, sig))
	}
	if p, ok := ctx.Value(signaledKey{}).(*int32); ok {
		*p = sig
	}
	code := uint32(128 + sig)
	_ = mod.CloseWithExitCode(ctx, code)
	panic(sys.NewExitError(code))
}

// hostMemoryRefused is apysup_proc.memory_refused(): the guest could not
// allocate (linearMemory.allocationFailed). Like a refused grow, which a
// guest can always provoke, it only makes a run that failed a
// memory_limit (classify).
func hostMemoryRefused(ctx context.Context, _ api.Module, _ []uint64) {
	if l, ok := ctx.Value(rlimitsKey{}).(*guestLimits); ok && l.mem != nil {
		l.mem.allocationFailed()
	}
}

// trapSignals names, for each of wazero's runtime errors that stands for a
// fault of the CPU natively, the signal the kernel sends a native process
// for it: a C stack that ran out (a script that recursed through C, such
// as repr() of a list nested a million deep once the recursion limit was
// raised) is SIGSEGV natively, where wasm traps with "stack overflow"; an
// access out of bounds or a call through a bad function pointer is
// SIGSEGV, an integer division by zero or INT_MIN / -1 SIGFPE, clang's
// __builtin_trap (wasm's unreachable, ud2 natively) SIGILL. The run is then
// an error killed_by_signal:SIGNAME, exit status 128+N, as natively. A
// float-to-integer conversion of NaN (natively no fault) and anything
// else stays wasm_trap.
var trapSignals = map[string]syscall.Signal{
	"stack overflow":              syscall.SIGSEGV,
	"out of bounds memory access": syscall.SIGSEGV,
	"invalid table access":        syscall.SIGSEGV,
	"indirect call type mismatch": syscall.SIGSEGV,
	"integer divide by zero":      syscall.SIGFPE,
	"integer overflow":            syscall.SIGFPE,
	"unreachable":                 syscall.SIGILL,
}

// trapSignal is the signal for a guest's trap (trapSignals), 0 when the
// error is none of wazero's runtime errors. wazero wraps the runtime's own
// error, and only it, as "wasm error: %w" (internal/wasmdebug): a host
// function's panic, ours included, is "... (recovered by wazero)" and
// keeps wasm_trap. One runtime error comes unwrapped: the compiled code's
// stack grown past its ceiling (the run's memory limit, which counts it
// with the linear memory: linearMemory.ChargeStack) is its
// *wasmruntime.Error "stack overflow" as it is (callEngine.growStack);
// natively that is SIGSEGV too.
func trapSignal(err error) syscall.Signal {
	if isRuntimeError(err) {
		return trapSignals[err.Error()]
	}
	inner := errors.Unwrap(err)
	if inner == nil || !strings.HasPrefix(err.Error(), "wasm error: "+inner.Error()+"\n") {
		return 0
	}
	return trapSignals[inner.Error()]
}

// wasmRuntimeErrorPkg is the package of wazero's runtime errors' type,
// wasmruntime.Error, internal to wazero.
const wasmRuntimeErrorPkg = wazeroModule + "/internal/wasmruntime"

// isRuntimeError reports whether err is one of wazero's runtime errors
// itself, unwrapped: its type is internal to wazero, so it is matched by
// its package and name (a host error never has it).
func isRuntimeError(err error) bool {
	t := reflect.TypeOf(err)
	return t != nil && t.Kind() == reflect.Pointer && t.Elem().PkgPath() == wasmRuntimeErrorPkg && t.Elem().Name() == "Error"
}
