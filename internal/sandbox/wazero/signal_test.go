package wazero

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/tetratelabs/wazero/sys"

	"github.com/apysup/apysup/internal/sandbox"
)

// classify names a guest's own death by signal as the native backend
// does, and the contexts still decide first.
func TestClassifySignaled(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    guestEnd
		how    ending
		status sandbox.Status
		code   string
		exit   int
	}{
		{"term", guestEnd{kind: endSignaled, signal: 15}, ending{}, sandbox.StatusError, "killed_by_signal:SIGTERM", 143},
		{"abort", guestEnd{kind: endSignaled, signal: 6}, ending{}, sandbox.StatusError, "killed_by_signal:SIGABRT", 134},
		{"after a refused grow", guestEnd{kind: endSignaled, signal: 6}, ending{memoryRefused: true}, sandbox.StatusMemoryLimit, "", 134},
		{"while canceled", guestEnd{kind: endSignaled, signal: 9}, ending{canceled: true}, sandbox.StatusKilled, ErrorCodeCanceled, noExitStatus},
		{"while timed out", guestEnd{kind: endSignaled, signal: 15}, ending{timedOut: true}, sandbox.StatusTimeout, "", noExitStatus},
		{"a trap", guestEnd{kind: endTrapped}, ending{}, sandbox.StatusError, ErrorCodeTrap, noExitStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := sandbox.Outcome{ExitCode: noExitStatus} // as Run starts it
			classify(&out, tc.end, tc.how)
			if out.Status != tc.status || out.ErrorCode != tc.code || out.ExitCode != tc.exit {
				t.Fatalf("status %s code %q exit %d, want %s %q %d", out.Status, out.ErrorCode, out.ExitCode, tc.status, tc.code, tc.exit)
			}
		})
	}
}

// A guest's fault in wasm ends as the fault's signal ends a native
// process; a host function's panic and anything unknown stay wasm_trap.
// The errors are built as wazero builds them (internal/wasmdebug's
// FromRecovered).
func TestTrapSignal(t *testing.T) {
	wasm := func(msg string) error {
		return fmt.Errorf("wasm error: %w\nwasm stack trace:\n\tpython.wasm.$1234()", errors.New(msg))
	}
	for _, tc := range []struct {
		name string
		err  error
		end  guestEnd
	}{
		{"stack overflow", wasm("stack overflow"), guestEnd{kind: endSignaled, signal: 11}},
		{"out of bounds", wasm("out of bounds memory access"), guestEnd{kind: endSignaled, signal: 11}},
		{"bad table entry", wasm("invalid table access"), guestEnd{kind: endSignaled, signal: 11}},
		{"bad function type", wasm("indirect call type mismatch"), guestEnd{kind: endSignaled, signal: 11}},
		{"divide by zero", wasm("integer divide by zero"), guestEnd{kind: endSignaled, signal: 8}},
		{"INT_MIN / -1", wasm("integer overflow"), guestEnd{kind: endSignaled, signal: 8}},
		{"unreachable", wasm("unreachable"), guestEnd{kind: endSignaled, signal: 4}},
		{"NaN to integer", wasm("invalid conversion to integer"), guestEnd{kind: endTrapped}},
		{"a host function's panic", fmt.Errorf("%w (recovered by wazero)\nwasm stack trace:\n\tx", errors.New("stack overflow")), guestEnd{kind: endTrapped}},
		{"a message that only mentions one", fmt.Errorf("host: %w", errors.New("stack overflow")), guestEnd{kind: endTrapped}},
		{"unwrapped", errors.New("wasm error: stack overflow\n"), guestEnd{kind: endTrapped}},
		{"exit", sys.NewExitError(3), guestEnd{kind: endExited, exitCode: 3}},
		{"returned", nil, guestEnd{kind: endReturned}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := endOf(tc.err); got != tc.end {
				t.Fatalf("endOf: %+v, want %+v", got, tc.end)
			}
		})
	}
	out := sandbox.Outcome{ExitCode: noExitStatus}
	classify(&out, endOf(wasm("stack overflow")), ending{})
	if out.Status != sandbox.StatusError || out.ErrorCode != "killed_by_signal:SIGSEGV" || out.ExitCode != 139 {
		t.Fatalf("a stack overflow: %s %q %d, want error killed_by_signal:SIGSEGV 139", out.Status, out.ErrorCode, out.ExitCode)
	}
}

// wazero's own runtime errors, as its compiler returns them: a recursion
// without end ends at wazero's stack ceiling with its "stack overflow"
// unwrapped (callEngine.growStack), a trap inside the code wrapped as
// "wasm error: ...". Both are the guest's fault, SIGSEGV and SIGFPE.
func TestTrapSignalOfWazerosOwnErrors(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig())
	defer rt.Close(ctx)
	// (func $recurse (call $recurse)) (func $div (i32.div_u (i32.const 1) (i32.const 0)) drop)
	bin := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 4, 1, 0x60, 0, 0, // type () -> ()
		3, 3, 2, 0, 0, // two functions of it
		7, 17, 2, 7, 'r', 'e', 'c', 'u', 'r', 's', 'e', 0, 0, 3, 'd', 'i', 'v', 0, 1,
		10, 15, 2,
		4, 0, 0x10, 0, 0x0b, // call 0
		8, 0, 0x41, 1, 0x41, 0, 0x6e, 0x1a, 0x0b, // i32.div_u; drop
	}
	mod, err := rt.Instantiate(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]guestEnd{
		"recurse": {kind: endSignaled, signal: int32(syscall.SIGSEGV)},
		"div":     {kind: endSignaled, signal: int32(syscall.SIGFPE)},
	} {
		_, err := mod.ExportedFunction(name).Call(ctx)
		if got := endOf(err); got != want {
			t.Errorf("%s: %v: %+v, want %+v", name, err, got, want)
		}
	}
	if isRuntimeError(errors.New("stack overflow")) || isRuntimeError(nil) {
		t.Fatal("a host error read as wazero's own")
	}
}
