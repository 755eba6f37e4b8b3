package native

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apysup/apysup/internal/sandbox"
)

// The run's cgroup directories: v1 has one per controller, v2 one under "".
func (s *Sandbox) cgroupDir(controller string) string {
	if p, ok := s.cgroupPaths[""]; ok && len(s.cgroupPaths) == 1 {
		return p // cgroup v2
	}
	return s.cgroupPaths[controller]
}

func (s *Sandbox) v2() bool {
	_, ok := s.cgroupPaths[""]
	return ok && len(s.cgroupPaths) == 1
}

// oomKilled reports whether the kernel's OOM killer acted in the run's
// memory cgroup. sigkilled (the guest died of a SIGKILL we did not send)
// lets a kernel without oom_kill counters fall back to failcnt.
func (s *Sandbox) oomKilled(sigkilled bool) bool {
	dir := s.cgroupDir("memory")
	if dir == "" {
		return false
	}
	if s.v2() {
		n, ok := readKey(filepath.Join(dir, "memory.events"), "oom_kill")
		return ok && n > 0
	}
	if n, ok := readKey(filepath.Join(dir, "memory.oom_control"), "oom_kill"); ok {
		return n > 0
	}
	n, ok := readUint(filepath.Join(dir, "memory.memsw.failcnt"))
	return sigkilled && ok && n > 0
}

func (s *Sandbox) usage() sandbox.Usage {
	var u sandbox.Usage
	if s.v2() {
		dir := s.cgroupDir("")
		if n, ok := readUint(filepath.Join(dir, "memory.peak")); ok {
			u.PeakMemoryBytes = int64(n)
		}
		if n, ok := readKey(filepath.Join(dir, "cpu.stat"), "usage_usec"); ok {
			u.CPUTimeNs = int64(n) * 1000
		}
		if n, ok := readUint(filepath.Join(dir, "pids.peak")); ok {
			u.Pids = int64(n)
		}
		return u
	}
	if n, ok := readUint(filepath.Join(s.cgroupDir("memory"), "memory.memsw.max_usage_in_bytes")); ok {
		u.PeakMemoryBytes = int64(n)
	} else if n, ok := readUint(filepath.Join(s.cgroupDir("memory"), "memory.max_usage_in_bytes")); ok {
		u.PeakMemoryBytes = int64(n)
	}
	if n, ok := readUint(filepath.Join(s.cgroupDir("cpuacct"), "cpuacct.usage")); ok {
		u.CPUTimeNs = int64(n)
	}
	if n, ok := readUint(filepath.Join(s.cgroupDir("pids"), "pids.peak")); ok {
		u.Pids = int64(n)
	}
	return u
}

func readUint(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// readKey reads "key value" lines (memory.events, cpu.stat, oom_control).
func readKey(path, key string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
