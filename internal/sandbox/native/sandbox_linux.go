package native

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/native/containerinit"
)

// guestEnv is the whole environment of a guest (the wazero backend uses the same).
var guestEnv = []string{
	"PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1", "PYTHONUTF8=1",
	"PATH=/usr/bin:/bin", "HOME=/workspace", "LANG=C.UTF-8",
}

// Sandbox is one run's confinement. Its phases are, in order:
//
//	Prepare  limits known: host checked, host ids and run directory taken
//	Start    the container built and confined (namespaces, cgroups, mounts,
//	         pivot_root, seccomp) and the interpreter started in it: the
//	         runner waits, having imported nothing of a job, on a pipe
//	         for its job (WaitReady tells when it got there)
//	Assign   the job: script, prelude and argv copied in, the caller's run
//	         directory and workspace mounted into the started container,
//	         then the job handed over on the pipe; the timeout clock starts
//	Wait     the guest ends (exit, timeout, limit, ctx) and is measured
//	Release  the caller's directories are given back (the guest is dead,
//	         the run's host mounts detached, RunDir and the workspace
//	         restored): after it the caller may remove them
//	Destroy  everything taken is given back; safe at any point and twice;
//	         it adds its duration to the Outcome that Wait returned unless
//	         Release came first (then Destroy may run on another goroutine,
//	         off the result's path: Release reported what the run waited for)
//
// Nothing before Assign depends on the job, so a Pool keeps sandboxes
// started ahead of their jobs, interpreter included. The argv of a started
// container is fixed: the runner reads the script's argv from the job pipe
// (--job-fd; only the host holds its write end, and the runner closes it
// before the script runs), and the job's directories reach the container
// through mount propagation (see mountJob). A Sandbox belongs to one
// goroutine at a time.
type Sandbox struct {
	b      *Backend
	id     string
	limits sandbox.Limits
	ids    IDPair
	dir    string // per-run host dir: job/, out/, mnt/ and stage/
	jobDir string
	outDir string
	args   []string // the container's argv, fixed at Start

	job            sandbox.Job
	runDirMode     os.FileMode
	madeMounts     []string // mount points created in the caller's RunDir
	hostMounts     []string // host mounts made for the run, in order
	wsOwner        [2]int   // workspace uid/gid before the run
	wsChowned      bool
	container      *libcontainer.Container
	process        *libcontainer.Process
	cgroupPaths    map[string]string
	output         *sandbox.Capture // both streams, kept and handed to the job's Output
	stdout, stderr *capture
	jobW           *os.File      // the host's end of the job pipe (runner: --job-fd)
	readyR         *os.File      // the host's end of the ready pipe (runner: --ready-fd)
	handedOver     chan struct{} // closed when the job write ended
	started        time.Time     // when the guest was released (the timeout clock)
	timings        sandbox.Timings
	ended          *endWatch       // the runner's report of its end, from Assign to Wait's end
	pending        chan waitResult // the init's reaping, when Wait took the runner's report for it
	waited         bool            // the init is being or was reaped (Wait, or Destroy of a started one)
	killed         bool            // the init was sent SIGKILL: it dies, and every process of its pid namespace
	reaped         bool            // the init was reaped: every process of its pid namespace is gone
	released       bool
	onRelease      func() // called once, when Release or Destroy begins (Pool.Take)
	destroyed      bool
	outcome        *sandbox.Outcome // what Wait returned; Destroy adds its timing
}

// Host directories of a sandbox below Sandbox.dir.
const (
	mntRun   = "mnt/run"   // shared; bound at /run/apysup in the container
	mntWS    = "mnt/ws"    // shared; bound at /workspace in the container
	stageRun = "stage/run" // the run directory, assembled before it is propagated
	stageWS  = "stage/ws"  // the workspace, likewise
)

// Prepare checks the host (cached), validates limits and takes a host
// identity and a run directory. It starts the kernel's cgroup grace period
// in the background (see cgroupWarmer), which the move of the container's
// init into its cgroups, a few milliseconds into Start, then waits less for.
func (b *Backend) Prepare(ctx context.Context, limits sandbox.Limits) (*Sandbox, error) {
	t0 := time.Now()
	if f := b.quickReport().FirstFailure(); f != nil {
		return nil, refused(f.Status, "%s: %s (fix: %s)", f.Name, f.Detail, f.Fix)
	}
	limits, err := withDefaults(limits)
	if err != nil {
		return nil, err
	}
	b.warmer.kick()
	ids, err := b.uids.Acquire()
	if err != nil {
		return nil, refused(CodeUIDsExhausted, "%v", err)
	}
	s := &Sandbox{b: b, limits: limits, ids: ids,
		id: fmt.Sprintf("apysup-%d-%d", os.Getpid(), sandboxSeq.Add(1))}
	s.dir = filepath.Join(b.runsDir, s.id)
	s.jobDir = filepath.Join(s.dir, "job")
	s.outDir = filepath.Join(s.dir, "out")
	s.args = runnerArgv()
	if err := s.makeDirs(); err != nil {
		s.Destroy()
		return nil, setupFailed(err)
	}
	s.timings.Prepare = time.Since(t0)
	return s, nil
}

