package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/native"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

// TestStatuses produces each RunResult status of SPEC.md section 10 with
// a real request (timeout and memory_limit: TestTimeout, TestMemoryLimit;
// killed by the host: TestCancelledRun; guests faking them:
// TestForgedStatuses).
func TestStatuses(t *testing.T) {
	t.Parallel()
	need(t)
	ok := "emit('ALLOWED', 'ran')\n"
	cases := []struct {
		name   string
		req    supervisor.Request
		sup    func(t *testing.T) *supervisor.Supervisor // default: the suite's
		status sandbox.Status
		code   string // error code (prefix)
		exit   int
	}{
		{name: "ok", req: supervisor.Request{ScriptPath: guestScript(t, ok)}, status: sandbox.StatusOK, exit: 0},
		{name: "error/exit", req: supervisor.Request{ScriptPath: guestScript(t, "sys.exit(3)\n")}, status: sandbox.StatusError, exit: 3},
		{name: "error/exception", req: supervisor.Request{ScriptPath: guestScript(t, "raise ValueError('nope')\n")},
			status: sandbox.StatusError, exit: 1},
		// The script is pid 1's child, not pid 1: abort() ends it with
		// SIGABRT, and pid 1 reports that signal. A guest's own death
		// is an error, with the signal named.
		{name: "error/abort", req: supervisor.Request{ScriptPath: guestScript(t, "os.abort()\n")},
			status: sandbox.StatusError, code: native.CodeKilledBySignal + ":SIGABRT", exit: 128 + int(syscall.SIGABRT)},
		{name: "error/segv", req: supervisor.Request{ScriptPath: guestScript(t, "ctypes.string_at(0)\n")},
			status: sandbox.StatusError, code: native.CodeKilledBySignal + ":SIGSEGV", exit: 128 + int(syscall.SIGSEGV)},
		{name: "refused/surface", req: supervisor.Request{ScriptPath: guestScript(t, ok), Surface: "sideways", Parent: "main"},
			status: sandbox.StatusRefused, code: plan.CodeInvalidProgramSurface, exit: -1},
		{name: "refused/backend", req: supervisor.Request{ScriptPath: guestScript(t, ok), Backend: "qemu"},
			status: sandbox.StatusRefused, code: supervisor.CodeUnknownBackend, exit: -1},
		{name: "refused/limits", req: supervisor.Request{ScriptPath: guestScript(t, ok), Limits: sandbox.Limits{Pids: -1}},
			status: sandbox.StatusRefused, code: native.CodeInvalidLimits, exit: -1},
		{name: "refused/missing-script", req: supervisor.Request{ScriptPath: filepath.Join(t.TempDir(), "absent.py")},
			status: sandbox.StatusRefused, code: native.CodeInvalidJob, exit: -1},
		{name: "setup_failed/state-dir", req: supervisor.Request{ScriptPath: guestScript(t, ok)},
			sup: func(t *testing.T) *supervisor.Supervisor {
				s := supervisor.New(supervisor.Config{StateDir: filepath.Join(t.TempDir(), "absent")})
				t.Cleanup(func() { s.Close() })
				return s
			},
			status: sandbox.StatusSetupFailed, code: native.CodeSetupFailed, exit: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sup := need(t)
			if tc.sup != nil {
				sup = tc.sup(t)
			}
			res := runWith(t, sup, tc.req)
			if res.Status != tc.status || !strings.HasPrefix(res.ErrorCode, tc.code) || (tc.code == "") != (res.ErrorCode == "") {
				t.Fatalf("want %s (%s): %s", tc.status, tc.code, summary(res))
			}
			if res.ExitCode != tc.exit {
				t.Errorf("exit code %d, want %d", res.ExitCode, tc.exit)
			}
			switch tc.status {
			case sandbox.StatusOK:
				parseMarkers(t, res).expect(t, nil, "ran")
			case sandbox.StatusError:
				// RLIMIT_CORE is 0: a crash leaves no core file in the workspace (cwd).
				if res.Workspace == nil || res.Workspace.EntryCount != 0 {
					t.Errorf("workspace after a crash: %+v", res.Workspace)
				}
			case sandbox.StatusRefused, sandbox.StatusSetupFailed:
				if res.Error == "" || res.Stdout != "" || len(res.Receipts) != 0 {
					t.Errorf("a refusal with a guest's traces: %s", summary(res))
				}
			}
			if tc.name == "error/exception" && (res.GuestError == nil || res.GuestError.Type != "ValueError") {
				t.Errorf("guest error %+v", res.GuestError)
			}
		})
	}
}

