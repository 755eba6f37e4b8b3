package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup"
	"github.com/apysup/apysup/internal/sandbox"
)

// pooledSupervisor is a library Supervisor with a warm pool of size
// sandboxes, its state directory short (socket paths are bounded), warmed
// by one run.
func pooledSupervisor(b *testing.B, size int) *apysup.Supervisor {
	b.Helper()
	needNative(b)
	state, err := os.MkdirTemp("", "apb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(state) })
	if err := os.Chmod(state, 0o711); err != nil {
		b.Fatal(err)
	}
	s := apysup.New(apysup.Config{StateDir: state, NativePool: size})
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	})
	runPassIn(b, s)
	time.Sleep(500 * time.Millisecond) // the pool fills
	return s
}

// runPassIn runs `pass` through the library API and says whether its
// sandbox came from the pool (a pooled run spends nothing on Start).
func runPassIn(b *testing.B, s *apysup.Supervisor) (pooled bool) {
	res, err := s.Run(context.Background(), apysup.Request{Source: []byte("pass\n")})
	if err != nil || res.Status != sandbox.StatusOK {
		b.Fatalf("%v %+v", err, res)
	}
	return res.Timings.StartMs == 0
}

// BenchmarkWarmPool interleaves, in one run: a bare `python3.11 -S -c
// pass`; a run of `pass` through the library API (apysup.Supervisor.Run,
// request to RunResult) whose sandbox, interpreter included, was started
// ahead by the pool; and a whole `apysup run` process of the same script
// without a server, as today; a run of `pass` through apysup serve's API
// (apysup.Client, request to RunResult) and a whole `apysup run --server`
// process, both against a server with a warm pool; and, for issue 17's
// "cached empty run as a whole process", the same three on wazero: a
// whole `apysup run --backend wazero` without a server, a run through the
// API and a whole `apysup run --server ... --backend wazero` process
// against the server's wazero pool (children whose interpreters started
// ahead); ten rounds per iteration. It reports
// medians, p90s, ratios to the bare run, and how many library samples
// found the pool empty (they ran cold and count as they are).
func BenchmarkWarmPool(b *testing.B) {
	s := pooledSupervisor(b, 2)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	// apysup serve with a warm pool of its own, for the API and for
	// `apysup run --server`.
	_, socket, _ := startServe(b, "--pool", "2", "--wazero-pool", "1")
	client, err := apysup.NewClient("unix:"+socket, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	script := filepath.Join(b.TempDir(), "pass.py")
	if err := os.WriteFile(script, []byte("pass\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	process := func(argv ...string) func() {
		return func() {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), cliEnv+"=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", argv, err, out)
			}
		}
	}
	cold := 0
	cases := []struct {
		name string
		run  func()
	}{
		{"bare", process(sandbox.GuestPython, "-S", "-c", "pass")},
		{"pooled-library", func() {
			if !runPassIn(b, s) {
				cold++
			}
		}},
		{"apysup-run", process(self, "run", "--approve", "deny", script)},
		{"server-api", func() {
			res, err := client.Run(context.Background(), apysup.RemoteRequest{Source: "pass\n"})
			if err != nil || res.Status != sandbox.StatusOK {
				b.Fatalf("%v %+v", err, res)
			}
		}},
		{"apysup-run-server", process(self, "run", "--server", "unix:"+socket, "-c", "pass")},
		{"apysup-run-wazero", process(self, "run", "--approve", "deny", "--backend", "wazero", script)},
		{"server-api-wazero", func() {
			res, err := client.Run(context.Background(), apysup.RemoteRequest{Source: "pass\n", Backend: apysup.BackendWazero})
			if err != nil || res.Status != sandbox.StatusOK {
				b.Fatalf("%v %+v", err, res)
			}
		}},
		{"apysup-run-server-wazero", process(self, "run", "--server", "unix:"+socket, "--backend", "wazero", "-c", "pass")},
	}
	times := make([][]time.Duration, len(cases))
	for b.Loop() {
		// Ten rounds per iteration: make bench's one second still gives
		// quantiles something to work on.
		for range 10 {
			for i, c := range cases {
				// The pools refill in the background after a pooled
				// run: let them, so no case is timed while a refill
				// takes one of the two CPUs.
				time.Sleep(poolSettle)
				t0 := time.Now()
				c.run()
				times[i] = append(times[i], time.Since(t0))
			}
		}
	}
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.name
	}
	reportVersusBare(b, names, times)
	b.ReportMetric(float64(cold), "pooled-cold-samples")
}

// poolSettle is the pause before each timed case of BenchmarkWarmPool:
// longer than a refill's container start, or a wazero child's load and
// its interpreter's start, on this 2-CPU machine.
const poolSettle = 800 * time.Millisecond

// BenchmarkPoolThroughput runs `pass` through one library Supervisor with
// a warm pool, 500 runs per iteration at concurrency 8, and reports runs per
// second and the p50 and p99 latency of a run (request to RunResult). It
// also reports the CPU time a run costs, the supervisor's and that of the
// sandboxes (every container's init and interpreter is a child it reaps):
// on a shared machine runs/s follows the CPU the others leave, while CPU
// time per run stays comparable between builds.
func BenchmarkPoolThroughput(b *testing.B) {
	const runs, concurrency = 500, 8
	s := pooledSupervisor(b, concurrency)
	var lat []time.Duration
	var wall time.Duration
	cold := 0
	self0, children0 := cpuTime(syscall.RUSAGE_SELF), cpuTime(syscall.RUSAGE_CHILDREN)
	for b.Loop() {
		next := make(chan struct{}, runs)
		for range runs {
			next <- struct{}{}
		}
		close(next)
		var mu sync.Mutex
		var wg sync.WaitGroup
		t0 := time.Now()
		for range concurrency {
			wg.Go(func() {
				for range next {
					r0 := time.Now()
					pooled := runPassIn(b, s)
					d := time.Since(r0)
					mu.Lock()
					lat = append(lat, d)
					if !pooled {
						cold++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		wall += time.Since(t0)
	}
	self, children := cpuTime(syscall.RUSAGE_SELF)-self0, cpuTime(syscall.RUSAGE_CHILDREN)-children0
	b.ReportMetric(float64(len(lat))/wall.Seconds(), "runs/s")
	b.ReportMetric(ms(self/time.Duration(len(lat))), "supervisor-cpu-ms/run")
	b.ReportMetric(ms(children/time.Duration(len(lat))), "sandbox-cpu-ms/run")
	b.ReportMetric(ms(median(lat)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
	b.ReportMetric(100*float64(cold)/float64(len(lat)), "cold-%")
	b.Log(fmt.Sprintf("%d runs at concurrency %d in %v", len(lat), concurrency, wall))
}

// cpuTime is the user and system CPU time of who (syscall.RUSAGE_SELF or
// RUSAGE_CHILDREN: the children reaped so far).
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