func (s *Sandbox) makeDirs() error {
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{
		{s.dir, 0o711}, {s.jobDir, 0o755}, {s.outDir, 0o700},
		{filepath.Join(s.dir, "mnt"), 0o711}, {filepath.Join(s.dir, mntRun), 0o755}, {filepath.Join(s.dir, mntWS), 0o755},
		{filepath.Join(s.dir, "stage"), 0o700}, {filepath.Join(s.dir, stageRun), 0o700}, {filepath.Join(s.dir, stageWS), 0o700},
	} {
		if err := os.Mkdir(d.path, d.mode); err != nil {
			return err
		}
	}
	// The guest writes here and the host reads it back after the run, so it
	// lives in the host's mount namespace: a tmpfs of its own keeps a guest
	// from filling the host's disk through it.
	data := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700,uid=%d,gid=%d", sandbox.OutDirBytes, sandbox.OutDirFiles, s.ids.Guest, s.ids.Guest)
	if err := s.mount("tmpfs", s.outDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, data); err != nil {
		return fmt.Errorf("out dir: %w", err)
	}
	// The mount points through which Assign reaches the started container:
	// a mount of their own, shared, so that what Assign mounts on them
	// propagates to the container's copies (slaves there, as the kernel
	// makes every shared mount copied into a less privileged user
	// namespace: nothing the guest could mount would propagate back).
	mnt := filepath.Join(s.dir, "mnt")
	if err := bindSelf(mnt, unix.MS_SHARED); err != nil {
		return fmt.Errorf("mount points: %w", err)
	}
	s.hostMounts = append(s.hostMounts, mnt)
	return nil
}

// mount mounts and remembers the mount for Destroy.
func (s *Sandbox) mount(source, target, fstype string, flags uintptr, data string) error {
	if err := unix.Mount(source, target, fstype, flags, data); err != nil {
		return err
	}
	s.hostMounts = append(s.hostMounts, target)
	return nil
}

// withDefaults applies sandbox.Limits.WithDefaults; a refusal is an
// *Error with invalid_limits.
func withDefaults(l sandbox.Limits) (sandbox.Limits, error) {
	l, err := l.WithDefaults()
	if err != nil {
		return l, &Error{Status: sandbox.StatusRefused, Code: CodeInvalidLimits, Err: err}
	}
	return l, nil
}

// The runner's descriptors in the container: the job pipe's read end and
// the ready pipe's write end (Process.ExtraFiles, in this order).
const (
	jobFD   = 3
	readyFD = 4
)

// runnerArgv is the container's argv: the binary's own small init
// (containerinit.GuestInitArgv) as pid 1, running sandbox.RunnerArgv with
// the script's argv read from the job pipe instead of the job directory's
// argv file.
func runnerArgv() []string {
	argv := sandbox.RunnerArgv()
	if i := slices.Index(argv, "--argv"); i >= 0 {
		argv = slices.Delete(argv, i, i+2)
	}
	argv = append(argv, "--job-fd", strconv.Itoa(jobFD), "--ready-fd", strconv.Itoa(readyFD))
	return containerinit.GuestInitArgv(sandbox.GuestOutDir+"/"+sandbox.OutcomeFile, argv)
}

// guestPipe is a pipe for one of the guest's output streams, owned by
// the guest's host id (owner) as a program's own stdout pipe is its
// user's: /dev/stdout and /dev/stderr (links to /proc/self/fd/1 and 2)
// then open in the guest as on a host. Left the supervisor's, mode 0600,
// they refused the guest with EACCES.
func guestPipe(owner uint32) (r, w *os.File, err error) {
	if r, w, err = os.Pipe(); err != nil {
		return nil, nil, err
	}
	if err := w.Chown(int(owner), int(owner)); err != nil {
		r.Close()
		w.Close()
		return nil, nil, fmt.Errorf("own the guest's pipe: %w", err)
	}
	return r, w, nil
}

