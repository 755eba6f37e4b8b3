package wazero

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The out directory (sandbox.GuestOutDir) of a run is a host directory the
// guest writes and the host reads back and removes. With a Job.RunDir (the
// supervisor's run directory, which its next start sweeps if it died) it
// is made there. Without one, it is made in a directory of its own under
// os.TempDir, named apysup-wazero-<random>, that holds a lock file besides
// it (out of the guest's reach) for as long as the run lasts: a process
// that dies (SIGKILL, power loss) cannot remove it, and the next Load in
// any process removes every such directory whose lock it can take.
const (
	tempDirPrefix = "apysup-wazero-"
	tempLockName  = ".lock"
	tempOutName   = "out"
	// tempLockGrace covers the instant between making a directory and
	// locking it: a directory younger than this is left alone.
	tempLockGrace = time.Minute
)

// makeOutDir makes a run's out directory and returns it with the function
// that removes it.
func makeOutDir(runDir string) (string, func(), error) {
	if runDir != "" {
		out, err := os.MkdirTemp(runDir, "wazero-out-")
		if err != nil {
			return "", nil, err
		}
		return out, func() { os.RemoveAll(out) }, nil
	}
	dir, err := os.MkdirTemp("", tempDirPrefix)
	if err != nil {
		return "", nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, tempLockName), os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err == nil {
		err = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	out := filepath.Join(dir, tempOutName)
	if err == nil {
		err = os.Mkdir(out, 0o700)
	}
	remove := func() {
		os.RemoveAll(dir)
		if lock != nil {
			lock.Close() // after the removal: a sweeper never sees it unlocked
		}
	}
	if err != nil {
		remove()
		return "", nil, err
	}
	return out, remove, nil
}

// sweepTempDirs removes the standalone out directories under tmp whose
// process died.
func sweepTempDirs(tmp string) error {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), tempDirPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if abandonedTempDir(dir) {
			errs = append(errs, os.RemoveAll(dir))
		}
	}
	return errors.Join(errs...)
}

// abandonedTempDir reports whether no live run holds dir's lock. A
// directory younger than tempLockGrace is left alone even unlocked: its
// maker may be between creating the lock file and taking the lock.
func abandonedTempDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || time.Since(fi.ModTime()) < tempLockGrace {
		return false
	}
	lock, err := os.OpenFile(filepath.Join(dir, tempLockName), os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer lock.Close()
	return unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}
