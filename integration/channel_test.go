package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

// onePlan seals a Plan of one capability, name = module.function, taking
// and returning any JSON object, dispatched to h.
func onePlan(t *testing.T, module, function string, id plan.HandlerIdentity, h any) (*plan.Plan, *broker.Handlers) {
	t.Helper()
	r, err := plan.NewRegistry(16)
	if err != nil {
		t.Fatal(err)
	}
	name := module + "." + function
	if err := r.Register(plan.Spec{Name: name, Version: "1", Description: "integration test capability",
		Effect: plan.EffectRead, Playback: plan.PlaybackLive, Handler: id,
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`),
		Python: &plan.PythonProjection{Module: module, Function: function}}); err != nil {
		t.Fatal(err)
	}
	g, err := plan.NewGrant(json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Bind(name, g); err != nil {
		t.Fatal(err)
	}
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	hs := broker.NewHandlers()
	if err := hs.Add(id, h); err != nil {
		t.Fatal(err)
	}
	return p, hs
}

// TestChannelIsTheOnlyDoor: with a one-capability Plan (broker.Echo) the
// guest's call goes through the channel socket and comes back; an
// ungranted capability is denied with a receipt; hand-made requests with a
// missing or wrong credential or another run's ids are rejected before
// any dispatch. (TestNoNetwork and TestHostSecretsAreInvisible show that
// nothing else is reachable.)
func TestChannelIsTheOnlyDoor(t *testing.T) {
	t.Parallel()
	need(t)
	p, hs := onePlan(t, "probe", "echo", broker.EchoIdentity(), broker.Echo{})
	res := run(t, supervisor.Request{Plan: p, Handlers: hs, ScriptPath: guestScript(t, "channel.py")})
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	m := parseMarkers(t, res)
	const unauthenticated = "401:" + rpc.CodeUnauthenticated
	m.expect(t, map[string]string{
		"capability:not.granted": "unknown_capability",
		"rpc:no-credential":      unauthenticated,
		"rpc:wrong-credential":   unauthenticated,
		"rpc:other-plan":         unauthenticated,
		"rpc:other-execution":    unauthenticated,
		"rpc:other-channel":      unauthenticated,
		"rpc:other-invocation":   unauthenticated,
	}, "capability:probe.echo")
	var echo map[string]map[string]string
	m.infoAs(t, "echo", &echo)
	if echo["echo"]["text"] != "through the door" {
		t.Errorf("echo answered %v", echo)
	}
	var runDir []string
	m.infoAs(t, "run_dir", &runDir)
	if !slices.Equal(runDir, []string{rpc.ChannelFileName, "job", "out", rpc.SocketName}) {
		t.Errorf("/run/apysup holds %v", runDir)
	}
	// Two receipts: the echo (ok) and the ungranted call (denied); the
	// rejected requests never reached the Broker.
	if len(res.Receipts) != 2 || res.Receipts[0].Outcome != "ok" || res.Receipts[1].Outcome != "denied" {
		t.Errorf("receipts %+v", res.Receipts)
	}
}

// TestTimeoutDuringCapabilityCall: the guest is inside a capability call
// whose handler waits (as an approval or a slow service would) when the
// timeout strikes. The run ends as timeout, the handler's context is
// cancelled before Run returns, and the call has its receipt.
func TestTimeoutDuringCapabilityCall(t *testing.T) {
	t.Parallel()
	need(t)
	id, err := plan.NewHandlerIdentity("test", "slow", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	var began, cancelled atomic.Bool
	h := broker.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		began.Store(true)
		select {
		case <-ctx.Done():
			cancelled.Store(true)
			return nil, ctx.Err()
		case <-time.After(2 * time.Minute):
			return json.RawMessage(`{"late":true}`), nil
		}
	})
	p, hs := onePlan(t, "slow", "call", id, h)
	started := time.Now()
	// The timeout leaves a loaded machine ample time to reach the call.
	res := run(t, supervisor.Request{Plan: p, Handlers: hs, Limits: sandbox.Limits{Timeout: 10 * time.Second},
		ScriptPath: guestScript(t, "import slow\nemit('ALLOWED', 'calling')\nslow.call()\nemit('ESCAPED', 'returned', 'after the timeout')\n")})
	took := time.Since(started)
	if res.Status != sandbox.StatusTimeout {
		t.Fatalf("guest: %s", summary(res))
	}
	parseMarkers(t, res).expect(t, nil, "calling")
	if !began.Load() || !cancelled.Load() {
		t.Errorf("handler began %v, cancelled before Run returned %v", began.Load(), cancelled.Load())
	}
	if took > 30*time.Second {
		t.Errorf("Run returned %v after a 10 s timeout", took)
	}
	if len(res.Receipts) != 1 || res.Receipts[0].Capability != "slow.call" {
		t.Fatalf("receipts %+v: want the interrupted call's", res.Receipts)
	}
	t.Logf("returned after %v; receipt outcome %s", took.Round(time.Millisecond), res.Receipts[0].Outcome)
}

// TestChannelConnectionFlood: a guest opens some 400 connections to its
// channel, each announcing a 1 MiB body it never sends. The supervisor
// holds a bounded number of them (rpc.DefaultServerConfig's
// MaxConnections; the rest wait in the kernel's backlog, charged to the
// guest), and the channel works again once the flood is gone. Not parallel:
// it counts this process's sockets.
func TestChannelConnectionFlood(t *testing.T) {
	need(t)
	p, hs := onePlan(t, "probe", "echo", broker.EchoIdentity(), broker.Echo{})
	baseline := countSockets()
	peak := make(chan int, 1)
	go func() {
		defer close(peak)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			for _, pid := range descendants() {
				if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "escape-flooding" {
					time.Sleep(500 * time.Millisecond) // let the server accept what it will
					peak <- countSockets()
					return
				}
			}
		}
	}()
	res := run(t, supervisor.Request{Plan: p, Handlers: hs, ScriptPath: guestScript(t, "connflood.py"),
		Limits: sandbox.Limits{Timeout: 2 * time.Minute}})
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	m := parseMarkers(t, res)
	m.expect(t, nil)
	var conns int
	var echo map[string]map[string]string
	m.infoAs(t, "connections", &conns)
	m.infoAs(t, "echo", &echo)
	during, ok := <-peak
	if !ok {
		t.Fatal("never saw the guest's flood in place")
	}
	limit := rpc.DefaultServerConfig().MaxConnections
	t.Logf("guest opened %d connections; this process held %d sockets (baseline %d, server limit %d)", conns, during, baseline, limit)
	if conns <= limit {
		t.Errorf("the guest opened only %d connections: the flood did not exceed the limit of %d", conns, limit)
	}
	if during-baseline > limit+8 {
		t.Errorf("the supervisor held %d sockets for one guest (limit %d)", during-baseline, limit)
	}
	if echo["echo"]["text"] != "after the flood" {
		t.Errorf("the channel after the flood answered %v", echo)
	}
}

// countSockets counts this process's socket descriptors.
func countSockets() int {
	n := 0
	for _, target := range transientFDs() {
		if strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}
