package supervisor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"

	"github.com/apysup/apysup/internal/sandbox"
)

// TestSweepRunDirs: the supervisor sweeps the runs roots of dead
// supervisors and the run directories of earlier versions
// (sandbox.SweepLockedDirs), mounts and all, and nothing else in its
// state dir: not a live supervisor's root.
func TestSweepRunDirs(t *testing.T) {
	state := t.TempDir()
	var live runsRoot
	liveRun, err := live.newRunDir(state)
	if err != nil {
		t.Fatal(err)
	}
	defer live.close()
	// A dead supervisor's root, its lock file unlocked (the kernel drops a
	// dead process's locks), its tmpfs and a run's workspace and wazero
	// /tmp still mounted (as root only).
	deadRoot := filepath.Join(state, runsRootPrefix+"1-1")
	deadRun := filepath.Join(deadRoot, runsRootTmpfs, "1")
	if err := os.MkdirAll(filepath.Dir(deadRun), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deadRoot, ".lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.MountTmpfs(filepath.Dir(deadRun), 0o700, 1<<20, 64); err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(state, "apysup-run-old-1")
	other := filepath.Join(state, "something-else")
	mounts := []string{filepath.Join(deadRun, workspaceName), filepath.Join(deadRun, "wazero-1", "tmp"), filepath.Join(legacy, workspaceName)}
	for _, d := range append(mounts, other) {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range mounts {
		if _, err := sandbox.MountTmpfs(m, 0o700, 1<<20, 64); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * sandbox.LockGrace)
	for _, d := range []string{legacy, other} {
		os.Chtimes(d, past, past)
	}
	if err := sweepRunDirs(state); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{liveRun: true, deadRoot: false, legacy: false, other: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", strings.TrimPrefix(path, state), err == nil, want)
		}
	}
	for _, d := range []string{deadRoot, legacy} {
		if left, err := mountinfo.GetMounts(mountinfo.PrefixFilter(d)); err != nil || len(left) != 0 {
			t.Errorf("mounts left under the swept %s: %d (%v)", filepath.Base(d), len(left), err)
		}
	}
}

// A runs root is one directory in the state dir, a tmpfs as root, and
// nothing is left of it after close; run directories in it are short
// enough for the channel's socket below them.
func TestRunsRoot(t *testing.T) {
	state := t.TempDir()
	var r runsRoot
	a, err := r.newRunDir(state)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.newRunDir(state)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Dir(a) != filepath.Dir(b) {
		t.Fatalf("run dirs %s and %s", a, b)
	}
	entries, _ := os.ReadDir(state)
	if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), runsRootPrefix) {
		t.Fatalf("state dir holds %v", entries)
	}
	if os.Geteuid() == 0 {
		if m, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(filepath.Dir(a))); err != nil || len(m) != 1 || m[0].FSType != "tmpfs" {
			t.Fatalf("runs root mount: %v %v", m, err)
		}
	}
	// The run dir's part of the channel socket's path (the rpc package
	// adds /apysup-run-<10 digits>/rpc.sock, 31 bytes): at most 44 bytes
	// past the state dir with a 7-digit pid, where a run directory made
	// in the state dir itself took 47.
	if n := len(a) - len(state) - len(strconv.Itoa(os.Getpid())); n > 44-7 {
		t.Errorf("run dir %s is %d bytes past the state dir", a, n)
	}
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Fatalf("state dir holds %v after close", entries)
	}
	if m, _ := mountinfo.GetMounts(mountinfo.PrefixFilter(state)); len(m) != 0 {
		t.Fatalf("mounts left: %v", m)
	}
}
