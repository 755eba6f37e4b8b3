package supervisor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"

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
	// What a dead supervisor left mounted in its run directory: the
	// workspace's tmpfs and a wazero run's /tmp (as root only).
	mounts := []string{filepath.Join(old, workspaceName), filepath.Join(old, "wazero-1", "tmp")}
	if err := os.MkdirAll(mounts[1], 0o700); err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		if _, err := sandbox.MountTmpfs(m, 0o700, 1<<20, 64); err != nil {
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
	if left, err := mountinfo.GetMounts(mountinfo.PrefixFilter(old)); err != nil || len(left) != 0 {
		t.Errorf("mounts left under the swept directory: %d (%v)", len(left), err)
	}
}
