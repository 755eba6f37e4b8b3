package wazero

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// children lists the pids of this process's wazero children, live or
// zombie.
func children(t *testing.T) []int {
	t.Helper()
	return testenv.Children(childArg)
}

// Every run's guest is in a child process of its own, and however the run
// ends, no child is left: ended by itself, by the timeout, by the caller.
func TestEveryRunIsAChildLeftBehindByNone(t *testing.T) {
	interpreter(t)
	if pids := children(t); len(pids) != 0 {
		t.Fatalf("children before the runs: %v", pids)
	}
	out := run(t, "import os; print(os.getpid())", runOpts{})
	if out.Status != sandbox.StatusOK {
		t.Fatalf("status %s stderr %s", out.Status, out.Stderr)
	}
	seen := make(chan []int, 1)
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		seen <- children(t)
		return []byte(`{"status":"ok","result":1}`)
	})
	out = run(t, callScript(`b'{"call_id":"capability-1","capability":"echo","arguments":{}}'`), runOpts{d: d})
	if pids := <-seen; out.Status != sandbox.StatusOK || len(pids) != 1 {
		t.Fatalf("status %s, children during the call %v", out.Status, pids)
	}
	out = run(t, "while True:\n    pass\n", runOpts{limits: sandbox.Limits{Timeout: 200 * time.Millisecond}})
	if out.Status != sandbox.StatusTimeout {
		t.Fatalf("status %s", out.Status)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	out = run(t, "import time\ntime.sleep(3600)\n", runOpts{ctx: ctx})
	if out.Status != sandbox.StatusKilled || out.ErrorCode != ErrorCodeCanceled {
		t.Fatalf("status %s code %q", out.Status, out.ErrorCode)
	}
	if pids := children(t); len(pids) != 0 {
		t.Fatalf("children after the runs: %v", pids)
	}
}

// A child that dies without its report (here killed from outside while
// its guest waits for a host call) ends the run an error with
// ErrorCodeChildDied: the child is the guest's, its death the guest's own
// failure, never a host status.
func TestChildDeathIsAnError(t *testing.T) {
	interpreter(t)
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		for _, pid := range children(t) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
		return []byte(`{"status":"ok","result":1}`)
	})
	out := run(t, callScript(`b'{"call_id":"capability-1","capability":"echo","arguments":{}}'`)+"print('after')\n", runOpts{d: d})
	if out.Status != sandbox.StatusError || out.ErrorCode != ErrorCodeChildDied || out.ExitCode != -1 || bytes.Contains(out.Stdout, []byte("after")) {
		t.Fatalf("status %s code %q exit %d stdout %q", out.Status, out.ErrorCode, out.ExitCode, out.Stdout)
	}
}

// Only a process a run started is a child: the argument alone, or with an
// environment that names another parent, is not.
func TestIsChild(t *testing.T) {
	saved := os.Args
	defer func() { os.Args = saved }()
	for _, tc := range []struct {
		name string
		args []string
		env  string
	}{
		{"argument alone", []string{"prog", childArg}, ""},
		{"names another parent", []string{"prog", childArg}, strconv.Itoa(os.Getpid())},
		{"more arguments", []string{"prog", childArg, "x"}, strconv.Itoa(os.Getppid())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Args = tc.args
			t.Setenv(childEnv, tc.env)
			if isChild() {
				t.Fatal("isChild() = true")
			}
		})
	}
}

