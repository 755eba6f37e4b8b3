package wazero

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// The interpreter is loaded once per test binary, as a process would.
var loaded = sync.OnceValues(func() (*Interpreter, error) {
	return Load(context.Background(), Config{})
})

func interpreter(t testing.TB) *Interpreter {
	t.Helper()
	in, err := loaded()
	var u *UnavailableError
	testenv.Need(t, !errors.As(err, &u), "the WASI CPython build (make wasi-python)")
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// loadWith is a Load of its own under cfg, closed when the test ends;
// the test needs the WASI build as interpreter's callers do.
func loadWith(t testing.TB, cfg Config) *Interpreter {
	t.Helper()
	in, err := Load(context.Background(), cfg)
	var u *UnavailableError
	testenv.Need(t, !errors.As(err, &u), "the WASI CPython build (make wasi-python)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(context.Background()) })
	return in
}

type runOpts struct {
	limits    sandbox.Limits
	d         broker.Dispatcher
	args      []string
	workspace string
	runDir    string
	ctx       context.Context
	in        *Interpreter // default: the test binary's
}

func run(t testing.TB, script string, o runOpts) *sandbox.Outcome {
	t.Helper()
	in := o.in
	if in == nil {
		in = interpreter(t)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "main.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if o.workspace == "" {
		o.workspace = filepath.Join(dir, "workspace")
		if err := os.Mkdir(o.workspace, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if o.ctx == nil {
		o.ctx = context.Background()
	}
	out, err := in.Backend(rpc.Responder(o.d)).Run(o.ctx, sandbox.Job{
		ScriptPath:   path,
		Args:         o.args,
		Prelude:      []byte("import agent_runtime\nagent_runtime._bind(None)\n"),
		WorkspaceDir: o.workspace,
		RunDir:       o.runDir,
	}, o.limits)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return lines[len(lines)-1]
}

func TestHelloWorld(t *testing.T) {
	out := run(t, "import sys\nprint('hello', sys.argv[1:])\n", runOpts{args: []string{"a", "b c"}})
	if out.Status != sandbox.StatusOK || out.ExitCode != 0 {
		t.Fatalf("status %s exit %d stderr %s", out.Status, out.ExitCode, out.Stderr)
	}
	if got := string(out.Stdout); got != "hello ['a', 'b c']\n" || len(out.Stderr) != 0 {
		t.Fatalf("stdout %q stderr %q", got, out.Stderr)
	}
	if out.Usage.CPUTimeNs <= 0 || out.Usage.PeakMemoryBytes <= 0 {
		t.Fatalf("usage %+v", out.Usage)
	}
	var outcome struct {
		ExitCode  int  `json:"exit_code"`
		ResultSet bool `json:"result_set"`
	}
	if err := json.Unmarshal(out.GuestOutcome, &outcome); err != nil || outcome.ExitCode != 0 || outcome.ResultSet {
		t.Fatalf("outcome %s: %v", out.GuestOutcome, err)
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		status       sandbox.Status
		exit         int
		stderr       string
	}{
		{"exit 0", "import sys; sys.exit(0)", sandbox.StatusOK, 0, ""},
		{"exit 3", "import sys; sys.exit(3)", sandbox.StatusError, 3, ""},
		{"exit 256 wraps", "import sys; sys.exit(256)", sandbox.StatusOK, 0, ""},
		{"exit message", "import sys; sys.exit('bye')", sandbox.StatusError, 1, "bye"},
		{"exception", "raise ValueError('boom')", sandbox.StatusError, 1, "ValueError: boom"},
		{"recursion", "def f(): f()\nf()", sandbox.StatusError, 1, "RecursionError: maximum recursion depth exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := run(t, tc.script, runOpts{})
			if out.Status != tc.status || out.ExitCode != tc.exit {
				t.Fatalf("status %s exit %d, want %s %d; stderr %s", out.Status, out.ExitCode, tc.status, tc.exit, out.Stderr)
			}
			if tc.stderr != "" && lastLine(out.Stderr) != tc.stderr {
				t.Fatalf("last stderr line %q, want %q", lastLine(out.Stderr), tc.stderr)
			}
		})
	}
}

// Native's recursion limit, with enough stack that recursion through C
// (map calling back into Python) ends in RecursionError, never in a trap.
func TestRecursionThroughC(t *testing.T) {
	out := run(t, `import sys
def f(n): return list(map(f, [n - 1])) if n else 0
f(sys.getrecursionlimit() - 10)
print("deep ok")
f(10**6)
`, runOpts{})
	if out.Status != sandbox.StatusError || string(out.Stdout) != "deep ok\n" ||
		!strings.HasPrefix(lastLine(out.Stderr), "RecursionError: maximum recursion depth exceeded") {
		t.Fatalf("status %s code %q stdout %q stderr %s", out.Status, out.ErrorCode, out.Stdout, out.Stderr)
	}
}

func TestTimeout(t *testing.T) {
	out := run(t, "while True:\n    pass\n", runOpts{limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
	if out.Status != sandbox.StatusTimeout {
		t.Fatalf("status %s exit %d", out.Status, out.ExitCode)
	}
}

// A guest asleep in a host function still ends at the timeout, there:
// not one more line of it runs.
func TestTimeoutWhileSleeping(t *testing.T) {
	out := run(t, "import time\ntry:\n    time.sleep(3600)\nfinally:\n    print('after')\n", runOpts{limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
	if out.Status != sandbox.StatusTimeout || len(out.Stdout) != 0 {
		t.Fatalf("status %s exit %d stdout %q stderr %s", out.Status, out.ExitCode, out.Stdout, out.Stderr)
	}
}

func TestCancelDuringHostCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		cancel() // the supervisor gives up while the Broker waits (e.g. for approval)
		<-ctx.Done()
		return nil
	})
	out := run(t, callScript(`b'{"call_id":"capability-1","capability":"wait","arguments":{}}'`), runOpts{d: d, ctx: ctx})
	if out.Status != sandbox.StatusKilled || out.ErrorCode != ErrorCodeCanceled {
		t.Fatalf("status %s code %q stdout %s stderr %s", out.Status, out.ErrorCode, out.Stdout, out.Stderr)
	}
}

// A timer that comes due while a host call waits interrupts the wait, as
// natively: a handler that raises gives the call up (its exception
// propagates, and the call's late answer is dropped before the next
// call's), one that returns lets the call go on to its own answer.
func TestHostCallInterruptedByTimer(t *testing.T) {
	testenv.Need(t, childSupported, "a child process: in-process calls are not interrupted")
	var mu sync.Mutex
	var seen []string
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		var f struct {
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(frame, &f)
		mu.Lock()
		seen = append(seen, f.CallID)
		mu.Unlock()
		time.Sleep(400 * time.Millisecond)
		return []byte(`{"schema_version":"apysup.broker.v1","call_id":"` + f.CallID + `","status":"ok","result":"` + f.CallID + `"}`)
	})
	script := `import signal, time, _agent_runtime_host
def frame(n):
    return b'{"call_id":"capability-%d","capability":"wait","arguments":{}}' % n
def raising(signum, f):
    raise TimeoutError("alarm")
fired = []
signal.signal(signal.SIGALRM, raising)
signal.setitimer(signal.ITIMER_REAL, 0.05)
start = time.monotonic()
try:
    _agent_runtime_host.call(frame(1))
    print("answered")
except TimeoutError:
    print("TimeoutError", time.monotonic() - start < 0.3)
signal.signal(signal.SIGALRM, lambda signum, f: fired.append(signum))
signal.setitimer(signal.ITIMER_REAL, 0.05)
print(_agent_runtime_host.call(frame(2)).decode(), fired == [signal.SIGALRM])
`
	out := run(t, script, runOpts{d: d})
	if out.Status != sandbox.StatusOK {
		t.Fatalf("status %s stderr %s", out.Status, out.Stderr)
	}
	if got, want := string(out.Stdout), "TimeoutError True\n\"capability-2\" True\n"; got != want {
		t.Fatalf("stdout %q, want %q", got, want)
	}
	if want := []string{"capability-1", "capability-2"}; !slices.Equal(seen, want) {
		t.Fatalf("dispatched %v, want %v", seen, want)
	}
}

// giveUpScript makes a call (capability-1) and gives it up: an alarm's
// handler raises while it waits.
const giveUpScript = `import signal, _agent_runtime_host
def raising(signum, f):
    raise TimeoutError("alarm")
signal.signal(signal.SIGALRM, raising)
signal.setitimer(signal.ITIMER_REAL, 0.05)
try:
    _agent_runtime_host.call(b'{"call_id":"capability-1","capability":"wait","arguments":{}}')
except TimeoutError:
    print("gave up")
`

// A call the guest gave up and left waiting in the Broker (for a human,
// say) ends by the time the guest does: the run does not wait for it.
func TestGivenUpCallEndsWithTheGuest(t *testing.T) {
	testenv.Need(t, childSupported, "a child process: in-process calls are not interrupted")
	ended := make(chan error, 1)
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		<-ctx.Done()
		ended <- ctx.Err()
		return nil
	})
	script := giveUpScript
	start := time.Now()
	out := run(t, script, runOpts{d: d, limits: sandbox.Limits{Timeout: time.Minute}})
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "gave up\n" {
		t.Fatalf("status %s stdout %q stderr %s", out.Status, out.Stdout, out.Stderr)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("the run took %s: it waited for the call it gave up", took)
	}
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the call's context did not end")
		}
	default:
		t.Fatal("the call was still waiting when the run ended")
	}
}

