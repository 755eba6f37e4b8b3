package wazero

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/spin"
)

// childSupported: every run's guest runs in a child process.
const childSupported = true

const (
	// childArg is the child's only argument, childEnv its whole
	// environment (the parent's pid): with its six descriptors of their
	// kinds, the marker of a process a run started (isChild).
	childArg = "apysup-wazero-child"
	childEnv = "_APYSUP_WAZERO_CHILD"
	// The child's descriptors, in ExtraFiles' order from 3.
	// childImageFD is the guest files' image (image.go), childWasmFD and
	// childStdlibFD the build's python.wasm and stdlib zip as the parent
	// opened and checked them (read-only), childZoneinfoFD the parent's
	// zoneinfo directory (O_PATH), when it has one (childLoad.Zoneinfo).
	childJobFD, childResultFD, childStdoutFD, childStderrFD, childCallFD = 3, 4, 5, 6, 7
	childImageFD, childWasmFD, childStdlibFD, childZoneinfoFD            = 8, 9, 10, 11
	// childLoadBound bounds a child's Load (its clock's first stretch,
	// before the run's own timeout bounds the guest's start): a second of
	// CPU, tens of seconds under the race detector on a loaded host.
	childLoadBound = 2 * time.Minute
)

// runChild runs the guest in a child process re-executed from this binary
// (childMain) and supervises it: a loaded child from the pool or one
// started for the run, the job down its pipe, stdout and stderr into the
// Capture, host calls answered with respond and the run's Dispatcher, the
// child killed (its process group, SIGKILL) when the run's clock or ctx
// ends. The status comes from this process's evidence: the child's report
// says how the guest ended, and is believed only as far as a guest could
// have chosen that ending itself (classify, parseReport). An error is this
// process's own failure to start the child.
func (b *Backend) runChild(ctx context.Context, clock *runClock, j guestJob, output *sandbox.Capture, out *sandbox.Outcome, teardown *func()) (guestRun, ending, error) {
	jobData, err := json.Marshal(j)
	if err != nil {
		return guestRun{}, ending{}, err
	}
	spawned := time.Now()
	var c *child
	if j.MemoryBytes >= poolMemoryBytes { // a pooled guest may hold that much already
		c = b.in.pool.take()
	}
	if c == nil {
		clock.bound(childLoadBound + clock.timeout)
		if c, err = b.in.spawnChild(j.MemoryBytes); err != nil {
			return guestRun{}, ending{}, fmt.Errorf("child: %w", err)
		}
	}

	var wg sync.WaitGroup
	goroutine := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	goroutine(func() {
		_, _ = c.job.Write(jobData) // a child that died early: EPIPE, and its death says why
		_ = c.job.Close()
	})
	for _, s := range []struct {
		name string
		r    *os.File
	}{{sandbox.Stdout, c.stdout}, {sandbox.Stderr, c.stderr}} {
		goroutine(func() {
			if _, err := io.Copy(output.Writer(s.name), s.r); err != nil {
				output.Lost(s.name)
			}
			_ = s.r.Close()
		})
	}
	var (
		startedAt time.Time
		report    []byte
		reportHow ending // the contexts when the report was complete
	)
	// A call the guest gave up (a timer's handler raised) is canceled when
	// the child says so (giveup_linux.go); in any case its context ends
	// with the guest, as the native channel closes with the run and
	// cancels what is in flight.
	callsCtx, endCalls := context.WithCancel(clock.ctx)
	defer endCalls()
	go func() {
		select {
		case <-callsCtx.Done():
		case <-c.done:
			endCalls()
		}
	}()
	goroutine(func() {
		defer endCalls() // the report is complete: the guest has ended
		defer c.result.Close()
		<-c.loaded
		var first [1]byte
		n := copy(first[:], c.head)
		if c.isLoaded {
			clock.bound(clock.timeout)
			n, _ = io.ReadFull(c.result, first[:])
		}
		if n == 1 && first[0] == startedByte {
			startedAt = time.Now()
			clock.start()
			n = 0
		}
		rest, _ := io.ReadAll(io.LimitReader(c.result, maxReportBytes+1))
		report = append(first[:n:n], rest...)
		reportHow = ending{canceled: ctx.Err() != nil, timedOut: clock.ctx.Err() != nil}
	})
	var protocolErr error
	goroutine(func() {
		defer c.calls.Close()
		calls := bufio.NewReaderSize(c.calls, callBufferBytes)
		var polls atomic.Int64
		polls.Store(callPolls)
		spinner := spin.Adaptive{Window: callSpin, Budget: &polls}
		rc, rcErr := c.calls.SyscallConn()
		if rcErr != nil {
			rc = nil // neither polled nor watched
		}
		watch := newCallWatch(calls, rc)
		defer watch.close()
		var pending *pendingCall // read by a call's watcher (giveup_linux.go)
		for {
			var frame []byte
			var fault string
			var err error
			if pending != nil {
				frame, fault, err = pending.frame, pending.fault, pending.err
				pending = nil
			} else {
				if calls.Buffered() == 0 && rcErr == nil {
					spinner.Wait(rc, runtime.Gosched)
				}
				frame, fault, err = readCall(calls)
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
					protocolErr = err
					c.kill()
				}
				return
			}
			if fault == faultGiveUp {
				continue // its call was answered already
			}
			spinner.Arrived(time.Now())
			var envelope []byte
			envelope, pending = watch.answer(callsCtx, func(ctx context.Context) []byte {
				return respond(ctx, b.dispatcher, frame, fault)
			})
			if writeAnswer(c.calls, envelope) != nil {
				return
			}
			spinner.Answered(time.Now())
		}
	})
	go func() {
		select {
		case <-clock.ctx.Done():
			c.kill()
		case <-c.done:
		}
	}()
	// The run ends when the child is reaped, or before: once its report
	// and every stream it holds have ended (a child that ran its guest
	// closes its output and its calls, then writes its report and closes
	// that: childMain), the report is complete and nothing more of the
	// run can come from it; its exit (the kernel unmapping the runtime and
	// the guest's memory, 8.7-13 ms of a pooled run of `pass` on the 2-CPU
	// VM) then goes on beside the result, and the caller's teardown waits
	// for it (reapedChild).
	streamsEnded := make(chan struct{})
	go func() { wg.Wait(); close(streamsEnded) }()
	var how ending
	var early *childEnd
	select {
	case <-c.done:
		how = ending{canceled: ctx.Err() != nil, timedOut: clock.ctx.Err() != nil}
		<-streamsEnded
	case <-streamsEnded:
		how = ending{canceled: ctx.Err() != nil, timedOut: clock.ctx.Err() != nil}
		early = c.endEarly()
		if early == nil { // reaped meanwhile
			<-c.done
		} else {
			// The run's teardown waits for the reap: the child's scratch
			// directories are unmounted once nothing holds them.
			next := *teardown
			*teardown = func() { <-c.done; next() }
		}
	}
	ended := time.Now()
	if startedAt.IsZero() {
		out.Timings.Start = ended.Sub(spawned)
	} else {
		out.Timings.Start, out.Timings.Run = startedAt.Sub(spawned), ended.Sub(startedAt)
	}
	if early == nil && c.waitErr != nil {
		return guestRun{}, ending{}, fmt.Errorf("child: %w", c.waitErr)
	}

	rep, err := parseReport(report, j.MemoryBytes)
	if err == nil && protocolErr != nil {
		err = protocolErr
	}
	if err == nil && (c.wasKilled() || early != nil && early.killed) {
		// A report, then a child still running until the parent's timer,
		// context or refusal of its calls killed it: the kill is the
		// parent's evidence, the report only the child's word.
		err = badReport("killed after its report")
	}
	if err == nil && rep.Setup != "" && !startedAt.IsZero() {
		// Its guest had started: what it says now is the guest's word.
		err = badReport("a setup failure after the guest started")
	}
	if err != nil {
		if c.guardFault() {
			return guestRun{end: guestEnd{kind: endSignaled, signal: int32(syscall.SIGSEGV)}}, how, nil
		}
		// The guest's own failure, as a death by signal is natively (the
		// contexts still decide first: a killed child has no report).
		return guestRun{end: guestEnd{kind: endLost}}, how, nil
	}
	if rep.Setup != "" {
		return guestRun{setupErr: errors.New("child: " + rep.Setup)}, how, nil
	}
	// Never more than the whole child's, which the kernel counted.
	kernelNs := early.cpuNs()
	if early == nil {
		usage := c.state.SysUsage().(*syscall.Rusage)
		kernelNs = usage.Utime.Nano() + usage.Stime.Nano()
	}
	res := guestRun{
		end:        guestEnd{kind: rep.Ending, exitCode: rep.ExitCode, signal: rep.Signal},
		peakMemory: rep.PeakMemory,
		cpuNs:      min(rep.CPUTimeNs, kernelNs),
	}
	reportHow.memoryRefused = rep.MemoryRefused
	return res, reportHow, nil
}