// A child maps python.wasm and the stdlib zip from its parent's open
// files only while they are the versions the parent checked at Load: a
// build file written since (here its mtime set, which moves its ctime)
// fails the next run's setup, naming the file, and leaves no child.
func TestChildRefusesABuildChangedSinceLoad(t *testing.T) {
	shared := interpreter(t)
	for _, name := range []string{wasmFile, stdlibFile} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "apysup", "wasi", filepath.Base(shared.build.Dir))
			if err := os.CopyFS(dir, os.DirFS(shared.build.Dir)); err != nil {
				t.Fatal(err)
			}
			// The shared compilation cache: the copy's machine code is
			// already there, under the same module.
			in, err := Load(context.Background(), Config{CacheDir: root, CompilationCacheDir: shared.childLoad.CompilationCacheDir})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close(context.Background())
			if out := run(t, "print('checked')", runOpts{in: in}); out.Status != sandbox.StatusOK || string(out.Stdout) != "checked\n" {
				t.Fatalf("before the change: status %s stdout %q stderr %q", out.Status, out.Stdout, out.Stderr)
			}
			if err := os.Chtimes(filepath.Join(dir, name), time.Now(), time.Now().Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(t.TempDir(), "main.py")
			if err := os.WriteFile(script, []byte("print('ran')"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := in.Backend(nil).Run(context.Background(), sandbox.Job{ScriptPath: script, WorkspaceDir: t.TempDir()}, sandbox.Limits{})
			if err == nil || out.Status != sandbox.StatusSetupFailed || !strings.Contains(err.Error(), name+": changed since its parent checked it") {
				t.Fatalf("after the change: status %s, %v", out.Status, err)
			}
			if len(out.Stdout) != 0 {
				t.Fatalf("the guest ran: %q", out.Stdout)
			}
			if pids := children(t); len(pids) != 0 {
				t.Fatalf("children left: %v", pids)
			}
		})
	}
}

// The result does not wait for the child's exit: once its report and
// streams have ended the run is over, the output whole, its CPU time
// bounded by the kernel's count; the caller's teardown (remove) waits for
// the reap, and leaves no child. The keeper's reap is held back until the
// result is in, so a result that waited for it would never come.
func TestResultBeforeTheChildsExit(t *testing.T) {
	in := interpreter(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "main.py")
	const src = "import sys\nsys.stdout.write('o' * 200000)\nsys.stderr.write('e' * 100000)\nx = sum(range(10**6))\nsys.exit(3)\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	workspace := filepath.Join(dir, "workspace")
	if err := os.Mkdir(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	defer testHookBeforeReap.Store(nil)
	for range 3 {
		gate := make(chan struct{})
		hold := func() { <-gate }
		testHookBeforeReap.Store(&hold)
		type result struct {
			out    *sandbox.Outcome
			remove func()
			err    error
		}
		results := make(chan result, 1)
		go func() {
			out, remove, err := in.Backend(nil).RunLeavingScratch(context.Background(), sandbox.Job{
				ScriptPath: script, Prelude: []byte("pass\n"), WorkspaceDir: workspace, RunDir: t.TempDir(),
			}, sandbox.Limits{})
			results <- result{out, remove, err}
		}()
		var r result
		select {
		case r = <-results:
		case <-time.After(2 * time.Minute): // a deadlock, not a speed
			close(gate)
			t.Fatal("no result while the child could not be reaped: the run waits for the reap")
		}
		if r.err != nil || r.out == nil {
			t.Fatalf("run: %v", r.err)
		}
		out := r.out
		if out.Status != sandbox.StatusError || out.ExitCode != 3 {
			t.Fatalf("%v: status %s exit %d stderr %.200q", r.err, out.Status, out.ExitCode, out.Stderr)
		}
		if len(out.Stdout) != 200000 || len(out.Stderr) != 100000 {
			t.Errorf("stdout %d bytes, stderr %d", len(out.Stdout), len(out.Stderr))
		}
		if out.Usage.CPUTimeNs <= 0 {
			t.Errorf("cpu %d ns", out.Usage.CPUTimeNs)
		}
		// Not reaped yet: a zombie at least (its command line is empty
		// once its memory is gone).
		if len(testenv.Children("")) == 0 {
			t.Error("the child was reaped while the keeper was held back")
		}
		close(gate)
		r.remove()
		if pids := children(t); len(pids) != 0 {
			t.Fatalf("children after remove: %v", pids)
		}
	}
}

// The sample a pooled child decodes ahead of its job sets every field of
// guestJob, so that all their decoders are built, and decodes as it was.
func TestWarmJobDecoding(t *testing.T) {
	got, err := warmJobDecoding()
	if err != nil || !reflect.DeepEqual(got, sampleJob) {
		t.Fatalf("%v: %+v", err, got)
	}
	v := reflect.ValueOf(sampleJob)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("sampleJob leaves %s unset", v.Type().Field(i).Name)
		}
	}
}

