package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/serve"
)

// serveLoadRunsEnv sets how many runs TestServeLoadThenKill sends (make
// load: 1000).
const serveLoadRunsEnv = "APYSUP_LOAD_RUNS"

// servedKind is one kind of run sent to the server and the status it must
// end with.
type servedKind struct {
	name   string
	source string
	limits serve.RunLimits
	want   string
}

// One in ten runs is hostile, cycling through these.
var (
	servedBenign  = servedKind{"benign", "print('ok')", serve.RunLimits{}, "ok"}
	servedHostile = []servedKind{
		{"fork bomb", "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
			serve.RunLimits{Pids: 32, TimeoutMs: 2000}, "timeout"},
		{"memory hog", "b = b'x' * (1 << 30)", serve.RunLimits{MemoryBytes: 64 << 20}, "memory_limit"},
		{"spin", "while True:\n    pass", serve.RunLimits{TimeoutMs: 2000}, "timeout"},
		{"output flood", "import sys\nfor _ in range(512):\n    sys.stdout.buffer.write(b'x' * 65536)", serve.RunLimits{}, "ok"},
		{"stdout never closed", "import os, time\nif os.fork() == 0:\n    time.sleep(3600)\nprint('parent done')",
			serve.RunLimits{}, "ok"},
	}
)

// TestServeLoadThenKill is issue 14's load and faults, through the server
// process: runs at concurrency 16 (more than the server admits at once,
// so that some wait in its queue), one in ten hostile, each ending with its
// status, and the server's resident memory does not grow with the number of
// runs. Then the server is killed with SIGKILL while runs are in flight:
// its guests, cgroups, mounts and state are left behind, and a new server
// in the same state directory sweeps all of it before it serves. 48 runs
// here; make load sends 1000.
func TestServeLoadThenKill(t *testing.T) {
	runs := 48
	if n, err := strconv.Atoi(os.Getenv(serveLoadRunsEnv)); err == nil && n > 0 {
		runs = n
	}
	dir := shortTempDir(t)
	cmd, socket, state := startServeAt(t, dir, "--pool", "2", "--max-concurrent", "4", "--queue", "32", "--grace", "1s")
	client, err := serve.NewClient("unix:"+socket, "")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	const concurrency = 16
	var (
		mu       sync.Mutex
		failures []string
		baseline int64 // the server's RSS after the first wave
	)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				k := servedBenign
				if i%10 == 9 {
					k = servedHostile[(i/10)%len(servedHostile)]
				}
				res, err := client.Run(context.Background(), serve.RunRequest{Source: k.source, Limits: k.limits})
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, fmt.Sprintf("run %d (%s): %v", i, k.name, err))
				case string(res.Status) != k.want:
					failures = append(failures, fmt.Sprintf("run %d (%s): %s, want %s (%s)", i, k.name, res.Status, k.want, res.Error))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range runs {
		if i == 2*concurrency {
			baseline = residentBytes(t, cmd.Process.Pid)
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	// Bounded, not timed: what a run leaves in the server (its record,
	// events, output) must be released or capped, so memory after many
	// runs stays near memory after a few.
	rss := residentBytes(t, cmd.Process.Pid)
	t.Logf("the server's resident memory: %d MiB after %d runs, %d MiB after %d", baseline>>20, 2*concurrency, rss>>20, runs)
	if baseline > 0 && rss > 2*baseline+64<<20 {
		t.Errorf("the server's resident memory grew from %d to %d bytes over %d runs", baseline, rss, runs)
	}

	// SIGKILL with runs in flight.
	for range 3 {
		id, err := client.Start(context.Background(), serve.RunRequest{Source: "import time\nprint('up', flush=True)\ntime.sleep(300)"})
		if err != nil {
			t.Fatal(err)
		}
		waitGuest(t, client, id)
	}
	killed := cmd.Process.Pid
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	left := killedLeftovers(killed, state)
	if len(left["cgroup"]) == 0 || len(left["process"]) == 0 || len(left["state"]) == 0 {
		t.Fatalf("the killed server should have left guests, cgroups and state behind: %v", left)
	}

	// A new server on the same socket path and state: it sweeps first.
	next, _, _ := startServeAt(t, dir, "--pool", "1")
	if left := killedLeftovers(killed, state); len(left) != 0 {
		t.Errorf("left behind by the killed server once the next one serves: %v", left)
	}
	client2, err := serve.NewClient("unix:"+socket, "")
	if err != nil {
		t.Fatal(err)
	}
	defer client2.Close()
	if res, err := client2.Run(context.Background(), serve.RunRequest{Source: "print('after')"}); err != nil || res.Status != "ok" {
		t.Fatalf("a run on the new server: %v %+v", err, res)
	}
	if err := next.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := next.Wait(); err != nil {
		t.Fatalf("the new server: %v, want exit 0", err)
	}
	for _, left := range serveLeftovers(next.Process.Pid, state, socket) {
		if left != fmt.Sprintf("left behind: %s []", state) { // it did not create the state directory: it keeps it, empty
			t.Error(left)
		}
	}
}

// residentBytes is pid's resident set size.
func residentBytes(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS: %q", v)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// waitGuest waits for the run's first output: its guest is running (a
// state event comes as soon as the run has a slot, before its sandbox may
// even exist).
func waitGuest(t *testing.T, c *serve.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for ev, err := range c.Events(ctx, id) {
		if err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
		if ev.Name == serve.EventStdout {
			return
		}
	}
	t.Fatalf("run %s: no output", id)
}

// killedLeftovers lists, by kind, what the server process pid left: its
// sandboxes' cgroups and their processes, and its entries and mounts in
// the state directory (named with its pid).
func killedLeftovers(pid int, state string) map[string][]string {
	out := map[string][]string{}
	ours := fmt.Sprintf("apysup-%d-", pid)
	for _, cg := range cgroupsNamed(ours) {
		out["cgroup"] = append(out["cgroup"], cg)
		if b, err := os.ReadFile(filepath.Join(cg, "cgroup.procs")); err == nil {
			out["process"] = append(out["process"], strings.Fields(string(b))...)
		}
	}
	tag := fmt.Sprintf("-%d-", pid)
	entries, _ := os.ReadDir(state)
	for _, e := range entries {
		if strings.Contains(e.Name(), tag) {
			out["state"] = append(out["state"], e.Name())
		}
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mi), "\n") {
			if strings.Contains(line, state) && strings.Contains(line, tag) {
				out["mount"] = append(out["mount"], line)
			}
		}
	}
	return out
}
