package rpc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/plan"
)

// brokerManifest: weather.get runs at once; notes.put waits for an approval
// (10 minutes lease); notes.quick's approval lease is one second, so it
// expires unless someone decides.
const brokerManifest = `{"schema_version": "apysup.manifest.v1", "max_calls": 16, "capabilities": [
 {"name": "weather.get", "version": "1", "description": "Weather.", "effect": "read", "playback": "live",
  "handler": {"kind": "builtin", "id": "echo", "version": "1"},
  "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false},
  "output_schema": {"type": "object"},
  "python": {"module": "weather", "function": "get"}},
 {"name": "notes.put", "version": "1", "description": "Put a note.", "effect": "write", "playback": "live",
  "handler": {"kind": "builtin", "id": "echo", "version": "1"},
  "input_schema": {"type": "object"}, "output_schema": {},
  "python": {"module": "notes", "function": "put"}, "approval": {"lease_seconds": 600}},
 {"name": "notes.quick", "version": "1", "description": "Put a note quickly.", "effect": "write", "playback": "live",
  "handler": {"kind": "builtin", "id": "echo", "version": "1"},
  "input_schema": {"type": "object"}, "output_schema": {},
  "python": {"module": "notes", "function": "quick"}, "approval": {"lease_seconds": 1}}],
 "grants": [{"capability": "weather.get", "policy": {}}, {"capability": "notes.put", "policy": {}}, {"capability": "notes.quick", "policy": {}}]}`

type brokerRun struct {
	b         *broker.Broker
	approvals *broker.Approvals
	job       UnsandboxedJob
}

func newBrokerRun(t *testing.T, surface plan.Surface, parent string) *brokerRun {
	t.Helper()
	needPython(t)
	m, p := seal(t, brokerManifest)
	hs, closer, err := handlers.Build(m, handlers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closer.Close() })
	approvals := broker.NewApprovals(broker.ApprovalOptions{})
	b, err := broker.New(broker.Config{Plan: p, RunID: "run-7", Surface: surface, Parent: parent, Handlers: hs, Approvals: approvals})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := p.Present(surface, parent)
	if err != nil {
		t.Fatal(err)
	}
	return &brokerRun{b: b, approvals: approvals, job: UnsandboxedJob{
		Prelude: pr.Prelude, Dispatcher: b, PlanSHA256: b.PlanSHA256(), RunID: b.RunID(),
	}}
}

func (r *brokerRun) run(t *testing.T, script string) (*Result, *sandbox.GuestOutcome) {
	t.Helper()
	job := r.job
	job.Script = []byte(script)
	res, err := RunUnsandboxed(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sandbox.ParseOutcome(res.Outcome)
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, res.Stderr)
	}
	return res, out
}

func receiptSummary(b *broker.Broker) string {
	var parts []string
	for _, r := range b.Receipts() {
		parts = append(parts, r.CallID+"="+r.Outcome+"/"+r.ErrorCode)
	}
	return strings.Join(parts, " ")
}

func TestBrokerE2ESurfaces(t *testing.T) {
	script := `
import agent_runtime, weather
import _agent_runtime_host as host
r = weather.get(city="Paris")
try:
    weather.get(town="Oslo")
except agent_runtime.CapabilityError as e:
    print(e.error_code)
try:
    host.call(b'{"call_id":"capability-9","capability":"weather.get","arguments":{"city":"Rome"}}')
    print("direct ok")
except agent_runtime.CapabilityError as e:
    print(e.error_code)
agent_runtime.set_result(r)
`
	cases := []struct {
		surface  plan.Surface
		parent   string
		stdout   string
		receipts string
	}{
		{plan.SurfaceDirect, "", "input_schema_violation\ndirect ok\n",
			"capability-1=ok/ capability-2=denied/input_schema_violation capability-9=ok/"},
		{plan.SurfaceProgrammatic, "toolu_1", "input_schema_violation\nsurface_forbids_direct\n",
			"toolu_1:program:1=ok/ toolu_1:program:2=denied/input_schema_violation"},
		{plan.SurfaceBoth, "toolu_2", "input_schema_violation\ndirect ok\n",
			"toolu_2:program:1=ok/ toolu_2:program:2=denied/input_schema_violation capability-9=ok/"},
	}
	for _, tc := range cases {
		t.Run(string(tc.surface), func(t *testing.T) {
			r := newBrokerRun(t, tc.surface, tc.parent)
			res, out := r.run(t, script)
			wantOK(t, res, out)
			if string(out.Result) != `{"echo":{"city":"Paris"}}` || string(res.Stdout) != tc.stdout {
				t.Fatalf("result %s stdout %q", out.Result, res.Stdout)
			}
			if got := receiptSummary(r.b); got != tc.receipts {
				t.Fatalf("receipts %s\nwant     %s", got, tc.receipts)
			}
			for _, rc := range r.b.Receipts() {
				if rc.PlanSHA256 != r.b.PlanSHA256() || rc.RunID != "run-7" {
					t.Fatalf("receipt %+v", rc)
				}
			}
		})
	}
}

