package wazero

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing/fstest"
	"time"

	wsys "github.com/tetratelabs/wazero/sys"

	"github.com/apysup/apysup/internal/sandbox"
)

// Name is the backend's name in RunResult.backend.
const Name = "wazero"

// Codes of Outcome.ErrorCode. Those the native backend also reports come
// from package sandbox, for parity.
const (
	ErrorCodeInvalidJob      = sandbox.CodeInvalidJob
	ErrorCodeSetupFailed     = sandbox.CodeSetupFailed
	ErrorCodeCanceled        = sandbox.CodeCanceled
	ErrorCodeOutcomeTooLarge = sandbox.CodeOutcomeTooLarge
	// ErrorCodeTrap: the guest trapped for a reason no native fault
	// stands for (a float-to-integer conversion of NaN, a host function's
	// failure), a status error. A trap that stands for a CPU fault (the
	// stack overflowed, an access out of bounds) is the death by the
	// signal the fault raises natively (trapSignals in signal.go).
	ErrorCodeTrap = "wasm_trap"
	// ErrorCodeKilledBySignal, followed by ":" and the signal's name: the
	// guest ended itself by a signal (abort, or one it raised whose
	// default action ends the process: signal.go), as natively.
	ErrorCodeKilledBySignal = sandbox.CodeKilledBySignal
)

const (
	stdlibMount  = "/usr/lib" // python3.11/ is on the default sys.path of prefix /usr
	zoneinfoDir  = "/usr/share/zoneinfo"
	etcDir       = "/etc"
	noExitStatus = -1 // the guest did not exit by itself
)

// guestEnv is the whole environment the guest sees, identical to the
// native backend's. The guest runs with -I, so CPython itself ignores the
// PYTHON* variables: they are there so os.environ reads the same on both
// backends, and hashes are randomised on both (the seed comes from
// random_get, backed by crypto/rand here, getrandom natively).
var guestEnv = [][2]string{
	{"PYTHONHASHSEED", "0"},
	{"PYTHONDONTWRITEBYTECODE", "1"},
	{"PYTHONUTF8", "1"},
	{"PATH", "/usr/bin:/bin"},
	{"HOME", sandbox.GuestWorkDir},
	{"LANG", "C.UTF-8"},
}

// Backend runs jobs on an Interpreter, answering host calls with one
// Dispatcher (the run's Broker). It implements sandbox.Backend.
type Backend struct {
	in         *Interpreter
	dispatcher Dispatcher
}

var _ sandbox.Backend = (*Backend)(nil)

// Backend returns a sandbox.Backend whose guests' host calls go to d. A nil
// d answers every call as the native bridge does without a channel
// (channel_unavailable), for runs whose Plan grants nothing.
func (in *Interpreter) Backend(d Dispatcher) *Backend {
	return &Backend{in: in, dispatcher: d}
}

// Name implements sandbox.Backend.
func (b *Backend) Name() string { return Name }

// Run implements sandbox.Backend: a fresh module instance with its own
// memory (capped at limits.MemoryBytes), files and clocks, ended by
// limits.Timeout or ctx. Guest behaviour, whatever it is, is an Outcome
// with a nil error. A job it cannot run is an Outcome with StatusRefused
// (invalid_job), a host-side failure one with StatusSetupFailed; both come
// with the error that caused them.
func (b *Backend) Run(ctx context.Context, job sandbox.Job, limits sandbox.Limits) (*sandbox.Outcome, error) {
	out, remove, err := b.RunLeavingScratch(ctx, job, limits)
	remove()
	return out, err
}

// RunLeavingScratch is Run but for its last step, which remove takes: the
// run's scratch directories (the guest's out and tmp directories, each a
// tmpfs where this process may mount) are unmounted and removed when the
// caller calls remove, once, after the result is out. Unmounting waits for
// the kernel's RCU grace periods: on the 2-CPU VM, 4 ms of a pooled run's
// 23 ms through the API (perf trace of the server, one umount2 of two).
// Nothing of the Outcome depends on them; a process that dies before
// remove leaves them to the next Load's sweep (sweepTempDirs) or, under a
// RunDir, to its owner's.
func (b *Backend) RunLeavingScratch(ctx context.Context, job sandbox.Job, limits sandbox.Limits) (*sandbox.Outcome, func(), error) {
	remove := func() {}
	out, err := b.run(ctx, job, limits, &remove)
	return out, remove, err
}

