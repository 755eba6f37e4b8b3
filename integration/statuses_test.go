package integration

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/plan"
	"github.com/apysup/apysup/sandbox"
	"github.com/apysup/apysup/sandbox/native"
	"github.com/apysup/apysup/sandbox/supervisor"
)

// TestStatuses produces each RunResult status of SPEC.md section 10 with
// a real request (timeout and memory_limit: TestTimeout, TestMemoryLimit;
// killed by the host: TestGuestSIGKILL).
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
		// abort(): pid 1 ignores its own SIGABRT, so glibc ends with a fault.
		{name: "killed/abort", req: supervisor.Request{ScriptPath: guestScript(t, "os.abort()\n")},
			status: sandbox.StatusKilled, code: native.CodeKilledBySignal + ":", exit: -2},
		{name: "killed/segv", req: supervisor.Request{ScriptPath: guestScript(t, "ctypes.string_at(0)\n")},
			status: sandbox.StatusKilled, code: native.CodeKilledBySignal + ":SIGSEGV", exit: 128 + int(syscall.SIGSEGV)},
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
			if tc.exit != -2 && res.ExitCode != tc.exit {
				t.Errorf("exit code %d, want %d", res.ExitCode, tc.exit)
			}
			switch tc.status {
			case sandbox.StatusOK:
				parseMarkers(t, res).expect(t, nil, "ran")
			case sandbox.StatusKilled:
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

// TestGuestSIGKILL: a guest process that SIGKILLs itself dies; pid 1 of
// the guest cannot (the kernel protects a namespace's init from signals
// sent inside it); SIGKILL of the guest from the host ends the run as
// killed, and none of its processes survive.
func TestGuestSIGKILL(t *testing.T) {
	t.Parallel()
	need(t)
	token := "sigkill-" + randomHex(t, 8)
	killed := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			// The guest is ready once its sleeper has renamed itself.
			pids := guestHostPids(token)
			ready := false
			for _, pid := range pids {
				comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
				ready = ready || strings.TrimSpace(string(comm)) == "escape-ready"
			}
			if !ready {
				continue
			}
			for _, pid := range pids {
				if processes()[pid].ppid == os.Getpid() { // the pid namespace's init
					killed <- syscall.Kill(pid, syscall.SIGKILL)
					return
				}
			}
		}
		killed <- os.ErrDeadlineExceeded
	}()
	res := runGuest(t, "sigkill.py", sandbox.Limits{Timeout: 2 * time.Minute}, token)
	if err := <-killed; err != nil {
		t.Fatalf("killing the guest from the host: %v (%s)", err, summary(res))
	}
	if res.Status != sandbox.StatusKilled || res.ErrorCode != native.CodeKilledBySignal+":SIGKILL" {
		t.Fatalf("guest: %s", summary(res))
	}
	m := parseMarkers(t, res)
	m.expect(t, nil)
	var childSig int
	m.infoAs(t, "child_self_sigkill", &childSig)
	if childSig != int(syscall.SIGKILL) {
		t.Errorf("a guest child's SIGKILL to itself: terminated by %d", childSig)
	}
	var survived bool
	m.infoAs(t, "pid1_survived_self_sigkill", &survived)
	t.Logf("pid 1 of the guest survived os.kill(os.getpid(), SIGKILL): %v", survived)
	assertGone(t, m)
}

// TestCancelledRun: cancelling Run's context while the guest (and a child
// of it) sleeps ends the run as killed (canceled) and leaves nothing.
func TestCancelledRun(t *testing.T) {
	t.Parallel()
	sup := need(t)
	token := "cancel-" + randomHex(t, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if len(guestHostPids(token)) >= 2 {
				break
			}
		}
		cancel()
	}()
	script := guestScript(t, "import time\nreport_host_uid()\nif os.fork() == 0:\n    time.sleep(600)\n    os._exit(0)\ntime.sleep(600)\n")
	res := runCtx(ctx, t, sup, supervisor.Request{ScriptPath: script, Args: []string{token}, Limits: sandbox.Limits{Timeout: 2 * time.Minute}})
	if res.Status != sandbox.StatusKilled || res.ErrorCode != native.CodeCanceled {
		t.Fatalf("guest: %s", summary(res))
	}
	assertGone(t, parseMarkers(t, res))
}