// spawnChild starts a child and writes its load message: the child loads,
// starts its guest with memoryBytes of memory until its job's limit
// applies, and then waits for its job. The child's keeper, a goroutine locked to
// the thread that forked it (the parent-death signal is that thread's,
// and no goroutine that exits locked, libcontainer's, may take the thread
// and the child with it), reaps it and then closes done. The result
// stream's first byte is read at once: loaded closes when the child has
// loaded or has ended without.
func (in *Interpreter) spawnChild(memoryBytes uint64) (*child, error) {
	load := in.childLoad
	load.MemoryBytes = memoryBytes
	inherited := []*os.File{in.image, in.wasmFile, in.stdlibFile}
	if in.zoneinfo != nil {
		fd, err := unix.FcntlInt(uintptr(in.zoneinfo.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("zoneinfo: %w", err)
		}
		zoneinfo := os.NewFile(uintptr(fd), "zoneinfo")
		defer zoneinfo.Close()
		inherited, load.Zoneinfo = append(inherited, zoneinfo), true
	}
	type started struct {
		c   *child
		err error
	}
	ch := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c, err := startChild(inherited)
		ch <- started{c, err}
		if err == nil {
			c.state, c.waitErr = c.wait()
			close(c.done)
		}
	}()
	s := <-ch
	if s.err != nil {
		return nil, s.err
	}
	c := s.c
	go func() {
		var first [1]byte
		n, _ := io.ReadFull(c.result, first[:])
		c.isLoaded = n == 1 && first[0] == loadedByte
		if !c.isLoaded {
			c.head = first[:n]
		}
		close(c.loaded)
	}()
	// Far below a pipe's capacity: never blocks. A child that died
	// early: EPIPE, and its death says why.
	_ = writeLoad(c.job, load)
	return c, nil
}

