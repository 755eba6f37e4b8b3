package wazero

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/apysup/apysup/python"
)

// Config says where the Interpreter finds its inputs. The zero value uses
// the default cache directory and the embedded guest files.
type Config struct {
	// CacheDir holds apysup/wasi/<key> (the build) and apysup/wazero (the
	// compilation cache); "" means DefaultCacheDir.
	CacheDir string
	// CompilationCacheDir overrides CacheDir/apysup/wazero.
	CompilationCacheDir string
	// GuestFiles is mounted read-only at sandbox.GuestFilesDir; nil means
	// python.GuestFiles, the same bytes the native backend installs.
	GuestFiles fs.FS
	// Progress, when set, is told when Load compiles python.wasm (seconds,
	// once per build and host) rather than reading the compilation cache.
	Progress func(string)
	// DpkgStatus is the dpkg status file that says which python3.11
	// revision the host (the native guest) runs; "" means DpkgStatus.
	DpkgStatus string

	// unchecked compiles without wazero's close-on-context-done: guest code
	// runs without its check at every loop back-edge, and nothing but the
	// process's end can stop a spinning guest. Only this package's
	// benchmarks set it, to measure what the check costs.
	unchecked bool
}

// Interpreter is CPython compiled for one process: a wazero runtime, the
// compiled python.wasm, the verified stdlib and the two host modules.
// It is safe for concurrent Runs; Close it when the process is done.
type Interpreter struct {
	runtime    wazero.Runtime
	cache      wazero.CompilationCache
	module     wazero.CompiledModule
	build      *Build
	stdlib     *stdlibTree
	guestFiles fs.FS
	zoneinfo   *hostDir // nil when the host has no zoneinfo
	minMemory  uint64   // bytes the module needs before running a line
	compiled   cacheWatch
}

// Load locates the WASI build (an *UnavailableError with
// ErrorCodeGuestMissing if there is none), refuses it if its python3.11
// revision is not the host's (ErrorCodeRevisionMismatch), checks it against
// its manifest and compiles it, reusing the on-disk compilation cache when
// it is warm.
func Load(ctx context.Context, cfg Config) (*Interpreter, error) {
	build, err := Locate(cfg.CacheDir)
	if err != nil {
		return nil, err
	}
	if err := CheckRevision(build, cfg.DpkgStatus); err != nil {
		return nil, err
	}
	cacheDir := cfg.CompilationCacheDir
	if cacheDir == "" {
		root := cfg.CacheDir
		if root == "" {
			if root, err = DefaultCacheDir(); err != nil {
				return nil, fmt.Errorf("wazero: cache directory: %w", err)
			}
		}
		cacheDir = filepath.Join(root, "apysup", "wazero")
	}
	// Hashes of the build that earlier Loads checked (stamp.go), beside
	// the machine code compiled from it.
	stamped := openStamps(filepath.Join(cacheDir, "verified"), build.Manifest.Key)
	now := time.Now()
	wasm, err := build.readStamped(wasmFile, stamped, now)
	if err != nil {
		return nil, err
	}
	zipFile, zipped, err := build.openStamped(stdlibFile, stamped, now)
	if err != nil {
		return nil, err
	}
	var stdlib *stdlibTree
	if zipFile != nil {
		stdlib, err = newStdlibTree(zipFile, build.Manifest.Files[stdlibFile].Size, zipFile)
	} else {
		stdlib, err = newStdlibTree(bytes.NewReader(zipped), int64(len(zipped)), nil)
	}
	if err != nil {
		if zipFile != nil {
			zipFile.Close()
		}
		return nil, fmt.Errorf("wazero: %s: %w", filepath.Join(build.Dir, stdlibFile), err)
	}
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		return nil, fmt.Errorf("wazero: compilation cache: %w", err)
	}
	// Memory is capped per run by the allocator (memory.go), not here: the
	// compiled module is shared by runs with different limits.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithCloseOnContextDone(!cfg.unchecked))
	in := &Interpreter{
		compiled:   cacheWatch{dir: cacheDir, progress: cfg.Progress},
		runtime:    rt,
		cache:      cache,
		build:      build,
		stdlib:     stdlib,
		guestFiles: cfg.GuestFiles,
	}
	if in.guestFiles == nil {
		in.guestFiles = python.GuestFiles
	}
	if fi, err := os.Stat(zoneinfoDir); resolvesBeneath && err == nil && fi.IsDir() {
		if in.zoneinfo, err = openHostDir(zoneinfoDir); err != nil {
			_ = in.Close(ctx)
			return nil, fmt.Errorf("wazero: %w", err)
		}
	}
	// Out directories of processes that died with runs under way.
	_ = sweepTempDirs(os.TempDir())
	if err := in.init(ctx, wasm); err != nil {
		_ = in.Close(ctx)
		return nil, err
	}
	stamped.save()
	return in, nil
}

func (in *Interpreter) init(ctx context.Context, wasm []byte) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, in.runtime); err != nil {
		return fmt.Errorf("wazero: wasi: %w", err)
	}
	_, err := in.runtime.NewHostModuleBuilder(hostModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostCall),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32},
			[]api.ValueType{api.ValueTypeI32}).
		WithParameterNames("req_ptr", "req_len", "resp_ptr", "resp_cap").
		Export(hostCallName).
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("wazero: host module: %w", err)
	}
	in.compiled.before()
	in.module, err = in.runtime.CompileModule(ctx, wasm)
	in.compiled.after()
	if err != nil {
		return fmt.Errorf("wazero: compile %s: %w", filepath.Join(in.build.Dir, wasmFile), err)
	}
	mems := in.module.ExportedMemories()
	mem, ok := mems["memory"]
	if !ok {
		return errors.New("wazero: python.wasm exports no memory")
	}
	in.minMemory = uint64(mem.Min()) * pageSize
	return nil
}

// Build is the WASI build this Interpreter runs.
func (in *Interpreter) Build() *Build { return in.build }

// Close releases the runtime and the in-memory compilation cache; the
// on-disk cache stays for the next process.
func (in *Interpreter) Close(ctx context.Context) error {
	err := in.runtime.Close(ctx)
	if cerr := in.cache.Close(ctx); err == nil {
		err = cerr
	}
	if in.zoneinfo != nil {
		if cerr := in.zoneinfo.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := in.stdlib.Close(); err == nil {
		err = cerr
	}
	return err
}
