package supervisor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
)

// TestSweepRunDirs: the supervisor sweeps its own abandoned run
// directories (sandbox.SweepLockedDirs), nothing else in its state dir.
func TestSweepRunDirs(t *testing.T) {
	state := t.TempDir()
	live, err := newRunDir(state, "run-live")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	old := filepath.Join(state, "apysup-run-old-1")
	other := filepath.Join(state, "something-else")
	for _, d := range []string{old, other} {
		if err := os.MkdirAll(filepath.Join(d, workspaceName), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * sandbox.LockGrace)
	for _, d := range []string{old, other, live.Path} {
		os.Chtimes(d, past, past)
	}
	if err := sweepRunDirs(state); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{live.Path: true, old: false, other: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(path), err == nil, want)
		}
	}
}