// child is a started child process and this process's ends of its
// descriptors.
type child struct {
	cmd                           *exec.Cmd
	job                           *os.File // write
	result, stdout, stderr, calls *os.File // read (calls: both)
	mu                            sync.Mutex
	reaped, killed                bool

	// loaded closes once the result stream's first byte is read: isLoaded
	// if it was loadedByte, else head holds what was read (a setup
	// failure's report begins there).
	loaded   chan struct{}
	isLoaded bool
	head     []byte
	// done closes once the keeper has reaped the child: state and waitErr
	// are then c.wait's.
	done    chan struct{}
	state   *os.ProcessState
	waitErr error
}

func startChild(inherited []*os.File) (*child, error) {
	var parentEnds, childEnds []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			_ = f.Close()
		}
	}
	pipe := func(childReads bool) error {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		if childReads {
			parentEnds, childEnds = append(parentEnds, w), append(childEnds, r)
		} else {
			parentEnds, childEnds = append(parentEnds, r), append(childEnds, w)
		}
		return nil
	}
	var err error
	for _, childReads := range []bool{true, false, false, false} { // job, result, stdout, stderr
		if err = pipe(childReads); err != nil {
			break
		}
	}
	if err == nil {
		var fds [2]int
		if fds, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
			parentEnds = append(parentEnds, os.NewFile(uintptr(fds[0]), "calls"))
			childEnds = append(childEnds, os.NewFile(uintptr(fds[1]), "calls"))
		}
	}
	if err != nil {
		closeAll(parentEnds)
		closeAll(childEnds)
		return nil, err
	}
	c := &child{
		loaded: make(chan struct{}), done: make(chan struct{}),
		job: parentEnds[0], result: parentEnds[1], stdout: parentEnds[2], stderr: parentEnds[3], calls: parentEnds[4],
	}
	c.cmd = &exec.Cmd{
		// The running binary itself, whatever has become of its path.
		Path:       "/proc/self/exe",
		Args:       []string{os.Args[0], childArg},
		Env:        []string{childEnv + "=" + strconv.Itoa(os.Getpid())},
		ExtraFiles: append(childEnds[:len(childEnds):len(childEnds)], inherited...),
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:    true,
			Pdeathsig:  syscall.SIGKILL,
			Cloneflags: childCloneflags(),
		},
	}
	err = c.cmd.Start()
	closeAll(childEnds)
	if err != nil {
		closeAll(parentEnds)
		return nil, err
	}
	return c, nil
}

