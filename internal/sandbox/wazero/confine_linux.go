package wazero

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// childOwnFiles is what a child holds open besides its guest's files: its
// descriptors from the parent, the Go runtime's, the compilation cache's.
const childOwnFiles = 64

// confineChild confines a child process once its Interpreter is loaded
// (the compilation cache read, the zoneinfo directory open, the image
// mapped) and before its guest runs, as far as the Go runtime and wazero
// allow:
//
//   - no_new_privs: no exec could gain privileges (and none is allowed);
//   - RLIMIT_NOFILE at the guest's budget plus the child's own, so that
//     even a guest out of wasm cannot hold more; RLIMIT_FSIZE at the
//     run's file-size limit (the budgets refuse first; the Go runtime
//     ignores SIGXFSZ, a write past it is EFBIG); RLIMIT_CORE 0. Not
//     RLIMIT_AS (wazero reserves the linear memory's whole mapping up
//     front, and the Go runtime its arenas), not RLIMIT_NPROC (the Go
//     runtime's threads count, per user, across every process of the
//     supervisor's user);
//   - a seccomp allowlist (childSyscalls) for every thread (TSYNC): the
//     calls of the Go runtime and of wazero's file system, measured with
//     strace on the package's tests; every other call fails with EPERM:
//     no socket, no exec, no ptrace, no mount or namespace, no new
//     descriptors but files (openat, openat2, pipe2 and eventfd2 for the
//     runtime's poller), no signal and no limit for any process but this
//     one (installFilter).
//
// The parent adds new network, IPC and UTS namespaces where it may create
// them (childCloneflags).
func confineChild(j guestJob) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	nofile := min(j.OpenFiles, 1<<20) + childOwnFiles
	for _, l := range []struct {
		resource int
		max      uint64
	}{{unix.RLIMIT_NOFILE, nofile}, {unix.RLIMIT_FSIZE, uint64(max(j.FileSizeBytes, 0))}, {unix.RLIMIT_CORE, 0}} {
		if err := unix.Setrlimit(l.resource, &unix.Rlimit{Cur: l.max, Max: l.max}); err != nil {
			return fmt.Errorf("rlimit %d: %w", l.resource, err)
		}
	}
	return installFilter(append(childSyscalls[:len(childSyscalls):len(childSyscalls)], archSyscalls...))
}

// childSyscalls: see confineChild. Measured with strace -f on a child
// running this package's tests (HelloWorld, HostCall, the file system,
// quotas, memory, zoneinfo, aborts), with the calls wazero's file system
// makes on paths those tests do not take (mkdirat, fchmodat, ftruncate,
// utimensat, linkat, renameat2, pwrite64, fdatasync) and those the Go
// runtime makes on others (exit, clone, restart_syscall, mremap, uname).
// archSyscalls adds each architecture's own spellings. sysinfo serves the
// guest's os.getloadavg (hostinfo.go), as glibc's serves the native
// guest's; it reads the machine's counters and changes nothing. statfs
// serves os.statvfs (statvfs.go) and reads what it names and nothing else.
// ppoll, with a zero timeout, asks whether the call socket has an answer
// yet (spin_linux.go); it waits on descriptors the child already holds.
// symlinkat makes the guest's links on its writable mounts (linkdir.go):
// a link's target is text that nothing in the child follows.
// clock_getres answers the resolution of the Linux clocks WASI has not
// (wasiclock.go), as clock_gettime reads them; it changes nothing.
var childSyscalls = []uintptr{
	unix.SYS_READ, unix.SYS_WRITE, unix.SYS_PREAD64, unix.SYS_PWRITE64, unix.SYS_READV, unix.SYS_WRITEV,
	unix.SYS_OPENAT, unix.SYS_OPENAT2, unix.SYS_CLOSE, unix.SYS_FSTAT, unix.SYS_STATX,
	unix.SYS_LSEEK, unix.SYS_GETDENTS64, unix.SYS_FCNTL, unix.SYS_READLINKAT, unix.SYS_FACCESSAT,
	unix.SYS_MKDIRAT, unix.SYS_UNLINKAT, unix.SYS_RENAMEAT2, unix.SYS_LINKAT, unix.SYS_SYMLINKAT,
	unix.SYS_FCHMODAT, unix.SYS_FCHMOD, unix.SYS_FTRUNCATE, unix.SYS_UTIMENSAT, unix.SYS_FSYNC, unix.SYS_FDATASYNC,
	unix.SYS_MMAP, unix.SYS_MUNMAP, unix.SYS_MPROTECT, unix.SYS_MADVISE, unix.SYS_MREMAP, unix.SYS_BRK,
	unix.SYS_FUTEX, unix.SYS_NANOSLEEP, unix.SYS_CLOCK_GETTIME, unix.SYS_CLOCK_GETRES, unix.SYS_CLOCK_NANOSLEEP, unix.SYS_SCHED_YIELD,
	unix.SYS_SCHED_GETAFFINITY, unix.SYS_GETRANDOM, unix.SYS_GETRUSAGE, unix.SYS_GETPID, unix.SYS_GETPPID,
	unix.SYS_GETTID, unix.SYS_TGKILL, unix.SYS_RT_SIGACTION, unix.SYS_RT_SIGPROCMASK, unix.SYS_RT_SIGRETURN,
	unix.SYS_SIGALTSTACK, unix.SYS_CLONE, unix.SYS_CLONE3, unix.SYS_SET_ROBUST_LIST, unix.SYS_RSEQ,
	unix.SYS_EXIT, unix.SYS_EXIT_GROUP, unix.SYS_RESTART_SYSCALL, unix.SYS_UNAME, unix.SYS_PRLIMIT64,
	unix.SYS_EPOLL_CREATE1, unix.SYS_EPOLL_CTL, unix.SYS_EPOLL_PWAIT, unix.SYS_EVENTFD2, unix.SYS_PIPE2,
	unix.SYS_SYSINFO, unix.SYS_STATFS, unix.SYS_PPOLL,
}

