package wazero_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/wazero"
)

// One Interpreter per process; one Backend per run, bound to that run's
// Broker (any Dispatcher).
func Example() {
	ctx := context.Background()
	in, err := wazero.Load(ctx, wazero.Config{})
	var unavailable *wazero.UnavailableError
	if errors.As(err, &unavailable) {
		fmt.Println(unavailable.Code) // wasi_guest_missing: run `make wasi-python`
		return
	}
	if err != nil {
		panic(err)
	}
	defer in.Close(ctx)

	out, err := in.Backend(rpc.Responder(refuseAll{})).Run(ctx, sandbox.Job{
		ScriptPath:   "/path/to/script.py",
		Prelude:      []byte("import agent_runtime\nagent_runtime._bind(None)\n"),
		WorkspaceDir: "/path/to/workspace",
	}, sandbox.Limits{})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Status, out.ExitCode)
}

// refuseAll stands in for the run's Broker: it refuses every call.
type refuseAll struct{}

func (refuseAll) Call(context.Context, []byte) *broker.Response {
	return &broker.Response{SchemaVersion: broker.ResponseSchemaVersion, Status: broker.StatusRefused, ErrorCode: broker.CodeUnknownCapability}
}