// TestGuestSIGKILL: the script is an ordinary process, the child of the
// guest init (pid 1 of the guest's pid namespace), so SIGKILL ends it however
// it comes: from the script itself, from the host to pid 1 (which
// ends the whole namespace), or from the host to the script (which pid 1
// reports). None was the supervisor's decision (its timer or its
// context), so each ends the run in error, killed_by_signal:SIGKILL, and
// none of its processes survive. In every mode a child of the script that SIGKILLs
// itself dies, and the script's SIGKILL to pid 1 is dropped by the kernel
// (a namespace's init gets no unhandled signal sent from inside it).
func TestGuestSIGKILL(t *testing.T) {
	t.Parallel()
	need(t)
	for _, mode := range []string{"self", "host-init", "host-script"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			token := "sigkill-" + randomHex(t, 8)
			ended, end := context.WithCancel(context.Background())
			defer end()
			killed := make(chan error, 1)
			go func() {
				if mode == "self" {
					killed <- nil
					return
				}
				pids, err := guestReady(ended, token)
				if err != nil {
					killed <- err
					return
				}
				target, err := sigkillTarget(pids, mode)
				if err != nil {
					killed <- err
					return
				}
				killed <- syscall.Kill(target, syscall.SIGKILL)
			}()
			res := runGuest(t, "sigkill.py", sandbox.Limits{Timeout: 2 * time.Minute}, mode, token)
			end()
			if err := <-killed; err != nil {
				t.Fatalf("killing the guest from the host: %v (%s)", err, summary(res))
			}
			if res.Status != sandbox.StatusError || res.ErrorCode != native.CodeKilledBySignal+":SIGKILL" ||
				res.ExitCode != 128+int(syscall.SIGKILL) {
				t.Fatalf("guest: %s", summary(res))
			}
			m := parseMarkers(t, res)
			m.expect(t, nil)
			var childSig int
			m.infoAs(t, "child_self_sigkill", &childSig)
			if childSig != int(syscall.SIGKILL) {
				t.Errorf("a guest child's SIGKILL to itself: terminated by %d", childSig)
			}
			var scriptIsPid1 bool
			m.infoAs(t, "script_is_pid1", &scriptIsPid1)
			if scriptIsPid1 {
				t.Errorf("the script is pid 1 of its namespace, want the guest init there")
			}
			var survived any
			m.infoAs(t, "pid1_survived_sigkill", &survived)
			if survived != true {
				t.Errorf("the script's SIGKILL to pid 1: %v, want it dropped and the run to go on", survived)
			}
			assertGone(t, m)
		})
	}
}

// TestSignalsToInit: pid 1 of the guest (the guest init) forwards a signal
// sent to it to the script, and an orphan flooding it with signals while
// the script exits neither crashes it nor changes how the run ends (the
// script's exit status 3, its outcome, nothing on stderr). Repeated: the
// flood races the script's end.
func TestSignalsToInit(t *testing.T) {
	t.Parallel()
	need(t)
	for i := 0; i < 8; i++ {
		res := runGuest(t, "initsignals.py", sandbox.Limits{})
		if res.Status != sandbox.StatusError || res.ErrorCode != "" || res.ExitCode != 3 || res.Stderr != "" || res.GuestError != nil {
			t.Fatalf("run %d: %s", i, summary(res))
		}
		parseMarkers(t, res).expect(t, nil, "forwarded:SIGTERM")
	}
}

// guestReady waits until a process of the guest whose command line holds
// token is named escape-ready (the guest prints everything the test checks
// before it renames a child so) and returns the guest's host pids then. It
// gives up when ctx ends (the run is over) or after a minute.
func guestReady(ctx context.Context, token string) ([]int, error) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		pids := guestHostPids(token)
		for _, pid := range pids {
			if comm(pid) == "escape-ready" {
				return pids, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("the run ended before the guest was ready")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil, os.ErrDeadlineExceeded
}

func comm(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(b))
}

