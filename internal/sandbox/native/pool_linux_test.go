package native

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/native/containerinit"
)

// newTestPool makes a Pool of its own Backend (assertClean then checks the
// Backend's state after Close) and waits until it is full.
func newTestPool(t *testing.T, limits sandbox.Limits, size int) (*Backend, *Pool) {
	t.Helper()
	b, p := newConfiguredPool(t, PoolConfig{Size: size, Limits: []sandbox.Limits{limits}})
	waitFull(t, p)
	return b, p
}

// newConfiguredPool makes a Pool of cfg on a Backend of its own.
func newConfiguredPool(t *testing.T, cfg PoolConfig) (*Backend, *Pool) {
	t.Helper()
	testBackend(t) // the host checks
	b, err := New(Config{GuestFiles: guestFiles()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p, err := b.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return b, p
}

// waitFull waits until every sandbox of the pool is started and waiting.
func waitFull(t testing.TB, p *Pool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for p.Ready() < p.cfg.Size {
		if time.Now().After(deadline) {
			t.Fatalf("pool not full after 30 s: %d ready, last error %v", p.Ready(), p.Err())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func runIn(t *testing.T, be sandbox.Backend, job sandbox.Job, limits sandbox.Limits) *sandbox.Outcome {
	t.Helper()
	out, err := be.Run(context.Background(), job, limits)
	if err != nil {
		t.Fatalf("Run: %v (outcome %+v)", err, out)
	}
	return out
}

// A pooled run is a whole run: argv, workspace in and out, the run
// directory read-only, /tmp and the out dir writable, the outcome read back.
func TestPoolRunsTheJob(t *testing.T) {
	b, p := newTestPool(t, sandbox.Limits{}, 1)
	job := newJob(t, `
import json, os, sys
assert os.getcwd() == "/workspace", os.getcwd()
print(json.dumps(sys.argv[1:]), open("in.txt").read())
open("out.txt", "w").write("written")
open("/tmp/t", "w").write("x")
for p in ("/run/apysup/x", "/run/apysup/job/x", "/workspace/../opt/apysup/x"):
    try:
        open(p, "w")
        raise SystemExit("wrote " + p)
    except OSError:
        pass
print(sorted(os.listdir("/run/apysup/job")))
`, "a b", "", "--c")
	if err := os.WriteFile(filepath.Join(job.WorkspaceDir, "in.txt"), []byte("given"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runIn(t, p, job, sandbox.Limits{})
	if out.Status != sandbox.StatusOK {
		t.Fatalf("status %s stderr %q", out.Status, out.Stderr)
	}
	want := "[\"a b\", \"\", \"--c\"] given\n['.argv', 'main.py', 'prelude.py']\n"
	if string(out.Stdout) != want {
		t.Errorf("stdout %q, want %q", out.Stdout, want)
	}
	if len(out.GuestOutcome) == 0 {
		t.Error("no guest outcome")
	}
	if got, _ := os.ReadFile(filepath.Join(job.WorkspaceDir, "out.txt")); string(got) != "written" {
		t.Errorf("workspace out.txt %q", got)
	}
	if st := p.Stats(); st.Pooled != 1 || st.Cold != 0 {
		t.Errorf("stats %+v, want one pooled run", st)
	}
	// Nothing of the start is left for a pooled run: the interpreter waited.
	if tm := out.Timings; tm.Prepare <= 0 || tm.Start != 0 || tm.Run <= 0 || tm.Destroy <= 0 {
		t.Errorf("timings %+v", tm)
	}
	assertWorkspaceReturned(t, job.WorkspaceDir)
	if entries, _ := os.ReadDir(job.RunDir); len(entries) != 0 {
		t.Errorf("RunDir holds %v", entries)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	assertClean(t, b)
}

// Two pooled runs in a row share nothing: not /tmp, not the uid, not the
// workspace, not a process.
func TestPoolRunsAreIsolated(t *testing.T) {
	_, p := newTestPool(t, sandbox.Limits{}, 2)
	script := `
import os
print(os.getuid(), sorted(os.listdir("/tmp")), sorted(os.listdir(".")), len([d for d in os.listdir("/proc") if d.isdigit()]))
open("/tmp/left-by-" + str(os.getpid()), "w").write("x")
open("mine", "w").write("x")
`
	var outs []string
	for range 3 {
		waitFull(t, p)
		out := runIn(t, p, newJob(t, script), sandbox.Limits{})
		if out.Status != sandbox.StatusOK {
			t.Fatalf("status %s stderr %q", out.Status, out.Stderr)
		}
		outs = append(outs, string(out.Stdout))
	}
	for _, o := range outs {
		// uid 1000 inside every run; two processes: the runner and the script.
		if o != "1000 [] [] 2\n" {
			t.Errorf("run saw %q", o)
		}
	}
	if st := p.Stats(); st.Pooled != 3 {
		t.Errorf("stats %+v", st)
	}
}

// The timeout clock starts when the job is assigned, not when the pooled
// sandbox started; a spin still ends at the timeout.
func TestPoolTimeoutCountsFromAssign(t *testing.T) {
	limits := sandbox.Limits{Timeout: 2 * time.Second}
	_, p := newTestPool(t, limits, 1)
	time.Sleep(2500 * time.Millisecond) // longer than the timeout, in the pool
	out := runIn(t, p, newJob(t, "print('in time')\n"), limits)
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "in time\n" {
		t.Fatalf("status %s stdout %q stderr %q", out.Status, out.Stdout, out.Stderr)
	}
	waitFull(t, p)
	t0 := time.Now()
	out = runIn(t, p, newJob(t, "while True: pass\n"), limits)
	if out.Status != sandbox.StatusTimeout {
		t.Fatalf("status %s", out.Status)
	}
	if d := time.Since(t0); d > 12*time.Second {
		t.Errorf("a 2 s timeout took %v", d)
	}
	if st := p.Stats(); st.Pooled != 2 {
		t.Errorf("stats %+v", st)
	}
}

// Other limits, and an empty pool, get a sandbox of their own.
func TestPoolFallsBackToColdStarts(t *testing.T) {
	_, p := newTestPool(t, sandbox.Limits{}, 1)
	out := runIn(t, p, newJob(t, "print('other limits')\n"), sandbox.Limits{Pids: 32})
	if out.Status != sandbox.StatusOK {
		t.Fatalf("status %s stderr %q", out.Status, out.Stderr)
	}
	if st := p.Stats(); st.Cold != 1 || st.Pooled != 0 || p.Ready() != 1 {
		t.Errorf("stats %+v ready %d", st, p.Ready())
	}
	// Invalid limits are refused as Backend.Run refuses them.
	if _, err := p.Run(context.Background(), newJob(t, "pass\n"), sandbox.Limits{MemoryBytes: 1}); !isCode(err, CodeInvalidLimits) {
		t.Errorf("err %v", err)
	}
}

// A pooled init killed while it waits is discarded, and the run still runs.
func TestPoolDiscardsDeadSandboxes(t *testing.T) {
	_, p := newTestPool(t, sandbox.Limits{}, 1)
	var pid int
	key, _ := classOf(sandbox.Limits{})
	p.mu.Lock()
	s := p.classes[key].ready[0].s
	p.mu.Unlock()
	if st, err := s.container.State(); err == nil {
		pid = st.InitProcessPid
	}
	if pid <= 0 {
		t.Fatal("no init pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if st, _ := s.container.Status(); st.String() == "stopped" || time.Now().After(deadline) {
			break
		}
	}
	out := runIn(t, p, newJob(t, "print('ran')\n"), sandbox.Limits{})
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "ran\n" {
		t.Fatalf("status %s stdout %q stderr %q", out.Status, out.Stdout, out.Stderr)
	}
	if st := p.Stats(); st.Discarded != 1 || st.Cold != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Runs in parallel through a small pool all succeed, pooled or not.
func TestPoolConcurrentRuns(t *testing.T) {
	b, p := newTestPool(t, sandbox.Limits{}, 2)
	var wg sync.WaitGroup
	errs := make(chan string, 6)
	for i := range 6 {
		wg.Go(func() {
			out, err := p.Run(context.Background(), newJob(t, "import sys\nprint(sys.argv[1])\n", strings.Repeat("x", i+1)), sandbox.Limits{})
			if err != nil || out.Status != sandbox.StatusOK || string(out.Stdout) != strings.Repeat("x", i+1)+"\n" {
				errs <- "run failed"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if st := p.Stats(); st.Pooled+st.Cold != 6 || st.Pooled == 0 {
		t.Errorf("stats %+v", st)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	assertClean(t, b)
}

func isCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// When the pool cannot start a sandbox (here: its uid range holds one
// pair, and a pooled sandbox holds it), Err says why with a typed code, the
// filler retries, and runs still run.
func TestPoolReportsAndRetriesFailures(t *testing.T) {
	testBackend(t)
	uids, err := NewUIDAllocator(1_700_000, 2)
	if err != nil {
		t.Fatal(err)
	}
	uids.lockDir = t.TempDir()
	b, err := New(Config{GuestFiles: guestFiles(), UIDs: uids})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.NewPool(PoolConfig{Size: 2, Limits: []sandbox.Limits{{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	deadline := time.Now().Add(30 * time.Second)
	for (p.Ready() < 1 || !isCode(p.Err(), CodeUIDsExhausted)) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p.Ready() != 1 || !isCode(p.Err(), CodeUIDsExhausted) {
		t.Fatalf("ready %d, err %v: want one sandbox and uids_exhausted", p.Ready(), p.Err())
	}
	out := runIn(t, p, newJob(t, "print('ran')\n"), sandbox.Limits{})
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "ran\n" {
		t.Fatalf("status %s stdout %q stderr %q", out.Status, out.Stdout, out.Stderr)
	}
	// The pair came back with the run: a retry starts a sandbox again.
	for p.Ready() < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p.Ready() != 1 {
		t.Fatalf("the pool did not refill after the failure: %v", p.Err())
	}
	if st := p.Stats(); st.Pooled != 1 {
		t.Errorf("stats %+v", st)
	}
}

// pooledSandbox is the oldest ready sandbox of limits' class.
func pooledSandbox(t *testing.T, p *Pool, limits sandbox.Limits) *Sandbox {
	t.Helper()
	key, err := classOf(limits)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.classes[key].ready[0].s
}

// pooledInitPid is the init pid of the oldest ready sandbox of limits' class.
func pooledInitPid(t *testing.T, p *Pool, limits sandbox.Limits) int {
	t.Helper()
	st, err := pooledSandbox(t, p, limits).container.State()
	if err != nil || st.InitProcessPid <= 0 {
		t.Fatalf("no init pid: %v", err)
	}
	return st.InitProcessPid
}

// A pooled sandbox's interpreter is already running the runner, the child
// of the guest init, and waits for its job; the job's pipe is gone from
// every guest process by the time the script runs (pid 1 holds none), and
// the script sees the run's own argv and directories.
func TestPoolInterpreterWaitsForItsJob(t *testing.T) {
	_, p := newTestPool(t, sandbox.Limits{}, 1)
	pid := pooledInitPid(t, p, sandbox.Limits{})
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Split(string(cmdline), "\x00"); !slices.Equal(args[:5], containerinit.GuestInitArgv(sandbox.GuestOutDir+"/"+sandbox.OutcomeFile, []string{sandbox.GuestPython})) ||
		!slices.Contains(args, sandbox.GuestRunner) || !slices.Contains(args, "--job-fd") {
		t.Fatalf("the pooled init runs %q, not the guest init running the runner", args)
	}
	out := runIn(t, p, newJob(t, `
import os, sys
def open_fds(pid):
    return sorted(int(fd) for fd in os.listdir("/proc/%s/fd" % pid))
own = [fd for fd in (3, 4) if os.path.exists("/proc/self/fd/%d" % fd)]
print(sys.argv[1:], os.getcwd(), open_fds(1), own)
`, "x"), sandbox.Limits{})
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "['x'] /workspace [] []\n" {
		t.Fatalf("status %s stdout %q stderr %q", out.Status, out.Stdout, out.Stderr)
	}
}

// A sandbox no one takes within Idle is destroyed, and its class, unused
// as long, is dropped; the next Take makes it again, and it fills again.
func TestPoolIdleSandboxesExpire(t *testing.T) {
	b, p := newConfiguredPool(t, PoolConfig{Size: 1, Limits: []sandbox.Limits{{}}, Idle: 300 * time.Millisecond})
	waitUntil(t, func() bool { return p.Stats().Expired >= 1 && p.Classes() == 0 && p.Ready() == 0 })
	if s := p.Take(sandbox.Limits{}); s != nil {
		t.Fatal("a dropped class had a sandbox")
	}
	if p.Classes() != 1 {
		t.Fatalf("Take did not make the class again: %d classes", p.Classes())
	}
	waitUntil(t, func() bool { return p.Ready() == 1 })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	assertClean(t, b)
}

// Other limits get a class of their own on demand, up to MaxClasses; the
// workspace bounds are not part of a class.
func TestPoolClassesOnDemand(t *testing.T) {
	b, p := newConfiguredPool(t, PoolConfig{Size: 1, Limits: []sandbox.Limits{{}}, MaxClasses: 2})
	other := sandbox.Limits{Pids: 32}
	if s := p.Take(other); s != nil {
		t.Fatal("a new class had a sandbox at once")
	}
	waitUntil(t, func() bool { return p.Ready() == 2 })
	if s := p.Take(sandbox.Limits{Pids: 64}); s != nil || p.Classes() != 2 {
		t.Fatalf("a third class: sandbox %v, %d classes", s != nil, p.Classes())
	}
	s := p.Take(sandbox.Limits{Pids: 32, WorkspaceBytes: 1 << 20})
	if s == nil {
		t.Fatal("no sandbox of the second class")
	}
	if s.limits.Pids != 32 {
		t.Errorf("class limits %+v", s.limits)
	}
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Pooled != 1 || st.Cold != 2 {
		t.Errorf("stats %+v", st)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	assertClean(t, b)
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30 s")
		}
	}
}

// waitsForJob is the job pipe's reader, present or gone.
func TestWaitsForJob(t *testing.T) {
	if (&Sandbox{}).waitsForJob() {
		t.Error("a sandbox without a job pipe waits")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s := &Sandbox{jobW: w}
	if !s.waitsForJob() {
		t.Error("the reader is there")
	}
	r.Close()
	if s.waitsForJob() {
		t.Error("the reader is gone")
	}
}

// A pooled runner killed alone (its pid 1 then ends too) is discarded.
func TestPoolDiscardsDeadRunner(t *testing.T) {
	_, p := newTestPool(t, sandbox.Limits{}, 1)
	s := pooledSandbox(t, p, sandbox.Limits{})
	pid := pooledInitPid(t, p, sandbox.Limits{})
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	var runner int
	if _, serr := fmt.Sscan(string(children), &runner); err != nil || serr != nil || runner <= 0 {
		t.Fatalf("no runner under pid 1: %q %v %v", children, err, serr)
	}
	if err := syscall.Kill(runner, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); s.waitsForJob(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed runner still waits for its job")
		}
	}
	out := runIn(t, p, newJob(t, "print('ran')\n"), sandbox.Limits{})
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "ran\n" {
		t.Fatalf("status %s stdout %q stderr %q", out.Status, out.Stdout, out.Stderr)
	}
	if st := p.Stats(); st.Discarded != 1 || st.Cold != 1 {
		t.Errorf("stats %+v", st)
	}
}