// Start builds the container and starts its init, which sets up the whole
// confinement and execs the runner, which then waits for the job.
func (s *Sandbox) Start() error {
	if s.destroyed || s.container != nil {
		return setupFailed(errors.New("Start after Destroy or twice"))
	}
	t0 := time.Now()
	defer func() { s.timings.Start += time.Since(t0) }()
	cfg := containerConfig(s.b.root, mountSources{
		guestFiles: s.b.guestDir, runDir: filepath.Join(s.dir, mntRun), workspace: filepath.Join(s.dir, mntWS),
	}, s.ids, s.b.cgroupPath(s.id), s.limits, s.b.seccomp)
	c, err := libcontainer.Create(s.b.containersDir, s.id, cfg)
	if err != nil {
		return setupFailed(fmt.Errorf("create container: %w", err))
	}
	s.container = c
	noNewPrivs := true
	s.process = &libcontainer.Process{
		// The cwd is left at the root: /workspace is mounted over at Assign,
		// and the runner changes into it then (--workdir).
		Args: s.args, Env: guestEnv, UID: GuestUID, GID: GuestGID, Cwd: "/",
		NoNewPrivileges: &noNewPrivs, Init: true,
	}
	outR, outW, err := guestPipe(s.ids.Guest)
	if err != nil {
		return setupFailed(err)
	}
	errR, errW, err := guestPipe(s.ids.Guest)
	if err != nil {
		outR.Close()
		outW.Close()
		return setupFailed(err)
	}
	s.process.Stdout, s.process.Stderr = outW, errW
	s.output = sandbox.NewCapture(s.limits.OutputBytes)
	s.stdout = startCapture(outR, s.output, sandbox.Stdout)
	s.stderr = startCapture(errR, s.output, sandbox.Stderr)
	jobR, readyW, err := s.jobPipes()
	if err != nil {
		outW.Close()
		errW.Close()
		return setupFailed(err)
	}
	s.process.ExtraFiles = []*os.File{jobR, readyW}
	err = startContainer(s.container, s.process)
	outW.Close()
	errW.Close()
	jobR.Close()
	readyW.Close()
	if err != nil {
		return s.b.diagnose(setupFailed(fmt.Errorf("start container: %w", err)))
	}
	// The init execs the runner now; it starts the interpreter and waits
	// for its job.
	if err := s.container.Exec(); err != nil {
		return setupFailed(fmt.Errorf("start the runner: %w", err))
	}
	if st, err := s.container.State(); err == nil {
		s.cgroupPaths = st.CgroupPaths
	}
	return nil
}

// jobPipes makes the job and ready pipes and keeps the host's ends; it
// returns the runner's ends.
func (s *Sandbox) jobPipes() (jobR, readyW *os.File, err error) {
	jobR, s.jobW, err = os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	s.readyR, readyW, err = os.Pipe()
	if err != nil {
		jobR.Close()
		return nil, nil, err
	}
	return jobR, readyW, nil
}

// waitsForJob says whether the runner of a started sandbox still waits for
// its job: the job pipe still has its reader. Only the runner holds the
// pipe's read end (pid 1 keeps no descriptor after its fork), so once the
// runner is dead, or pid 1 and with it the whole pid namespace, the pipe
// has no reader and polls as an error. One poll(2), where the container's
// Status read pid 1's /proc entry and the freezer's state on every pooled
// run's path.
func (s *Sandbox) waitsForJob() bool {
	if s.jobW == nil {
		return false
	}
	rc, err := s.jobW.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	_ = rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, 0)
		alive = err == nil && (n == 0 || fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) == 0)
	})
	return alive
}

// WaitReady waits until the runner of a started sandbox waits for its job,
// at most d. It fails when the runner died or did not get there in time.
func (s *Sandbox) WaitReady(d time.Duration) error {
	if s.readyR == nil {
		return setupFailed(errors.New("WaitReady before Start or twice"))
	}
	defer func() { s.readyR.Close(); s.readyR = nil }()
	if err := s.readyR.SetReadDeadline(time.Now().Add(d)); err != nil {
		return setupFailed(err)
	}
	var b [1]byte
	if n, err := s.readyR.Read(b[:]); n != 1 || b[0] != 'R' {
		return setupFailed(fmt.Errorf("the runner did not get ready: %v", err))
	}
	return nil
}

