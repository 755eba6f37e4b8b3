package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/plan"
)

func emptyPlan(t *testing.T) *plan.Plan {
	r, _ := plan.NewRegistry(4)
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// strictPlan asks for strict acceptance of a handler that is no provider.
func strictPlan(t *testing.T) (*plan.Plan, *broker.Handlers) {
	r, _ := plan.NewRegistry(4)
	id := broker.EchoIdentity()
	if err := r.Register(plan.Spec{Name: "notes.put", Version: "1", Effect: plan.EffectWrite, Playback: plan.PlaybackLive,
		Handler: id, Acceptance: plan.AcceptanceStrict}); err != nil {
		t.Fatal(err)
	}
	g, _ := plan.NewGrant([]byte(`{}`))
	_ = r.Bind("notes.put", g)
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	hs := broker.NewHandlers()
	_ = hs.Add(id, broker.Echo{})
	return p, hs
}

func scriptFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "main.py")
	if err := os.WriteFile(p, []byte("print('hi')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Refusals that need no backend: each is a typed Result, never a fallback.
func TestRunRefusals(t *testing.T) {
	state := t.TempDir()
	s := New(Config{StateDir: state, Wazero: wazero.Config{CacheDir: t.TempDir()}})
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	cases := []struct {
		name string
		edit func(r *Request)
		code string
	}{
		{"unknown backend", func(r *Request) { r.Backend = "qemu" }, CodeUnknownBackend},
		{"bad surface", func(r *Request) { r.Surface = "sideways" }, plan.CodeInvalidProgramSurface},
		{"missing parent", func(r *Request) { r.Surface = plan.SurfaceProgrammatic; r.Parent = "" }, plan.CodeInvalidParent},
		{"wasi build missing", func(r *Request) { r.Backend = BackendWazero }, wazero.ErrorCodeGuestMissing},
		{"workspace seed with a link", func(r *Request) {
			dir := t.TempDir()
			os.Symlink("/etc", filepath.Join(dir, "etc"))
			r.WorkspaceSeed = dir
		}, sandbox.CodeWorkspaceInputInvalid},
		{"strict capability without a provider", func(r *Request) { r.Plan, r.Handlers = strictPlan(t) }, broker.CodeAcceptanceUnsupported},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Plan: emptyPlan(t), Handlers: broker.NewHandlers(), Surface: plan.SurfaceDirect,
				Backend: BackendNative, BackendSource: "flag", ScriptPath: scriptFile(t)}
			tc.edit(&req)
			res, err := s.Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != sandbox.StatusRefused || res.ErrorCode != tc.code || res.Error == "" {
				t.Fatalf("%+v", res)
			}
			if res.RunID == "" || res.PlanSHA256 == "" || res.Receipts == nil {
				t.Fatalf("a refusal still names its run and plan: %+v", res)
			}
		})
	}
	// A refusal after the run's directory was made removes it in the
	// background, as every run's teardown: wait for those first.
	if err := s.after.wait(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(s.runs.path); err != nil || len(entries) != 0 {
		t.Fatalf("left behind in the runs root: %v (%v)", entries, err)
	}
	if _, err := s.Run(context.Background(), Request{}); err == nil {
		t.Fatal("an empty request was accepted")
	}
	// The runs root itself goes with the Supervisor.
	closed = true
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Fatalf("left behind in the state dir: %v", entries)
	}
}
