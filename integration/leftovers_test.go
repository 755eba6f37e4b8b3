package integration

import (
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
)

// hostSnapshot is what this process holds before the suite, so that the
// final check only blames what the suite's runs added.
type hostSnapshot struct {
	fds map[string]string // fd -> link target, sockets, pipes and pidfds only
}

func snapshotHost() hostSnapshot {
	return hostSnapshot{fds: transientFDs()}
}

// transientFDs lists this process's descriptors that a leaked run would
// hold: sockets (the channel), pipes (stdout/stderr capture) and pidfds.
func transientFDs() map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue
		}
		if strings.HasPrefix(target, "socket:") || strings.HasPrefix(target, "pipe:") || strings.Contains(target, "pidfd") {
			out[e.Name()] = target
		}
	}
	return out
}

// finishSuite closes the Supervisor and reports everything the runs left
// behind: processes, the state directory's contents, temp dirs named after
// a run, mounts, cgroups, sockets and descriptors (SPEC.md section 7:
// nothing survives a run, whatever way it ended). It retries for a few
// seconds because the kernel reaps a killed tree asynchronously.
func finishSuite(before hostSnapshot) []string {
	if suite.sup == nil {
		return nil
	}
	var problems []string
	if st := suite.sup.PoolState(); st.Size > 0 {
		fmt.Fprintf(os.Stderr, "integration: pooled supervisor: %+v\n", st)
		if st.Taken == 0 {
			problems = append(problems, poolEnv+" is set but no run took a pooled sandbox")
		}
	}
	if err := suite.sup.Close(); err != nil {
		problems = append(problems, "closing the supervisor: "+err.Error())
	}
	var left []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = leftovers(before)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	problems = append(problems, left...)
	if len(left) == 0 {
		if err := os.Remove(suite.stateDir); err != nil {
			problems = append(problems, "removing the state dir: "+err.Error())
		}
	}
	suite.mu.Lock()
	n, statuses := len(suite.runIDs), maps.Clone(suite.statuses)
	suite.mu.Unlock()
	// The whole suite (no -run filter) produces every status of SPEC.md
	// section 10 with a real request.
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
		for _, s := range []sandbox.Status{sandbox.StatusOK, sandbox.StatusError, sandbox.StatusTimeout,
			sandbox.StatusMemoryLimit, sandbox.StatusKilled, sandbox.StatusRefused, sandbox.StatusSetupFailed} {
			if statuses[s] == 0 {
				problems = append(problems, "no run ended with status "+string(s))
			}
		}
	}
	fmt.Fprintf(os.Stderr, "integration: %d runs %v; leftover check: %d problems\n", n, statuses, len(problems))
	return problems
}

func leftovers(before hostSnapshot) []string {
	var out []string
	self := os.Getpid()
	for _, pid := range descendants() {
		cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		out = append(out, fmt.Sprintf("process %d: %q", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	entries, err := os.ReadDir(suite.stateDir)
	if err != nil {
		out = append(out, "state dir: "+err.Error())
	}
	for _, e := range entries {
		out = append(out, "state dir entry: "+filepath.Join(suite.stateDir, e.Name()))
	}
	suite.mu.Lock()
	runIDs := slices.Clone(suite.runIDs)
	suite.mu.Unlock()
	tmp, _ := os.ReadDir(os.TempDir())
	for _, e := range tmp {
		for _, id := range runIDs {
			if strings.Contains(e.Name(), id) {
				out = append(out, "temp dir of run "+id+": "+filepath.Join(os.TempDir(), e.Name()))
			}
		}
	}
	// Containers are named apysup-<supervisor pid>-<n> (also their cgroups).
	ours := fmt.Sprintf("apysup-%d-", self)
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mi), "\n") {
			if strings.Contains(line, suite.stateDir) || strings.Contains(line, ours) {
				out = append(out, "mount: "+line)
			}
		}
	}
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), ours) {
			out = append(out, "cgroup: "+p)
			return fs.SkipDir
		}
		if strings.Count(p, "/") > 8 {
			return fs.SkipDir
		}
		return nil
	})
	if nu, err := os.ReadFile("/proc/net/unix"); err == nil {
		for _, line := range strings.Split(string(nu), "\n") {
			if strings.Contains(line, suite.stateDir) {
				out = append(out, "unix socket: "+line)
			}
		}
	}
	for fd, target := range transientFDs() {
		if before.fds[fd] != target {
			out = append(out, fmt.Sprintf("descriptor %s -> %s", fd, target))
		}
	}
	return out
}