// Assign copies the job in, mounts its directories into the started
// container and hands the job over to the waiting runner. The timeout
// clock starts here.
func (s *Sandbox) Assign(job sandbox.Job) error {
	if s.container == nil || s.job.ScriptPath != "" || s.destroyed {
		return setupFailed(errors.New("Assign before Start, after Destroy or twice"))
	}
	t0 := time.Now()
	if job.ScriptPath == "" || job.WorkspaceDir == "" || job.RunDir == "" {
		return refused(CodeInvalidJob, "ScriptPath, WorkspaceDir and RunDir are required")
	}
	script, err := job.ScriptName()
	if err != nil {
		return refused(CodeInvalidJob, "%v", err)
	}
	for _, d := range []string{job.WorkspaceDir, job.RunDir} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return refused(CodeInvalidJob, "%s is not a directory", d)
		}
	}
	s.job = job
	source, err := job.ReadScript()
	if err != nil {
		return refused(CodeInvalidJob, "script: %v", err)
	}
	if err := os.WriteFile(filepath.Join(s.jobDir, script), source, 0o444); err != nil {
		return setupFailed(err)
	}
	argv, err := job.ArgvFileData()
	if err != nil {
		return refused(CodeInvalidJob, "args: %v", err)
	}
	if err := os.WriteFile(filepath.Join(s.jobDir, sandbox.ArgvFile), argv, 0o444); err != nil {
		return setupFailed(err)
	}
	if err := os.WriteFile(filepath.Join(s.jobDir, sandbox.PreludeFile), job.Prelude, 0o444); err != nil {
		return setupFailed(err)
	}
	if job.Output != nil {
		if err := os.WriteFile(filepath.Join(s.jobDir, sandbox.StreamFile), nil, 0o444); err != nil {
			return setupFailed(err)
		}
	}
	if err := s.openRunDir(); err != nil {
		return setupFailed(err)
	}
	if err := s.lendWorkspace(); err != nil {
		return setupFailed(err)
	}
	if err := s.mountJob(); err != nil {
		return setupFailed(fmt.Errorf("mount the job: %w", err))
	}
	// Without a watch (the host refuses an inotify instance) Wait learns
	// the end from the kernel alone.
	s.ended, _ = watchEnd(s.outDir)
	s.timings.Prepare += time.Since(t0)
	// The runner writes nothing before it has its job; what the container's
	// init may have written is kept and handed over first.
	s.output.Deliver(job.Output)
	s.started = time.Now()
	// The write never blocks for long: the runner reads the pipe to its
	// end (a job larger than the pipe's buffer goes in while it does).
	// If the runner is gone, Wait reports its ending and the write fails
	// with EPIPE, which says nothing more.
	s.handedOver = make(chan struct{})
	go func(w *os.File) {
		defer close(s.handedOver)
		_, _ = w.Write(argv)
		w.Close()
	}(s.jobW)
	s.jobW = nil
	return nil
}

