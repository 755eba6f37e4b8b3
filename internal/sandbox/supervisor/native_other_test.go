//go:build !linux

package supervisor

import (
	"context"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/doctor"
)

// Off Linux the native backend is a typed refusal, never a wazero run.
func TestNativeRefusedOffLinux(t *testing.T) {
	s := New(Config{StateDir: t.TempDir()})
	defer s.Close()
	res, err := s.Run(context.Background(), Request{Plan: emptyPlan(t), Handlers: broker.NewHandlers(),
		Backend: BackendNative, ScriptPath: scriptFile(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != sandbox.StatusRefused || res.ErrorCode != doctor.CodeUnsupportedOS || res.Stdout != "" {
		t.Fatalf("got %s %s %q, want refused %s", res.Status, res.ErrorCode, res.Stdout, doctor.CodeUnsupportedOS)
	}
}
