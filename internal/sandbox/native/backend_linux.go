package native

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/doctor"
)

// Config says how a Backend is built. Only GuestFiles is required.
type Config struct {
	// GuestFiles holds apysup_runner.py and the agent_runtime modules at its
	// root (python.GuestFiles); they are mounted read-only at /opt/apysup.
	GuestFiles fs.FS
	// StateDir is where the Backend keeps its state (a directory of its own
	// is created inside and removed by Close). Default: /run when writable
	// (root's, a tmpfs on most hosts: every run creates and removes a few
	// directories there), else os.TempDir().
	StateDir string
	// UIDs hands out the host identities of runs. Default:
	// DefaultUIDAllocator(). Two Backends in one process may share one.
	UIDs *UIDAllocator
	// CacheDir holds the skeleton root and the compiled guest files, shared
	// by every Backend on the host and kept across processes (see cache_linux.go).
	// It must belong to root and be writable by no one else. Default:
	// /var/cache/apysup-native.
	CacheDir string
	// CgroupParent is the absolute cgroup path (e.g. "/apysup") under which
	// each run's cgroup is made, in every hierarchy. Default: the
	// supervisor's own cgroup. On a cgroup v2 host that cgroup holds the
	// supervisor, and v2 lets a cgroup hand controllers to children only
	// when it holds no process (unless it is the root): set CgroupParent
	// to a cgroup the supervisor is not in.
	CgroupParent string
	// Seccomp builds the syscall filter; default: the seccomp package's
	// policy. A nil result is refused, never run without a filter.
	Seccomp func() (*configs.Seccomp, error)
}

// Backend is the native sandbox.Backend. It is safe for concurrent Runs.
type Backend struct {
	uids          *UIDAllocator
	seccomp       *configs.Seccomp
	stateDir      string
	root          *rootfs
	guestDir      string
	containersDir string
	runsDir       string

	warmer       *cgroupWarmer
	cgroupParent string

	quickOnce  sync.Once
	quick      doctor.Report // doctor.Quick, before every run
	doctorOnce sync.Once
	report     doctor.Report // doctor.Run, when a run fails to start
}

// sandboxSeq numbers the sandboxes of this process, across Backends: a
// sandbox's id (apysup-<pid>-<n>) names its container and its cgroup, which
// is the same path for every Backend of the process (under the process's
// own cgroup, or CgroupParent), so two Backends must never pick one id.
var sandboxSeq atomic.Uint64

var _ sandbox.Backend = (*Backend)(nil)

// New builds a Backend: it sweeps what dead supervisors left behind (see
// sweepStale), finds or builds the skeleton root and the guest files in
// the cache directory, and makes a state directory of its own. It does not
// check the host; Prepare does (see Doctor).
func New(cfg Config) (*Backend, error) {
	if cfg.GuestFiles == nil {
		return nil, errors.New("native: Config.GuestFiles is required")
	}
	if cfg.StateDir == "" {
		cfg.StateDir = defaultStateDir()
	}
	if cfg.UIDs == nil {
		cfg.UIDs = DefaultUIDAllocator()
	}
	if cfg.Seccomp == nil {
		cfg.Seccomp = defaultSeccomp
	}
	sc, err := cfg.Seccomp()
	if err != nil {
		return nil, fmt.Errorf("native: seccomp policy: %w", err)
	}
	if sc == nil {
		return nil, errors.New("native: the seccomp policy is empty")
	}
	if err := cfg.UIDs.checkUnused("/etc/passwd", "/etc/group"); err != nil {
		return nil, err
	}
	if err := checkGuestCanExec("/proc/self/exe"); err != nil {
		return nil, err
	}
	if cfg.CgroupParent != "" && !path.IsAbs(cfg.CgroupParent) {
		return nil, fmt.Errorf("native: CgroupParent %q is not absolute", cfg.CgroupParent)
	}
	if err := sweepStale(cfg.StateDir, cfg.CgroupParent); err != nil {
		return nil, fmt.Errorf("native: sweeping runs of dead supervisors: %w", err)
	}
	dir, err := os.MkdirTemp(cfg.StateDir, stateDirPattern())
	if err != nil {
		return nil, err
	}
	// A mount of its own that propagates nothing: the mounts of runs below
	// it stay in this mount namespace, even on hosts whose root is shared
	// (systemd's default), and the shared mount points of sandboxes (see
	// makeDirs) start peer groups of their own.
	if err := bindSelf(dir, unix.MS_PRIVATE); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("native: state dir: %w", err)
	}
	b := &Backend{uids: cfg.UIDs, seccomp: sc, stateDir: dir,
		containersDir: filepath.Join(dir, "containers"),
		runsDir:       filepath.Join(dir, "runs"),
		warmer:        newCgroupWarmer(),
		cgroupParent:  cfg.CgroupParent}
	if cfg.CacheDir == "" {
		cfg.CacheDir = defaultCacheDir()
	}
	if err := b.init(cfg.GuestFiles, cfg.CacheDir); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// bindSelf makes dir a mount of its own with the given propagation