// kill ends the child's process group, unless the child is reaped (its
// pid, and so the group's id, may then be another's).
func (c *child) kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		c.killed = true
	}
}

// childEnd is what the parent knows of a child it ended after its
// report, before the kernel had reaped it: whether the parent's timer,
// context or refusal of its calls had killed it first, and its CPU time
// so far (/proc/PID/stat, read while the child could not be reaped).
type childEnd struct {
	killed bool
	cpu    time.Duration
	cpuOK  bool
}

// cpuNs is e's CPU time in ns, or the most an int64 holds when it could
// not be read (the child's own figure then stands); for a nil e, 0.
func (e *childEnd) cpuNs() int64 {
	switch {
	case e == nil:
		return 0
	case !e.cpuOK:
		return math.MaxInt64
	}
	return e.cpu.Nanoseconds()
}

// endEarly ends a child whose report and streams have ended: it reads
// the child's CPU time and sends its group SIGKILL, both while the child
// cannot be reaped (its pid is still its own), and leaves the reaping to
// the keeper. nil if the child was reaped already.
func (c *child) endEarly() *childEnd {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return nil
	}
	e := &childEnd{killed: c.killed}
	e.cpu, e.cpuOK = processCPU(c.cmd.Process.Pid)
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	return e
}

// processCPU is the CPU time the kernel counted for process pid, all its
// threads, living and ended, rounded up to the clock tick: utime and
// stime of /proc/PID/stat are the precise total split in two, each
// truncated to USER_HZ (100 on Linux).
func processCPU(pid int) (time.Duration, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseStatCPU(data)
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/PID/stat line; the command name, field 2, may hold spaces and
// parentheses, so the fields are counted after its last ')'.
func parseStatCPU(data []byte) (time.Duration, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 13 {
		return 0, false
	}
	const tick = 10 * time.Millisecond // USER_HZ
	var total time.Duration
	for _, f := range fields[11:13] { // utime, stime
		n, err := strconv.ParseUint(f, 10, 40) // 348 years of ticks: no overflow below
		if err != nil {
			return 0, false
		}
		total += time.Duration(n+1) * tick // +1: each was truncated
	}
	return total, true
}

// guardFault reports, once the child is reaped, whether the kernel ended
// it with SIGSEGV while the parent had not killed it: its guest reached
// past its guarded memory (guard_linux_amd64.go), the ending wazero's
// bounds check gives as a trap "out of bounds memory access" in-process,
// and the kernel a native program that strays. The evidence is the
// kernel's wait status, not the child's word; a Go runtime failure in the
// child exits with status 2 instead.
func (c *child) guardFault() bool {
	<-c.done
	if c.state == nil || c.wasKilled() {
		return false
	}
	ws, ok := c.state.Sys().(syscall.WaitStatus)
	faulted := ok && ws.Signaled() && ws.Signal() == syscall.SIGSEGV
	if hook := testHookGuardFault.Load(); hook != nil && faulted {
		(*hook)()
	}
	return faulted
}

// testHookGuardFault, set by a test, runs when guardFault finds one.
var testHookGuardFault atomic.Pointer[func()]

func (c *child) wasKilled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// testHookBeforeReap, set by a test before it starts a child, runs in the
// keeper before it waits for that child: a test holds the reap back with it.
var testHookBeforeReap atomic.Pointer[func()]

// wait waits for the child to exit, marks it reaped before the kernel
// can give its pid to another process (a zombie keeps it), then reaps it.
func (c *child) wait() (*os.ProcessState, error) {
	if hook := testHookBeforeReap.Load(); hook != nil {
		(*hook)()
	}
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, c.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			c.kill() // never leave it running
			break
		}
	}
	c.mu.Lock()
	c.reaped = true
	c.mu.Unlock()
	err := c.cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil // its exit status says nothing the report does not
	}
	return c.cmd.ProcessState, err
}

