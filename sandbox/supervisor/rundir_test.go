package supervisor

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSweepRemovesOnlyAbandonedRunDirs(t *testing.T) {
	state := t.TempDir()
	live, err := newRunDir(state, "run-live")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	dead, err := newRunDir(state, "run-dead")
	if err != nil {
		t.Fatal(err)
	}
	dead.lock.Close() // what the kernel does when the owner dies
	young := filepath.Join(state, "apysup-run-young-1")
	old := filepath.Join(state, "apysup-run-old-1")
	other := filepath.Join(state, "something-else")
	for _, d := range []string{young, old, other} {
		if err := os.MkdirAll(filepath.Join(d, "workspace"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Between creating its lock file and locking it, a new run directory
	// looks abandoned but for its age.
	unlocked, err := newRunDir(state, "run-unlocked")
	if err != nil {
		t.Fatal(err)
	}
	unlocked.lock.Close()
	past := time.Now().Add(-2 * lockGrace)
	for _, d := range []string{old, dead.path} {
		os.Chtimes(d, past, past)
	}
	if err := sweepRunDirs(state); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{live.path: true, dead.path: false, unlocked.path: true, young: true, old: false, other: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(path), err == nil, want)
		}
	}
}
