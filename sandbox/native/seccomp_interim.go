package native

import (
	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// interimSeccomp is a stand-in until seccomp.Default().Libcontainer() lands
// in the seccomp package (which owns the real allowlist). It is a deny list:
// the syscalls that matter most for escapes answer EPERM, clone3 answers
// ENOSYS (glibc then falls back to clone, which a filter can inspect), and
// socket is refused for every family but AF_UNIX.
func interimSeccomp() (*configs.Seccomp, error) {
	eperm := uint(unix.EPERM)
	enosys := uint(unix.ENOSYS)
	deny := []string{
		"mount", "umount2", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
		"mount_setattr", "pivot_root", "chroot", "unshare", "setns", "ptrace", "process_vm_readv",
		"process_vm_writev", "bpf", "keyctl", "add_key", "request_key", "perf_event_open",
		"io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd", "open_by_handle_at",
		"name_to_handle_at", "kexec_load", "kexec_file_load", "init_module", "finit_module",
		"delete_module", "reboot", "swapon", "swapoff", "acct", "settimeofday", "clock_settime",
		"clock_adjtime", "adjtimex", "personality", "quotactl", "lookup_dcookie", "syslog",
		"vhangup", "iopl", "ioperm",
	}
	sc := &configs.Seccomp{DefaultAction: configs.Allow, Architectures: []string{"amd64", "x86", "arm64"}}
	for _, name := range deny {
		sc.Syscalls = append(sc.Syscalls, &configs.Syscall{Name: name, Action: configs.Errno, ErrnoRet: &eperm})
	}
	sc.Syscalls = append(sc.Syscalls,
		&configs.Syscall{Name: "clone3", Action: configs.Errno, ErrnoRet: &enosys},
		&configs.Syscall{Name: "socket", Action: configs.Errno, ErrnoRet: &eperm,
			Args: []*configs.Arg{{Index: 0, Value: unix.AF_UNIX, Op: configs.NotEqualTo}}},
		&configs.Syscall{Name: "socketpair", Action: configs.Errno, ErrnoRet: &eperm,
			Args: []*configs.Arg{{Index: 0, Value: unix.AF_UNIX, Op: configs.NotEqualTo}}},
		&configs.Syscall{Name: "ioctl", Action: configs.Errno, ErrnoRet: &eperm,
			Args: []*configs.Arg{{Index: 1, Value: unix.TIOCSTI, Op: configs.EqualTo}}},
		&configs.Syscall{Name: "ioctl", Action: configs.Errno, ErrnoRet: &eperm,
			Args: []*configs.Arg{{Index: 1, Value: unix.TIOCLINUX, Op: configs.EqualTo}}},
	)
	// clone with any namespace flag.
	for _, flag := range nsFlags {
		sc.Syscalls = append(sc.Syscalls, &configs.Syscall{Name: "clone", Action: configs.Errno, ErrnoRet: &eperm,
			Args: []*configs.Arg{{Index: 0, Value: flag, ValueTwo: flag, Op: configs.MaskEqualTo}}})
	}
	return sc, nil
}

var nsFlags = []uint64{unix.CLONE_NEWNS, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER,
	unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWCGROUP, unix.CLONE_NEWTIME}

// defaultSeccomp is the policy of a Backend built without Config.Seccomp.
func defaultSeccomp() (*configs.Seccomp, error) { return interimSeccomp() }
