package journal

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Owner names the current process so that a later process can tell
// whether the owner of a running run is still alive: its pid and, on
// Linux, its start time in clock ticks since boot (a pid alone may have
// been reused).
func Owner() string {
	pid := os.Getpid()
	return fmt.Sprintf("pid:%d:%s", pid, startTime(pid))
}

// OwnerAlive reports whether the process an Owner string names still
// runs. A malformed owner counts as alive: the journal fails closed and
// does not resume a run it cannot prove abandoned.
func OwnerAlive(owner string) bool {
	parts := strings.Split(owner, ":")
	if len(parts) != 3 || parts[0] != "pid" {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return true
	}
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return false
	}
	// A zombie (killed, not yet reaped by its parent) signals as alive but
	// will never write again.
	state, start := procStat(pid)
	if state == "Z" || state == "X" {
		return false
	}
	return start == parts[2]
}

// startTime is field 22 of /proc/PID/stat, or "" where there is no /proc.
func startTime(pid int) string {
	_, start := procStat(pid)
	return start
}

// procStat is the state (field 3) and the start time (field 22) of
// /proc/PID/stat, or "" where there is no /proc.
func procStat(pid int) (state, start string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return "", ""
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return "", ""
	}
	return fields[0], fields[19]
}