func (b *Backend) run(ctx context.Context, job sandbox.Job, limits sandbox.Limits, removeScratch *func()) (*sandbox.Outcome, error) {
	began := time.Now()
	out := &sandbox.Outcome{ExitCode: noExitStatus}
	fail := func(status sandbox.Status, code string, err error) (*sandbox.Outcome, error) {
		out.Status, out.ErrorCode = status, code
		return out, fmt.Errorf("wazero: %s (%s): %w", status, code, err)
	}
	refused := func(err error) (*sandbox.Outcome, error) {
		return fail(sandbox.StatusRefused, ErrorCodeInvalidJob, err)
	}
	setupFailed := func(err error) (*sandbox.Outcome, error) {
		return fail(sandbox.StatusSetupFailed, ErrorCodeSetupFailed, err)
	}
	limits, err := limits.WithDefaults()
	if err != nil {
		return fail(sandbox.StatusRefused, sandbox.CodeInvalidLimits, err)
	}

	script, err := job.ReadScript()
	if err != nil {
		return refused(fmt.Errorf("script: %w", err))
	}
	scriptName, err := job.ScriptName()
	if err != nil {
		return refused(err)
	}
	argv, err := job.ArgvFileData()
	if err != nil {
		return refused(err)
	}
	if fi, err := os.Stat(job.WorkspaceDir); err != nil || !fi.IsDir() {
		return refused(fmt.Errorf("workspace %q is not a directory", job.WorkspaceDir))
	}
	// A caller's directory holds what a seeded workspace holds by
	// construction, regular files and directories: a FIFO there would
	// block an open, a device be the host's, and a symlink is the guest's
	// to make (linkDir), not the caller's to leave.
	if err := sandbox.CheckPlainTree(job.WorkspaceDir); err != nil {
		return refused(err)
	}
	if uint64(limits.MemoryBytes) < b.in.minMemory {
		// CPython cannot start below its initial memory; natively the
		// cgroup would kill it just as early.
		out.Status = sandbox.StatusMemoryLimit
		return out, nil
	}
	scratch, remove, err := makeScratchDirs(job.RunDir, limits.TmpBytes, limits.TmpFiles())
	if err != nil {
		return setupFailed(err)
	}
	*removeScratch = remove

	j := guestJob{
		Script: script, ScriptName: scriptName, Prelude: job.Prelude, Argv: argv,
		Stream: job.Output != nil, Workspace: job.WorkspaceDir, OutDir: scratch.out, TmpDir: scratch.tmp,
		HostCalls: b.dispatcher != nil, MemoryBytes: uint64(limits.MemoryBytes),
		OpenFiles: limits.OpenFiles, FileSizeBytes: limits.FileSizeBytes,
		WorkspaceBytes: limits.WorkspaceBytes, WorkspaceFiles: limits.WorkspaceFiles,
		TmpBytes: limits.TmpBytes, TmpFiles: limits.TmpFiles(), CPUSeconds: limits.CPUSeconds(),
	}
	// A workspace the budget cannot take is the caller's, refused before
	// any guest starts.
	if _, err := newBudgetDir(newConfinedDir(job.WorkspaceDir, limits.FileSizeBytes), job.WorkspaceDir, limits.WorkspaceBytes, limits.WorkspaceFiles); err != nil {
		return refused(fmt.Errorf("workspace: %w", err))
	}

	// The run's clock starts once the runner reads its job.
	clock := newRunClock(ctx, limits.Timeout)
	defer clock.stop()
	// fd_write lands in the Capture, which never waits for the Output.
	output := sandbox.NewCapture(limits.OutputBytes)
	output.Deliver(job.Output)
	defer output.Close()

	prepared := time.Now()
	out.Timings.Prepare = prepared.Sub(began)
	var res guestRun
	var how ending
	if b.in.child {
		res, how, err = b.runChild(ctx, clock, j, output, out, removeScratch)
	} else {
		res, how = b.runHere(ctx, clock, j, output, out)
	}
	finished := time.Now()
	if err != nil {
		return setupFailed(err)
	}
	if res.setupErr != nil && how.canceled {
		// The caller gave up: not the host's failure.
		return fail(sandbox.StatusKilled, ErrorCodeCanceled, res.setupErr)
	}
	if res.setupErr != nil {
		return setupFailed(res.setupErr)
	}
	out.Usage.CPUTimeNs = res.cpuNs
	classify(out, res.end, how)
	output.Close()
	out.Stdout, out.Stderr, out.StdoutTruncated, out.StderrTruncated = output.Kept()
	out.Usage.PeakMemoryBytes = int64(res.peakMemory)
	var tooLarge bool
	out.GuestOutcome, tooLarge = sandbox.ReadOutcomeFile(filepath.Join(scratch.out, sandbox.OutcomeFile))
	if tooLarge && out.ErrorCode == "" {
		out.ErrorCode = ErrorCodeOutcomeTooLarge
	}
	out.Timings.Destroy = time.Since(finished)
	return out, nil
}

