package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepRemovesOnlyAbandonedDirs: a sweep removes the directories whose
// maker died (old, unlocked, or without a lock file), and leaves live
// ones, young ones (their maker may be about to lock them) and other names.
func TestSweepRemovesOnlyAbandonedDirs(t *testing.T) {
	parent := t.TempDir()
	live, err := NewLockedDir(parent, "apysup-x-live-")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	dead, err := NewLockedDir(parent, "apysup-x-dead-")
	if err != nil {
		t.Fatal(err)
	}
	dead.lock.Close() // what the kernel does when the owner dies
	unlocked, err := NewLockedDir(parent, "apysup-x-unlocked-")
	if err != nil {
		t.Fatal(err)
	}
	unlocked.lock.Close()                               // its maker died at once: a visible directory is swept at any age
	young := filepath.Join(parent, ".apysup-x-young-1") // hidden: maybe being locked now
	old := filepath.Join(parent, ".apysup-x-old-1")     // hidden, older than LockGrace: its maker died
	other := filepath.Join(parent, "something-else")
	for _, d := range []string{young, old, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * LockGrace)
	for _, d := range []string{old, dead.Path, live.Path, other} {
		os.Chtimes(d, past, past)
	}
	var swept []string
	if err := SweepLockedDirs(parent, "apysup-x-", func(p string) { swept = append(swept, filepath.Base(p)) }); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{live.Path: true, dead.Path: false, unlocked.Path: false, young: true, old: false, other: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(path), err == nil, want)
		}
	}
	if len(swept) != 3 {
		t.Errorf("before ran on %v, want the three swept", swept)
	}
}
