package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	// Hidden and young, with a maker's tag: kept while the maker lives
	// (this process), swept at once when it is gone (a pid no process
	// has; this process's pid with another start time: a reused pid).
	mine := filepath.Join(parent, ".apysup-x-mine-1"+makerTag)
	gone := filepath.Join(parent, ".apysup-x-gone-1~"+strconv.Itoa(exitedPID(t))+".1")
	reused := filepath.Join(parent, fmt.Sprintf(".apysup-x-reused-1~%d.1", os.Getpid()))
	for _, d := range []string{young, old, other, mine, gone, reused} {
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
	if makerTag == "" {
		t.Fatal("no maker's tag: /proc/self/stat unreadable")
	}
	for path, want := range map[string]bool{live.Path: true, dead.Path: false, unlocked.Path: false, young: true, old: false, other: true,
		mine: true, gone: false, reused: false} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(path), err == nil, want)
		}
	}
	if len(swept) != 5 {
		t.Errorf("before ran on %v, want the five swept", swept)
	}
}

// exitedPID is the pid of a process that has exited and been reaped.
func exitedPID(t *testing.T) int {
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestNewLockedDirNamesItsMaker: the final name has no tag, and the maker's
// start time is this process's.
func TestNewLockedDirNamesItsMaker(t *testing.T) {
	d, err := NewLockedDir(t.TempDir(), "apysup-x-")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Remove()
	if base := filepath.Base(d.Path); !strings.HasPrefix(base, "apysup-x-") || strings.Contains(base, "~") {
		t.Errorf("final name %q", base)
	}
	start, ok := processStart(os.Getpid())
	if !ok || makerTag != fmt.Sprintf("~%d.%d", os.Getpid(), start) {
		t.Errorf("maker's tag %q, start %d %v", makerTag, start, ok)
	}
	if makerGone(".apysup-x-1" + makerTag) {
		t.Error("this process is gone, says makerGone")
	}
}
