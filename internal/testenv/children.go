package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Children lists the pids of this process's children, live or zombie,
// whose command line contains mark (a backend's child argument).
func Children(mark string) []int {
	var pids []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, stat := range stats {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, the last ')' ends it.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(stat), "cmdline"))
		if bytes.Contains(cmdline, []byte(mark)) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
			pids = append(pids, pid)
		}
	}
	return pids
}
