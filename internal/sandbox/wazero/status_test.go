package wazero

import (
	"context"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

// Statuses come from host evidence only: whatever code the guest exits
// with, wazero's own codes for a closed context included, is an exit
// status (its low 8 bits, as the kernel keeps), and a MemoryError the
// guest raises itself is no memory limit.
func TestGuestCannotFakeHostStatuses(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		exit         int
	}{
		{"canceled (sys.ExitCodeContextCanceled)", "import os\nos._exit(-1)", 255},
		{"timeout (sys.ExitCodeDeadlineExceeded)", "import os\nos._exit(-268435457)", 255},
		{"0xdeadbeef", "import os\nos._exit(-559038737)", 0xef},
		{"exit 137", "import os\nos._exit(137)", 137},
		{"sys.exit(-1)", "import sys\nsys.exit(-1)", 255},
		{"MemoryError", "raise MemoryError('fake')", 1},
		{"MemoryError exit", "import sys\nprint('MemoryError', file=sys.stderr)\nsys.exit(137)", 137},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := run(t, tc.script, runOpts{})
			if out.Status != sandbox.StatusError || out.ErrorCode != "" || out.ExitCode != tc.exit {
				t.Fatalf("status %s code %q exit %d, want error, no code, exit %d; stderr %s",
					out.Status, out.ErrorCode, out.ExitCode, tc.exit, out.Stderr)
			}
		})
	}
}

// The host's own evidence still decides: its timer, its caller's context
// (even when the guest then exits by itself with a code of its own), its
// allocator.
func TestHostEndingsWin(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		cancel()
		return nil // the guest gets AmbiguousOutcome and exits 0 by itself
	})
	out := run(t, callScript(`b'{"call_id":"capability-1","capability":"echo","arguments":{}}'`)+"import os\nos._exit(0)\n",
		runOpts{d: d, ctx: ctx})
	if out.Status != sandbox.StatusKilled || out.ErrorCode != ErrorCodeCanceled || out.ExitCode != -1 {
		t.Fatalf("canceled: status %s code %q exit %d stdout %s", out.Status, out.ErrorCode, out.ExitCode, out.Stdout)
	}
	out = run(t, "try:\n    x = bytearray(1 << 30)\nexcept MemoryError:\n    pass\nimport os\nos._exit(3)\n",
		runOpts{limits: sandbox.Limits{MemoryBytes: 64 << 20}})
	if out.Status != sandbox.StatusMemoryLimit || out.ExitCode != 3 {
		t.Fatalf("refused grow: status %s exit %d", out.Status, out.ExitCode)
	}
}
