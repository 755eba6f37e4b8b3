// Command wasi-pgo is the training run of the WASI build's profile-guided
// stage (python/wasi/build.sh; RATIONALE.md, "The WASI build is
// profile-guided"): it runs a training script (python/wasi/pgo/train.py)
// on the instrumented python.wasm under apysup's wazero backend, exactly
// as a guest runs, and copies out the profile the guest wrote.
//
//	go run -tags seccomp ./cmd/wasi-pgo -cache DIR -workspace DIR -script FILE -profile FILE
//
// -cache is an XDG cache directory holding the instrumented build where
// apysup looks for the build of this tree (apysup/wasi/<key>/); -workspace
// is copied into the run's /workspace (CPython's test package); the guest
// writes its profile to /workspace/python.profraw (the instrumented
// build's default; python/wasi/pgo/_profile_shim.c writes it at every
// exit), and -profile is where it is copied to. The script must end ok:
// an ok run is what publishes the workspace.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

func main() {
	cache := flag.String("cache", "", "XDG cache directory holding the instrumented build (apysup/wasi/<key>/)")
	workspace := flag.String("workspace", "", "directory copied into the run's /workspace")
	script := flag.String("script", "", "the training script")
	profile := flag.String("profile", "", "where to copy the profile to")
	timeout := flag.Duration("timeout", time.Hour, "the training run's limit")
	flag.Parse()
	if *cache == "" || *workspace == "" || *script == "" || *profile == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: wasi-pgo -cache DIR -workspace DIR -script FILE -profile FILE [-timeout D]")
		os.Exit(2)
	}
	if err := train(*cache, *workspace, *script, *profile, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "wasi-pgo:", err)
		os.Exit(1)
	}
}

func train(cache, workspace, script, profile string, timeout time.Duration) error {
	// apysup finds the WASI build under XDG_CACHE_HOME, here and in the
	// wazero child it starts.
	if err := os.Setenv("XDG_CACHE_HOME", cache); err != nil {
		return err
	}
	export, err := os.MkdirTemp(filepath.Dir(profile), "export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(export)
	export = filepath.Join(export, "workspace") // must not exist
	r, err := plan.NewRegistry(16)
	if err != nil {
		return err
	}
	p, err := r.Seal() // the empty Plan: the training makes no calls
	if err != nil {
		return err
	}
	sup := supervisor.New(supervisor.Config{})
	defer sup.Close()
	res, err := sup.Run(context.Background(), supervisor.Request{
		Plan: p, Handlers: broker.NewHandlers(), Surface: plan.SurfaceProgrammatic, Parent: "main",
		Backend: supervisor.BackendWazero, BackendSource: "flag",
		ScriptPath: script, WorkspaceSeed: workspace, ExportDir: export,
		Limits: sandbox.Limits{
			Timeout: timeout, MemoryBytes: 2 << 30, TmpBytes: 1 << 30, OutputBytes: 32 << 20,
			OpenFiles: 4096, FileSizeBytes: 1 << 30, WorkspaceBytes: 1 << 30, WorkspaceFiles: 65536,
		},
	})
	if err != nil {
		return err
	}
	fmt.Print(res.Stdout, res.Stderr)
	if res.Status != sandbox.StatusOK || res.ExitCode != 0 {
		return fmt.Errorf("the training run ended %s (exit code %d, %s %s)", res.Status, res.ExitCode, res.ErrorCode, res.Error)
	}
	data, err := os.ReadFile(filepath.Join(export, "python.profraw"))
	if err != nil {
		return fmt.Errorf("the training run wrote no profile: %w", err)
	}
	return os.WriteFile(profile, data, 0o644)
}
