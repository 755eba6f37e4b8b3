package wazero

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
)

// pooledInterpreter is a Load of its own with a pool of size children,
// closed when the test ends, which then checks that no child is left.
func pooledInterpreter(t *testing.T, size int) *Interpreter {
	t.Helper()
	return pooledInterpreterWith(t, Config{Pool: size})
}

// pooledInterpreterWith is pooledInterpreter with a Config of its own.
func pooledInterpreterWith(t *testing.T, cfg Config) *Interpreter {
	t.Helper()
	interpreter(t) // the build is there, the cache warm
	in, err := Load(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if pids := children(t); len(pids) != 0 {
			t.Errorf("children after Close: %v", pids)
		}
	})
	return in
}

// waitPool waits until n of in's pool's children have loaded and wait.
func waitPool(t testing.TB, in *Interpreter, n int) {
	t.Helper()
	deadline := time.Now().Add(childLoadBound)
	for {
		ready := in.PoolState().Ready
		if ready >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d children loaded within %v: %+v", ready, n, childLoadBound, in.PoolState())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A pooled run ends as one started for its job: same status, output and
// outcome, whether the guest returns, exits or raises.
func TestPooledRunEqualsFresh(t *testing.T) {
	fresh := interpreter(t)
	pooled := pooledInterpreter(t, 1)
	script := `import os, sys, time
print(sys.argv[1:], sorted(os.environ.items()), sorted(os.listdir("/")), os.getcwd())
print(os.listdir("."), open("/dev/null").read(), time.process_time() < 5)
with open("made.txt", "w") as f:
    f.write("x")
if sys.argv[1] == "exit":
    sys.exit(3)
if sys.argv[1] == "raise":
    raise ValueError("boom")
`
	for _, arg := range []string{"return", "exit", "raise"} {
		waitPool(t, pooled, 1)
		want := run(t, script, runOpts{in: fresh, args: []string{arg}})
		got := run(t, script, runOpts{in: pooled, args: []string{arg}})
		if got.Status != want.Status || got.ExitCode != want.ExitCode || got.ErrorCode != want.ErrorCode ||
			!bytes.Equal(got.Stdout, want.Stdout) || !bytes.Equal(got.Stderr, want.Stderr) ||
			!bytes.Equal(got.GuestOutcome, want.GuestOutcome) {
			t.Fatalf("%s: pooled %s %d %q\n%s%s%s\nfresh %s %d %q\n%s%s%s", arg,
				got.Status, got.ExitCode, got.ErrorCode, got.Stdout, got.Stderr, got.GuestOutcome,
				want.Status, want.ExitCode, want.ErrorCode, want.Stdout, want.Stderr, want.GuestOutcome)
		}
	}
	if st := pooled.PoolState(); st.Taken != 3 || st.Cold != 0 {
		t.Fatalf("pool %+v, want 3 runs on pooled children", st)
	}
}

// An idle child killed from outside is dropped, never handed a job; the
// pool loads another and the next run succeeds.
func TestPooledIdleChildKilledIsDiscarded(t *testing.T) {
	in := pooledInterpreter(t, 1)
	waitPool(t, in, 1)
	pids := in.pool.pids()
	if len(pids) != 1 {
		t.Fatalf("pool children %v", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for slices.Contains(children(t), pids[0]) || in.PoolState().Discarded == 0 {
		time.Sleep(10 * time.Millisecond) // until it is reaped and dropped
	}
	out := run(t, "print('ran')", runOpts{in: in})
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "ran\n" {
		t.Fatalf("status %s code %q stdout %q stderr %s", out.Status, out.ErrorCode, out.Stdout, out.Stderr)
	}
	if st := in.PoolState(); st.Discarded != 1 || st.Taken+st.Cold != 1 {
		t.Fatalf("pool %+v, want the killed child discarded", st)
	}
}

// Every run's guest, pooled or not, is in a child process of its own, and
// however the run ends no child is left once the Interpreter is closed
// (pooledInterpreter checks): ended by itself, by the timeout, by the
// caller, or idle in the pool.
func TestPooledRunsLeaveNoChild(t *testing.T) {
	in := pooledInterpreter(t, 2)
	waitPool(t, in, 2)
	if pids := children(t); len(pids) < 2 {
		t.Fatalf("children of a pool of 2: %v", pids)
	}
	if out := run(t, "print('x')", runOpts{in: in}); out.Status != sandbox.StatusOK {
		t.Fatalf("status %s stderr %s", out.Status, out.Stderr)
	}
	if out := run(t, "while True:\n    pass\n", runOpts{in: in, limits: sandbox.Limits{Timeout: 200 * time.Millisecond}}); out.Status != sandbox.StatusTimeout {
		t.Fatalf("status %s", out.Status)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	if out := run(t, "import time\ntime.sleep(3600)\n", runOpts{in: in, ctx: ctx}); out.Status != sandbox.StatusKilled || out.ErrorCode != ErrorCodeCanceled {
		t.Fatalf("status %s code %q", out.Status, out.ErrorCode)
	}
	if st := in.PoolState(); st.Taken == 0 {
		t.Fatalf("no run took a pooled child: %+v", st)
	}
}

// More concurrent runs than the pool holds: some take pooled children,
// the others start their own, and each gets its own job.
func TestPooledConcurrentRuns(t *testing.T) {
	in := pooledInterpreter(t, 1)
	waitPool(t, in, 1)
	t.Run("runs", func(t *testing.T) {
		for i := range 4 {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				out := run(t, "import sys; print(sys.argv[1])", runOpts{in: in, args: []string{strconv.Itoa(i)}})
				if want := strconv.Itoa(i) + "\n"; out.Status != sandbox.StatusOK || string(out.Stdout) != want {
					t.Fatalf("status %s stdout %q, want %q", out.Status, out.Stdout, want)
				}
			})
		}
	})
	if st := in.PoolState(); st.Taken < 1 || st.Taken+st.Cold != 4 {
		t.Fatalf("pool %+v, want 4 takes, one at least pooled", st)
	}
}

// BenchmarkWazeroPoolRunEmpty is an empty script's wall time from Run to
// its Outcome, side by side: a child started for the run (fresh-ms) and a
// pooled child that had loaded (pooled-ms; the pool refills, untimed,
// before each pair), and their ratio; pooled-start-ms is the pooled
// run's Timings.Start (handover to the runner's job: the module's
// instantiation and CPython's start). idle-rss-MiB and idle-pss-MiB are a
// loaded child's resident memory while it waits for its job, and its
// proportional share (the image's pages are shared by every child).
func BenchmarkWazeroPoolRunEmpty(b *testing.B) {
	fresh := interpreter(b)
	pooled, err := Load(context.Background(), Config{Pool: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer pooled.Close(context.Background())
	var freshTime, pooledTime, pooledStart time.Duration
	var rss, pss float64
	timed := func(in *Interpreter) (time.Duration, *sandbox.Outcome) {
		began := time.Now()
		out := run(b, "", runOpts{in: in})
		took := time.Since(began)
		if out.Status != sandbox.StatusOK {
			b.Fatalf("status %s stderr %s", out.Status, out.Stderr)
		}
		return took, out
	}
	for b.Loop() {
		waitPool(b, pooled, 1) // its refill beside neither run
		took, _ := timed(fresh)
		freshTime += took
		if pids := pooled.pool.pids(); len(pids) == 1 {
			rss = max(rss, memoryMiB(b, pids[0], "status", "VmRSS:"))
			pss = max(pss, memoryMiB(b, pids[0], "smaps_rollup", "Pss:"))
		}
		took, out := timed(pooled)
		pooledTime, pooledStart = pooledTime+took, pooledStart+out.Timings.Start
	}
	if st := pooled.PoolState(); st.Cold != 0 {
		b.Fatalf("pooled runs started their own children: %+v", st)
	}
	n := float64(b.N)
	b.ReportMetric(float64(freshTime.Milliseconds())/n, "fresh-ms")
	b.ReportMetric(float64(pooledTime.Milliseconds())/n, "pooled-ms")
	b.ReportMetric(float64(pooledStart.Milliseconds())/n, "pooled-start-ms")
	b.ReportMetric(float64(freshTime)/float64(pooledTime), "fresh/pooled")
	b.ReportMetric(rss, "idle-rss-MiB")
	b.ReportMetric(pss, "idle-pss-MiB")
}

// memoryMiB is a process's figure in kB named field of /proc/PID/file.
func memoryMiB(b *testing.B, pid int, file, field string) float64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + file)
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatalf("no %s in %s", field, data)
	return 0
}

// A child no run takes within PoolIdle is killed, and a pool no run has
// taken from within PoolIdle is not refilled until one does, as the native
// pool's sandboxes; PoolState counts all of it.
func TestPooledIdleChildrenExpire(t *testing.T) {
	const idle = time.Second
	in := pooledInterpreterWith(t, Config{Pool: 1, PoolIdle: idle})
	waitPool(t, in, 1)
	pids := in.pool.pids()
	if len(pids) != 1 {
		t.Fatalf("pool children %v", pids)
	}
	deadline := time.Now().Add(childLoadBound)
	for in.PoolState().Expired == 0 || slices.Contains(children(t), pids[0]) {
		if time.Now().After(deadline) {
			t.Fatalf("the idle child was not killed: %+v, children %v", in.PoolState(), children(t))
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2 * idle) // unused: nothing is loaded meanwhile
	if st := in.PoolState(); st != (PoolState{Size: 1, Loaded: 1, Expired: 1}) {
		t.Fatalf("pool %+v after expiry", st)
	}
	if out := run(t, "print('ran')", runOpts{in: in}); out.Status != sandbox.StatusOK || string(out.Stdout) != "ran\n" {
		t.Fatalf("status %s stdout %q stderr %s", out.Status, out.Stdout, out.Stderr)
	}
	for in.PoolState().Loaded < 2 { // the take woke the filler
		if time.Now().After(deadline) {
			t.Fatalf("not refilled after a run took from it: %+v", in.PoolState())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := in.PoolState(); st.Cold != 1 || st.Taken != 0 {
		t.Fatalf("pool %+v, want one cold run", st)
	}
}
