package wazero

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"sync/atomic"
	"testing/fstest"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	wsys "github.com/tetratelabs/wazero/sys"

	"github.com/apysup/apysup/internal/sandbox"
)

// guestJob is everything a guest's module needs that Run has checked: what
// the child process reads from its job descriptor (childwire.go), and what
// an in-process run hands execute directly.
type guestJob struct {
	Script     []byte `json:"script"`
	ScriptName string `json:"script_name"`
	Prelude    []byte `json:"prelude"`
	Argv       []byte `json:"argv"`
	Stream     bool   `json:"stream"` // the job has an Output: the runner line-buffers
	Workspace  string `json:"workspace"`
	OutDir     string `json:"out_dir"`
	TmpDir     string `json:"tmp_dir"`
	HostCalls  bool   `json:"host_calls"` // the run has a Dispatcher

	MemoryBytes    uint64 `json:"memory_bytes"`
	OpenFiles      uint64 `json:"open_files"`
	FileSizeBytes  int64  `json:"file_size_bytes"`
	WorkspaceBytes int64  `json:"workspace_bytes"`
	WorkspaceFiles int64  `json:"workspace_files"`
	TmpBytes       int64  `json:"tmp_bytes"`
	TmpFiles       int64  `json:"tmp_files"`
	CPUSeconds     uint64 `json:"cpu_seconds"` // RLIMIT_CPU natively (sandbox.Limits.CPUSeconds)
}

// endKind is how _start ended, as the guest (or its child) saw it.
type endKind string

const (
	endReturned endKind = "returned" // main returned 0
	endExited   endKind = "exited"   // proc_exit with a code
	endTrapped  endKind = "trapped"  // a wasm fault
	// endSignaled: apysup_proc.exit_by_signal, from raise or abort
	// (signal.go).
	endSignaled endKind = "signaled"
	// endLost: the child process ended without a report the parent could
	// read (never on the wire).
	endLost endKind = "lost"
)

// guestEnd is the guest's own ending: evidence about the guest, never
// about the host (classify).
type guestEnd struct {
	kind     endKind
	exitCode uint32
	signal   int32 // endSignaled's, 1 to maxSignal
}

func endOf(err error) guestEnd {
	var exit *wsys.ExitError
	switch {
	case err == nil:
		return guestEnd{kind: endReturned}
	case errors.As(err, &exit):
		return guestEnd{kind: endExited, exitCode: exit.ExitCode()}
	}
	if sig := trapSignal(err); sig != 0 {
		return guestEnd{kind: endSignaled, signal: int32(sig)}
	}
	return guestEnd{kind: endTrapped}
}

// guestRun is what execute saw of one guest.
type guestRun struct {
	setupErr      error // the module could not be instantiated
	end           guestEnd
	memoryRefused bool
	peakMemory    uint64
	cpuNs         int64 // the guest thread's, host calls included
}

// hostCaller answers one host_call: the frame the guest handed over, or
// the refusal code readFrame found instead of one; it returns the response
// envelope, nil when there is none to deliver. interrupted says that one of
// the guest's interval timers came due first: the answer is still owed,
// and the guest waits on for it with fault faultResume once its signal
// handler has returned, or abandons it (hostcall.go).
type hostCaller func(ctx context.Context, frame []byte, fault string) (envelope []byte, interrupted bool)

// execute instantiates the module for j and runs _start on the calling
// goroutine. started is called when the runner opens its job (the run's
// clock starts there), ended right after _start returns, on its thread.
// ctx ends the guest only where the runtime checks it (in-process runs).
func (in *Interpreter) execute(ctx context.Context, j guestJob, stdout, stderr io.Writer, started, ended func(), call hostCaller) guestRun {
	g, err := in.startGuest(ctx, j.MemoryBytes, j.MemoryBytes, stdout, stderr, started, nil, call)
	if err != nil {
		return guestRun{setupErr: err}
	}
	if err := g.bind(j); err != nil {
		_ = g.mod.Close(ctx) // never run
		return guestRun{setupErr: err}
	}
	return g.run(ended)
}

// guest is a module instance whose job may come later: its mounts of the
// job's files and of the job's directories wait until bind (lateFS), and
// its limits are set there.
type guest struct {
	ctx            context.Context
	mod            api.Module
	mem            *linearMemory
	files          *openFiles
	started        func()
	job, out, work *lateFS
	tmp            *lateFS
	cpu            *guestCPU
	stats          *mountStats   // statvfs of the mounts (statvfs.go)
	limits         *guestLimits  // resource limits (rlimit.go)
	fileSize       *atomic.Int64 // the files it writes stop here: its RLIMIT_FSIZE
	signaled       int32         // set by apysup_proc.exit_by_signal (signal.go)
	timers         *guestTimers  // its interval timers (itimer.go)
	mounts         *guestMounts  // where a link leads from one mount to another (linkdir.go)
}