// sigkillTarget picks, among a ready guest's host pids, pid 1 of its
// namespace (the guest init, a child of this process) for host-init, or
// the script (pid 1's child that is not the escape-ready sleeper) for
// host-script.
func sigkillTarget(pids []int, mode string) (int, error) {
	procs := processes()
	pid1 := 0
	for _, pid := range pids {
		if procs[pid].ppid == os.Getpid() {
			pid1 = pid
		}
	}
	if pid1 == 0 {
		return 0, fmt.Errorf("no pid 1 among the guest's pids %v", pids)
	}
	if mode == "host-init" {
		return pid1, nil
	}
	for _, pid := range pids {
		if procs[pid].ppid == pid1 && comm(pid) != "escape-ready" {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no script among the guest's pids %v", pids)
}

// TestCancelledRun: cancelling Run's context while the guest (and a child
// of it) sleeps ends the run as killed (canceled) and leaves nothing.
func TestCancelledRun(t *testing.T) {
	t.Parallel()
	sup := need(t)
	token := "cancel-" + randomHex(t, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan error, 1)
	go func() {
		// Once the guest has printed its host uid and its child sleeps.
		_, err := guestReady(ctx, token)
		ready <- err
		cancel()
	}()
	script := guestScript(t, "import time\nreport_host_uid()\nif os.fork() == 0:\n    libc.prctl(15, b'escape-ready', 0, 0, 0)\n    time.sleep(600)\n    os._exit(0)\ntime.sleep(600)\n")
	res := runCtx(ctx, t, sup, supervisor.Request{ScriptPath: script, Args: []string{token}, Limits: sandbox.Limits{Timeout: 2 * time.Minute}})
	if err := <-ready; err != nil {
		t.Fatalf("waiting for the guest: %v (%s)", err, summary(res))
	}
	if res.Status != sandbox.StatusKilled || res.ErrorCode != native.CodeCanceled {
		t.Fatalf("guest: %s", summary(res))
	}
	assertGone(t, parseMarkers(t, res))
}

// TestForgedStatuses: timeout, memory_limit and killed come from host
// evidence only (docs/security.md). A guest that raises the signal a
// host limit would send, lowers its own CPU limit, forges pid 1's
// report of a signal or exits with the status the CLI reserves for a host
// decision ends in error, with the guest's exit status, never with the
// host's verdict.
func TestForgedStatuses(t *testing.T) {
	t.Parallel()
	need(t)
	forgedOutcome := `with open('/run/apysup/out/outcome.json', 'w') as f:
    f.write('{"exit_code": 152, "result_set": false, "signal": 24}')
os._exit(152)
`
	cases := []struct {
		name   string
		script string
		code   string
		exit   int
	}{
		// What the CPU-time backstop (RLIMIT_CPU) would send.
		{"timeout/self-sigxcpu", "import signal\nos.kill(os.getpid(), signal.SIGXCPU)\n",
			native.CodeKilledBySignal + ":SIGXCPU", 128 + int(syscall.SIGXCPU)},
		{"timeout/own-cpu-limit", "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (1, 2))\nwhile True:\n    pass\n",
			native.CodeKilledBySignal + ":SIGXCPU", 128 + int(syscall.SIGXCPU)},
		// The runner's report of the script's signal, written by the script.
		{"timeout/forged-outcome", forgedOutcome, native.CodeKilledBySignal + ":SIGXCPU", 152},
		// What the OOM killer (and the host's own kill) would send.
		{"memory_limit/self-sigkill", "import signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
			native.CodeKilledBySignal + ":SIGKILL", 128 + int(syscall.SIGKILL)},
		// The exit statuses the CLI gives a timeout and a memory limit.
		{"timeout/exit-124", "sys.exit(124)\n", "", 124},
		{"memory_limit/exit-137", "sys.exit(137)\n", "", 137},
		{"setup_failed/exit-125", "sys.exit(125)\n", "", 125},
		{"refused/exit-126", "sys.exit(126)\n", "", 126},
		{"killed/exit-130", "sys.exit(130)\n", "", 130},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			began := time.Now()
			res := runGuest(t, tc.script, sandbox.Limits{Timeout: 2 * time.Minute})
			if res.Status != sandbox.StatusError || res.ErrorCode != tc.code || res.ExitCode != tc.exit {
				t.Fatalf("want error (%q, exit %d): %s", tc.code, tc.exit, summary(res))
			}
			if took := time.Since(began); took > time.Minute {
				t.Errorf("the run took %v: did it end by the host's timer?", took)
			}
		})
	}
}