// The Python call blocks in the same frame while the Broker waits for an
// approval, and continues there on approve; reject and expiry are typed
// refusals with zero dispatch.
func TestBrokerE2EApproval(t *testing.T) {
	script := `
import agent_runtime, notes, sys
try:
    agent_runtime.set_result(getattr(notes, sys.argv[1])(text="hi"))
except agent_runtime.CapabilityError as e:
    print(type(e).__name__, e.error_code)
`
	cases := []struct {
		name, fn string
		decide   func(a *broker.Approvals, id string) error
		stdout   string
		result   string
		receipt  string
	}{
		{"approve", "put", (*broker.Approvals).Approve, "", `{"echo":{"text":"hi"}}`, "capability-1=ok/"},
		{"reject", "put", (*broker.Approvals).Reject, "CapabilityError approval_rejected\n", "", "capability-1=denied/approval_rejected"},
		{"expire", "quick", nil, "CapabilityError approval_expired\n", "", "capability-1=denied/approval_expired"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newBrokerRun(t, plan.SurfaceDirect, "")
			events, stop := r.approvals.Subscribe()
			defer stop()
			type ran struct {
				res *Result
				err error
			}
			done := make(chan ran, 1)
			job := r.job
			job.Script, job.Args = []byte(script), []string{tc.fn}
			go func() {
				res, err := RunUnsandboxed(context.Background(), job)
				done <- ran{res, err}
			}()
			ev := <-events
			if ev.Record.State != broker.ApprovalWaiting || ev.Record.CallID != "capability-1" {
				t.Fatalf("event %+v", ev.Record)
			}
			if tc.decide != nil {
				if err := tc.decide(r.approvals, ev.Record.ID); err != nil {
					t.Fatal(err)
				}
			}
			got := <-done
			if got.err != nil {
				t.Fatal(got.err)
			}
			out, err := sandbox.ParseOutcome(got.res.Outcome)
			if err != nil {
				t.Fatal(err)
			}
			wantOK(t, got.res, out)
			if string(got.res.Stdout) != tc.stdout || string(out.Result) != tc.result {
				t.Fatalf("stdout %q result %s", got.res.Stdout, out.Result)
			}
			if s := receiptSummary(r.b); s != tc.receipt {
				t.Fatalf("receipts %s, want %s", s, tc.receipt)
			}
		})
	}
}

// A call the script gives up while it waits for an approval (a timer's
// handler raises: the bridge closes the call's connection) is cancelled
// at once, while the script runs on: nobody can approve it any more, and
// its receipt says approval_cancelled. (The Broker used to wait on under a
// context the request's end did not reach, until the lease or the run's
// end, and an approver could still have it dispatched.)
func TestBrokerE2EApprovalGivenUp(t *testing.T) {
	script := `
import agent_runtime, notes, os, signal, sys, time
class Stop(Exception):
    pass
def stop(*_):
    raise Stop()
signal.signal(signal.SIGALRM, stop)
signal.setitimer(signal.ITIMER_REAL, 0.2)
try:
    notes.put(text="hi")
except Stop:
    print("given up")
deadline = time.monotonic() + 10
while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
    time.sleep(0.01)
`
	r := newBrokerRun(t, plan.SurfaceDirect, "")
	events, stop := r.approvals.Subscribe()
	defer stop()
	flag := filepath.Join(t.TempDir(), "cancelled")
	job := r.job
	job.Script, job.Args = []byte(script), []string{flag}
	finished := make(chan struct{})
	var res *Result
	var runErr error
	go func() {
		res, runErr = RunUnsandboxed(context.Background(), job)
		close(finished)
	}()
	// The script waits for the flag; a failure below still ends it, and
	// the run's temporary directories with it.
	release := func() {
		_ = os.WriteFile(flag, nil, 0o644)
		<-finished
	}
	t.Cleanup(release)
	if ev := <-events; ev.Record.State != broker.ApprovalWaiting {
		t.Fatalf("event %+v", ev.Record)
	}
	select {
	case ev := <-events:
		if ev.Record.State != broker.ApprovalCancelled {
			t.Fatalf("event %+v, want the approval cancelled", ev.Record)
		}
		if err := r.approvals.Approve(ev.Record.ID); err == nil {
			t.Fatal("a cancelled approval was approved")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the given-up call still waits for its approval")
	}
	release()
	if runErr != nil {
		t.Fatal(runErr)
	}
	out, err := sandbox.ParseOutcome(res.Outcome)
	if err != nil {
		t.Fatal(err)
	}
	wantOK(t, res, out)
	if string(res.Stdout) != "given up\n" || receiptSummary(r.b) != "capability-1=denied/approval_cancelled" {
		t.Fatalf("stdout %q receipts %s", res.Stdout, receiptSummary(r.b))
	}
}

// A transport replay of a completed call returns the cached response: one
// receipt, one dispatch. Refusals before the Broker leave no receipt.
func TestBrokerE2EReplayAndRefusals(t *testing.T) {
	r := newBrokerRun(t, plan.SurfaceDirect, "")
	res, out := r.run(t, `
import _agent_runtime_host as host
f = b'{"call_id":"capability-1","capability":"weather.get","arguments":{"city":"Paris"}}'
print(host.call(f) == host.call(f))
`)
	wantOK(t, res, out)
	if string(res.Stdout) != "True\n" || receiptSummary(r.b) != "capability-1=ok/" {
		t.Fatalf("stdout %q receipts %s", res.Stdout, receiptSummary(r.b))
	}

	r = newBrokerRun(t, plan.SurfaceDirect, "")
	r.job.editChannel = func(f *ChannelFile) { f.ExecutionID = "run-8" }
	res, out = r.run(t, `
import agent_runtime, weather
try:
    weather.get(city="Paris")
except agent_runtime.CapabilityError as e:
    print(e.error_code)
`)
	wantOK(t, res, out)
	if string(res.Stdout) != "unauthenticated\n" || len(r.b.Receipts()) != 0 {
		t.Fatalf("stdout %q receipts %s", res.Stdout, receiptSummary(r.b))
	}
}
