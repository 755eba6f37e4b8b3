package native

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/sandbox"
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