// startGuest instantiates the module with a limit of limitBytes of linear
// memory until bind sets the job's, and reserveBytes mapped for it (the
// most the job's limit may be). Its job's mounts wait for bind; waiting
// (if not nil) is called when the guest first reaches for them.
func (in *Interpreter) startGuest(ctx context.Context, limitBytes, reserveBytes uint64, stdout, stderr io.Writer, started, waiting func(), call hostCaller) (*guest, error) {
	g := &guest{
		// Until bind, the open files the guest's own start needs.
		files: &openFiles{max: startFiles},
		mem:   &linearMemory{limit: limitBytes, reserve: reserveBytes},
		job:   newLateFS(waiting), out: newLateFS(waiting), work: newLateFS(waiting), tmp: newLateFS(waiting),
		started:  started,
		cpu:      &guestCPU{},
		stats:    newMountStats(),
		fileSize: new(atomic.Int64),
	}
	if in.guarded {
		if err := g.mem.reserveGuarded(); err != nil {
			return nil, err
		}
	}
	g.timers = newGuestTimers(g.mem, g.cpu)
	g.limits = newGuestLimits(inheritedLimits(), g.files, g.mem, g.fileSize)
	// Exactly these paths exist in the guest, and the directories that
	// lead to them (guestRoot). Every file the guest opens on any of them
	// counts against one budget.
	fsc := wazero.NewFSConfig()
	made := time.Now().UnixNano() // the mounts' time, as the native sandbox makes its own (nativeView.undated)
	var mounted []string
	mounts := map[string]experimentalsys.FS{}    // for apysup_fs.chmod, and links across mounts
	mountedAt := map[experimentalsys.FS]string{} // for apysup_fs.fd_path
	g.mounts = &guestMounts{byPath: mounts}
	// owned: a writable mount, whose files are the guest's (nativeView).
	mount := func(fsys experimentalsys.FS, guestPath string, dev uint16, view viewFunc, owned bool) {
		viewed := &nativeView{FS: fsys, dev: dev, at: guestPath, view: view, owned: owned, made: made}
		counted := &countedFS{FS: viewed, q: g.files, freePreopen: guestPath == procDir || guestPath == etcDir}
		fsc = fsc.(sysfs.FSConfig).WithSysFSMount(counted, guestPath)
		mountedAt[counted] = guestPath
		mounted = append(mounted, guestPath)
		mounts[guestPath] = viewed
	}
	mount(newReadOnly(&sysfs.AdaptFS{FS: in.stdlib}), stdlibMount, rootDev, installedView(0o644), false)
	mount(newReadOnly(&sysfs.AdaptFS{FS: in.guestFiles}), sandbox.GuestFilesDir, rootDev, installedView(0o444), false)
	mount(g.job, sandbox.GuestJobDir, rootDev, installedView(0o444), false)
	// IANA time zones, read-only, where the native guest finds them too
	// (its /usr is the host's, read-only): zoneinfo works on both.
	if in.zoneinfo != nil {
		mount(in.zoneinfo.FS(), zoneinfoDir, rootDev, hostFiles, false) // read-only: hostDir.FS
	}
	// The native guest's generated /etc, the same bytes, read-only.
	mount(newReadOnly(&sysfs.AdaptFS{FS: etcFiles}), etcDir, rootDev, installedView(0o644), false)
	mount(newDevices(stdout, stderr), devicesDir, devDev, devicesView, false)
	mount(newProcMount(procDir), procDir, procDev, procView, false)
	// The writable mounts are bounded tmpfs natively; here budgets bound them.
	mount(g.out, sandbox.GuestOutDir, outDev, written(0o700, ownerGuest), true)
	mount(g.work, sandbox.GuestWorkDir, workDev, written(0o755, ownerGuest), true)
	mount(g.tmp, sandbox.GuestTmpDir, tmpDev, written(0o777|fs.ModeSticky, ownerRoot), true)
	mount(newReadOnly(&sysfs.AdaptFS{FS: guestRoot(mounted)}), "/", rootDev, rootView, false)

	runCtx := experimental.WithMemoryAllocator(ctx, g.mem)
	runCtx = context.WithValue(runCtx, runKey{}, call)
	runCtx = context.WithValue(runCtx, mountsKey{}, mounts)
	runCtx = context.WithValue(runCtx, mountedAtKey{}, mountedAt)
	runCtx = context.WithValue(runCtx, mountStatsKey{}, g.stats)
	runCtx = context.WithValue(runCtx, signaledKey{}, &g.signaled)
	runCtx = context.WithValue(runCtx, rlimitsKey{}, g.limits)
	runCtx = context.WithValue(runCtx, timerKey{}, g.timers)
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: concurrent runs share one runtime
		WithStartFunctions().
		WithArgs(sandbox.RunnerArgv()...).
		WithFSConfig(fsc).
		WithStdout(stdout).
		WithStderr(stderr).
		// wazero's defaults are fake clocks and a fixed random seed. (The
		// guest reads its clocks through exportClocks, wasiclock.go; these
		// serve wazero's own uses: poll_oneoff, a file time of "now".)
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(sleeper(runCtx, g.timers[itimerReal])).
		WithRandSource(rand.Reader)
	for _, kv := range guestEnv {
		cfg = cfg.WithEnv(kv[0], kv[1])
	}
	mod, err := in.runtime.InstantiateModule(runCtx, in.module, cfg)
	if err != nil {
		g.mem.Free() // a guard's reservation, if the module never took it
		return nil, err
	}
	g.mod, g.ctx = mod, context.WithValue(runCtx, cpuKey{}, g.cpu)
	return g, nil
}