// installFilter loads a seccomp filter allowing exactly calls, on the
// native architecture only, into every thread of the process. Two of them
// name a process, and are allowed only on this one: tgkill (the Go
// runtime's preemption signals to its own threads) only with this
// process's pid as its thread group, prlimit64 (setrlimit's spelling)
// only with pid 0 or this process's. A child whose guest escaped wasm
// runs as the supervisor's user, root in most deployments, which may
// signal or re-limit any process.
func installFilter(calls []uintptr) error {
	if auditArch == 0 {
		return errors.New("no seccomp filter for " + runtime.GOARCH)
	}
	self := uint32(os.Getpid())
	prog, err := filterProgram(calls, []argRule{
		{nr: unix.SYS_TGKILL, arg0: []uint32{self}},
		{nr: unix.SYS_PRLIMIT64, arg0: []uint32{0, self}},
	})
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}

// argRule allows the call nr only when its first argument (its low 32
// bits: a pid_t) is one of arg0.
type argRule struct {
	nr   uintptr
	arg0 []uint32
}

// filterProgram is the classic BPF program of installFilter: the
// architecture checked (any other kills the process), each rule's call
// with its first argument checked, then every other call of calls
// allowed; everything else fails with EPERM.
func filterProgram(calls []uintptr, rules []argRule) ([]unix.SockFilter, error) {
	const (
		ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeqK = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		retK = unix.BPF_RET | unix.BPF_K
		// Offsets in struct seccomp_data.
		nrOff, archOff, arg0Off = 0, 4, 16
	)
	// Jumps to the two returns at the end are resolved once the program's
	// length is known: a placeholder's Jt or Jf says which.
	const toAllow, toDeny = 0xff, 0xfe
	prog := []unix.SockFilter{
		{Code: ldW, K: archOff},
		{Code: jeqK, K: auditArch, Jt: 1},
		{Code: retK, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ldW, K: nrOff},
	}
	ruled := map[uintptr]bool{}
	for _, r := range rules {
		ruled[r.nr] = true
		// Not this call: skip its block (the argument's load, its values
		// and the reload of the number).
		prog = append(prog, unix.SockFilter{Code: jeqK, K: uint32(r.nr), Jf: uint8(len(r.arg0) + 2)},
			unix.SockFilter{Code: ldW, K: arg0Off})
		for i, v := range r.arg0 {
			f := unix.SockFilter{Code: jeqK, K: v, Jt: toAllow}
			if i == len(r.arg0)-1 {
				f.Jf = toDeny
			}
			prog = append(prog, f)
		}
		prog = append(prog, unix.SockFilter{Code: ldW, K: nrOff})
	}
	for _, nr := range calls {
		if !ruled[nr] {
			prog = append(prog, unix.SockFilter{Code: jeqK, K: uint32(nr), Jt: toAllow})
		}
	}
	deny := len(prog)
	prog = append(prog,
		unix.SockFilter{Code: retK, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		unix.SockFilter{Code: retK, K: unix.SECCOMP_RET_ALLOW})
	resolve := func(at int, j uint8) (uint8, error) {
		target := -1
		switch j {
		case toAllow:
			target = deny + 1
		case toDeny:
			target = deny
		default:
			return j, nil
		}
		off := target - at - 1
		if off > 255 {
			return 0, errors.New("seccomp: too many calls for one jump")
		}
		return uint8(off), nil
	}
	for i := range prog[:deny] {
		var err error
		if prog[i].Jt, err = resolve(i, prog[i].Jt); err != nil {
			return nil, err
		}
		if prog[i].Jf, err = resolve(i, prog[i].Jf); err != nil {
			return nil, err
		}
	}
	return prog, nil
}

// childCloneflags are the namespaces a child starts in: new network, IPC
// and UTS namespaces where this process may create them (root with
// CAP_SYS_ADMIN in its effective set); otherwise none, and the seccomp
// filter's refusal of socket(2) is the network's only wall. Root without
// CAP_SYS_ADMIN is a container's root (Docker's default capabilities):
// asking for namespaces there fails the child's start with EPERM.
func childCloneflags() uintptr {
	if os.Geteuid() != 0 || !effectiveCap(unix.CAP_SYS_ADMIN) {
		return 0
	}
	return unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS
}

// effectiveCap reports whether capability c is in this thread's effective
// set (capget(2); false if that fails).
func effectiveCap(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil || c < 0 || c >= 64 {
		return false
	}
	return data[c/32].Effective&(1<<(uint(c)%32)) != 0
}