// mountJob makes the run directory (the caller's RunDir, read-only, with
// the job directory bound read-only and the out directory read-write in
// it) and the workspace appear in the started container. Each is first
// assembled on a private staging mount, where its flags are set, then
// bound onto the shared mount point, from which the kernel copies it, with
// those flags, onto the container's /run/apysup and /workspace. The
// staging mounts stay until Release (detaching a mount waits for an RCU
// grace period, up to 1.4 ms here: off the run's path); the guest never
// sees them. The copies are locked together in the container's user
// namespace: the guest cannot unmount or remount them.
func (s *Sandbox) mountJob() (err error) {
	const ro = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC
	run, ws := filepath.Join(s.dir, stageRun), filepath.Join(s.dir, stageWS)
	defer func() {
		if err == nil {
			s.hostMounts = append(s.hostMounts, run, ws) // for Release
			return
		}
		// Detaching a staging mount detaches what was mounted on it too.
		for _, p := range []string{run, ws} {
			if uerr := unix.Unmount(p, unix.MNT_DETACH); uerr != nil && uerr != unix.EINVAL {
				err = errors.Join(err, fmt.Errorf("staging mount %s: %w", p, uerr))
			}
		}
	}()
	for _, m := range []struct {
		src, dst string
		attr     uint64
	}{
		{s.job.RunDir, run, ro},
		{s.jobDir, filepath.Join(run, "job"), ro},
		{s.outDir, filepath.Join(run, "out"), unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC},
		{s.job.WorkspaceDir, ws, unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV},
	} {
		if err := unix.Mount(m.src, m.dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", m.src, err)
		}
		// Private before anything is mounted on it: a bind of a shared
		// source would otherwise carry the next mounts back to the source.
		attr := &unix.MountAttr{Attr_set: m.attr, Propagation: unix.MS_PRIVATE}
		if err := unix.MountSetattr(-1, m.dst, unix.AT_RECURSIVE, attr); err != nil {
			return fmt.Errorf("set attributes of %s: %w", m.dst, err)
		}
	}
	if err := s.mount(run, filepath.Join(s.dir, mntRun), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	return s.mount(ws, filepath.Join(s.dir, mntWS), "", unix.MS_BIND|unix.MS_REC, "")
}

// openRunDir makes the caller's RunDir traversable by the guest and creates
// the job and out mount points in it (removed again by Destroy).
func (s *Sandbox) openRunDir() error {
	fi, err := os.Stat(s.job.RunDir)
	if err != nil {
		return err
	}
	s.runDirMode = fi.Mode().Perm()
	if s.runDirMode&0o005 != 0o005 {
		if err := os.Chmod(s.job.RunDir, s.runDirMode|0o005); err != nil {
			return err
		}
	}
	for _, name := range []string{"job", "out"} {
		p := filepath.Join(s.job.RunDir, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			return fmt.Errorf("mount point in RunDir: %w", err)
		}
		s.madeMounts = append(s.madeMounts, p)
	}
	return nil
}

// lendWorkspace hands the workspace tree to the guest's host uid.
func (s *Sandbox) lendWorkspace() error {
	fi, err := os.Lstat(s.job.WorkspaceDir)
	if err != nil {
		return err
	}
	st := fi.Sys().(*syscall.Stat_t)
	s.wsOwner = [2]int{int(st.Uid), int(st.Gid)}
	s.wsChowned = true
	return chownTree(s.job.WorkspaceDir, int(s.ids.Guest), int(s.ids.Guest))
}

// chownTree changes the owner of root and every entry below it without
// following symlinks, at any depth: a guest can build a tree deeper than
// PATH_MAX, which no path reaches. It holds one directory descriptor at a
// time (openat down, ".." up; nothing moves the tree while no guest runs),
// and a failure names the entry and its depth, never a path of unbounded
// length. The kernel clears set-user-ID and set-group-ID bits on each chown.
func chownTree(root string, uid, gid int) error {
	if err := os.Lchown(root, uid, gid); err != nil {
		return err
	}
	const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Open(root, dirFlags, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer func() { unix.Close(fd) }()
	names, err := dirNames(fd)
	if err != nil {
		return err
	}
	pending := [][]string{names} // per open level, the entries left to visit
	for len(pending) > 0 {
		level := len(pending) - 1
		if len(pending[level]) == 0 {
			pending = pending[:level]
			if level > 0 {
				if fd, err = reopen(fd, "..", dirFlags); err != nil {
					return fmt.Errorf("chown at depth %d: ..: %w", level, err)
				}
			}
			continue
		}
		name := pending[level][0]
		pending[level] = pending[level][1:]
		if err := unix.Fchownat(fd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("chown at depth %d: %s: %w", level+1, name, err)
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("chown at depth %d: %s: %w", level+1, name, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		if fd, err = reopen(fd, name, dirFlags); err != nil {
			return fmt.Errorf("chown at depth %d: %s: %w", level+1, name, err)
		}
		if names, err = dirNames(fd); err != nil {
			return fmt.Errorf("chown at depth %d: %s: %w", level+1, name, err)
		}
		pending = append(pending, names)
	}
	return nil
}

// reopen opens name relative to the directory fd and closes fd; on failure
// fd stays open (the caller closes it).
func reopen(fd int, name string, flags int) (int, error) {
	next, err := unix.Openat(fd, name, flags, 0)
	if err != nil {
		return fd, err
	}
	unix.Close(fd)
	return next, nil
}

// dirNames lists the directory fd (which stays open) without "." and "..".
func dirNames(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	return f.Readdirnames(-1)
}

type waitResult struct {
	ps  *os.ProcessState
	err error
}

// Wait waits for the guest to end, kills the whole tree at the timeout or
// when ctx ends, and maps the ending to a status.
func (s *Sandbox) Wait(ctx context.Context) (*sandbox.Outcome, error) {
	if s.started.IsZero() || s.waited {
		err := setupFailed(errors.New("Wait before Assign or twice"))
		return failed(err), err
	}
	done := make(chan waitResult, 1)
	s.waited = true
	go func() {
		ps, err := s.process.Wait()
		done <- waitResult{ps, err}
	}()
	var reported <-chan int
	if s.ended != nil {
		reported = s.ended.code
	}
	timer := time.NewTimer(s.limits.Timeout - time.Since(s.started))
	defer timer.Stop()
	var r waitResult
	timedOut, canceled, byReport := false, false, false
	exitCode := -1
	select {
	case r = <-done:
	case exitCode = <-reported:
		byReport = true
	case <-timer.C:
		timedOut = true
		s.kill()
		r = <-done
	case <-ctx.Done():
		canceled = true
		s.kill()
		r = <-done
	}
	s.timings.Run = time.Since(s.started)
	// The watch is closed by Release, off the result's path: closing an
	// inotify instance waits for the kernel to free its marks (an SRCU
	// grace period, 5-20 ms here), which was most of a pooled run's time.
	out := &sandbox.Outcome{ExitCode: -1}
	var sig syscall.Signal // the one that ended pid 1
	if byReport {
		// The runner reported its exit with its standard descriptors
		// closed (endWatch): pid 1 is killed now, and reaped in the
		// teardown (reap), off the result's path.
		s.pending = done
		s.kill()
		out.ExitCode = exitCode
	} else {
		s.reaped = r.ps != nil
		if r.ps == nil {
			return failed(setupFailed(r.err)), setupFailed(fmt.Errorf("wait: %w", r.err))
		}
		switch ws := r.ps.Sys().(syscall.WaitStatus); {
		case ws.Exited():
			out.ExitCode = ws.ExitStatus()
		case ws.Signaled():
			sig = ws.Signal()
			out.ExitCode = 128 + int(sig)
		}
	}
	signaled := sig != 0
	// The OOM counter matters only to a non-zero ending (below): a run
	// that exited 0 is not read for it (one cgroup file less on the
	// result's path, 0.2-0.6 ms on cgroup v1 here).
	oom := out.ExitCode != 0 && s.oomKilled(sig == syscall.SIGKILL && !timedOut && !canceled)
	out.Usage = s.usage()
	var err error
	// The status comes from host evidence only (docs/security.md): the
	// host's own decisions (cancel, timer), the cgroup's OOM counter and
	// CPU time. Everything the guest controls (pid 1's exit status or
	// signal: a guest can write /proc/1/mem; the runner's outcome file
	// and its report of its end) is
	// evidence about the guest, which makes a run ok or error, never
	// timeout, memory_limit or killed.
	switch {
	case canceled:
		// The host ended the run: the guest has no exit status of its own
		// (-1, as under wazero).
		out.Status, out.ErrorCode, out.ExitCode = sandbox.StatusKilled, CodeCanceled, -1
		err = fmt.Errorf("native: run canceled: %w", ctx.Err())
	case timedOut:
		out.Status, out.ExitCode = sandbox.StatusTimeout, -1
	case oom:
		out.Status = sandbox.StatusMemoryLimit
	case signaled && s.cpuBackstopReached(sig, out.Usage):
		out.Status, out.ExitCode = sandbox.StatusTimeout, -1
	case signaled:
		out.Status, out.ErrorCode = sandbox.StatusError, sandbox.KilledBySignalCode(sig)
	case out.ExitCode == 0:
		out.Status = sandbox.StatusOK
	default:
		out.Status = sandbox.StatusError
	}
	// Every process of the run is gone once pid 1 of its namespace is; the
	// pipes then reach their end (after a report, as soon as every other
	// process that holds them is: the runner closed its ends).
	s.kill()
	s.endOutput()
	out.Stdout, out.Stderr, out.StdoutTruncated, out.StderrTruncated = s.output.Kept()
	var tooLarge bool
	out.GuestOutcome, tooLarge = sandbox.ReadOutcomeFile(filepath.Join(s.outDir, sandbox.OutcomeFile))
	if tooLarge && out.ErrorCode == "" {
		out.ErrorCode = CodeOutcomeTooLarge // as the wazero backend says it
	}
	// The runner reports the signal that ended the script; its word alone
	// names the signal of an error, and only host-measured CPU time makes
	// it a timeout.
	switch sig := signalledScript(out); {
	case sig == 0:
	case s.cpuBackstopReached(sig, out.Usage):
		out.Status, out.ExitCode = sandbox.StatusTimeout, -1
	default:
		out.ErrorCode = sandbox.KilledBySignalCode(sig)
	}
	out.Timings = s.timings
	s.outcome = out
	return out, err
}

// endOutput waits for both pipes to reach their end and for the job's
// Output to have received the rest. The end is EOF, which comes as soon as
// every process of the run is gone; when it has not come within
// outputGrace, the guest is killed and reaped (every process of its pid
// namespace is then gone) and each pipe ends with what it holds. A guest
// can hold EOF off without a process: a copy of a pipe's write end sent
// with SCM_RIGHTS into a Unix socket no one reads (the channel's listen
// backlog, or a loop of its own sockets that only the kernel's garbage
// collector frees) lives as long as the socket, and a run's result, its
// sandbox's teardown and a Ctrl-C waited for it for minutes, or for ever.
func (s *Sandbox) endOutput() {
	if s.stdout == nil {
		return
	}
	grace := time.NewTimer(outputGrace)
	defer grace.Stop()
	for _, c := range []*capture{s.stdout, s.stderr} {
		select {
		case <-c.ended():
		case <-grace.C:
			s.reap()
			s.stdout.drain()
			s.stderr.drain()
		}
	}
	s.stdout.wait()
	s.stderr.wait()
	s.output.Close()
}

// outputGrace is how long endOutput waits for EOF before it makes sure no
// process of the guest is left and reads what the pipes hold: once pid 1
// is gone EOF comes at once, so only a guest that holds it off waits.
const outputGrace = 500 * time.Millisecond

// kill sends SIGKILL to the guest's pid 1; the kernel then kills every
// other process of its pid namespace. Once pid 1 was reaped nothing of the
// guest is left to kill (the kernel reaps every other process of a pid
// namespace before its init can be reaped), and once it was sent SIGKILL
// it dies: kill then does nothing. pid 1 is this process's child and is
// signalled through its pidfd (os.Process), never another process that
// took its pid; the container's own Signal first reads pid 1's /proc entry
// and the freezer's state (0.4-2.3 ms on the path of a run that reported
// its end; before that, 4.5 % of BenchmarkPoolThroughput's supervisor CPU).
func (s *Sandbox) kill() {
	if s.container == nil || s.reaped || s.killed {
		return
	}
	if s.process != nil && s.process.Signal(unix.SIGKILL) == nil {
		s.killed = true
		return
	}
	s.killed = s.container.Signal(unix.SIGKILL) == nil
}

// Release kills what is left of the guest and gives the caller's
// directories back: the run's host mounts are detached, the mount points
// made in RunDir removed, RunDir's mode and the workspace's owner restored.
// The caller may remove RunDir and the workspace afterwards; Destroy then
// finishes the rest (container, cgroups, host ids) and may run on another
// goroutine. Safe at any phase and idempotent; Timings.Destroy of the
// Outcome that Wait returned is the time Release took.
func (s *Sandbox) Release() error {
	if s.released || s.destroyed {
		return nil
	}
	s.released = true
	s.notifyRelease()
	t0 := time.Now()
	defer func() {
		s.timings.Destroy = time.Since(t0)
		if s.outcome != nil {
			s.outcome.Timings.Destroy = s.timings.Destroy
		}
	}()
	s.reap()
	return cleanupError(s.release())
}

func (s *Sandbox) notifyRelease() {
	if f := s.onRelease; f != nil {
		s.onRelease = nil
		f()
	}
}

// reap kills a started guest and reaps its init, a child of this process,
// if no one waited for it (its job was refused, or a pool closed). Every
// other process of its pid namespace is gone with it.
func (s *Sandbox) reap() {
	if s.container == nil {
		return
	}
	s.kill()
	if s.pending != nil { // Wait took the runner's report: pid 1 was killed then
		r := <-s.pending
		s.pending = nil
		s.reaped = r.ps != nil
		return
	}
	if s.process != nil && !s.waited {
		s.waited = true
		ps, _ := s.process.Wait()
		s.reaped = ps != nil
	}
}

// release is Release's work once the guest is dead.
func (s *Sandbox) release() []error {
	if s.handedOver != nil {
		<-s.handedOver // the runner is dead: the write has ended
	}
	for _, f := range []*os.File{s.jobW, s.readyR} {
		if f != nil {
			f.Close()
		}
	}
	s.jobW, s.readyR = nil, nil
	s.ended.close() // the job's watch, whether Wait took its report or not
	s.ended = nil
	s.endOutput()
	// Mount points in the caller's RunDir are free once the mounts are gone.
	errs := s.unmountAll()
	for _, p := range s.madeMounts {
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
		}
	}
	if s.madeMounts != nil && s.runDirMode&0o005 != 0o005 {
		if err := os.Chmod(s.job.RunDir, s.runDirMode); err != nil {
			errs = append(errs, err)
		}
	}
	s.madeMounts = nil
	if s.wsChowned {
		s.wsChowned = false
		if err := chownTree(s.job.WorkspaceDir, s.wsOwner[0], s.wsOwner[1]); err != nil {
			errs = append(errs, fmt.Errorf("give the workspace back: %w", err))
		}
	}
	return errs
}

func cleanupError(errs []error) error {
	if len(errs) > 0 {
		return &Error{Status: sandbox.StatusSetupFailed, Code: CodeCleanupFailed, Err: errors.Join(errs...)}
	}
	return nil
}

// Destroy kills what is left, removes the container and its cgroups, the
// run directory and the mount points, gives the workspace back to its
// owner and frees the host identity (Release, then the rest). It is safe
// at any phase and idempotent.
func (s *Sandbox) Destroy() error {
	if s.destroyed {
		return nil
	}
	t0 := time.Now()
	var errs []error
	wasReleased := s.released
	if !s.released {
		s.released = true
		s.notifyRelease()
		s.reap()
		errs = s.release()
	}
	s.destroyed = true
	defer func() {
		// After Release, Wait's Outcome is the caller's (and this may run
		// on another goroutine): Release timed what the run waited for.
		if !wasReleased {
			s.timings.Destroy = time.Since(t0)
			if s.outcome != nil {
				s.outcome.Timings.Destroy = s.timings.Destroy
			}
		}
	}()
	containerGone := true
	if s.container != nil {
		s.reap()
		if err := s.container.Destroy(); err != nil {
			errs = append(errs, err)
			containerGone = false
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, err)
	}
	// A run whose container could not be removed may still hold processes
	// with its host ids: those ids are never handed out again.
	if containerGone {
		s.b.uids.Release(s.ids)
	}
	return cleanupError(errs)
}

// unmountAll detaches the run's host mounts, last first.
func (s *Sandbox) unmountAll() []error {
	var errs []error
	for i := len(s.hostMounts) - 1; i >= 0; i-- {
		p := s.hostMounts[i]
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	s.hostMounts = nil
	return errs
}

// ID is the container id of the run (also its cgroup name).
func (s *Sandbox) ID() string { return s.id }

// HostIDs is the host uid/gid pair of the run.
func (s *Sandbox) HostIDs() IDPair { return s.ids }

// cpuBackstopReached reports whether a guest that died of sig was ended
// by the CPU-time backstop (RLIMIT_CPU: SIGXCPU, then SIGKILL), on the
// host's measure: the run's cgroup used at least the backstop's CPU time.
// A guest that lowered its own limit, or raised the signal itself, has not.
func (s *Sandbox) cpuBackstopReached(sig syscall.Signal, u sandbox.Usage) bool {
	backstop := time.Duration(s.limits.CPUSeconds()) * time.Second
	return (sig == unix.SIGXCPU || sig == unix.SIGKILL) && time.Duration(u.CPUTimeNs) >= backstop
}

// signalledScript reads the signal the guest init (pid 1, which exits with
// 128+N when its child the script died of signal N) reports for the
// script, when pid 1 exited and its status agrees; 0 otherwise. It is the
// guest's word.
func signalledScript(out *sandbox.Outcome) syscall.Signal {
	if out.Status != sandbox.StatusError || out.ErrorCode != "" || len(out.GuestOutcome) == 0 {
		return 0
	}
	o, err := sandbox.ParseOutcome(out.GuestOutcome)
	if err != nil || o.ResultSet || o.Signal <= 0 || o.Signal >= 65 || o.ExitCode != 128+o.Signal || out.ExitCode != o.ExitCode {
		return 0
	}
	return syscall.Signal(o.Signal)
}

// firstStart serialises container starts until one has succeeded. The
// cgroup v1 code caches which blkio weight file the host has in a
// package-level value that the first start writes unsynchronised
// (opencontainers/cgroups fs.BlkioGroup.detectWeightFilenames): two first
// starts at once race on it (the race detector caught a pool filling while
// a run started its own). Once one start has written it, it is only read.
var firstStart struct {
	mu   sync.Mutex
	done atomic.Bool
}

func startContainer(c *libcontainer.Container, p *libcontainer.Process) error {
	if firstStart.done.Load() {
		return c.Start(p)
	}
	firstStart.mu.Lock()
	defer firstStart.mu.Unlock()
	err := c.Start(p)
	if err == nil {
		firstStart.done.Store(true)
	}
	return err
}
