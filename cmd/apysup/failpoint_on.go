//go:build failpoints

package main

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// failpoint kills this process at a journal boundary, for the fault
// campaign (integration/fault_test.go): APYSUP_FAILPOINT=NAME#N sends
// SIGKILL to the process itself at the Nth time boundary NAME is reached
// (N defaults to 1). Only builds with -tags failpoints have it.
var failpoint = func() func(string) {
	spec := os.Getenv("APYSUP_FAILPOINT")
	if spec == "" {
		return nil
	}
	name, nth, _ := strings.Cut(spec, "#")
	want, err := strconv.Atoi(nth)
	if err != nil || want < 1 {
		want = 1
	}
	var hits atomic.Int64
	return func(at string) {
		if at == name && hits.Add(1) == int64(want) {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
}()