// (MS_PRIVATE or MS_SHARED), undone again if that cannot be set.
func bindSelf(dir string, propagation uintptr) error {
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	if err := unix.Mount("", dir, "", propagation, ""); err != nil {
		_ = unix.Unmount(dir, unix.MNT_DETACH)
		return err
	}
	return nil
}

func (b *Backend) init(files fs.FS, cache string) error {
	// Container root (a host uid of the run's pair) must traverse to the
	// skeleton and the guest files; nothing here is writable by it.
	if err := os.Chmod(b.stateDir, 0o711); err != nil {
		return err
	}
	if err := openCache(cache); err != nil {
		return fmt.Errorf("native: cache dir: %w", err)
	}
	layout, err := hostLayout()
	if err != nil {
		return fmt.Errorf("native: skeleton root: %w", err)
	}
	ldCache, err := os.ReadFile("/etc/ld.so.cache")
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	rootDir, err := cachedTree(cache, "rootfs", layout.key(ldCache), func(dir string) error {
		return buildRootfs(dir, layout, ldCache)
	})
	if err != nil {
		return fmt.Errorf("native: skeleton root: %w", err)
	}
	b.root = &rootfs{dir: rootDir, binds: layout.binds}
	key, err := guestFilesKey(files)
	if err != nil {
		return fmt.Errorf("native: guest files: %w", err)
	}
	if b.guestDir, err = cachedTree(cache, "guest", key, func(dir string) error {
		return writeGuestFiles(files, dir)
	}); err != nil {
		return fmt.Errorf("native: guest files: %w", err)
	}
	if err := os.Mkdir(b.containersDir, 0o700); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", b.containersDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, containersMountData); err != nil {
		return fmt.Errorf("native: containers dir: %w", err)
	}
	if err := os.Mkdir(b.runsDir, 0o711); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", b.runsDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, runsMountData); err != nil {
		return fmt.Errorf("native: runs dir: %w", err)
	}
	return nil
}

// runsMountData is the tmpfs that holds every sandbox's directories: nine
// directories a sandbox, made by the pool's refills, and the job's files,
// written on a run's path. On a disk file system each directory costs
// what a journal does (0.45 ms a mkdir on this VM's ext4 /tmp, 39 % of the
// supervisor's CPU in BenchmarkPoolThroughput); here 4 us. Only the host
// writes here: the guest's out directory is a tmpfs of its own mounted
// below, bounded by sandbox.OutDirBytes, and the job directory is
// read-only to the guest. What the host writes is the job it holds in
// memory anyway (a script of at most sandbox.MaxScriptBytes, its argv and
// the prelude).
const runsMountData = "mode=0711"

// containersMountData is the tmpfs that holds libcontainer's state. Every
// container's init is this binary, re-executed through a read-only
// overlayfs whose two lower layers are the binary's directory and the
// container's state directory (libcontainer's exeseal, against
// CVE-2019-5736). overlayfs refuses two layers of one filesystem when one
// is an ancestor of the other ("overlapping lowerdir path" in dmesg), as
// when the binary sits in /tmp and the state directory under it, and
// libcontainer then copies the whole binary (37 MB) into a memfd for every
// container: 11 ms of the supervisor's CPU a run and 37 MB of memory for
// each live sandbox. A filesystem of its own is nobody's ancestor. Its
// content is a few kilobytes of state.json a container.
const containersMountData = "mode=0700,size=64m"

