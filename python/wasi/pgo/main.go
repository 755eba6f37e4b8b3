// Command pgo is the training run of build.sh's profile-guided stage
// (RATIONALE.md, "The WASI build is profile-guided"): it runs CPython's own
// training set (`-m test --pgo`, as CPython's `make profile-opt` does) on
// the instrumented python.wasm, under apysup's wazero backend exactly as a
// guest runs, and copies out the profile the guest wrote.
//
//	go run -tags seccomp ./python/wasi/pgo -cache DIR -workspace DIR -profile FILE
//
// -cache is an XDG cache directory holding the instrumented build where
// apysup looks for the build of this tree (apysup/wasi/<key>/); -workspace
// holds CPython's test package (test/), copied into the run's /workspace;
// the guest writes its profile to /workspace/python.profraw (the
// instrumented build's default, pgo/_profile_shim.c writes it at every
// exit), and -profile is where it is copied to. A test failing under WASI
// does not fail the training; a run that ends other than ok does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apysup/apysup"
)

// trainer runs CPython's regression tests in its --pgo selection, in
// process, and always exits 0: tests that fail under WASI have still
// trained, and only an ok run publishes the workspace with the profile.
const trainer = `import sys
sys.path.insert(0, "/workspace")
sys.argv = ["regrtest", "--pgo"]
from test.libregrtest.main import main
try:
    main()
except SystemExit as e:
    print("regrtest --pgo exited with", e.code)
`

func main() {
	cache := flag.String("cache", "", "XDG cache directory holding the instrumented build (apysup/wasi/<key>/)")
	workspace := flag.String("workspace", "", "directory holding CPython's test package (test/)")
	profile := flag.String("profile", "", "where to copy the profile to")
	timeout := flag.Duration("timeout", time.Hour, "the training run's limit")
	flag.Parse()
	if *cache == "" || *workspace == "" || *profile == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: pgo -cache DIR -workspace DIR -profile FILE [-timeout D]")
		os.Exit(2)
	}
	if err := train(*cache, *workspace, *profile, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "pgo:", err)
		os.Exit(1)
	}
}

func train(cache, workspace, profile string, timeout time.Duration) error {
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
	res, err := apysup.Run(context.Background(), apysup.Request{
		Source:    []byte(trainer),
		Backend:   apysup.BackendWazero,
		Workspace: workspace,
		Export:    export,
		Limits: apysup.Limits{
			Timeout: timeout, MemoryBytes: 2 << 30, TmpBytes: 1 << 30, OutputBytes: 32 << 20,
			OpenFiles: 4096, FileSizeBytes: 1 << 30, WorkspaceBytes: 1 << 30, WorkspaceFiles: 65536,
		},
	})
	if err != nil {
		return err
	}
	fmt.Print(res.Stdout, res.Stderr)
	if res.Status != "ok" || res.ExitCode != 0 {
		return fmt.Errorf("the training run ended %s (exit code %d, %s %s)", res.Status, res.ExitCode, res.ErrorCode, res.Error)
	}
	data, err := os.ReadFile(filepath.Join(export, "python.profraw"))
	if err != nil {
		return fmt.Errorf("the training run wrote no profile: %w", err)
	}
	return os.WriteFile(profile, data, 0o644)
}
