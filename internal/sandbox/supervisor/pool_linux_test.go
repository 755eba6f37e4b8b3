package supervisor

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/internal/testenv"
	"github.com/apysup/apysup/plan"
)

// With NativePool, runs take sandboxes started ahead, and the channel (whose
// socket and channel.json are made after the sandbox started) still works:
// the capability call is dispatched and receipted.
func TestNativePoolRuns(t *testing.T) {
	testenv.NeedRoot(t)
	m, err := plan.LoadManifest("../../../examples/plan.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Seal(handlers.Checker{})
	if err != nil {
		t.Fatal(err)
	}
	hs, closer, err := handlers.Build(m, handlers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	state, err := os.MkdirTemp("", "sv") // short: socket paths are bounded
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(state)
	s := New(Config{StateDir: state, NativePool: 1})
	defer s.Close()
	for i := range 3 {
		res, err := s.Run(context.Background(), Request{Plan: p, Handlers: hs, Surface: plan.SurfaceDirect,
			Backend: BackendNative, BackendSource: "flag", ScriptPath: "../../../examples/hello.py"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != sandbox.StatusOK || len(res.Receipts) != 1 || res.Result == nil {
			t.Fatalf("run %d: %+v", i, res)
		}
		if i < 2 {
			deadline := time.Now().Add(30 * time.Second)
			for s.native.pool.Ready() < 1 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	if st := s.native.pool.Stats(); st.Pooled < 2 || st.Pooled+st.Cold != 3 {
		t.Errorf("pool stats %+v: the runs after the first should be pooled", st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("left behind in the state dir: %v", entries)
	}
}

// With WazeroPool, PrepareWazero loads the interpreter and its pool: a
// child waits loaded before any run, runs succeed, and Close leaves no
// child behind.
func TestWazeroPoolRuns(t *testing.T) {
	_, err := wazero.Locate("")
	var u *wazero.UnavailableError
	testenv.Need(t, !errors.As(err, &u), "the WASI CPython build (make wasi-python)")
	s := New(Config{StateDir: t.TempDir(), WazeroPool: 1})
	defer s.Close()
	if err := s.PrepareWazero(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(wazeroChildren(t)) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pids := wazeroChildren(t); len(pids) != 1 {
		t.Fatalf("children before any run: %v", pids)
	}
	for i := range 2 {
		res, err := s.Run(context.Background(), Request{Plan: emptyPlan(t), Handlers: broker.NewHandlers(), Surface: plan.SurfaceDirect,
			Backend: BackendWazero, BackendSource: "flag", ScriptPath: scriptFile(t)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != sandbox.StatusOK || string(res.Stdout) != "hi\n" {
			t.Fatalf("run %d: %s %q stderr %q", i, res.Status, res.Stdout, res.Stderr)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if pids := wazeroChildren(t); len(pids) != 0 {
		t.Fatalf("children after Close: %v", pids)
	}
}

// wazeroChildren lists this process's wazero children, live or zombie.
func wazeroChildren(t *testing.T) []int {
	t.Helper()
	return testenv.Children("apysup-wazero-child")
}