// A call the guest gave up is canceled in the Broker at once, as the
// native bridge's closed connection cancels it: the guest's next call,
// which the parent answers only after the one before, is answered while
// the guest runs, and the call it gave up saw its context canceled.
func TestGivenUpCallIsCanceled(t *testing.T) {
	testenv.Need(t, childSupported, "a child process: in-process calls are not interrupted")
	canceled := make(chan error, 1)
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		if bytes.Contains(frame, []byte(`"capability-1"`)) {
			<-ctx.Done() // a human who never answers
			canceled <- ctx.Err()
			return nil
		}
		return []byte(`{"schema_version":"apysup.broker.v1","call_id":"capability-2","status":"ok","result":"second"}`)
	})
	script := giveUpScript + `signal.setitimer(signal.ITIMER_REAL, 0)
print(_agent_runtime_host.call(b'{"call_id":"capability-2","capability":"wait","arguments":{}}').decode())
`
	out := run(t, script, runOpts{d: d, limits: sandbox.Limits{Timeout: time.Minute}})
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "gave up\n\"second\"\n" {
		t.Fatalf("status %s stdout %q stderr %s", out.Status, out.Stdout, out.Stderr)
	}
	select {
	case err := <-canceled:
		if err != context.Canceled {
			t.Fatalf("the call given up ended with %v", err)
		}
	default:
		t.Fatal("the call given up was not canceled")
	}
}

func TestMemoryLimit(t *testing.T) {
	limits := sandbox.Limits{MemoryBytes: 64 << 20}
	out := run(t, "x = bytearray(200 << 20)\n", runOpts{limits: limits})
	if out.Status != sandbox.StatusMemoryLimit {
		t.Fatalf("status %s exit %d stderr %s", out.Status, out.ExitCode, out.Stderr)
	}
	if out.Usage.PeakMemoryBytes > 64<<20 {
		t.Fatalf("peak %d over the limit", out.Usage.PeakMemoryBytes)
	}
	// The limit is a MemoryError the guest may handle, as a malloc failure.
	out = run(t, "try:\n    x = bytearray(200 << 20)\nexcept MemoryError:\n    print('caught')\n", runOpts{limits: limits})
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "caught\n" {
		t.Fatalf("status %s stdout %q stderr %s", out.Status, out.Stdout, out.Stderr)
	}
	// A request too large for wasm32, which CPython refuses before any
	// grow: natively it is granted and, touched, ends the guest at the
	// limit. Under the guest's own RLIMIT_AS it is the guest's failure, as
	// natively.
	for _, script := range []string{"x = bytearray((1 << 31) - 1)\n", "x = [0] * (1 << 29)\n"} {
		out = run(t, script, runOpts{limits: limits})
		if out.Status != sandbox.StatusMemoryLimit {
			t.Fatalf("%q: status %s exit %d stderr %s", script, out.Status, out.ExitCode, out.Stderr)
		}
	}
	out = run(t, "import resource\nresource.setrlimit(resource.RLIMIT_AS, (48 << 20, 48 << 20))\nx = bytearray((1 << 31) - 1)\n", runOpts{limits: limits})
	if out.Status != sandbox.StatusError || !strings.HasSuffix(strings.TrimSpace(string(out.Stderr)), "MemoryError") {
		t.Fatalf("under RLIMIT_AS: status %s stderr %s", out.Status, out.Stderr)
	}
	// Below what CPython needs to start at all.
	out = run(t, "pass", runOpts{limits: sandbox.Limits{MemoryBytes: sandbox.MinMemoryBytes}})
	if out.Status != sandbox.StatusMemoryLimit {
		t.Fatalf("status %s", out.Status)
	}
}

