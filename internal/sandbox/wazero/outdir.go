package wazero

import (
	"os"
	"path/filepath"

	"github.com/apysup/apysup/internal/sandbox"
)

// The out directory (sandbox.GuestOutDir) and /tmp of a run are host
// directories the guest writes, the host reads the first back, and both
// are removed with the run. With a Job.RunDir (the supervisor's run
// directory, which its next start sweeps if it died) they are made in a
// directory of their own there. Without one, they are made in a directory
// of their own under os.TempDir, a sandbox.LockedDir named
// apysup-wazero-<random> whose lock file lies beside them (out of the
// guest's reach) for as long as the run lasts: a process that dies
// (SIGKILL, power loss) cannot remove it, and the next Load in any process
// sweeps it.
//
// When this process may mount (root), both are tmpfs mounts: a directory
// on the host's disk would list its entries in that filesystem's order
// (ext4's hash order), not in the order of the tmpfs mounts the native
// guest's /tmp and out directory are. The budgets (budgetDir) bound them
// as natively either way, with the native guest's bytes and files, its
// errors and partial writes; each tmpfs is larger (tmpfsBytes,
// tmpfsSpareFiles), so that it only stands behind its budget and never
// answers first.
const (
	tempDirPrefix = "apysup-wazero-"
	runDirPrefix  = "wazero-"
	tempOutName   = "out"
	tempTmpName   = "tmp"
)

// scratchDirs are a run's writable directories besides its workspace.
type scratchDirs struct {
	out string // mounted at sandbox.GuestOutDir
	tmp string // mounted at /tmp
}

// makeScratchDirs makes a run's out directory and /tmp (whose budget is
// tmpBytes and tmpFiles) and returns them with the function that removes
// both.
func makeScratchDirs(runDir string, tmpBytes, tmpFiles int64) (scratchDirs, func(), error) {
	var parent string
	var removeDir func()
	if runDir != "" {
		dir, err := os.MkdirTemp(runDir, runDirPrefix)
		if err != nil {
			return scratchDirs{}, nil, err
		}
		parent, removeDir = dir, func() { os.RemoveAll(dir) }
	} else {
		dir, err := sandbox.NewLockedDir("", tempDirPrefix)
		if err != nil {
			return scratchDirs{}, nil, err
		}
		parent, removeDir = dir.Path, func() { dir.Remove() }
	}
	var unmounts []func() error
	remove := func() {
		for _, unmount := range unmounts {
			_ = unmount()
		}
		removeDir()
	}
	s := scratchDirs{out: filepath.Join(parent, tempOutName), tmp: filepath.Join(parent, tempTmpName)}
	for _, m := range []struct {
		dir          string
		bytes, files int64
	}{{s.out, sandbox.OutDirBytes, sandbox.OutDirFiles}, {s.tmp, tmpBytes, tmpFiles}} {
		if err := os.Mkdir(m.dir, 0o700); err != nil {
			remove()
			return scratchDirs{}, nil, err
		}
		unmount, err := sandbox.MountTmpfs(m.dir, 0o700, tmpfsBytes(m.bytes, m.files), m.files+tmpfsSpareFiles)
		if err != nil {
			remove()
			return scratchDirs{}, nil, err
		}
		if unmount != nil {
			unmounts = append(unmounts, unmount)
		}
	}
	return s, remove, nil
}

// sweepTempDirs removes the standalone scratch directories under tmp whose
// process died, detaching the mounts left in one first.
func sweepTempDirs(tmp string) error {
	return sandbox.SweepLockedDirs(tmp, tempDirPrefix, sandbox.DetachMountsUnder)
}

// A scratch directory's tmpfs holds its budget's bytes plus a page for
// each file the budget allows (the budget counts bytes, a tmpfs whole
// pages), and a few inodes more than its files.
const tmpfsSpareFiles = 16

func tmpfsBytes(bytes, files int64) int64 { return bytes + files*4096 }
