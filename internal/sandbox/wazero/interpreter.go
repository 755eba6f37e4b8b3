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
	"github.com/tetratelabs/wazero/experimental"
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
	// Pool keeps that many child processes loaded ahead of their runs
	// (Linux, where every guest runs in a child): a run takes one that
	// has compiled its module and started its guest, which waits for a
	// job, skipping the child's start and load and CPython's start (all
	// but a few ms of an empty run), and the pool refills
	// in the background. Each child serves one run; Close kills the idle
	// ones. Zero (or less) starts each child for its run.
	Pool int
	// PoolIdle is how long a pooled child waits for a run before it is
	// killed, and how long the pool stays filled without a run taking
	// from it; 0 means DefaultPoolIdle.
	PoolIdle time.Duration

	// inProcess runs every guest in this process, compiled with wazero's
	// close-on-context-done (its check at every loop back-edge is what ends
	// a spinning guest there), as where no child process can run it
	// (childSupported). Only this package's benchmarks set it, to measure
	// what the check costs.
	inProcess bool
}

// DefaultPoolIdle is Config.PoolIdle's default, the native pool's too.
const DefaultPoolIdle = 5 * time.Minute

// PoolState is a snapshot of the children Config.Pool keeps: the size,
// those loaded and waiting now, and counts since Load of those that
// loaded, that runs took, the runs that found none ready, those that
// died while idle, and those killed after PoolIdle.
type PoolState struct {
	Size, Ready                             int
	Loaded, Taken, Cold, Discarded, Expired int
}

// PoolState reports the pool's children (zero without Config.Pool).
func (in *Interpreter) PoolState() PoolState { return in.pool.state() }

// Interpreter is CPython compiled for one process: a wazero runtime, the
// compiled python.wasm, the verified stdlib and the two host modules.
// It is safe for concurrent Runs; Close it when the process is done.
type Interpreter struct {
	runtime    wazero.Runtime
	cache      wazero.CompilationCache
	module     wazero.CompiledModule
	build      *Build
	stdlib     fs.FS
	guestFiles fs.FS
	zoneinfo   *hostDir // nil when the host has no zoneinfo
	minMemory  uint64   // bytes the module needs before running a line
	compiled   cacheWatch
	// guarded: python.wasm is compiled for a guarded memory, without
	// bounds checks (memory.go, reserveGuarded): in a process that runs
	// guests in children, which may fault (RATIONALE.md, "Guard pages
	// instead of bounds checks").
	guarded bool
	// child runs each guest in a child process re-executed from this
	// binary (child_linux.go), which loads its own Interpreter from image.
	child     bool
	childLoad childLoad
	image     *os.File   // nil without children
	pool      *childPool // nil without Config.Pool
	// wasmFile and stdlibFile are the build's python.wasm and stdlib zip
	// as Load opened and checked them (stdlib reads the zip's entries
	// from stdlibFile in-process); nil in a child, which maps its
	// parent's.
	wasmFile, stdlibFile *os.File
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
	// Both build files stay open: a child maps them (childWasmFD,
	// childStdlibFD), in-process runs read the stdlib's entries from its
	// zip as they import them. wasm and zipped are their bytes when there
	// was no stamp to vouch for them and they were hashed, nil otherwise.
	wasmF, wasm, err := build.openStamped(wasmFile, stamped, now)
	if err != nil {
		return nil, err
	}
	zipF, zipped, err := build.openStamped(stdlibFile, stamped, now)
	if err != nil {
		wasmF.Close()
		return nil, err
	}
	in, err := load(ctx, cfg, build, stamped, cacheDir, wasmF, wasm, zipF, zipped)
	if err != nil {
		wasmF.Close()
		zipF.Close()
		return nil, err
	}
	// Out directories of processes that died with runs under way.
	_ = sweepTempDirs(os.TempDir())
	stamped.save()
	return in, nil
}

