package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Run directories are named apysup-run-<id>-<random> in the state directory
// and hold a lock file for as long as their supervisor runs them. A
// supervisor that dies (SIGKILL, power loss) cannot remove its directory;
// the next supervisor in the same state directory does, once it can take
// the lock, which the kernel released when the owner died.
const (
	runDirPrefix  = "apysup-run-"
	lockName      = ".lock"
	workspaceName = "workspace"
	// lockGrace covers the instant between creating a directory and locking
	// it: an unlocked directory younger than this is left alone.
	lockGrace = time.Minute
)

// runDir is one run's host directory, locked while in use.
type runDir struct {
	path string
	lock *os.File
}

func newRunDir(stateDir, runID string) (*runDir, error) {
	path, err := os.MkdirTemp(stateDir, "apysup-"+runID+"-")
	if err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(path, lockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(path)
		return nil, err
	}
	return &runDir{path: path, lock: lock}, nil
}

// Remove deletes the directory, then drops the lock.
func (d *runDir) Remove() error {
	err := os.RemoveAll(d.path)
	d.lock.Close()
	return err
}

// sweepRunDirs removes the run directories of supervisors that died.
func sweepRunDirs(stateDir string) error {
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), runDirPrefix) {
			continue
		}
		path := filepath.Join(stateDir, e.Name())
		if stale, err := abandoned(path); err != nil {
			errs = append(errs, err)
		} else if stale {
			unmountStale(filepath.Join(path, workspaceName))
			errs = append(errs, os.RemoveAll(path))
		}
	}
	return errors.Join(errs...)
}

// abandoned reports whether no live supervisor holds path's lock. A
// directory younger than lockGrace is never abandoned, locked or not: its
// supervisor may be between creating the lock file and locking it.
func abandoned(path string) (bool, error) {
	info, err := os.Lstat(path)
	if err != nil || time.Since(info.ModTime()) <= lockGrace {
		return false, nil
	}
	lock, err := os.OpenFile(filepath.Join(path, lockName), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false, nil // held: its supervisor is alive
	}
	return true, nil
}