// A child takes over its process here, once the packages it needs are
// initialised and before any other's init or main runs: no program needs
// a call of its own (apysup.Init and native.MaybeInit say so).
func init() {
	if isChild() {
		os.Exit(childMain())
	}
}

// isChild reports whether this process is a run's child: exactly the
// arguments [argv0, childArg], the environment variable naming its parent,
// which is still its parent, and its eight descriptors open and of their
// kinds. A program run with that argument by a person has none of the rest
// and is left alone.
func isChild() bool {
	if len(os.Args) != 2 || os.Args[1] != childArg {
		return false
	}
	parent, err := strconv.Atoi(os.Getenv(childEnv))
	if err != nil || parent != os.Getppid() {
		return false
	}
	for fd, kind := range map[int]uint32{childJobFD: syscall.S_IFIFO, childResultFD: syscall.S_IFIFO,
		childStdoutFD: syscall.S_IFIFO, childStderrFD: syscall.S_IFIFO, childCallFD: syscall.S_IFSOCK,
		childImageFD: syscall.S_IFREG, childWasmFD: syscall.S_IFREG, childStdlibFD: syscall.S_IFREG} {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != kind {
			return false
		}
	}
	return true
}

// childMain loads the Interpreter its load message describes, says so,
// then waits for its job, confines itself with the job's limits, runs the
// job's guest and reports how it ended; its exit status says only whether
// it could report.
func childMain() int {
	result := os.NewFile(childResultFD, "result")
	report := func(r childReport) int {
		data, _ := json.Marshal(r)
		if _, err := result.Write(data); err != nil {
			return 1
		}
		if result.Close() != nil {
			return 1
		}
		return 0
	}
	setupFailed := func(err error) int {
		msg := err.Error()
		return report(childReport{Setup: msg[:min(len(msg), maxSetupBytes)]})
	}
	jobPipe := os.NewFile(childJobFD, "job")
	load, err := readLoad(jobPipe)
	if err != nil {
		return setupFailed(err)
	}
	ctx := context.Background()
	image, err := mapImage(childImageFD)
	if err != nil {
		return setupFailed(fmt.Errorf("image: %w", err))
	}
	guestFiles, err := decodeImage(image)
	if err != nil {
		return setupFailed(err)
	}
	// Mapped for the child's life: the module's function bodies and data
	// segments are slices of it (digestCompiler).
	wasm, err := mapBuildFile(childWasmFD, load.Wasm)
	if err != nil {
		return setupFailed(fmt.Errorf("%s: %w", wasmFile, err))
	}
	zipped, err := mapBuildFile(childStdlibFD, load.Stdlib)
	if err != nil {
		return setupFailed(fmt.Errorf("%s: %w", stdlibFile, err))
	}
	// The zip's directory is read on the other CPU while this one decodes
	// and validates the module (1 ms of a one-shot run's path, beside 90).
	type tree struct {
		t   *stdlibTree
		err error
	}
	trees := make(chan tree, 1)
	go func() {
		t, err := newStdlibTree(bytes.NewReader(zipped), int64(len(zipped)))
		trees <- tree{t, err}
	}()
	var zoneinfo *hostDir
	if load.Zoneinfo {
		zoneinfo = &hostDir{fd: childZoneinfoFD, path: zoneinfoDir}
	}
	// Decoding the module and reading its machine code allocate most of
	// what the child will ever hold, all of it live: a collection on the
	// way would find nothing to free.
	gcPercent := debug.SetGCPercent(-1)
	// The build as far as the child knows it: where it is, and what its
	// parent checked python.wasm against.
	build := &Build{Dir: load.BuildDir, Manifest: Manifest{Files: map[string]ManifestFile{
		wasmFile: {Size: load.Wasm.Size, SHA256: load.WasmSHA256},
	}}}
	in, err := assemble(ctx, build, wasm, nil, guestFiles, zoneinfo, load.CompilationCacheDir, nil, false)
	debug.SetGCPercent(gcPercent)
	stdlib := <-trees
	if err != nil {
		return setupFailed(err)
	}
	if stdlib.err != nil {
		return setupFailed(fmt.Errorf("%s: %w", stdlibFile, stdlib.err))
	}
	stdlib.t.addFile(osReleaseName, load.OSRelease)
	stdlib.t.addHostPackageDirs()
	in.stdlib = stdlib.t
	calls := os.NewFile(childCallFD, "calls")
	call := newCallChannel(calls).call
	var once sync.Once
	started := func() {
		once.Do(func() { _, _ = result.Write([]byte{startedByte}) })
	}
	// The guest starts now, before its job: CPython's start and the
	// runner's imports, until the runner reaches for its job's files and
	// waits there (lateFS), as a native pooled runner waits on its job
	// pipe. Nothing of a job exists in this process yet.
	waiting := make(chan struct{})
	var waitOnce sync.Once
	stdout, stderr := os.NewFile(childStdoutFD, "stdout"), os.NewFile(childStderrFD, "stderr")
	g, err := in.startGuest(ctx, load.MemoryBytes, wasm32MemoryBytes, stdout, stderr,
		started, func() { waitOnce.Do(func() { close(waiting) }) }, call)
	if err != nil {
		return setupFailed(err)
	}
	ran := make(chan guestRun, 1)
	go func() { ran <- g.run(nil) }()
	var early *guestRun // the guest ended before it reached for its job
	select {
	case <-waiting:
	case res := <-ran:
		early = &res
	}
	if _, err := result.Write([]byte{loadedByte}); err != nil {
		return 1
	}
	// Loaded: now the job, whenever the parent has one (a pool's child
	// waits here), and the confinement its limits set, before the guest
	// sees any of it. A sample job is decoded first, while nothing waits
	// for this child yet: the first decoding of the type (its decoder
	// built, the code it runs faulted in) took 0.5-2.4 ms of a pooled
	// run's path.
	_, _ = warmJobDecoding() // a failure here is the job's own to report
	data, err := io.ReadAll(io.LimitReader(jobPipe, maxJobBytes))
	if err != nil {
		return setupFailed(err)
	}
	var j guestJob
	if err := json.Unmarshal(data, &j); err != nil {
		return setupFailed(fmt.Errorf("job: %w", err))
	}
	if err := confineChild(j); err != nil {
		return setupFailed(fmt.Errorf("confine: %w", err))
	}
	res := early
	if res == nil {
		if err := g.bind(j); err != nil {
			return setupFailed(err) // the process ends, its waiting guest with it
		}
		r := <-ran
		res = &r
	}
	if res.setupErr != nil {
		return setupFailed(res.setupErr)
	}
	// The guest has ended: its output and its calls end here, before the
	// report, so that the parent has everything once the report has
	// ended and need not wait for this process's exit (runChild).
	for _, f := range []*os.File{stdout, stderr, calls} {
		_ = f.Close()
	}
	return report(childReport{
		Ending: res.end.kind, ExitCode: res.end.exitCode, Signal: res.end.signal, MemoryRefused: res.memoryRefused,
		PeakMemory: res.peakMemory, CPUTimeNs: res.cpuNs,
	})
}

// sampleJob is a guestJob with every field set, for warmJobDecoding.
var sampleJob = guestJob{Script: []byte("pass\n"), ScriptName: "main.py", Prelude: []byte("pass\n"),
	Argv: []byte("main.py\x00"), Stream: true, Workspace: "/w", OutDir: "/o", TmpDir: "/t", HostCalls: true,
	MemoryBytes: 1, OpenFiles: 1, FileSizeBytes: 1, WorkspaceBytes: 1, WorkspaceFiles: 1, TmpBytes: 1, TmpFiles: 1, CPUSeconds: 1}

// warmJobDecoding decodes sampleJob as a job is decoded and returns what
// it decoded (TestWarmJobDecoding checks that every field came through).
func warmJobDecoding() (guestJob, error) {
	var j guestJob
	data, err := json.Marshal(sampleJob)
	if err == nil {
		err = json.Unmarshal(data, &j)
	}
	return j, err
}

// discard waits until a child that ran no job is reaped and closes this
// process's ends of its descriptors.
func (c *child) discard() {
	<-c.done
	for _, f := range []*os.File{c.job, c.result, c.stdout, c.stderr, c.calls} {
		_ = f.Close()
	}
}
