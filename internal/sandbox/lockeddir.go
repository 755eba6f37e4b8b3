package sandbox

import (
	"errors"
	"os"
	"path/filepath"
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
func NewLockedDir(parent, prefix string) (*LockedDir, error) {
	hidden, err := os.MkdirTemp(parent, "."+prefix)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(filepath.Dir(hidden), strings.TrimPrefix(filepath.Base(hidden), ".")) // parent "" is os.TempDir
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
// being locked: it is abandoned only after LockGrace.
func abandonedDir(path string, hidden bool) bool {
	fi, err := os.Lstat(path)
	if err != nil || (hidden && time.Since(fi.ModTime()) <= LockGrace) {
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