// Name implements sandbox.Backend.
func (b *Backend) Name() string { return "native" }

// Doctor returns the full host report (doctor.Run), computed once per
// Backend. Runs only consult it when a container fails to start, to turn
// the failure into the doctor's typed refusal; before each run the Backend
// relies on doctor.Quick, which starts no process.
func (b *Backend) Doctor(ctx context.Context) doctor.Report {
	// The report is cached: a canceled first caller must not poison it.
	b.doctorOnce.Do(func() { b.report = doctor.Run(context.WithoutCancel(ctx)) })
	return b.report
}

func (b *Backend) quickReport() doctor.Report {
	b.quickOnce.Do(func() { b.quick = doctor.Quick() })
	return b.quick
}

// diagnose turns a failure to start into the doctor's refusal when the
// full checks find the host lacking, and leaves it as it is otherwise.
func (b *Backend) diagnose(err error) error {
	if f := b.Doctor(context.Background()).FirstFailure(); f != nil {
		return refused(f.Status, "%s: %s (fix: %s); start failed with: %v", f.Name, f.Detail, f.Fix, err)
	}
	return err
}

// Close removes the Backend's state directory. Runs must have ended.
func (b *Backend) Close() error {
	sandbox.DetachMountsUnder(b.stateDir)
	return os.RemoveAll(b.stateDir)
}

// Run implements sandbox.Backend: Prepare, Start, Assign, Wait, Destroy.
//
// The Outcome is never nil. The error is nil for every guest ending (ok,
// error, timeout, memory_limit, killed); it is an *Error for refused and
// setup_failed (same code as Outcome.ErrorCode) and wraps ctx.Err() when
// ctx ended the run (status killed, code "canceled").
func (b *Backend) Run(ctx context.Context, job sandbox.Job, limits sandbox.Limits) (*sandbox.Outcome, error) {
	s, err := b.Prepare(ctx, limits)
	if err != nil {
		return failed(err), err
	}
	if err := s.Start(); err != nil {
		s.Destroy()
		return failed(err), err
	}
	return s.finish(ctx, job)
}

// finish assigns the job to the started sandbox, waits for the guest and
// destroys the sandbox.
func (s *Sandbox) finish(ctx context.Context, job sandbox.Job) (*sandbox.Outcome, error) {
	var out *sandbox.Outcome
	err := s.Assign(job)
	if err == nil {
		out, err = s.Wait(ctx)
	} else {
		out = failed(err)
	}
	if derr := s.Destroy(); derr != nil && err == nil {
		err = derr
	}
	out.Timings = s.timings
	return out, err
}

func failed(err error) *sandbox.Outcome {
	var e *Error
	if errors.As(err, &e) {
		return &sandbox.Outcome{Status: e.Status, ErrorCode: e.Code, ExitCode: -1}
	}
	return &sandbox.Outcome{Status: sandbox.StatusSetupFailed, ErrorCode: CodeSetupFailed, ExitCode: -1}
}

func defaultStateDir() string {
	if unix.Access("/run", unix.W_OK) == nil {
		return "/run"
	}
	return os.TempDir()
}

// checkGuestCanExec refuses a binary the guest's user could not execute:
// every sandbox's pid 1 is this binary again, exec'd as that user after
// the container's init dropped every privilege (containerinit.GuestInitArgv),
// so it must be executable by others, as go build and make build leave it
// (0755).
func checkGuestCanExec(exe string) error {
	st, err := os.Stat(exe)
	if err != nil {
		return fmt.Errorf("native: this binary: %w", err)
	}
	if st.Mode().Perm()&0o001 == 0 {
		return fmt.Errorf("native: this binary's mode %v lacks execute permission for others, which the guest's pid 1 needs (chmod o+x)", st.Mode().Perm())
	}
	return nil
}