// etcFiles is /etc: sandbox.EtcFiles, as the native sandbox writes them.
var etcFiles = func() fstest.MapFS {
	m := fstest.MapFS{}
	for name, content := range sandbox.EtcFiles() {
		m[name] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
	}
	return m
}()

// startFiles bounds the files a guest holds open before its job's limit
// applies: its own start needs a few (the stdlib, the runner's files).
const startFiles = 64

// bind gives the guest its job: the job's files and directories, its
// memory and open-file limits. Once only; a guest waiting for its job's
// files goes on from here. A job the mounts cannot take leaves the guest
// unbound (the caller ends it).
func (g *guest) bind(j guestJob) error {
	g.fileSize.Store(j.FileSizeBytes)
	outFS, err := newBudgetDir(newConfinedDirSized(j.OutDir, g.fileSize), j.OutDir, sandbox.OutDirBytes, sandbox.OutDirFiles)
	if err != nil {
		return err
	}
	workFS, err := newBudgetDir(newConfinedDirSized(j.Workspace, g.fileSize), j.Workspace, j.WorkspaceBytes, j.WorkspaceFiles)
	if err != nil {
		return err
	}
	tmpFS, err := newBudgetDir(newConfinedDirSized(j.TmpDir, g.fileSize), j.TmpDir, j.TmpBytes, j.TmpFiles)
	if err != nil {
		return err
	}
	// The job's files are dated when it is given, as natively when the
	// sandbox writes them for the run (a pooled guest's mounts are older).
	given := time.Now()
	jobFiles := fstest.MapFS{
		".":                 &fstest.MapFile{Mode: fs.ModeDir | 0o555, ModTime: given},
		j.ScriptName:        &fstest.MapFile{Data: j.Script, Mode: 0o444, ModTime: given},
		sandbox.PreludeFile: &fstest.MapFile{Data: j.Prelude, Mode: 0o444, ModTime: given},
		sandbox.ArgvFile:    &fstest.MapFile{Data: j.Argv, Mode: 0o444, ModTime: given},
	}
	if j.Stream {
		jobFiles[sandbox.StreamFile] = &fstest.MapFile{Mode: 0o444, ModTime: given}
	}
	g.files.setMax(int(min(j.OpenFiles, nrOpen)))
	g.mem.setLimit(j.MemoryBytes)
	g.limits.bind(j)
	g.stats.bind(outDev, j.OutDir, sandbox.OutDirBytes, sandbox.OutDirFiles, outFlags, outFS)
	g.stats.bind(workDev, j.Workspace, j.WorkspaceBytes, j.WorkspaceFiles, writableFlags, workFS)
	g.stats.bind(tmpDev, j.TmpDir, j.TmpBytes, j.TmpFiles, writableFlags, tmpFS)
	g.out.bind(newLinkDir(outFS, sandbox.GuestOutDir, g.mounts))
	g.work.bind(newLinkDir(workFS, sandbox.GuestWorkDir, g.mounts))
	g.tmp.bind(newLinkDir(tmpFS, sandbox.GuestTmpDir, g.mounts))
	g.job.bind(newReadOnly(&sysfs.AdaptFS{FS: openWatch{FS: jobFiles, name: sandbox.ArgvFile, opened: g.started}}))
	return nil
}

// run runs _start on the calling goroutine, locked to its thread (whose
// CPU time is the guest's), then closes the module.
func (g *guest) run(ended func()) guestRun {
	var res guestRun
	var err error
	res.cpuNs = g.cpu.run(func() {
		_, err = g.mod.ExportedFunction("_start").Call(g.ctx)
		g.timers.stop()
		if ended != nil {
			ended()
		}
	})
	_ = g.mod.Close(context.Background())
	res.end = endOf(err)
	if g.signaled != 0 && res.end.kind == endExited {
		res.end = guestEnd{kind: endSignaled, signal: g.signaled}
	}
	res.memoryRefused, res.peakMemory = g.mem.usage()
	return res
}