func TestOutputTruncation(t *testing.T) {
	out := run(t, "import sys\nprint('x' * 10000)\nsys.stderr.write('e' * 5000)\n", runOpts{limits: sandbox.Limits{OutputBytes: 100}})
	if out.Status != sandbox.StatusOK {
		t.Fatalf("status %s", out.Status)
	}
	if !out.StdoutTruncated || !out.StderrTruncated || len(out.Stdout) != 100 || len(out.Stderr) != 100 {
		t.Fatalf("stdout %d %v stderr %d %v", len(out.Stdout), out.StdoutTruncated, len(out.Stderr), out.StderrTruncated)
	}
	out = run(t, "print('short')", runOpts{limits: sandbox.Limits{OutputBytes: 100}})
	if out.StdoutTruncated || out.StderrTruncated {
		t.Fatal("truncated below the cap")
	}
}

// callScript calls _agent_runtime_host.call(frame) and prints the result or
// the exception's type and code.
func callScript(frame string) string {
	return `import _agent_runtime_host, _agent_runtime_wire as w
frame = ` + frame + `
try:
    print(_agent_runtime_host.call(frame).decode())
except w.AgentRuntimeError as e:
    print(type(e).__name__, e.error_code)
except TypeError:
    print("TypeError")
`
}

// frameOfSize is a Python expression: a valid call frame of exactly n bytes.
func frameOfSize(n int) string {
	return `(lambda h, t: h + b"x" * (` + strconv.Itoa(n) + ` - len(h) - len(t)) + t)(b'{"call_id":"capability-1","capability":"echo","arguments":{"p":"', b'"}}')`
}

func TestHostCall(t *testing.T) {
	frame := `{"call_id":"capability-1","capability":"echo","arguments":{"b":2,"a":1}}`
	big := `{"schema_version":"apysup.broker.v1","status":"ok","result":"` + strings.Repeat("x", MaxMessageBytes) + `"}`
	for _, tc := range []struct {
		name   string
		frame  string // Python expression
		answer string // broker response; "" answers nothing
		want   string
		calls  int
	}{
		{"ok", "b'" + frame + "'", `{"schema_version":"apysup.broker.v1","call_id":"capability-1","status":"ok","result":{"z":[1,2.5],"a":"\u00e9"},"receipt_id":"sha256:00"}`,
			`{"a":"é","z":[1,2.5]}`, 1},
		{"bytearray", "bytearray(b'" + frame + "')", `{"status":"ok","result":null}`, "null", 1},
		{"denied", "b'" + frame + "'", `{"status":"denied","error_code":"capability_unknown","message":"m"}`, "CapabilityError capability_unknown", 1},
		{"ambiguous", "b'" + frame + "'", `{"status":"ambiguous","error_code":"approval_audit_failed"}`, "AmbiguousOutcome approval_audit_failed", 1},
		{"empty request", "b''", `{"status":"ok","result":1}`, "CapabilityError frame_empty", 0},
		{"malformed request", "b'{\"call_id\": 1}'", `{"status":"ok","result":1}`, "CapabilityError frame_malformed", 0},
		{"oversized request", "b'x' * ((1 << 20) + 1)", `{"status":"ok","result":1}`, "CapabilityError frame_too_large", 0},
		{"request at the limit", frameOfSize(MaxMessageBytes), `{"status":"ok","result":1}`, "1", 1},
		{"request type", "'" + frame + "'", `{"status":"ok","result":1}`, "TypeError", 0},
		{"oversized response", "b'" + frame + "'", big, "AmbiguousOutcome dispatch_outcome_unknown", 1},
		{"no answer", "b'" + frame + "'", "", "AmbiguousOutcome dispatch_outcome_unknown", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var frames [][]byte
			d := dispatcherFunc(func(ctx context.Context, f []byte) []byte {
				frames = append(frames, f)
				return []byte(tc.answer)
			})
			out := run(t, callScript(tc.frame), runOpts{d: d})
			if out.Status != sandbox.StatusOK {
				t.Fatalf("status %s stderr %s", out.Status, out.Stderr)
			}
			if got := strings.TrimSpace(string(out.Stdout)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if len(frames) != tc.calls {
				t.Fatalf("dispatched %d times, want %d", len(frames), tc.calls)
			}
			if tc.calls == 1 && strings.HasPrefix(tc.frame, "b'{") && string(frames[0]) != frame {
				t.Fatalf("frame %q, want %q", frames[0], frame)
			}
			if tc.name == "request at the limit" && len(frames[0]) != MaxMessageBytes {
				t.Fatalf("frame of %d bytes, want %d", len(frames[0]), MaxMessageBytes)
			}
		})
	}
	// The module finds the wire module in sys.modules, or imports it
	// again when a script took it out.
	t.Run("wire module reimported", func(t *testing.T) {
		d := dispatcherFunc(func(context.Context, []byte) []byte { return []byte(`{"status":"ok","result":[1]}`) })
		script := `import sys, _agent_runtime_host, _agent_runtime_wire
del sys.modules["_agent_runtime_wire"]
print(_agent_runtime_host.call(b'` + frame + `').decode(), sys.modules["_agent_runtime_wire"] is not _agent_runtime_wire)
`
		out := run(t, script, runOpts{d: d})
		if got := strings.TrimSpace(string(out.Stdout)); got != "[1] True" {
			t.Fatalf("got %q, stderr %s", got, out.Stderr)
		}
	})
	t.Run("no dispatcher", func(t *testing.T) {
		out := run(t, callScript("b'"+frame+"'"), runOpts{})
		if got := strings.TrimSpace(string(out.Stdout)); got != "CapabilityError channel_unavailable" {
			t.Fatalf("got %q", got)
		}
	})
}

func TestEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("APYSUP_SECRET", "leak")
	out := run(t, `import os, sys, json
print(json.dumps({"env": dict(os.environ), "argv0": sys.orig_argv[0], "isolated": sys.flags.isolated,
    "no_site": sys.flags.no_site, "cwd": os.getcwd(), "path": sys.path, "recursion": sys.getrecursionlimit()}))
`, runOpts{})
	var got struct {
		Env       map[string]string
		Argv0     string
		Isolated  int
		NoSite    int `json:"no_site"`
		Cwd       string
		Path      []string
		Recursion int
	}
	if err := json.Unmarshal(out.Stdout, &got); err != nil {
		t.Fatalf("%v: stdout %s stderr %s", err, out.Stdout, out.Stderr)
	}
	want := map[string]string{}
	for _, kv := range guestEnv {
		want[kv[0]] = kv[1]
	}
	if len(got.Env) != len(want) {
		t.Fatalf("env %v, want %v", got.Env, want)
	}
	for k, v := range want {
		if got.Env[k] != v {
			t.Fatalf("env %v, want %v", got.Env, want)
		}
	}
	if got.Argv0 != sandbox.GuestPython || got.Isolated != 1 || got.NoSite != 1 || got.Cwd != sandbox.GuestWorkDir || got.Recursion != 1000 {
		t.Fatalf("%+v", got)
	}
	if got.Path[0] != sandbox.GuestFilesDir || got.Path[1] != "/usr/lib/python311.zip" {
		t.Fatalf("sys.path %v", got.Path)
	}
}

