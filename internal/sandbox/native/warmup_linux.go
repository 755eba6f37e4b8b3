package native

import (
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/opencontainers/cgroups"
)

// cgroupWarmer shortens the first move of a run's init into its v1 cgroups.
//
// Every write to a cgroup.procs file takes the kernel's global
// cgroup_threadgroup_rwsem for writing; when no writer held it during the
// last RCU grace period, taking it waits for a whole grace period first
// (8-11 ms here), and once released it stays cheap for about one more.
// libcontainer's move of the init comes 3-5 ms into Start; kicking a no-op
// write (the supervisor into its own cgroup) at Prepare starts that grace
// period early, so the move waits for what is left of it instead of all of
// it. It changes nothing: the kernel skips a migration to the same cgroup.
// On cgroup v2 hosts there is nothing to do.
type cgroupWarmer struct {
	procs    string // the supervisor's own cgroup.procs
	inFlight atomic.Bool
}

func newCgroupWarmer() *cgroupWarmer {
	if cgroups.IsCgroup2UnifiedMode() {
		own, err := cgroups.ParseCgroupFile("/proc/self/cgroup")
		if err != nil {
			return &cgroupWarmer{}
		}
		return &cgroupWarmer{procs: filepath.Join("/sys/fs/cgroup", own[""], "cgroup.procs")}
	}
	dir, err := cgroups.GetOwnCgroupPath("pids")
	if err != nil {
		return &cgroupWarmer{}
	}
	return &cgroupWarmer{procs: filepath.Join(dir, "cgroup.procs")}
}

// kick starts the grace period in the background and returns at once.
func (w *cgroupWarmer) kick() {
	// One write in flight is enough: concurrent ones wait for the same
	// grace period (and would each hold a thread).
	if w.procs == "" || !w.inFlight.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer w.inFlight.Store(false)
		// "0" is the writing process itself; an error only costs the speed-up.
		_ = os.WriteFile(w.procs, []byte("0"), 0)
	}()
}
