package sandbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A LockedDir is a host directory that holds a lock file for as long as
// the process that made it runs. A process that dies (SIGKILL, power loss)
// cannot remove its directories; the kernel drops its locks, and the next
// SweepLockedDirs in the same parent removes them. The supervisor's run
// directories and the wazero backend's standalone out directories are
// both LockedDirs.
type LockedDir struct {
	Path string
	lock *os.File
}

const (
	lockedDirLock = ".lock"
	// LockGrace covers the instant between making a directory and locking
	// it: a directory younger than this is never swept, locked or not.
	LockGrace = time.Minute
)

// NewLockedDir makes a directory in parent named prefix+<random> and locks
// it. The directory is made and locked under a hidden name ("." first)
// and then renamed: a directory under its final name is always locked by
// its maker until it is removed, so a sweeper can take an unlocked one at
// once, and only a hidden one waits out LockGrace.
//
// The hidden name ends with its maker's tag, "~PID.START" (START: the
// process's start time since boot, /proc/PID/stat): a sweeper removes a
// hidden directory at once when that process is gone, and waits out
// LockGrace only for one whose maker it cannot check (no tag, no /proc).
// A server killed between making a run's directory and renaming it
// otherwise left it to the next server for a minute (TestServeLoadThenKill).
func NewLockedDir(parent, prefix string) (*LockedDir, error) {
	hidden, err := os.MkdirTemp(parent, "."+prefix+"*"+makerTag)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(hidden), "."), makerTag)
	path := filepath.Join(filepath.Dir(hidden), name) // parent "" is os.TempDir
	lock, err := os.OpenFile(filepath.Join(hidden, lockedDirLock), os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err == nil {
		err = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err == nil {
		err = renameNoReplace(hidden, path)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(hidden)
		return nil, err
	}
	return &LockedDir{Path: path, lock: lock}, nil
}

// Remove deletes the directory, then drops the lock (so that a sweeper
// never finds it unlocked while it still exists).
func (d *LockedDir) Remove() error {
	err := os.RemoveAll(d.Path)
	d.lock.Close()
	return err
}

// SweepLockedDirs removes the directories in parent named prefix* whose
// maker died, calling before (if not nil) on each first (to detach a mount
// in it, say).
func SweepLockedDirs(parent, prefix string, before func(path string)) error {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		hidden := strings.HasPrefix(e.Name(), "."+prefix)
		if !e.IsDir() || !(hidden || strings.HasPrefix(e.Name(), prefix)) {
			continue
		}
		path := filepath.Join(parent, e.Name())
		if !abandonedDir(path, hidden) {
			continue
		}
		if before != nil {
			before(path)
		}
		errs = append(errs, os.RemoveAll(path))
	}
	return errors.Join(errs...)
}

// abandonedDir reports whether no live process holds path's lock. A
// hidden directory (made, not yet renamed) may still be on its way to
// being locked: it is abandoned once its maker is gone, or after
// LockGrace when its maker cannot be checked.
func abandonedDir(path string, hidden bool) bool {
	fi, err := os.Lstat(path)
	if err != nil || (hidden && time.Since(fi.ModTime()) <= LockGrace && !makerGone(filepath.Base(path))) {
		return false
	}
	lock, err := os.OpenFile(filepath.Join(path, lockedDirLock), os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer lock.Close()
	return unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}

// makerTag ends the hidden name of this process's directories: "~PID.START",
// or "" where the start time cannot be read.
var makerTag = func() string {
	pid := os.Getpid()
	start, ok := processStart(pid)
	if !ok {
		return ""
	}
	return "~" + strconv.Itoa(pid) + "." + strconv.FormatUint(start, 10)
}()

// makerGone reports whether the hidden directory name carries a maker's
// tag and that process is gone (no such pid, or a pid reused by a process
// started at another time).
func makerGone(name string) bool {
	i := strings.LastIndexByte(name, '~')
	if i < 0 {
		return false
	}
	pidText, startText, ok := strings.Cut(name[i+1:], ".")
	pid, err1 := strconv.Atoi(pidText)
	start, err2 := strconv.ParseUint(startText, 10, 64)
	if !ok || err1 != nil || err2 != nil || pid <= 0 {
		return false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return false // no /proc here: nothing to check against
	}
	now, alive := processStart(pid)
	return !alive || now != start
}

// processStart is pid's start time in clock ticks since boot (field 22
// of /proc/PID/stat, read after the command name, which may hold spaces
// and parentheses).
func processStart(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(b[i+1:])) // state is field 3
	if len(fields) < 20 {
		return 0, false
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	return start, err == nil
}
