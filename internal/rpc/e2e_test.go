package rpc

import (
	"context"
	"errors"
	"github.com/apysup/apysup/internal/sandbox"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apysup/apysup/plan"
)

// testManifest projects the fake broker's capabilities into Python modules
// echo and fault.
var testManifest = `{"schema_version": "apysup.manifest.v1", "max_calls": 64, "capabilities": [
 {"name": "echo.say", "version": "1", "description": "Echo.", "effect": "read", "playback": "live",
  "handler": {"kind": "builtin", "id": "echo", "version": "1"},
  "input_schema": {"type": "object"}, "output_schema": {},
  "python": {"module": "echo", "function": "say", "aliases": ["shout"]}}` +
	faultCap("block") + faultCap("refuse") + faultCap("error") + faultCap("ambiguous") +
	faultCap("panic") + faultCap("empty") + faultCap("garbage") + `], "grants": [{"capability": "echo.say", "policy": {}}` +
	faultGrants("block", "refuse", "error", "ambiguous", "panic", "empty", "garbage") + `]}`

func faultGrants(fns ...string) string {
	var b strings.Builder
	for _, fn := range fns {
		b.WriteString(`, {"capability": "fault.` + fn + `", "policy": {}}`)
	}
	return b.String()
}

func faultCap(fn string) string {
	return `, {"name": "fault.` + fn + `", "version": "1", "description": "Fault.", "effect": "read", "playback": "live",
  "handler": {"kind": "builtin", "id": "echo", "version": "1"},
  "input_schema": {"type": "object"}, "output_schema": {},
  "python": {"module": "fault", "function": "` + fn + `"}}`
}

func testPrelude(t *testing.T, surface plan.Surface, parent string) []byte {
	t.Helper()
	_, p := seal(t, testManifest)
	pr, err := p.Present(surface, parent)
	if err != nil {
		t.Fatal(err)
	}
	return pr.Prelude
}

