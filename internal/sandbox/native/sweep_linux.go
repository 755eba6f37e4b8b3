package native

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
)

// A supervisor that dies (SIGKILL, OOM, power cut of the host process)
// cannot clean up: its guests keep running until they end on their own
// (RLIMIT_CPU stops a spinning one) and its cgroups and state directory
// stay. Every name it creates carries its pid, so the next Backend built on
// the host sweeps what belongs to supervisors that no longer exist. A pid
// that is alive again (reused) is left alone: sweeping errs on the side of
// not touching.
// Name prefixes carrying the creator's pid: <prefix><pid>-<n>.
const (
	runCgroupPrefix = "apysup-"
	stateDirPrefix  = "apysup-native-"
)

func stateDirPattern() string { return fmt.Sprintf("%s%d-*", stateDirPrefix, os.Getpid()) }

// deadOwner reports whether name is <prefix><pid>-<digits> and pid is not a
// live process. (No regexp: package-level state is rebuilt in every
// container's init, which re-executes this binary.)
func deadOwner(prefix, name string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	pidText, n, ok := strings.Cut(rest, "-")
	if !ok || !allDigits(n) || !allDigits(pidText) {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid == os.Getpid() || pid <= 0 {
		return false
	}
	return !alive(pid)
}

// alive reports whether pid is a process that has not exited (a zombie,
// exited but not yet reaped by its parent, counts as dead).
func alive(pid int) bool {
	if errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// cgroupPath is the libcontainer cgroup path of run id: relative (under
// the supervisor's own cgroup) or under Config.CgroupParent.
func (b *Backend) cgroupPath(id string) string {
	if b.cgroupParent == "" {
		return id
	}
	return path.Join(b.cgroupParent, id)
}

// runCgroupParents are the directories under which runs' cgroups are made
// (parent as in Config.CgroupParent): on cgroup v1 one per hierarchy,
// named ones (name=systemd) and, on hybrid hosts, the cgroup2 mount
// included, since libcontainer makes the run's cgroup in each of them.
func runCgroupParents(parent string) []string {
	own, err := cgroups.ParseCgroupFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	under := func(mountpoint, root, ownPath string) string {
		if parent != "" {
			return filepath.Join(mountpoint, parent)
		}
		rel, err := filepath.Rel(root, ownPath)
		if err != nil || strings.HasPrefix(rel, "..") {
			return ""
		}
		return filepath.Join(mountpoint, rel)
	}
	if cgroups.IsCgroup2UnifiedMode() {
		return []string{under("/sys/fs/cgroup", "/", own[""])}
	}
	var dirs []string
	mounts, _ := cgroups.GetCgroupMounts(true)
	for _, m := range mounts {
		for _, sub := range m.Subsystems {
			p, ok := own[sub]
			if !ok {
				p, ok = own["name="+sub]
			}
			if d := under(m.Mountpoint, m.Root, p); ok && d != "" {
				dirs = append(dirs, d)
				break
			}
		}
	}
	if cgroups.IsCgroup2HybridMode() {
		if d := under("/sys/fs/cgroup/unified", "/", own[""]); d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Sweep does what New does first: it kills the guests of dead
// supervisors' runs and removes their cgroups and their state directories
// in stateDir (default: New's), with their mounts. A caller that keeps
// run directories of its own sweeps them after this, since those mounts
// keep them busy.
func Sweep(stateDir, cgroupParent string) error {
	if stateDir == "" {
		stateDir = defaultStateDir()
	}
	return sweepStale(stateDir, cgroupParent)
}

// sweepStale kills the processes of dead supervisors' runs and removes
// their cgroups and state directories. Errors are reported, not fatal.
func sweepStale(stateBase, cgroupParent string) error {
	var errs []error
	var stale []string
	for _, parent := range runCgroupParents(cgroupParent) {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if e.IsDir() && deadOwner(runCgroupPrefix, e.Name()) {
				stale = append(stale, filepath.Join(parent, e.Name()))
			}
		}
	}
	// Kill first in every hierarchy (a run is one pid namespace: killing its
	// pid 1 ends it), then remove once the processes are gone.
	for _, dir := range stale {
		pids, _ := cgroups.GetAllPids(dir)
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
	for _, dir := range stale {
		if err := removeCgroup(dir); err != nil {
			errs = append(errs, err)
		}
	}
	entries, _ := os.ReadDir(stateBase)
	for _, e := range entries {
		dir := filepath.Join(stateBase, e.Name())
		if e.IsDir() && deadOwner(stateDirPrefix, e.Name()) && ownedPrivately(dir) == nil {
			sandbox.DetachMountsUnder(dir) // the dir itself and runs' mounts
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeCgroup removes a cgroup whose processes were just killed
// (RemovePath retries EBUSY for about a second while the kernel reaps them).
func removeCgroup(dir string) error {
	if err := cgroups.RemovePath(dir); err != nil {
		return fmt.Errorf("native: stale cgroup %s: %w", dir, err)
	}
	return nil
}