// runHere runs the guest in this process, on the calling goroutine: the
// runtime's close-on-context-done ends it at the timeout or when ctx ends.
// Only where no child process can run it (childSupported).
func (b *Backend) runHere(ctx context.Context, clock *runClock, j guestJob, output *sandbox.Capture, out *sandbox.Outcome) (guestRun, ending) {
	call := func(ctx context.Context, frame []byte, fault string) ([]byte, bool) {
		return respond(ctx, b.dispatcher, frame, fault), false
	}
	var how ending
	began := time.Now()
	var startedAt time.Time
	res := b.in.execute(clock.ctx, j, output.Writer(sandbox.Stdout), output.Writer(sandbox.Stderr),
		func() {
			if startedAt.IsZero() {
				startedAt = time.Now()
			}
			clock.start()
		},
		func() {
			// Read at once. A guest that returned from _start finished by
			// itself whatever happens next; one that exited or trapped while
			// a context ended is counted as ended by it (an exit code cannot
			// tell, the guest chooses it).
			how = ending{canceled: ctx.Err() != nil, timedOut: clock.ctx.Err() != nil}
		}, call)
	if res.setupErr != nil {
		how.canceled = ctx.Err() != nil
	}
	if startedAt.IsZero() {
		out.Timings.Start = time.Since(began)
	} else {
		out.Timings.Start, out.Timings.Run = startedAt.Sub(began), time.Since(startedAt)
	}
	how.memoryRefused = res.memoryRefused
	return res, how
}

// sleeper is the guest's nanosleep. wazero's own blocks for the whole
// duration, and a guest inside a host call cannot be closed: time.sleep(3600)
// would outlive the run's timeout. This one ends the guest when ctx ends,
// there and then: returning would let it run on (print, call the host)
// until wazero's next check of the closed module. It also ends early for
// the guest's interval timer, when the timer comes due in a time.sleep.
func sleeper(ctx context.Context, timer *guestTimer) wsys.Nanosleep {
	return func(ns int64) {
		t := time.NewTimer(time.Duration(ns))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				return
			case <-timer.fired:
				if timer.interrupts() {
					return // time.sleep, interrupted (itimer.go)
				}
			case <-ctx.Done():
				// wazero returns an ExitError a host function panics with as
				// is; classify reads the ending from the contexts, not its code.
				panic(wsys.NewExitError(wsys.ExitCodeContextCanceled))
			}
		}
	}
}

// ending is what the host knows of how a run ended besides what _start
// returned: whether the caller's context or the run's timer had ended.
type ending struct {
	canceled, timedOut bool
	memoryRefused      bool // the allocator refused a grow, or the guest an allocation (allocationFailed)
}

