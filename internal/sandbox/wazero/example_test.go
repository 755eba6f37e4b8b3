package wazero_test

import (
	"context"
	"errors"
	"fmt"

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

	broker := wazero.DispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		return []byte(`{"schema_version":"apysup.broker.v1","status":"refused","error_code":"capability_unknown"}`)
	})
	out, err := in.Backend(broker).Run(ctx, sandbox.Job{
		ScriptPath:   "/path/to/script.py",
		Prelude:      []byte("import agent_runtime\nagent_runtime._bind(None)\n"),
		WorkspaceDir: "/path/to/workspace",
	}, sandbox.Limits{})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Status, out.ExitCode)
}
