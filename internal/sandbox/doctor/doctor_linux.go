package doctor

import (
	"context"
	"time"
)

// Run performs every check. It takes tens of milliseconds (it creates the
// namespaces of a run in a probe process and starts the interpreter once);
// cache the Report. `apysup doctor` shows it.
func Run(ctx context.Context) Report {
	start := time.Now()
	checks := []Check{
		checkRoot(),
		checkUserns(ctx),
		checkMountns(ctx),
		checkPivotRoot(),
		checkMountSetattr(),
		checkSeccompKernel(),
		checkLibseccomp(),
	}
	checks = append(checks, checkCgroups()...)
	checks = append(checks, checkOverlay(), checkPython(ctx), checkWasiRevision(""), checkWazeroRuntime())
	return report(checks, start)
}

// Quick performs the checks that need no process: the same as Run except
// that user and mount namespaces are judged from sysctls and /proc, and the
// interpreter from the file system, not by creating and running them. It
// takes well under a millisecond, so a backend can call it before every run
// and keep Run for when a run fails to start (to name the reason).
func Quick() Report {
	start := time.Now()
	checks := []Check{
		checkRoot(),
		quickUserns(),
		quickMountns(),
		checkPivotRoot(),
		checkMountSetattr(),
		checkSeccompKernel(),
		checkLibseccomp(),
	}
	checks = append(checks, checkCgroups()...)
	checks = append(checks, checkOverlay(), quickPython(), quickWasiRevision(), checkWazeroRuntime())
	return report(checks, start)
}
