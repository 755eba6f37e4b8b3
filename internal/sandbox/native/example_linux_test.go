package native_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/native"
	"github.com/apysup/apysup/python"
)

func Example() {
	// First thing in main: libcontainer re-executes this binary as "init".
	native.MaybeInit()

	b, err := native.New(native.Config{GuestFiles: python.GuestFiles})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	ws, _ := os.MkdirTemp("", "workspace-")
	run, _ := os.MkdirTemp("", "run-")
	defer os.RemoveAll(ws)
	defer os.RemoveAll(run)

	out, err := b.Run(context.Background(), sandbox.Job{
		ScriptPath: "hello.py", WorkspaceDir: ws, RunDir: run,
	}, sandbox.Limits{Timeout: 5e9, MemoryBytes: 256 << 20})
	if err != nil {
		// Refused (e.g. userns_unavailable: see sandbox/doctor) or setup_failed.
		log.Fatal(err)
	}
	fmt.Println(out.Status, out.ExitCode, string(out.Stdout))
}