func TestFilesystemShowsNothingElse(t *testing.T) {
	ws := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "in.txt"), []byte("input"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, `import os, json, platform, sys
def probe(f):
    try:
        return f()
    except OSError as e:
        return "errno %d" % e.errno
r = {}
for p in ["/etc/shadow", "/etc/os-release", "/etc/alternatives", "/usr/bin/python3", "/proc/self", "/tmp/x", "/root", "/run/apysup/channel.json", "/run/apysup/out/x/../../../../etc"]:
    r["exists " + p] = os.path.exists(p)
r["ls /"] = sorted(os.listdir("/"))
r["ls /dev"] = sorted(os.listdir("/dev"))
r["ls /etc"] = sorted(os.listdir("/etc"))
r["ls /tmp"] = sorted(os.listdir("/tmp"))
r["ls /usr"] = sorted(os.listdir("/usr"))
r["ls /usr/lib"] = sorted(os.listdir("/usr/lib"))
r["ls /usr/bin"] = sorted(os.listdir("/usr/bin"))
r["executable"] = [sys.executable, os.path.getsize(sys.executable), platform.libc_ver()]
r["ls job"] = sorted(os.listdir("/run/apysup/job"))
r["ls opt"] = sorted(os.listdir("/opt/apysup"))
r["ls workspace"] = sorted(os.listdir("."))
r["read in"] = open("in.txt").read()
r["write workspace"] = probe(lambda: open("out.txt", "w").write("ok"))
r["write job"] = probe(lambda: open("/run/apysup/job/x", "w"))
r["write opt"] = probe(lambda: open("/opt/apysup/x", "w"))
r["write stdlib"] = probe(lambda: open("/usr/lib/x", "w"))
r["write root"] = probe(lambda: open("/x", "w"))
r["write dev"] = probe(lambda: open("/dev/x", "w"))
r["write executable"] = probe(lambda: os.write(os.open(sys.executable, os.O_WRONLY), b"x"))
r["make symlink"] = probe(lambda: os.symlink("../..", "up"))
r["dotdot"] = probe(lambda: open("../" * 8 + "etc/passwd").read())
r["through symlink"] = probe(lambda: open("up/etc/passwd").read())
print(json.dumps(r, sort_keys=True))
`, runOpts{workspace: ws})
	var got map[string]any
	if err := json.Unmarshal(out.Stdout, &got); err != nil {
		t.Fatalf("%v: stdout %s stderr %s", err, out.Stdout, out.Stderr)
	}
	for k, v := range got {
		if strings.HasPrefix(k, "exists ") && v != false {
			t.Errorf("%s: %v", k, v)
		}
	}
	// "/" holds only the directories that lead to the mounts, and an empty
	// file at sys.executable; /dev only the five devices and the three
	// links to the standard streams.
	// /usr/local holds the host's (empty) package directory
	// (wazeroPackageDirs).
	lsUsr := `["bin","lib","local"]`
	if interpreter(t).zoneinfo != nil {
		lsUsr = `["bin","lib","local","share"]`
	}
	// python3 holds the host's (empty) package directory
	// (wazeroPackageDirs); and the host's os-release, where it has one.
	lsUsrLib := `["python3","python3.11"]`
	if hostOSRelease() != nil {
		lsUsrLib = `["os-release","python3","python3.11"]`
	}
	for k, want := range map[string]string{
		"ls /":            `["dev","etc","opt","proc","run","tmp","usr","workspace"]`,
		"ls /etc":         `["group","hostname","hosts","nsswitch.conf","passwd","python3.11","resolv.conf"]`,
		"ls /tmp":         `[]`,
		"ls /dev":         `["full","null","random","stderr","stdin","stdout","urandom","zero"]`,
		"ls /usr":         lsUsr,
		"ls /usr/lib":     lsUsrLib,
		"ls /usr/bin":     `["python3.11"]`,
		"executable":      `["/usr/bin/python3.11",0,["",""]]`,
		"ls job":          `[".argv","main.py","prelude.py"]`,
		"ls opt":          `["_agent_runtime_host.py","_agent_runtime_wire.py","agent_runtime.py","apysup_runner.py"]`,
		"ls workspace":    `["in.txt"]`,
		"make symlink":    `null`,
		"read in":         `"input"`,
		"write workspace": `2`,
	} {
		if b, _ := json.Marshal(got[k]); string(b) != want {
			t.Errorf("%s = %s, want %s", k, b, want)
		}
	}
	// ".." stops at the guest's "/", and so does a link's: the guest's own
	// /etc, not the host's.
	for _, k := range []string{"dotdot", "through symlink"} {
		if got[k] != sandbox.EtcFiles()["passwd"] {
			t.Errorf("%s = %v, want the generated /etc/passwd", k, got[k])
		}
	}
	for _, k := range []string{"write job", "write opt", "write stdlib", "write root", "write executable", "write dev"} {
		if s, _ := got[k].(string); !strings.HasPrefix(s, "errno ") {
			t.Errorf("%s = %v, want an OSError", k, got[k])
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "ok" {
		t.Fatalf("workspace write not visible on the host: %q %v", b, err)
	}
	if target, err := os.Readlink(filepath.Join(ws, "up")); err != nil || target != "../.." {
		t.Fatalf("the guest's symlink on the host: %q %v", target, err)
	}
}

// TestGuestSymlinksStayInside: a guest's links resolve in its own tree,
// never the host's: to a host secret by its host path (absolute, or
// climbing with ".."), to the secret's directory, through /proc, or
// swapped in where a file the guest holds open was before wazero reopens
// it for an append toggle, or where a directory it holds open was before
// it lists it. Nothing of the host is read or changed, and what the guest
// wrote lands in its own file.
func TestGuestSymlinksStayInside(t *testing.T) {
	ws := t.TempDir()
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret")
	if err := os.WriteFile(secret, []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := run(t, `import errno, fcntl, json, os, sys
secret = sys.argv[1]
def probe(f):
    try:
        return f()
    except OSError as e:
        return errno.errorcode[e.errno]
r = {}
for name, target in [("abs", secret), ("rel", "../" * 20 + secret.lstrip("/")), ("dir", os.path.dirname(secret)), ("proc", "/proc/self/root" + secret)]:
    os.symlink(target, name)
    r["read " + name] = probe(lambda: open(name).read())
    r["write " + name] = probe(lambda: open(name, "a").write("guest"))
    r["list " + name] = probe(lambda: os.listdir(name))
    r["chmod " + name] = probe(lambda: os.chmod(name, 0o777))
    r["utime " + name] = probe(lambda: os.utime(name, (0, 0)))
r["list dir/"] = probe(lambda: os.listdir("dir/"))
f = open("mine.txt", "w")
f.write("first ")
f.flush()
os.rename("mine.txt", "moved.txt")
os.symlink(secret, "mine.txt")
fcntl.fcntl(f.fileno(), fcntl.F_SETFL, os.O_APPEND)
f.write("appended")
f.close()
os.mkdir("d")
open("d/inside", "w").close()
fd = os.open("d", os.O_RDONLY)
os.rename("d", "d2")
os.symlink(os.path.dirname(secret), "d")
r["list swapped"] = probe(lambda: sorted(os.listdir(fd)))
r["list swapped again"] = probe(lambda: sorted(os.listdir(fd)))
print(json.dumps(r, sort_keys=True))
`, runOpts{workspace: ws, args: []string{secret}})
	var got map[string]any
	if err := json.Unmarshal(out.Stdout, &got); err != nil {
		t.Fatalf("%v: stdout %s stderr %s", err, out.Stdout, out.Stderr)
	}
	// A directory descriptor is listed by the path wazero opened it at (the
	// WASI build opens it again through the descriptor, by that path): after
	// the swap the path resolves in the guest's tree, to nothing there.
	// Natively the moved directory is listed; either way, nothing of the
	// host's.
	for k, v := range got {
		want := any("ENOENT")
		if b, w := fmt.Sprint(v), fmt.Sprint(want); b != w {
			t.Errorf("%s = %v, want %v", k, b, w)
		}
	}
	if len(got) != 23 {
		t.Errorf("%d probes answered, want 23: %v", len(got), got)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "moved.txt")); err != nil || string(b) != "first appended" {
		t.Errorf("the guest's file: %q %v", b, err)
	}
	entries, err := os.ReadDir(secretDir)
	if err != nil || len(entries) != 1 {
		t.Errorf("the secret's directory: %v %v", entries, err)
	}
	if fi, err := os.Stat(secret); err != nil || fi.Mode().Perm() != 0o600 || fi.ModTime().Unix() == 0 {
		t.Errorf("the secret's mode or times changed: %v %v", fi, err)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "host" {
		t.Errorf("the secret: %q %v", b, err)
	}
}

// TestScriptEndsAsPythonDoes: at its end the script's globals are
// released as `python script.py` releases them, so a file it left open
// reaches the workspace whole and its objects are finalized; the rest of
// the interpreter is not torn down (the runner exits with os._exit).
func TestScriptEndsAsPythonDoes(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "workspace")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	out := run(t, `import atexit
left_open = open("/workspace/left_open.txt", "w")
left_open.write("buffered, never closed")
class Noisy:
    def __del__(self):
        print("del")
def suspended():
    try:
        yield
    finally:
        print("finally")
gen = suspended(); next(gen)
noisy = Noisy()
atexit.register(print, "atexit")
`, runOpts{workspace: ws})
	if out.Status != sandbox.StatusOK || out.ExitCode != 0 {
		t.Fatalf("status %s exit %d stderr %s", out.Status, out.ExitCode, out.Stderr)
	}
	if got := string(out.Stdout); got != "atexit\nfinally\ndel\n" {
		t.Errorf("stdout %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "left_open.txt")); err != nil || string(b) != "buffered, never closed" {
		t.Errorf("the file left open: %q %v", b, err)
	}
}

func TestConcurrentRuns(t *testing.T) {
	interpreter(t)
	for i := range 4 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			out := run(t, "import sys; print(sys.argv[1])", runOpts{args: []string{strconv.Itoa(i)}})
			if want := strconv.Itoa(i) + "\n"; string(out.Stdout) != want {
				t.Fatalf("stdout %q, want %q", out.Stdout, want)
			}
		})
	}
}

