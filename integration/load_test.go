package integration

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
)

// loadRunsEnv sets how many runs TestPooledLoad makes (make load: 1000).
const loadRunsEnv = "APYSUP_LOAD_RUNS"

// loadKind is one kind of run of the load: its script, limits and the
// status it must end with.
type loadKind struct {
	name   string
	script string
	limits sandbox.Limits
	want   sandbox.Status
}

// loadKinds: nine in ten runs are benign; the tenth cycles through the
// hostile kinds.
var (
	benign      = loadKind{"benign", "print('ok')\n", sandbox.Limits{}, sandbox.StatusOK}
	hostileRuns = []loadKind{
		{"fork bomb", "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
			sandbox.Limits{Pids: 32, Timeout: 2 * time.Second}, sandbox.StatusTimeout},
		{"memory hog", "b = b'x' * (1 << 30)\n", sandbox.Limits{MemoryBytes: 64 << 20}, sandbox.StatusMemoryLimit},
		{"spin", "while True:\n    pass\n", sandbox.Limits{Timeout: 2 * time.Second}, sandbox.StatusTimeout},
		{"output flood", "import sys\nchunk = b'x' * (1 << 16)\nfor _ in range(256):\n    sys.stdout.buffer.write(chunk)\n",
			sandbox.Limits{OutputBytes: 64 << 10}, sandbox.StatusOK},
		{"stdout never closed", "import os, time\nif os.fork() == 0:\n    time.sleep(3600)\nprint('parent done')\n",
			sandbox.Limits{}, sandbox.StatusOK},
	}
)

// TestPooledLoad runs many scripts at concurrency 16 through a pooled
// Supervisor, one in ten hostile: every run ends with its status, the
// supervisor's heap stays bounded, and once it is closed nothing of its
// runs is left (processes, cgroups, mounts, uid leases, run directories).
// 100 runs here; make load runs 1000. Not parallel with the other tests,
// so that what it counts is its own.
func TestPooledLoad(t *testing.T) {
	need(t) // the host checks
	runs := 100
	if n, err := strconv.Atoi(os.Getenv(loadRunsEnv)); err == nil && n > 0 {
		runs = n
	}
	const concurrency = 16
	state, err := os.MkdirTemp("", "apl")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(state)
	if err := os.Chmod(state, 0o711); err != nil {
		t.Fatal(err)
	}
	before := ownResources(state)
	sup := supervisor.New(supervisor.Config{StateDir: state, NativePool: 4, NativePoolClasses: len(hostileRuns) + 1})
	scripts := map[string]string{}
	for _, k := range append([]loadKind{benign}, hostileRuns...) {
		p := filepath.Join(t.TempDir(), "main.py")
		if err := os.WriteFile(p, []byte(k.script), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts[k.name] = p
	}
	next := make(chan int, runs)
	for i := range runs {
		next <- i
	}
	close(next)
	var mu sync.Mutex
	wrong := map[string]int{}
	var heapAtTenth uint64
	base := completeRequest(t, supervisor.Request{})
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for i := range next {
				k := benign
				if i%10 == 9 {
					k = hostileRuns[(i/10)%len(hostileRuns)]
				}
				req := base
				req.ScriptPath, req.Limits = scripts[k.name], k.limits
				res, err := tryRun(context.Background(), sup, req)
				mu.Lock()
				switch {
				case err != nil:
					wrong[k.name+": "+err.Error()]++
				case res.Status != k.want:
					wrong[fmt.Sprintf("%s: %s %s, want %s", k.name, res.Status, res.ErrorCode, k.want)]++
				case k.name == "output flood" && !res.StdoutTruncated:
					wrong[k.name+": stdout not truncated"]++
				}
				if i == runs/10 {
					heapAtTenth = heapInUse()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for w, n := range wrong {
		t.Errorf("%d runs: %s", n, w)
	}
	// Output is bounded per run and nothing is kept across runs: the heap
	// after the load is that after a tenth of it, give or take.
	if grown := int64(heapInUse()) - int64(heapAtTenth); grown > 64<<20 {
		t.Errorf("heap grew by %d MiB between a tenth of the runs and the end", grown>>20)
	}
	st := sup.PoolState()
	t.Logf("%d runs; pool %+v", runs, st)
	if err := sup.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	var left []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if left = ownResources(state).minus(before); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, l := range left {
		t.Error("left behind: " + l)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// resources are what runs of this process hold on the host, by name.
type resources map[string]bool

func (r resources) minus(before resources) []string {
	var out []string
	for k := range r {
		if !before[k] {
			out = append(out, k)
		}
	}
	return out
}

// ownResources lists this process's guest processes, its sandboxes'
// cgroups, mounts and entries of stateDir, and its uid leases (the lock
// files it holds open).
func ownResources(stateDir string) resources {
	r := resources{}
	for _, pid := range descendants() {
		r["process "+strconv.Itoa(pid)] = true
	}
	entries, _ := os.ReadDir(stateDir)
	for _, e := range entries {
		r["state dir entry "+e.Name()] = true
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mi), "\n") {
			if strings.Contains(line, stateDir) {
				r["mount "+line] = true
			}
		}
	}
	ours := fmt.Sprintf("apysup-%d-", os.Getpid())
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || !d.IsDir():
			return nil
		case strings.HasPrefix(d.Name(), ours):
			r["cgroup "+p] = true
			return fs.SkipDir
		case strings.Count(p, "/") > 8:
			return fs.SkipDir
		}
		return nil
	})
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, e := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(target, "apysup-native-uids-") {
			r["uid lease "+target] = true
		}
	}
	return r
}
