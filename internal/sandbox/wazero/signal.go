package wazero

import (
	"context"
	"fmt"

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