// run runs script on the direct surface unless job says otherwise, and
// returns the result with its parsed outcome.
func run(t *testing.T, b *fakeBroker, script string, job UnsandboxedJob) (*Result, *sandbox.GuestOutcome) {
	t.Helper()
	needPython(t)
	job.Script = []byte(script)
	if job.Prelude == nil {
		job.Prelude = testPrelude(t, plan.SurfaceDirect, "")
	}
	job.Dispatcher = b
	if job.PlanSHA256 == "" {
		job.PlanSHA256 = testPlan
	}
	if job.RunID == "" {
		job.RunID = "run-1"
	}
	res, err := RunUnsandboxed(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome == nil {
		t.Fatalf("no outcome; exit %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	out, err := sandbox.ParseOutcome(res.Outcome)
	if err != nil {
		t.Fatalf("%v: %s", err, res.Outcome)
	}
	return res, out
}

func wantOK(t *testing.T, res *Result, out *sandbox.GuestOutcome) {
	t.Helper()
	if res.ExitCode != 0 || out.ExitCode != 0 || out.Error != nil {
		t.Fatalf("exit %d, outcome %+v\nstdout:\n%s\nstderr:\n%s", res.ExitCode, out, res.Stdout, res.Stderr)
	}
}

func TestUnsandboxedSurfaces(t *testing.T) {
	script := `
import agent_runtime, echo
a = echo.say(city="Paris", n=1)
b = echo.shout(text="hé")
agent_runtime.set_result({"a": a, "b": b})
`
	cases := []struct {
		surface plan.Surface
		parent  string
		ids     []string
	}{
		{plan.SurfaceDirect, "", []string{"capability-1", "capability-2"}},
		{plan.SurfaceProgrammatic, "toolu_1", []string{"toolu_1:program:1", "toolu_1:program:2"}},
		{plan.SurfaceBoth, "call.7", []string{"call.7:program:1", "call.7:program:2"}},
	}
	for _, tc := range cases {
		t.Run(string(tc.surface), func(t *testing.T) {
			b := newFakeBroker()
			res, out := run(t, b, script, UnsandboxedJob{Prelude: testPrelude(t, tc.surface, tc.parent)})
			wantOK(t, res, out)
			if got := string(out.Result); got != `{"a":{"city":"Paris","n":1},"b":{"text":"hé"}}` {
				t.Fatalf("result %s", got)
			}
			if got := strings.Join(b.callIDs(), " "); got != strings.Join(tc.ids, " ") {
				t.Fatalf("call ids %q, want %q", got, tc.ids)
			}
		})
	}
}

// A call the Broker holds (an approval wait) keeps the Python call blocked
// in the same frame and continues there when the Broker answers.
func TestUnsandboxedBlockedCallContinues(t *testing.T) {
	b := newFakeBroker()
	script := `
import agent_runtime, fault
print("before", flush=True)
r = fault.block(step=1)
agent_runtime.set_result({"after": r})
`
	type ran struct {
		res *Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := RunUnsandboxed(context.Background(), UnsandboxedJob{
			Script: []byte(script), Prelude: testPrelude(t, plan.SurfaceDirect, ""),
			Dispatcher: b, PlanSHA256: testPlan, RunID: "run-1",
		})
		done <- ran{res, err}
	}()
	select {
	case id := <-b.entered:
		if id != "capability-1" {
			t.Errorf("blocked call id %q", id)
		}
	case r := <-done:
		t.Fatalf("the run ended before its call was held: %v %+v", r.err, r.res)
	}
	select {
	case r := <-done:
		t.Fatalf("the run ended while its call was held: %v %+v", r.err, r.res)
	default:
	}
	close(b.release)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	out, err := sandbox.ParseOutcome(r.res.Outcome)
	if err != nil {
		t.Fatal(err)
	}
	wantOK(t, r.res, out)
	if string(out.Result) != `{"after":{"step":1}}` || string(r.res.Stdout) != "before\n" {
		t.Fatalf("result %s stdout %q", out.Result, r.res.Stdout)
	}
	if b.total() != 1 {
		t.Fatalf("%d dispatches", b.total())
	}
}

const reportErrors = `
import agent_runtime, fault, echo
def attempt(f, **kw):
    try:
        f(**kw)
        print("ok")
    except agent_runtime.AgentRuntimeError as e:
        print(type(e).__name__, e.error_code)
`

func TestUnsandboxedBrokerOutcomesAreTyped(t *testing.T) {
	b := newFakeBroker()
	res, out := run(t, b, reportErrors+`
for f in (fault.refuse, fault.error, fault.ambiguous, fault.panic, fault.empty, echo.say):
    attempt(f)
`, UnsandboxedJob{})
	wantOK(t, res, out)
	want := `CapabilityError call_id_reused
CapabilityError handler_failed
AmbiguousOutcome approval_audit_failed
AmbiguousOutcome dispatch_outcome_unknown
AmbiguousOutcome dispatch_outcome_unknown
ok
`
	if string(res.Stdout) != want {
		t.Fatalf("got\n%s\nwant\n%s", res.Stdout, want)
	}
}

// Every authentication failure reaches the guest as the same typed refusal
// and dispatches nothing.
func TestUnsandboxedUnauthenticated(t *testing.T) {
	other := uint32(os.Getuid()) + 4242
	var expired atomic.Bool
	cases := []struct {
		name string
		job  UnsandboxedJob
	}{
		{"wrong credential", UnsandboxedJob{editChannel: func(f *ChannelFile) {
			flip := "A"
			if f.Credential[0] == 'A' {
				flip = "B"
			}
			f.Credential = flip + f.Credential[1:]
		}}},
		{"wrong plan digest", UnsandboxedJob{editChannel: func(f *ChannelFile) {
			f.PlanSHA256 = "sha256:" + strings.Repeat("3", 64)
		}}},
		{"wrong execution id", UnsandboxedJob{editChannel: func(f *ChannelFile) { f.ExecutionID = "run-2" }}},
		{"wrong invocation id", UnsandboxedJob{editChannel: func(f *ChannelFile) { f.InvocationID += "x" }}},
		{"unknown channel", UnsandboxedJob{editChannel: func(f *ChannelFile) { f.ChannelID += "x" }}},
		{"peer uid mismatch", UnsandboxedJob{peerUID: &other}},
		{"revoked", UnsandboxedJob{onOpen: func(r *Registry, ch *Channel) {
			if err := r.Revoke(ch.ID()); err != nil {
				t.Error(err)
			}
		}}},
		{"expired", UnsandboxedJob{
			clock: func() time.Time {
				if expired.Load() {
					return time.Now().Add(48 * time.Hour)
				}
				return time.Now()
			},
			onOpen: func(*Registry, *Channel) { expired.Store(true) },
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newFakeBroker()
			res, out := run(t, b, reportErrors+"attempt(echo.say, x=1)\n", tc.job)
			wantOK(t, res, out)
			if string(res.Stdout) != "CapabilityError unauthenticated\n" {
				t.Fatalf("stdout %q stderr %s", res.Stdout, res.Stderr)
			}
			if b.total() != 0 {
				t.Fatalf("%d dispatches", b.total())
			}
		})
	}
}

// Hand-built frames through the bridge and raw HTTP through the socket. A
// frame that is not strict JSON is refused by the bridge with the Broker's
// own code (frame_malformed), as under wazero, before anything is sent.
func TestUnsandboxedWireRefusals(t *testing.T) {
	b := newFakeBroker()
	script := reportErrors + `
import _agent_runtime_host as host, json, os, socket
def raw(f):
    try:
        print(json.loads(f()))
    except agent_runtime.AgentRuntimeError as e:
        print(type(e).__name__, e.error_code)

frame = b'{"call_id":"capability-1","capability":"echo.say","arguments":{"k":[1,2]}}'
raw(lambda: host.call(frame))
raw(lambda: host.call(frame))   # replayed, not dispatched again
raw(lambda: host.call(frame.replace(b"[1,2]", b"[1,3]")))
raw(lambda: host.call(b'{"call_id":"capability-2","call_id":"capability-3","capability":"echo.say","arguments":{}}'))
raw(lambda: host.call(b'{"call_id":"capability-4","capability":"echo.say","arguments":{"a":{"b":1,"b":2}}}'))
raw(lambda: host.call(b'{"capability":"echo.say","arguments":{}}'))
raw(lambda: host.call(b'[1]'))
raw(lambda: host.call(b'x' * ((1 << 20) + 1)))
big = b'{"call_id":"capability-5","capability":"echo.say","arguments":{"s":"' + b'x' * (1 << 20) + b'"}}'
raw(lambda: host.call(big[: 1 << 20]))   # exactly 1 MiB, but not JSON
with open(os.environ["APYSUP_CHANNEL_FILE"]) as f:
    ch = json.load(f)
s = socket.socket(socket.AF_UNIX)
s.connect(ch["socket"])
s.sendall(b"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Apysup-Credential " + ch["credential"].encode() + b"\r\nContent-Length: 5000000\r\n\r\n")
print(s.recv(4096).split(b"\r\n")[0].decode())
s.close()
head, tail = b'{"call_id":"capability-6","capability":"echo.say","arguments":{"s":"', b'"}}'
limit = head + b"y" * ((1 << 20) - len(head) - len(tail)) + tail
print(len(limit) == 1 << 20, host.call(limit) == limit[limit.index(b'{"s"'):-1])
`
	res, out := run(t, b, script, UnsandboxedJob{})
	wantOK(t, res, out)
	want := `{'k': [1, 2]}
{'k': [1, 2]}
CapabilityError call_identity_mismatch
CapabilityError frame_malformed
CapabilityError frame_malformed
CapabilityError frame_malformed
CapabilityError frame_malformed
CapabilityError frame_too_large
CapabilityError frame_malformed
HTTP/1.1 413 Request Entity Too Large
True True
`
	if string(res.Stdout) != want {
		t.Fatalf("got\n%s\nwant\n%s\nstderr:\n%s", res.Stdout, want, res.Stderr)
	}
	if b.count("capability-1") != 1 || b.total() != 2 {
		t.Fatalf("dispatches %v", b.callIDs())
	}
}

func TestUnsandboxedRunner(t *testing.T) {
	cases := []struct {
		name, script string
		args         []string
		exit         int
		check        func(t *testing.T, res *Result, out *sandbox.GuestOutcome)
	}{
		{name: "argv and cwd", script: `
import os, sys, agent_runtime
agent_runtime.set_result({"argv": sys.argv[1:], "cwd_is_workdir": os.getcwd() == os.environ["WANT_CWD"], "name": __name__})
`, args: []string{"a", "b c"}, check: func(t *testing.T, res *Result, out *sandbox.GuestOutcome) {
			if string(out.Result) != `{"argv":["a","b c"],"cwd_is_workdir":true,"name":"__main__"}` {
				t.Fatalf("result %s", out.Result)
			}
		}},
		{name: "exit status", script: "import sys\nprint('bye')\nsys.exit(3)\n", exit: 3, check: func(t *testing.T, res *Result, out *sandbox.GuestOutcome) {
			if out.ResultSet || out.Error != nil || string(res.Stdout) != "bye\n" {
				t.Fatalf("outcome %+v stdout %q", out, res.Stdout)
			}
		}},
		{name: "exit message", script: "import sys\nsys.exit('no way')\n", exit: 1, check: func(t *testing.T, res *Result, out *sandbox.GuestOutcome) {
			if string(res.Stderr) != "no way\n" {
				t.Fatalf("stderr %q", res.Stderr)
			}
		}},
		{name: "uncaught exception", script: "import agent_runtime\nagent_runtime.set_result([1])\ndef f():\n    raise ValueError('bad value')\nf()\n", exit: 1,
			check: func(t *testing.T, res *Result, out *sandbox.GuestOutcome) {
				e := out.Error
				if e == nil || e.Type != "ValueError" || e.Message != "bad value" || string(out.Result) != "[1]" {
					t.Fatalf("outcome %s", res.Outcome)
				}
				if !strings.HasPrefix(e.Traceback, "Traceback (most recent call last):\n") || strings.Contains(e.Traceback, "apysup_runner") ||
					!strings.Contains(e.Traceback, "in f\n") || string(res.Stderr) != e.Traceback {
					t.Fatalf("traceback %q\nstderr %q", e.Traceback, res.Stderr)
				}
			}},
		{name: "huge traceback is bounded", script: "raise RuntimeError('x' * 100000)\n", exit: 1, check: func(t *testing.T, res *Result, out *sandbox.GuestOutcome) {
			if len(out.Error.Traceback) > 16<<10 || len(out.Error.Message) > 4<<10 || out.Error.Type != "RuntimeError" {
				t.Fatalf("traceback %d bytes, message %d bytes", len(out.Error.Traceback), len(out.Error.Message))
			}
		}},
		{name: "result limits", script: `
import agent_runtime
for v in ({1: 2}, float("nan"), object(), {"n": [10**400]}, -(2**1024), "x" * (1 << 20)):
    try:
        agent_runtime.set_result(v)
    except agent_runtime.AgentRuntimeError as e:
        print(e.error_code)
agent_runtime.set_result(None)
`, check: func(t *testing.T, res *Result, out *sandbox.GuestOutcome) {
			if string(res.Stdout) != "result_not_json\nresult_not_json\nresult_not_json\nresult_not_json\nresult_not_json\nresult_too_large\n" || !out.ResultSet || string(out.Result) != "null" {
				t.Fatalf("stdout %q outcome %s", res.Stdout, res.Outcome)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res, out := run(t, newFakeBroker(), tc.script, UnsandboxedJob{Args: tc.args, WorkDir: dir, Env: []string{"WANT_CWD=" + dir}})
			if res.ExitCode != tc.exit || out.ExitCode != tc.exit {
				t.Fatalf("exit %d / outcome %d, want %d\nstderr:\n%s", res.ExitCode, out.ExitCode, tc.exit, res.Stderr)
			}
			tc.check(t, res, out)
		})
	}
}

func TestParseOutcomeIsStrict(t *testing.T) {
	for _, bad := range []string{
		`{"exit_code":0,"result_set":true}`,
		`{"exit_code":0,"result_set":false,"result":1}`,
		`{"exit_code":0,"result_set":false,"extra":1}`,
		`{"exit_code":0,"exit_code":1,"result_set":false}`,
	} {
		if _, err := sandbox.ParseOutcome([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	o, err := sandbox.ParseOutcome([]byte(`{"exit_code":0,"result_set":true,"result":null}`))
	if err != nil || string(o.Result) != "null" {
		t.Fatalf("%v %+v", err, o)
	}
}

// Cancelling the run kills the guest and its children, and removes every
// file RunUnsandboxed made.
func TestUnsandboxedCancelLeavesNothing(t *testing.T) {
	needPython(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	work := t.TempDir()
	b := newFakeBroker()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := RunUnsandboxed(ctx, UnsandboxedJob{
			Script: []byte(`
import subprocess, fault
child = subprocess.Popen(["/bin/sleep", "1000"])
with open("child.pid", "w") as f:
    f.write(str(child.pid))
fault.block()
`),
			Prelude: testPrelude(t, plan.SurfaceDirect, ""), Dispatcher: b,
			PlanSHA256: testPlan, RunID: "run-1", WorkDir: work,
		})
		done <- err
	}()
	select {
	case <-b.entered:
	case err := <-done:
		t.Fatalf("run ended early: %v", err)
	}
	pidText, err := os.ReadFile(filepath.Join(work, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("left behind in TMPDIR: %v", entries)
	}
	// The child is gone or a zombie waiting for init to reap it.
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pidText)) + "/stat")
	if err == nil {
		if fields := strings.Fields(string(stat)); len(fields) < 3 || fields[2] != "Z" {
			t.Fatalf("child still running: %s", stat)
		}
	}
}