// load is the rest of Load once the build files are open and checked.
func load(ctx context.Context, cfg Config, build *Build, stamped *stamps, cacheDir string, wasmF *os.File, wasm []byte, zipF *os.File, zipped []byte) (*Interpreter, error) {
	guestFiles := cfg.GuestFiles
	if guestFiles == nil {
		guestFiles = python.GuestFiles
	}
	// A guest in a child process is ended by killing the child: it runs
	// without the back-edge check, and this process compiles the same
	// code (so the disk cache is warm for its children) but never runs it;
	// once a Load has compiled this build into the cache (the stamp says
	// so, with the module's minimum memory, all this process needs of it),
	// not even that, and it neither reads python.wasm nor opens the
	// stdlib's zip: its children map both. A child that finds the cache
	// emptied since compiles for itself.
	child := childSupported && !cfg.inProcess
	var zoneinfo *hostDir
	if fi, err := os.Stat(zoneinfoDir); resolvesBeneath && err == nil && fi.IsDir() {
		var err error
		if zoneinfo, err = openHostDir(zoneinfoDir); err != nil {
			return nil, fmt.Errorf("wazero: %w", err)
		}
	}
	osRelease := hostOSRelease()
	var stdlib *stdlibTree
	if !child {
		var err error
		if zipped != nil {
			stdlib, err = newStdlibTree(bytes.NewReader(zipped), int64(len(zipped)))
		} else {
			stdlib, err = newStdlibTree(zipF, build.Manifest.Files[stdlibFile].Size)
		}
		if err != nil {
			if zoneinfo != nil {
				_ = zoneinfo.Close()
			}
			return nil, fmt.Errorf("wazero: %s: %w", filepath.Join(build.Dir, stdlibFile), err)
		}
		stdlib.addFile(osReleaseName, osRelease)
		stdlib.addHostPackageDirs()
	}
	var in *Interpreter
	guarded := child && guardAvailable()
	if min := stamped.compiledMinMemory(guarded); child && min > 0 {
		in = &Interpreter{compiled: cacheWatch{dir: cacheDir, progress: cfg.Progress},
			build: build, guestFiles: guestFiles, zoneinfo: zoneinfo, minMemory: min, guarded: guarded}
	} else {
		var err error
		if wasm == nil {
			if wasm, err = build.readOpened(wasmF, wasmFile, stamped); err != nil {
				if zoneinfo != nil {
					_ = zoneinfo.Close()
				}
				return nil, err
			}
		}
		var fsys fs.FS
		if stdlib != nil {
			fsys = stdlib
		}
		if in, err = assemble(ctx, build, wasm, fsys, guestFiles, zoneinfo, cacheDir, cfg.Progress, !child); err != nil {
			return nil, err // assemble closed zoneinfo
		}
		stamped.recordCompiled(in.minMemory, in.guarded)
	}
	in.wasmFile, in.stdlibFile = wasmF, zipF
	if !child {
		return in, nil
	}
	in.child = true
	in.childLoad = childLoad{BuildDir: build.Dir, CompilationCacheDir: cacheDir,
		WasmSHA256: build.Manifest.Files[wasmFile].SHA256, OSRelease: osRelease}
	var ok bool
	if in.childLoad.Wasm, ok = identify(wasmF); ok {
		in.childLoad.Stdlib, ok = identify(zipF)
	}
	if !ok {
		_ = in.Close(ctx)
		return nil, errors.New("wazero: cannot identify the build's files for its children")
	}
	var err error
	if in.image, err = newImage(guestFiles); err != nil {
		_ = in.Close(ctx)
		return nil, fmt.Errorf("wazero: child image: %w", err)
	}
	if cfg.Pool > 0 {
		idle := cfg.PoolIdle
		if idle <= 0 {
			idle = DefaultPoolIdle
		}
		in.pool = newChildPool(in, cfg.Pool, idle)
	}
	return in, nil
}

// assemble compiles wasm (or reads the compilation cache) into an
// Interpreter serving stdlib and guestFiles: what a process that runs
// guests needs, whether Load read and checked the build or a child got it
// from its parent's image.
func assemble(ctx context.Context, build *Build, wasm []byte, stdlib, guestFiles fs.FS, zoneinfo *hostDir, cacheDir string, progress func(string), closeOnDone bool) (*Interpreter, error) {
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		if zoneinfo != nil {
			_ = zoneinfo.Close()
		}
		return nil, fmt.Errorf("wazero: compilation cache: %w", err)
	}
	// Memory is capped per run by the allocator (memory.go), not here: the
	// compiled module is shared by runs with different limits.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithCloseOnContextDone(closeOnDone))
	in := &Interpreter{
		compiled:   cacheWatch{dir: cacheDir, progress: progress},
		runtime:    rt,
		cache:      cache,
		build:      build,
		stdlib:     stdlib,
		guestFiles: guestFiles,
		zoneinfo:   zoneinfo, // the host's zoneinfo, opened by Load or inherited by a child
		// A child's fault ends only the child; in-process, the guest is
		// compiled with its bounds checks (and the back-edge check).
		guarded: !closeOnDone && guardAvailable(),
	}
	if err := in.init(ctx, wasm); err != nil {
		_ = in.Close(ctx)
		return nil, err
	}
	return in, nil
}

func (in *Interpreter) init(ctx context.Context, wasm []byte) error {
	wasi := in.runtime.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(wasi)
	exportClocks(wasi)
	if _, err := wasi.Instantiate(ctx); err != nil {
		return fmt.Errorf("wazero: wasi: %w", err)
	}
	if err := exportLibm(ctx, in.runtime); err != nil {
		return err
	}
	if err := exportFS(ctx, in.runtime); err != nil {
		return err
	}
	if err := exportProc(ctx, in.runtime); err != nil {
		return err
	}
	if err := exportHostInfo(ctx, in.runtime); err != nil {
		return err
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
	compileCtx := ctx
	if in.guarded {
		// Compiled for the allocator each guest gets (startGuest).
		compileCtx = experimental.WithMemoryAllocator(ctx, &linearMemory{guarded: true})
	}
	in.compiled.before()
	// wasm is python.wasm as checked against the manifest (by Load, or by
	// the parent of this child): with wazero as patched, its digest there
	// names the module, and the 9.5 MB are not hashed again.
	sum, known := sha256Digest(in.build.Manifest.Files[wasmFile].SHA256)
	if c, ok := in.runtime.(digestCompiler); ok && known {
		in.module, err = c.CompileModuleWithSHA256(compileCtx, wasm, sum)
	} else {
		in.module, err = in.runtime.CompileModule(compileCtx, wasm)
	}
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

// Close releases the runtime and the in-memory compilation cache, and
// kills and reaps the pool's idle children; the on-disk cache stays for
// the next process. Close after the last Run has returned.
func (in *Interpreter) Close(ctx context.Context) error {
	in.pool.close() // its idle children killed and reaped
	var err error
	if in.runtime != nil { // nil: a parent of children that did not compile (Load)
		err = in.runtime.Close(ctx)
	}
	if in.cache != nil {
		if cerr := in.cache.Close(ctx); err == nil {
			err = cerr
		}
	}
	if in.zoneinfo != nil {
		if cerr := in.zoneinfo.Close(); err == nil {
			err = cerr
		}
	}
	if in.image != nil {
		if cerr := in.image.Close(); err == nil {
			err = cerr
		}
	}
	for _, f := range []*os.File{in.wasmFile, in.stdlibFile} {
		if f == nil {
			continue
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
