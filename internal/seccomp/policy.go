package seccomp

import (
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The allowlist was measured, not guessed: `strace -f` of /usr/bin/python3.11
// (Debian 12, CPython 3.11.2, glibc 2.36) running testdata/workload.py, a
// broad stdlib workload (imports, files, sqlite3, compression, threads,
// subprocess and multiprocessing of python itself, signals, select/poll/epoll,
// AF_UNIX sockets, asyncio, http.client over AF_UNIX, ctypes). Each group
// below names the measured calls plus, where noted, the other spellings of
// the same operation that glibc or CPython pick depending on arguments or
// architecture. testdata/tools.sh adds the command-line tools a guest
// script commonly runs (tar, gzip, xz, bzip2, zip, cp, sort, sqlite3, git);
// their calls are marked "measured: <tool>". Calls that CPython only offers
// as thin wrappers and neither the stdlib nor those tools use
// (memfd_create, pidfd_open, splice, inotify, timerfd, setuid and friends,
// sync, ...) are left out: a guest calling them gets PermissionError.
// Scheduling calls on the guest's own processes are allowed although the
// stdlib does not make them: scripts call os.nice to step aside, and with
// no capability and the sandbox's rlimits they can only lower a priority.
// Alternative spellings of an allowed call are allowed with it (creat,
// utime, utimes, futimesat, fork, time on x86_64; execveat, preadv2,
// pwritev2, recvmmsg, sendmmsg), since refusing one spelling of an allowed operation
// protects nothing and breaks the program that picked it.
//
// Names in `names` exist on x86_64 and arm64; `amd64` holds x86_64's legacy
// spellings (open, stat, pipe, ...) that arm64 never had.

// Namespace flags clone must not carry. CLONE_NEWTIME (0x80) shares its bit
// with clone's exit-signal byte, where no valid signal sets it, so masking it
// too costs nothing.
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP |
	unix.CLONE_NEWTIME

// SocketFamilyErrno is what socket and socketpair return for every address
// family but AF_UNIX.
const SocketFamilyErrno = unix.EAFNOSUPPORT

// allowedValue is one value an argument may take, and why.
type allowedValue struct {
	value uint64
	why   string
}

// allowValues allows call when argument index is exactly one of values, one
// rule per value. Exact 64-bit matches also refuse values whose high bits
// the kernel would truncate away (ioctl's request and prctl's option are ints).
func allowValues(call string, index uint, values []allowedValue) []rule {
	var rules []rule
	for _, v := range values {
		rules = append(rules, rule{
			names:  []string{call},
			action: specs.ActAllow,
			args:   []specs.LinuxSeccompArg{{Index: index, Value: v.value, Op: specs.OpEqualTo}},
			why:    call + ": " + v.why,
		})
	}
	return rules
}

// ioctl request numbers from asm-generic/ioctls.h, which x86_64 and arm64
// share (x/sys/unix defines only some of them, and only for the build's
// architecture).
const (
	ioctlTCGETS     = 0x5401
	ioctlTIOCGWINSZ = 0x5413
	ioctlFIONBIO    = 0x5421
	ioctlFIONCLEX   = 0x5450
	ioctlFIOCLEX    = 0x5451
	ioctlFICLONE    = 0x40049409 // _IOW(0x94, 9, int), linux/fs.h
)

// The ioctl requests a guest may make, all measured. ioctl's request is an
// unsigned int in the kernel, but the filter compares all 64 bits, so only
// exact values pass: high bits cannot smuggle in TIOCSTI. TIOCSTI and
// TIOCLINUX (terminal input injection) are thus refused, like every other
// request.
var allowedIoctls = []allowedValue{
	{ioctlTCGETS, "isatty() on every standard stream at start-up"},
	{ioctlTIOCGWINSZ, "os.get_terminal_size, shutil"},
	{ioctlFIONBIO, "socket.setblocking / settimeout"},
	{ioctlFIOCLEX, "os.set_inheritable(fd, False); an error other than ENOTTY raises"},
	{ioctlFIONCLEX, "os.set_inheritable(fd, True), subprocess pass_fds"},
	{ioctlFICLONE, "cp's default --reflink=auto (measured: tools.sh): a copy-on-write clone between two files the caller has open; tmpfs answers EOPNOTSUPP"},
}

// The prctl options a guest may use. Each only reads state or changes the
// calling process in a way that cannot weaken confinement.
var allowedPrctls = []allowedValue{
	{unix.PR_CAPBSET_READ, "read-only; measured: libcap, loaded by NSS modules for pwd/grp lookups, probes the bounding set"},
	{unix.PR_GET_DUMPABLE, "read-only"},
	{unix.PR_GET_NAME, "read-only: the thread's name"},
	{unix.PR_SET_NAME, "renames the calling thread only"},
	{unix.PR_GET_PDEATHSIG, "read-only"},
	{unix.PR_SET_PDEATHSIG, "only asks for a signal to the caller when its parent dies"},
	{unix.PR_GET_NO_NEW_PRIVS, "read-only"},
	{unix.PR_SET_NO_NEW_PRIVS, "one-way: it can be set, never cleared"},
	{unix.PR_GET_SECCOMP, "read-only"},
	{unix.PR_SET_VMA, "names the caller's anonymous mappings (newer glibc and allocators)"},
}

// policyRules is the policy in order: allow rules by group, then the calls
// refused on purpose. Anything else gets the default action (EPERM).
func policyRules() []rule {
	rules := []rule{
		// Process lifecycle.
		allow("execve: subprocess and multiprocessing run python itself; execveat is its spelling for a descriptor (os.execve(fd, ...) is fexecve(3), which glibc makes with AT_EMPTY_PATH), under the same permission and noexec checks",
			"execve", "execveat"),
		allow("ending a thread or a process", "exit", "exit_group"),
		allow("reaping children: os.waitpid, subprocess, multiprocessing", "wait4", "waitid"),
		{
			names:  []string{"clone"},
			action: specs.ActAllow,
			args:   []specs.LinuxSeccompArg{{Index: 0, Value: cloneNamespaceFlags, ValueTwo: 0, Op: specs.OpMaskedEqual}},
			why:    "threads and fork, without any namespace flag (flags are arg 0 on x86_64 and arm64)",
		},
		errno(unix.ENOSYS, "clone3 hides its flags behind a pointer; ENOSYS makes glibc fall back to clone", "clone3"),
		allowAMD64("glibc's vfork (subprocess) and the legacy fork, neither of which takes flags; arm64 has neither and uses clone", "vfork", "fork"),
		allow("process identity and sessions: os.getpid, start_new_session, process_group",
			"getpid", "getppid", "gettid", "getpgid", "setpgid", "getsid", "setsid").
			plusAMD64("getpgrp"),
		allow("signals to processes of the guest's own pid namespace", "kill", "tgkill"),
		allow("glibc thread set-up", "set_tid_address", "set_robust_list", "rseq"),
		allowAMD64("glibc's thread-local storage set-up", "arch_prctl"),
		allow("resource limits and usage: resource, os.times; raising a hard limit still needs a capability",
			"prlimit64", "getrlimit", "setrlimit", "getrusage", "times"),
		allow("os.sched_getaffinity, os.cpu_count, lock spinning", "sched_getaffinity", "sched_yield"),
		allow("scheduling of the guest's own processes: os.nice, os.getpriority and setpriority, os.sched_* "+
			"(os.posix_spawn's setscheduler), of pids its namespace shows; without CAP_SYS_NICE and with "+
			"RLIMIT_NICE and RLIMIT_RTPRIO 0 (the sandbox sets both) a priority can only be lowered and no "+
			"real-time or deadline policy taken, and an affinity only narrowed within the cgroup's CPUs",
			"getpriority", "setpriority", "sched_getscheduler", "sched_setscheduler", "sched_getparam",
			"sched_setparam", "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval",
			"sched_setaffinity"),
		allow("os.uname, platform, glibc's qsort (sysinfo), os.umask", "uname", "sysinfo", "umask"),
		allow("user and group ids (read-only)",
			"getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid", "getresgid"),

		// Signals and timers.
		allow("signal handling: signal, faulthandler, sigwait, setitimer; restart_syscall is the kernel's own",
			"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
			"rt_sigsuspend", "sigaltstack", "setitimer", "getitimer", "restart_syscall").
			plusAMD64("alarm", "pause"),

		// Time: the vDSO answers most reads; these are its fall-backs and sleeps.
		allow("clocks and sleeping", "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday").
			plusAMD64("time"),

		// Memory.
		allow("memory management: malloc, mmap module, thread stacks",
			"brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "msync"),
		allow("locks, conditions, thread joins", "futex"),
		allow("os.eventfd: a counter descriptor private to the caller, bounded like any descriptor by RLIMIT_NOFILE",
			"eventfd2").plusAMD64("eventfd"),
		allow("os.urandom, random, secrets, hash seeds", "getrandom"),

		// File descriptors.
		allow("reading and writing descriptors; copy_file_range copies between two the caller has (measured: cp); preadv2/pwritev2 are preadv/pwritev with flags (os.preadv, os.pwritev)",
			"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
			"lseek", "sendfile", "copy_file_range"),
		allow("descriptor bookkeeping: subprocess closes with close_range",
			"close", "close_range", "dup", "dup3", "fcntl", "pipe2").
			plusAMD64("dup2", "pipe"),
		allow("durability and locking: sqlite3, fcntl.flock, os.posix_fallocate",
			"flock", "fsync", "fdatasync", "ftruncate", "fallocate"),
		allow("access hints: os.posix_fadvise (measured: tar, sort, cp, sha256sum read sequentially)", "fadvise64"),
		// ioctl: one rule per allowed request, below.

		// Paths: inspection.
		allow("opening and inspecting paths: import, os.stat, os.walk, os.access; openat2 is a stricter openat; creat is x86_64's legacy open(O_CREAT|O_WRONLY|O_TRUNC) (measured: tar -cf)",
			"openat", "openat2", "newfstatat", "fstat", "statx", "statfs", "fstatfs", "getdents64",
			"readlinkat", "faccessat", "faccessat2", "getcwd", "chdir", "fchdir").
			plusAMD64("open", "creat", "stat", "lstat", "getdents", "readlink", "access"),

		// Paths: changes, confined by the mount namespace and file permissions.
		allow("changing files: tempfile, shutil, tarfile, sqlite3 journals (chown only to ids the guest has)",
			"mkdirat", "unlinkat", "renameat", "renameat2", "linkat", "symlinkat",
			"fchmod", "fchmodat", "fchown", "fchownat", "truncate", "utimensat").
			plusAMD64("mkdir", "rmdir", "unlink", "rename", "link", "symlink", "chmod", "chown", "lchown",
				"utime", "utimes", "futimesat"),
		{
			names:  []string{"mknodat"},
			action: specs.ActAllow,
			args:   []specs.LinuxSeccompArg{{Index: 2, Value: unix.S_IFMT, ValueTwo: unix.S_IFIFO, Op: specs.OpMaskedEqual}},
			why:    "os.mkfifo: FIFOs only, never device nodes",
		},
		{
			amd64:  []string{"mknod"},
			action: specs.ActAllow,
			args:   []specs.LinuxSeccompArg{{Index: 1, Value: unix.S_IFMT, ValueTwo: unix.S_IFIFO, Op: specs.OpMaskedEqual}},
			why:    "os.mkfifo through x86_64's legacy call: FIFOs only",
		},
		allow("extended attributes: shutil.copystat, os.*xattr (trusted.* and security.* need capabilities)",
			"getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
			"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr"),

		// Waiting on descriptors.
		allow("select, poll, epoll, selectors, asyncio",
			"ppoll", "pselect6", "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2").
			plusAMD64("poll", "select", "epoll_create", "epoll_wait"),

		// Sockets: AF_UNIX only (the channel, socketpair, asyncio, multiprocessing).
		{
			names:  []string{"socket", "socketpair"},
			action: specs.ActAllow,
			args:   []specs.LinuxSeccompArg{{Index: 0, Value: unix.AF_UNIX, Op: specs.OpEqualTo}},
			why:    "AF_UNIX sockets: the capability channel, socketpair, asyncio, multiprocessing",
		},
		{
			names:  []string{"socket", "socketpair"},
			action: specs.ActErrno,
			errno:  SocketFamilyErrno,
			args:   []specs.LinuxSeccompArg{{Index: 0, Value: unix.AF_UNIX, Op: specs.OpNotEqual}},
			why:    "any other family: no network, and an error libraries already handle",
		},
		allow("using AF_UNIX sockets",
			"bind", "listen", "accept", "accept4", "connect", "getsockname", "getpeername",
			"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "setsockopt", "getsockopt"),
	}
	rules = append(rules, allowValues("ioctl", 1, allowedIoctls)...)
	rules = append(rules, allowValues("prctl", 0, allowedPrctls)...)
	// The refusals are spelled out although the default refuses them too:
	// the exported profile then says so, and runc's ENOSYS stub (which
	// covers calls numbered above the newest named one) starts above them,
	// so they fail with EPERM like any refusal.
	for _, r := range refusals {
		rules = append(rules, rule{
			names:  r.names,
			amd64:  r.amd64,
			action: specs.ActErrno,
			errno:  unix.EPERM,
			why:    "refused: " + r.reason,
		})
	}
	return rules
}

// refusals are the calls refused on purpose, by what they would let a guest do.
var refusals = []struct {
	names  []string
	amd64  []string
	reason string
}{
	{names: []string{"mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"},
		reason: "changes the mount table; the guest's file system is fixed by the sandbox"},
	{names: []string{"pivot_root", "chroot"}, reason: "changes the guest's root directory"},
	{names: []string{"unshare", "setns"},
		reason: "creates or joins namespaces, which opens kernel code meant for root"},
	{names: []string{"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"},
		reason: "inspects or takes over other processes' memory or descriptors"},
	{names: []string{"bpf"}, reason: "loads programs into the kernel"},
	{names: []string{"perf_event_open"}, reason: "kernel profiling: a large attack surface and side channels"},
	{names: []string{"keyctl", "add_key", "request_key"}, reason: "kernel keyrings are not namespaced"},
	{names: []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
		reason: "performs I/O the filter cannot inspect; a frequent source of kernel bugs"},
	{names: []string{"userfaultfd"}, reason: "stalls kernel page-fault handling, a common exploit primitive"},
	{names: []string{"open_by_handle_at", "name_to_handle_at"},
		reason: "opens files by handle, bypassing the guest's root (the 'shocker' escape)"},
	{names: []string{"kexec_load", "kexec_file_load"}, reason: "replaces the running kernel"},
	{names: []string{"init_module", "finit_module", "delete_module"}, reason: "loads or unloads kernel modules"},
	{names: []string{"reboot"}, reason: "restarts or halts the machine"},
	{names: []string{"swapon", "swapoff"}, reason: "changes the host's swap"},
	{names: []string{"acct"}, reason: "switches host-wide process accounting"},
	{names: []string{"clock_settime", "settimeofday", "adjtimex", "clock_adjtime"},
		reason: "sets or tunes the host's clock"},
	{names: []string{"personality"},
		reason: "changes the execution domain (e.g. disables ASLR for children); CPython never calls it"},
	{names: []string{"quotactl", "quotactl_fd"}, reason: "file-system quota administration"},
	{names: []string{"syslog"}, reason: "reads the kernel log, which leaks kernel addresses"},
	{names: []string{"sethostname", "setdomainname"}, reason: "renames the host"},
	{names: []string{"fanotify_init"}, reason: "watches file-system events beyond the guest's files"},
	{names: []string{"seccomp"}, reason: "installs filters and user-notification listeners; no guest needs it"},
	{amd64: []string{"iopl", "ioperm", "modify_ldt"}, reason: "hardware I/O ports and descriptor tables (x86)"},
}
