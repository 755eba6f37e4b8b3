package wazero

import (
	"os"
	"path/filepath"

	"github.com/apysup/apysup/internal/sandbox"
)

// The out directory (sandbox.GuestOutDir) of a run is a host directory the
// guest writes and the host reads back and removes. With a Job.RunDir (the
// supervisor's run directory, which its next start sweeps if it died) it
// is made there. Without one, it is made in a directory of its own under
// os.TempDir, a sandbox.LockedDir named apysup-wazero-<random> whose lock
// file lies beside it (out of the guest's reach) for as long as the run
// lasts: a process that dies (SIGKILL, power loss) cannot remove it, and
// the next Load in any process sweeps it.
const (
	tempDirPrefix = "apysup-wazero-"
	tempOutName   = "out"
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
	dir, err := sandbox.NewLockedDir("", tempDirPrefix)
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(dir.Path, tempOutName)
	if err := os.Mkdir(out, 0o700); err != nil {
		dir.Remove()
		return "", nil, err
	}
	return out, func() { dir.Remove() }, nil
}

// sweepTempDirs removes the standalone out directories under tmp whose
// process died.
func sweepTempDirs(tmp string) error {
	return sandbox.SweepLockedDirs(tmp, tempDirPrefix, nil)
}
