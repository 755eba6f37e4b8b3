package supervisor

import "github.com/apysup/apysup/internal/sandbox"

// Run directories are sandbox.LockedDirs named apysup-run-<id>-<random> in
// the state directory, locked for as long as their supervisor runs them;
// the next supervisor in the same state directory sweeps those whose
// supervisor died.
const (
	runDirPrefix  = "apysup-run-"
	workspaceName = "workspace"
)

func newRunDir(stateDir, runID string) (*sandbox.LockedDir, error) {
	return sandbox.NewLockedDir(stateDir, "apysup-"+runID+"-")
}

// sweepRunDirs removes the run directories of supervisors that died,
// detaching the mounts left in one first (its workspace's tmpfs, a wazero
// run's /tmp).
func sweepRunDirs(stateDir string) error {
	return sandbox.SweepLockedDirs(stateDir, runDirPrefix, sandbox.DetachMountsUnder)
}
