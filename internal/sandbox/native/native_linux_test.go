package native

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

func TestHelloWorld(t *testing.T) {
	b := testBackend(t)
	out := run(t, b, "print('hello', 'world')\n", sandbox.Limits{})
	if out.Status != sandbox.StatusOK || out.ExitCode != 0 {
		t.Fatalf("status %s exit %d code %q stderr %q", out.Status, out.ExitCode, out.ErrorCode, out.Stderr)
	}
	if got := string(out.Stdout); got != "hello world\n" {
		t.Errorf("stdout %q", got)
	}
	var g struct {
		ExitCode int `json:"exit_code"`
	}
	if err := json.Unmarshal(out.GuestOutcome, &g); err != nil || g.ExitCode != 0 {
		t.Errorf("guest outcome %q: %v", out.GuestOutcome, err)
	}
	t.Logf("timings %+v usage %+v", out.Timings, out.Usage)
}

func TestExitCodeAndException(t *testing.T) {
	b := testBackend(t)
	for _, tc := range []struct {
		name, script string
		exit         int
		stderr       string
	}{
		{"exit", "import sys\nsys.exit(7)\n", 7, ""},
		{"exception", "raise ValueError('boom')\n", 1, "ValueError: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := run(t, b, tc.script, sandbox.Limits{})
			if out.Status != sandbox.StatusError || out.ExitCode != tc.exit {
				t.Fatalf("status %s exit %d, want error %d; stderr %q", out.Status, out.ExitCode, tc.exit, out.Stderr)
			}
			if !strings.Contains(string(out.Stderr), tc.stderr) {
				t.Errorf("stderr %q lacks %q", out.Stderr, tc.stderr)
			}
		})
	}
}

// The guest modules are compiled once per Backend, not once per run.
func TestGuestFilesPrecompiled(t *testing.T) {
	b := testBackend(t)
	for _, name := range []string{"agent_runtime", "_agent_runtime_wire", "_agent_runtime_host"} {
		if _, err := os.Stat(filepath.Join(b.guestDir, "__pycache__", name+".cpython-311.pyc")); err != nil {
			t.Error(err)
		}
	}
}

// The guest owns the out directory: whatever it leaves as outcome.json, the
// host reads at most a 2 MiB regular file and never follows a link.
func TestGuestOutcomeIsReadSafely(t *testing.T) {
	b := testBackend(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(`{"secret":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const out = "/run/apysup/out/outcome.json"
	for name, script := range map[string]string{
		// The link target is a host path: only the host could resolve it.
		"symlink": "import os\nos.symlink(" + strconv.Quote(secret) + ", '" + out + "')\nos._exit(0)\n",
		"fifo":    "import os\nos.mkfifo('" + out + "')\nos._exit(0)\n",
		"huge":    "import os\nopen('" + out + "', 'w').write('[' + '0,' * (2 << 20) + '0]')\nos._exit(0)\n",
	} {
		t.Run(name, func(t *testing.T) {
			o := run(t, b, script, sandbox.Limits{})
			if o.Status != sandbox.StatusOK || len(o.Stderr) != 0 {
				t.Fatalf("the guest could not set the trap: %s %q", o.Status, o.Stderr)
			}
			if o.GuestOutcome != nil {
				t.Fatalf("guest outcome %.100q read (stderr %q)", o.GuestOutcome, o.Stderr)
			}
			if wantCode := map[string]string{"huge": CodeOutcomeTooLarge}[name]; o.ErrorCode != wantCode {
				t.Errorf("error code %q, want %q", o.ErrorCode, wantCode)
			}
		})
	}
}

// A guest that dies of a signal of its own (here a segfault) ends in error,
// with the signal named: only the host's own decisions make a run killed.
func TestKilledBySignal(t *testing.T) {
	b := testBackend(t)
	out := run(t, b, "import ctypes\nctypes.string_at(0)\n", sandbox.Limits{})
	if out.Status != sandbox.StatusError || out.ErrorCode != CodeKilledBySignal+":SIGSEGV" || out.ExitCode != 128+11 {
		t.Fatalf("status %s code %s exit %d stderr %q", out.Status, out.ErrorCode, out.ExitCode, out.Stderr)
	}
	assertClean(t, b)
}
