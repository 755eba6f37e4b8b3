package supervisor

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/internal/sandbox"
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
