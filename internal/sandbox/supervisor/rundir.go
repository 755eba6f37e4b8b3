package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/apysup/apysup/internal/sandbox"
)

// A Supervisor makes its runs' directories in a runs root of its own: a
// sandbox.LockedDir in the state directory named
// apysup-runs-<pid>-<random>, locked for as long as the Supervisor lives,
// whose subdirectory r is a tmpfs when this process may mount (root). The
// next supervisor in the same state directory sweeps the roots of those
// that died, mounts and all.
//
// The tmpfs makes a run's directories as cheap wherever the state
// directory lies: a run makes five directories and a file there, on its
// result's path, and on a disk file system each costs what a journal does
// (0.45 ms a mkdir on this VM's ext4, whose /tmp and /run are on disk, as
// Debian's /tmp is: STARTUP.md, "An inotify close and directories on
// disk"). Only the host writes in it: a run's workspace and a wazero
// run's out directory and /tmp are tmpfs mounts of their own, bounded by
// the run's limits, and the native guest sees its run directory
// read-only.
const (
	runsRootPrefix = "apysup-runs-"
	runsRootTmpfs  = "r"
	workspaceName  = "workspace"
	// What the root's tmpfs holds is a few directories, a socket and
	// channel.json a run; its bounds are far beyond that.
	runsRootBytes = 64 << 20
	runsRootFiles = 1 << 16
)

// legacyRunDirPrefix names the run directories that earlier versions made
// in the state directory itself, one LockedDir a run; they are swept too.
const legacyRunDirPrefix = "apysup-run-"

// runsRoot is a Supervisor's runs root, made at its first run.
type runsRoot struct {
	mu      sync.Mutex
	dir     *sandbox.LockedDir
	path    string // where run directories are made: dir/r
	unmount func() error
}

// newRunDir makes a run's directory in the runs root, making the root
// first if need be. The name only needs to be unique in the root, and is
// short: the channel's socket lies two levels below it, and a socket's
// path must fit in sockaddr_un (107 bytes).
func (r *runsRoot) newRunDir(stateDir string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir == nil {
		if err := r.make(stateDir); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(r.path, "")
}

func (r *runsRoot) make(stateDir string) error {
	dir, err := sandbox.NewLockedDir(stateDir, fmt.Sprintf("%s%d-", runsRootPrefix, os.Getpid()))
	if err != nil {
		return err
	}
	path := filepath.Join(dir.Path, runsRootTmpfs)
	if err := os.Mkdir(path, 0o700); err != nil {
		dir.Remove()
		return err
	}
	unmount, err := sandbox.MountTmpfs(path, 0o700, runsRootBytes, runsRootFiles)
	if err != nil {
		dir.Remove()
		return fmt.Errorf("runs root: %w", err)
	}
	r.dir, r.path, r.unmount = dir, path, unmount
	return nil
}

// close removes the runs root once every run's teardown has removed its
// directory.
func (r *runsRoot) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir == nil {
		return nil
	}
	var errs []error
	if r.unmount != nil {
		errs = append(errs, r.unmount())
	}
	errs = append(errs, r.dir.Remove())
	r.dir, r.path, r.unmount = nil, "", nil
	return errors.Join(errs...)
}

// sweepRunDirs removes the runs roots of supervisors that died, and the
// run directories earlier versions left, detaching the mounts left in
// them first (the root's tmpfs, a workspace's tmpfs, a wazero run's /tmp).
func sweepRunDirs(stateDir string) error {
	return errors.Join(
		sandbox.SweepLockedDirs(stateDir, runsRootPrefix, sandbox.DetachMountsUnder),
		sandbox.SweepLockedDirs(stateDir, legacyRunDirPrefix, sandbox.DetachMountsUnder))
}