// classify maps how _start ended to a status from host evidence only, as
// the native backend does: timeout only when the run's timer fired,
// killed (canceled) only when the caller's context ended, memory_limit
// only when the allocator refused a grow, or the guest's interpreter an
// allocation too large for wasm32, and the guest then failed (a
// guest that caught its MemoryError and exited 0 is ok). Everything the
// guest chooses is evidence about the guest, making a run ok or error and
// nothing else: proc_exit takes any code, wazero's own codes for a closed
// context included (os._exit(-1) is sys.ExitCodeContextCanceled), and its
// status is what the kernel makes of an exit status natively, the low 8
// bits. A signal the guest raised itself, or abort(), ends it as natively:
// error, killed_by_signal, 128+N, and so does a trap that stands for a CPU
// fault (the stack overflowed: SIGSEGV, as natively; endOf). Any other
// trap is the guest's own failure too: error, wasm_trap, with no exit
// status.
func classify(out *sandbox.Outcome, end guestEnd, how ending) {
	switch {
	case end.kind == endReturned: // _start returned: main returned 0
		out.Status, out.ExitCode = sandbox.StatusOK, 0
		return
	case how.canceled:
		out.Status, out.ErrorCode = sandbox.StatusKilled, ErrorCodeCanceled
		return
	case how.timedOut:
		out.Status = sandbox.StatusTimeout
		return
	case end.kind == endExited:
		out.ExitCode = int(end.exitCode & 0xff)
		out.Status = sandbox.StatusError
		if out.ExitCode == 0 {
			out.Status = sandbox.StatusOK
		}
	case end.kind == endSignaled:
		out.Status, out.ExitCode = sandbox.StatusError, 128+int(end.signal)
		out.ErrorCode = sandbox.KilledBySignalCode(syscall.Signal(end.signal))
	case end.kind == endLost:
		out.Status, out.ErrorCode = sandbox.StatusError, ErrorCodeChildDied
		return
	default:
		out.Status, out.ErrorCode = sandbox.StatusError, ErrorCodeTrap
	}
	if how.memoryRefused && out.Status != sandbox.StatusOK {
		out.Status, out.ErrorCode = sandbox.StatusMemoryLimit, ""
	}
}

// guestRoot is the guest's "/": read-only and empty but for the
// directories that lead to the mounts (usr/lib, opt/apysup, ...), so that
// a path outside every mount resolves, and a missing one is ENOENT as
// natively. Without a "/" preopen, wasi-libc refuses such a path itself
// with ENOTCAPABLE (PermissionError): pathlib's exists() raised where
// os.path.exists() answered False. sys.executable (sandbox.GuestPython)
// is an empty file: there is no process to run it, but code that opens
// it finds it, as natively (platform.libc_ver() reads it and answers
// that the C library is not glibc; test_time failed to import).
func guestRoot(mounts []string) fstest.MapFS {
	root := fstest.MapFS{strings.TrimPrefix(sandbox.GuestPython, "/"): &fstest.MapFile{Mode: 0o555}}
	for d := path.Dir(strings.TrimPrefix(sandbox.GuestPython, "/")); d != "."; d = path.Dir(d) {
		root[d] = &fstest.MapFile{Mode: fs.ModeDir | 0o555}
	}
	for _, m := range mounts {
		for d := strings.Trim(m, "/"); d != "" && d != "."; d = path.Dir(d) {
			root[d] = &fstest.MapFile{Mode: fs.ModeDir | 0o555}
		}
	}
	// The host's package directories outside the stdlib's mount are there,
	// empty, as the native guest sees them hidden (wazeroPackageDirs).
	for _, p := range wazeroPackageDirs {
		if !strings.HasPrefix(p, stdlibMount+"/") {
			for d := strings.Trim(p, "/"); d != "" && d != "."; d = path.Dir(d) {
				root[d] = &fstest.MapFile{Mode: fs.ModeDir | 0o555}
			}
		}
	}
	return root
}

// wazeroPackageDirs are the host package directories (sandbox.HostPackageDirs)
// the wazero guest has, empty: the two that Debian's python3.11 makes on
// every host it is installed on (python3's dist-packages, and the one for
// /usr/local that its postinst makes), which the native guest sees hidden
// under empty directories. Neither child nor parent asks the host: a run
// looks the same on every Debian 12 host.
var wazeroPackageDirs = sandbox.HostPackageDirs[:2]