// cpuTime is the user+system CPU time of the process and of its reaped
// children (every run's child). The benchmarks report it per op beside
// wall time: on a loaded machine it is the steadier number.
func cpuTime(b *testing.B) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

func reportCPU(b *testing.B, start time.Duration, ops int) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(ops), "cpu-ns/op")
}

// An empty script through the runner, in a child process (its load of the
// compiled code included), compiled code cached.
func BenchmarkWazeroRunEmpty(b *testing.B) {
	interpreter(b)
	start := cpuTime(b)
	for b.Loop() {
		if out := run(b, "", runOpts{}); out.Status != sandbox.StatusOK {
			b.Fatalf("status %s", out.Status)
		}
	}
	reportCPU(b, start, b.N)
}

// BenchmarkWazeroBackEdgeCheck is what close-on-context-done costs
// CPU-bound Python: a loop of calls, attributes and integer arithmetic,
// compiled with the check at every loop back-edge (an in-process run's)
// and without it (every Run's, in a child process that the host kills at
// the timeout). cpu-ms is the guest thread's CPU time less that of the
// same script doing nothing; the first in-process run compiles python.wasm
// once into the disk cache (a key of its own).
func BenchmarkWazeroBackEdgeCheck(b *testing.B) {
	unchecked := interpreter(b)
	checked, err := Load(context.Background(), Config{inProcess: true})
	if err != nil {
		b.Fatal(err)
	}
	defer checked.Close(context.Background())
	script := `import sys
def f(n):
    total, d = 0, {}
    for i in range(n):
        d[i & 63] = d.get(i & 63, 0) + i
        total += len(str(i)) * 3 % 7
    return total
print(f(int(sys.argv[1])))
`
	for _, tc := range []struct {
		name string
		in   *Interpreter
	}{{"checked", checked}, {"unchecked", unchecked}} {
		b.Run(tc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				idle := run(b, script, runOpts{in: tc.in, args: []string{"0"}})
				busy := run(b, script, runOpts{in: tc.in, args: []string{"200000"}})
				if idle.Status != sandbox.StatusOK || busy.Status != sandbox.StatusOK {
					b.Fatalf("status %s, %s: %s", idle.Status, busy.Status, busy.Stderr)
				}
				cpu += time.Duration(busy.Usage.CPUTimeNs - idle.Usage.CPUTimeNs)
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms")
		})
	}
}

