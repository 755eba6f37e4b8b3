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

// makeScratchDirs makes a run's out directory and /tmp and returns them
// with the function that removes both.
func makeScratchDirs(runDir string) (scratchDirs, func(), error) {
	var parent string
	var remove func()
	if runDir != "" {
		dir, err := os.MkdirTemp(runDir, runDirPrefix)
		if err != nil {
			return scratchDirs{}, nil, err
		}
		parent, remove = dir, func() { os.RemoveAll(dir) }
	} else {
		dir, err := sandbox.NewLockedDir("", tempDirPrefix)
		if err != nil {
			return scratchDirs{}, nil, err
		}
		parent, remove = dir.Path, func() { dir.Remove() }
	}
	s := scratchDirs{out: filepath.Join(parent, tempOutName), tmp: filepath.Join(parent, tempTmpName)}
	for _, d := range []string{s.out, s.tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			remove()
			return scratchDirs{}, nil, err
		}
	}
	return s, remove, nil
}

// sweepTempDirs removes the standalone scratch directories under tmp whose
// process died.
func sweepTempDirs(tmp string) error {
	return sandbox.SweepLockedDirs(tmp, tempDirPrefix, nil)
}