// utime and stime are read after the command name, whatever it holds,
// each rounded up to the tick.
func TestParseStatCPU(t *testing.T) {
	for _, c := range []struct {
		line string
		want time.Duration
		ok   bool
	}{
		{"42 (apysup) S 1 42 42 0 -1 4194560 100 0 0 0 250 30 0 0 20 0 8 0 100 0 0", 2820 * time.Millisecond, true},
		{"42 (a) 1 2 3 (b) S 1 42 42 0 -1 0 0 0 0 0 7 0 0 0 20 0 1 0 1 0 0", 90 * time.Millisecond, true},
		{"42 (x) S 1 42", 0, false},
		{"42 x S 1 42 42 0 -1 0 0 0 0 0 1 1", 0, false},
		{"42 (x) S 1 42 42 0 -1 0 0 0 0 0 -1 1", 0, false},
		{"42 (x) S 1 42 42 0 -1 0 0 0 0 0 922337203685477580 1", 0, false},
	} {
		got, ok := parseStatCPU([]byte(c.line))
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %v %v, want %v %v", c.line, got, ok, c.want, c.ok)
		}
	}
	if d, ok := processCPU(os.Getpid()); !ok || d <= 0 {
		t.Errorf("this process: %v %v", d, ok)
	}
}

// The command name in /proc/PID/stat is the child's to set: whatever it
// holds, parseStatCPU never panics, and what it reads is two whole
// ticks at least (each field rounded up) and a multiple of the tick.
func FuzzParseStatCPU(f *testing.F) {
	f.Add([]byte("42 (apysup) S 1 42 42 0 -1 4194560 100 0 0 0 250 30 0 0 20 0 8 0 100 0 0"))
	f.Add([]byte("42 (a) b) S 1 2 3 4 5 6 7 8 9 10 11 12 13"))
	f.Add([]byte(") ) )"))
	f.Add([]byte("1 (x) S 1 1 1 0 -1 0 0 0 0 0 18446744073709551615 922337203685477580"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, ok := parseStatCPU(data)
		if !ok {
			if d != 0 {
				t.Fatalf("%v without ok", d)
			}
			return
		}
		const tick = 10 * time.Millisecond
		if d < 2*tick || d%tick != 0 {
			t.Fatalf("%v from %q", d, data)
		}
	})
}

// A guest that reaches past its guarded memory ends its child with
// SIGSEGV, and the parent, reading that from the kernel's wait status,
// ends the run as a native segfault: an error killed_by_signal:SIGSEGV,
// exit status 139, with what the guest printed first. Here the guest's C
// stack overflows: it grows down from near address 0 of the linear
// memory and wraps to the top of the 4 GiB index space, inside the
// reservation and past the memory's length. (Compiled with bounds checks,
// the same access trapped, with the same outcome: signal.go.)
func TestGuardFaultIsSIGSEGV(t *testing.T) {
	in := interpreter(t)
	if guardAvailable() != in.guarded {
		t.Fatalf("guardAvailable %v, the interpreter's code guarded %v", guardAvailable(), in.guarded)
	}
	var faults atomic.Int64
	hook := func() { faults.Add(1) }
	testHookGuardFault.Store(&hook)
	defer testHookGuardFault.Store(nil)
	// A generous timeout: the compiled frames' stack, charged to the
	// memory limit (linearMemory.ChargeStack), grows past 100 MB before
	// the C stack runs out, and each doubling copies it and walks its
	// frames, Go code that -race slows tenfold (20 s here).
	out := run(t, "import sys\nsys.setrecursionlimit(10**6)\nn = []\nfor _ in range(10**6):\n    n = [n]\nprint('built', flush=True)\nprint(len(repr(n)))\n",
		runOpts{limits: sandbox.Limits{Timeout: 3 * time.Minute}})
	if out.Status != sandbox.StatusError || out.ErrorCode != sandbox.KilledBySignalCode(syscall.SIGSEGV) || out.ExitCode != 139 || string(out.Stdout) != "built\n" {
		t.Fatalf("status %s code %q exit %d stdout %q stderr %q", out.Status, out.ErrorCode, out.ExitCode, out.Stdout, out.Stderr)
	}
	// Without apysup's patch (a go test outside make), wazero compiles the
	// bounds checks in whatever the allocator: the same ending, by a trap.
	_, patched := Runtime(context.Background())
	if want := map[bool]int64{true: 1, false: 0}[in.guarded && patched]; faults.Load() != want {
		t.Fatalf("guard faults %d, want %d", faults.Load(), want)
	}
}