// BenchmarkWazeroMemoryGrowth is a guest growing its linear memory to
// 200 MiB, a MiB at a time, touching every page: cpu-ms is the guest
// thread's CPU time less that of a run that allocates nothing.
func BenchmarkWazeroMemoryGrowth(b *testing.B) {
	interpreter(b)
	script := `import sys
chunks = []
for i in range(int(sys.argv[1])):
    chunk = bytearray(1 << 20)
    chunk[::4096] = b"x" * 256
    chunks.append(chunk)
`
	limits := sandbox.Limits{MemoryBytes: 256 << 20}
	var cpu time.Duration
	for b.Loop() {
		idle := run(b, script, runOpts{args: []string{"0"}, limits: limits})
		busy := run(b, script, runOpts{args: []string{"200"}, limits: limits})
		if idle.Status != sandbox.StatusOK || busy.Status != sandbox.StatusOK {
			b.Fatalf("status %s, %s: %s", idle.Status, busy.Status, busy.Stderr)
		}
		cpu += time.Duration(busy.Usage.CPUTimeNs - idle.Usage.CPUTimeNs)
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms")
}

// BenchmarkWazeroFirstCompile compiles python.wasm with an empty on-disk
// compilation cache each time: the cost of a process's first run.
func BenchmarkWazeroFirstCompile(b *testing.B) {
	interpreter(b)
	start := cpuTime(b)
	for b.Loop() {
		in, err := Load(context.Background(), Config{CompilationCacheDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		in.Close(context.Background())
	}
	reportCPU(b, start, b.N)
}

// BenchmarkWazeroCachedLoad is a process's start with a warm disk cache.
func BenchmarkWazeroCachedLoad(b *testing.B) {
	interpreter(b)
	start := cpuTime(b)
	for b.Loop() {
		in, err := Load(context.Background(), Config{})
		if err != nil {
			b.Fatal(err)
		}
		in.Close(context.Background())
	}
	reportCPU(b, start, b.N)
}

// BenchmarkWazeroHostCall is one call from Python through host_call to a
// Dispatcher and back, timed by the guest's CPU-time clock (its thread's,
// which runs the host side in the child too): cpu-us/call over 500 calls
// after a first, first-call-us for the first (which builds the wire's
// codecs), and parent-cpu-us/call the run's process (the parent, answering)
// for 500 calls less that of a run making only the first.
func BenchmarkWazeroHostCall(b *testing.B) {
	interpreter(b)
	answer := &broker.Response{SchemaVersion: broker.ResponseSchemaVersion, CallID: "capability-1", Status: broker.StatusOK,
		Result: json.RawMessage(`{"ok":true}`), ReceiptID: "sha256:00"}
	d := constantDispatcher{answer}
	script := `import sys, time, _agent_runtime_host
frame = b'{"call_id":"capability-1","capability":"echo","arguments":{"x":1}}'
t0 = time.process_time_ns()
_agent_runtime_host.call(frame)
t1 = time.process_time_ns()
w1 = time.perf_counter_ns()
for _ in range(int(sys.argv[1])):
    _agent_runtime_host.call(frame)
print(t1 - t0, time.process_time_ns() - t1, time.perf_counter_ns() - w1)
`
	const calls = 500
	var first, later, wall, parent time.Duration
	for b.Loop() {
		start := selfCPU(b)
		idle := run(b, script, runOpts{d: d, args: []string{"0"}})
		mid := selfCPU(b)
		busy := run(b, script, runOpts{d: d, args: []string{strconv.Itoa(calls)}})
		parent += selfCPU(b) - 2*mid + start
		if idle.Status != sandbox.StatusOK || busy.Status != sandbox.StatusOK || len(busy.Stderr) > 0 {
			b.Fatalf("status %s, %s: %s", idle.Status, busy.Status, busy.Stderr)
		}
		var f, l, w time.Duration
		if _, err := fmt.Sscan(string(busy.Stdout), &f, &l, &w); err != nil {
			b.Fatalf("%q: %v", busy.Stdout, err)
		}
		first, later, wall = first+f, later+l, wall+w
	}
	b.ReportMetric(float64(later.Microseconds())/float64(b.N*calls), "cpu-us/call")
	b.ReportMetric(float64(wall.Microseconds())/float64(b.N*calls), "wall-us/call")
	b.ReportMetric(float64(first.Microseconds())/float64(b.N), "first-call-us")
	b.ReportMetric(float64(parent.Microseconds())/float64(b.N*calls), "parent-cpu-us/call")
}

// selfCPU is the user+system CPU time of this process alone.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestInvalidJobIsRefused(t *testing.T) {
	in := interpreter(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "main.py")
	if err := os.WriteFile(script, []byte("pass"), 0o644); err != nil {
		t.Fatal(err)
	}
	prelude := filepath.Join(dir, sandbox.PreludeFile)
	if err := os.WriteFile(prelude, []byte("pass"), 0o644); err != nil {
		t.Fatal(err)
	}
	dotted := filepath.Join(dir, ".argv")
	if err := os.WriteFile(dotted, []byte("pass"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, job := range map[string]sandbox.Job{
		"no script":      {ScriptPath: filepath.Join(dir, "absent.py"), WorkspaceDir: dir},
		"reserved name":  {ScriptPath: prelude, WorkspaceDir: dir},
		"dot name":       {ScriptPath: dotted, WorkspaceDir: dir},
		"fifo script":    {ScriptPath: "/dev/zero", WorkspaceDir: dir},
		"NUL argument":   {ScriptPath: script, Args: []string{"a\x00b"}, WorkspaceDir: dir},
		"no workspace":   {ScriptPath: script, WorkspaceDir: filepath.Join(dir, "absent")},
		"file workspace": {ScriptPath: script, WorkspaceDir: script},
	} {
		out, err := in.Backend(nil).Run(context.Background(), job, sandbox.Limits{})
		if err == nil || out.Status != sandbox.StatusRefused || out.ErrorCode != ErrorCodeInvalidJob {
			t.Errorf("%s: %+v, %v", name, out, err)
		}
	}
}

// A guest that aborts, or raises a signal whose default action ends the
// process, dies of it as the native guest does: an error killed_by_signal
// with exit status 128+N (signal.go). A signal it handles, ignores, or
// whose default is to be ignored, it survives.
func TestGuestDiesOfItsOwnSignal(t *testing.T) {
	for _, tc := range []struct {
		name, script, code string
		exit               int
	}{
		{"abort", "os.abort()", ErrorCodeKilledBySignal + ":SIGABRT", 134},
		{"kill self", "os.kill(os.getpid(), signal.SIGTERM)", ErrorCodeKilledBySignal + ":SIGTERM", 143},
		{"kill group", "os.kill(0, signal.SIGHUP)", ErrorCodeKilledBySignal + ":SIGHUP", 129},
		{"through pid 1", "os.kill(1, signal.SIGUSR2)", ErrorCodeKilledBySignal + ":SIGUSR2", 140},
		{"raise_signal", "signal.raise_signal(signal.SIGKILL)", ErrorCodeKilledBySignal + ":SIGKILL", 137},
		{"a fatal error", "import _testcapi\n_testcapi.fatal_error(b'apysup test')", ErrorCodeKilledBySignal + ":SIGABRT", 134},
		{"handled", "signal.signal(signal.SIGTERM, lambda *a: print('handled'))\nos.kill(os.getpid(), signal.SIGTERM)", "", 0},
		{"ignored", "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nsignal.raise_signal(signal.SIGTERM)", "", 0},
		{"ignored by default", "signal.raise_signal(signal.SIGCHLD)\nsignal.raise_signal(signal.SIGWINCH)", "", 0},
		{"kept by pid 1", "os.kill(1, signal.SIGKILL)\nos.kill(1, signal.SIGPIPE)", "", 0},
		// Discarded natively: the guest's process group is orphaned.
		{"stopped from a terminal", "signal.raise_signal(signal.SIGTSTP)\nos.kill(os.getpid(), signal.SIGTTIN)\nos.kill(0, signal.SIGTTOU)", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := run(t, "import os, signal\n"+tc.script+"\nprint('survived')\n", runOpts{})
			want := sandbox.StatusError
			if tc.code == "" {
				want = sandbox.StatusOK
			}
			if out.Status != want || out.ErrorCode != tc.code || out.ExitCode != tc.exit {
				t.Fatalf("status %s code %q exit %d, want %s %q %d; stderr %q", out.Status, out.ErrorCode, out.ExitCode,
					want, tc.code, tc.exit, out.Stderr)
			}
			if survived := strings.Contains(string(out.Stdout), "survived"); survived != (tc.code == "") {
				t.Errorf("stdout %q", out.Stdout)
			}
		})
	}
	// SIGSTOP stops the guest for good, as natively, where nothing in the
	// sandbox can continue it: the run ends at its timeout, and a timer's
	// signal, which would end the guest, is not delivered to it.
	out := run(t, "import os, signal\nsignal.alarm(1)\nos.kill(os.getpid(), signal.SIGSTOP)\nprint('survived')\n",
		runOpts{limits: sandbox.Limits{Timeout: 3 * time.Second}})
	if out.Status != sandbox.StatusTimeout || len(out.Stdout) != 0 {
		t.Fatalf("SIGSTOP: status %s code %q stdout %q", out.Status, out.ErrorCode, out.Stdout)
	}
}

// Limits.OpenFiles and Limits.FileSizeBytes bound the host files the guest
// holds and writes, as RLIMIT_NOFILE and RLIMIT_FSIZE do natively.
func TestFileQuota(t *testing.T) {
	ws := t.TempDir()
	out := run(t, `import errno
held = []
try:
    while True:
        held.append(open("f%d" % len(held), "w"))
except OSError as e:
    print(len(held), errno.errorcode[e.errno])
for f in held:
    f.close()
open("again", "w").close()
with open("big", "wb", buffering=0) as f:
    print(f.write(b"x" * 5000))
    try:
        f.write(b"y")
    except OSError as e:
        print("full", errno.errorcode[e.errno])
try:
    open("big", "ab").truncate(10**6)
except OSError as e:
    print("truncate", errno.errorcode[e.errno])
`, runOpts{workspace: ws, limits: sandbox.Limits{OpenFiles: sandbox.MinOpenFiles, FileSizeBytes: 1000}})
	// 7 of 16: the directories of the nine mounts ("/" included) are open too.
	if want := "7 EMFILE\n1000\nfull EFBIG\ntruncate EFBIG\n"; string(out.Stdout) != want {
		t.Fatalf("stdout %q, want %q; stderr %s", out.Stdout, want, out.Stderr)
	}
	if fi, err := os.Stat(filepath.Join(ws, "big")); err != nil || fi.Size() != 1000 {
		t.Fatalf("big: %v %v", fi, err)
	}
}

// probePy defines code(e) and probe(f) for guest scripts: an OSError as
// its type and errno name.
const probePy = `import errno, os
def code(e):
    return "%s %s" % (type(e).__name__, errno.errorcode.get(e.errno, e.errno))
def probe(f):
    try:
        return f()
    except OSError as e:
        return code(e)
`

// guestJSON parses the guest's stdout as one JSON object.
func guestJSON(t *testing.T, out *sandbox.Outcome) map[string]any {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(out.Stdout, &got); err != nil {
		t.Fatalf("%v: status %s stdout %s stderr %s", err, out.Status, out.Stdout, out.Stderr)
	}
	return got
}

// A guest that makes outcome.json a directory has no outcome and fails by
// itself: error, never setup_failed (the host is not to blame).
func TestOutcomeIsADirectory(t *testing.T) {
	out := run(t, "import os\nos.mkdir('/run/apysup/out/outcome.json')\nprint('made')\n", runOpts{})
	if out.Status != sandbox.StatusError || out.ExitCode != 1 || out.ErrorCode != "" || out.GuestOutcome != nil ||
		string(out.Stdout) != "made\n" || !strings.HasPrefix(lastLine(out.Stderr), "IsADirectoryError") {
		t.Fatalf("status %s code %q exit %d outcome %s stdout %q stderr %s",
			out.Status, out.ErrorCode, out.ExitCode, out.GuestOutcome, out.Stdout, out.Stderr)
	}
}

// TestWorkspaceWithLinksRefused: a symlink or a FIFO the caller left in
// the workspace could be reached through wazero's own reopen-by-path
// (a directory rewind, an append toggle) around confinedDir's checks, so
// such a workspace is refused before anything runs (invalid_job).
func TestWorkspaceWithLinksRefused(t *testing.T) {
	in := interpreter(t)
	for name, plant := range map[string]func(ws string) error{
		"symlink": func(ws string) error { return os.Symlink("/etc/passwd", filepath.Join(ws, "escape")) },
		"fifo":    func(ws string) error { return syscall.Mkfifo(filepath.Join(ws, "sub", "pipe"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := plant(ws); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(t.TempDir(), "main.py")
			if err := os.WriteFile(script, []byte("print('ran')\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := in.Backend(nil).Run(context.Background(), sandbox.Job{ScriptPath: script, WorkspaceDir: ws}, sandbox.Limits{})
			if err == nil || out.Status != sandbox.StatusRefused || out.ErrorCode != ErrorCodeInvalidJob || len(out.Stdout) != 0 {
				t.Fatalf("status %s code %s err %v stdout %q", out.Status, out.ErrorCode, err, out.Stdout)
			}
		})
	}
}

// constantDispatcher answers every frame with one response.
type constantDispatcher struct{ r *broker.Response }

func (c constantDispatcher) Call(context.Context, []byte) *broker.Response { return c.r }

// A recursion through C as deep as natively passes: wazero's stack of
// compiled frames grows past its own 50 MB ceiling, charged to the run's
// memory limit with the linear memory (linearMemory.ChargeStack), and the
// peak memory counts it. Under a limit it would pass, the same recursion
// is a stack overflow, SIGSEGV as natively, not the run's memory limit.
func TestDeepRecursionChargedToTheLimit(t *testing.T) {
	script := `import functools, sys
sys.setrecursionlimit(10**6)
@functools.lru_cache(maxsize=None)
def depth(k):
    return 0 if k == 0 else 1 + depth(k - 1)
print(depth(12000))
`
	out := run(t, script, runOpts{limits: sandbox.Limits{MemoryBytes: 512 << 20, Timeout: 3 * time.Minute}})
	if out.Status != sandbox.StatusOK || string(out.Stdout) != "12000\n" {
		t.Fatalf("status %s code %q stdout %q stderr %s", out.Status, out.ErrorCode, out.Stdout, out.Stderr)
	}
	if out.Usage.PeakMemoryBytes < 100<<20 {
		t.Errorf("peak memory %d MiB: the compiled frames' stack is not counted", out.Usage.PeakMemoryBytes>>20)
	}
	out = run(t, script, runOpts{limits: sandbox.Limits{MemoryBytes: 96 << 20, Timeout: 3 * time.Minute}})
	if out.Status != sandbox.StatusError || out.ErrorCode != sandbox.KilledBySignalCode(syscall.SIGSEGV) || out.ExitCode != 139 {
		t.Fatalf("under 96 MiB: status %s code %q exit %d stderr %s", out.Status, out.ErrorCode, out.ExitCode, out.Stderr)
	}
	if out.Usage.PeakMemoryBytes > 96<<20 {
		t.Errorf("peak memory %d MiB over the 96 MiB limit", out.Usage.PeakMemoryBytes>>20)
	}
}
