# Every call the seccomp policy refuses on purpose, made raw through
# libc.syscall, plus the argument filters. argv: refuse:NAME=NR for each
# refused call and nr:NAME=NR for the calls probed with filtered arguments
# (the test resolves the numbers for this architecture).
import fcntl
import socket
import stat
import termios

# Arguments that make each call harmless should the filter ever let it
# through: an invalid operation, a query, a bad descriptor. The rest get
# zeros (NULL pointers: EFAULT, or EPERM for want of a capability).
ARGS = {
    "seccomp": (0xFFFF, 0, 0),        # no such operation (0 would enter strict mode)
    "personality": (0xFFFFFFFF,),     # query only
    "setns": (-1, 0),
    "pidfd_getfd": (-1, 0, 0),
    "finit_module": (-1, 0, 0),
    "quotactl_fd": (-1, 0, 0, 0),
    "open_tree": (-1, 0, 0),
    "fspick": (-1, 0, 0),
    "move_mount": (-1, 0, -1, 0, 0),
    "mount_setattr": (-1, 0, 0, 0, 0),
}

NR = {}
for spec in sys.argv[1:]:
    kind, _, rest = spec.partition(":")
    name, nr = rest.split("=")
    if kind == "nr":
        NR[name] = int(nr)
    else:
        attempt("syscall:" + name, raw_syscall, int(nr), *ARGS.get(name, (0, 0, 0, 0, 0, 0)))

# Argument filters.
SIGCHLD = 17
NAMESPACES = {"NEWUSER": 0x10000000, "NEWNS": 0x00020000, "NEWPID": 0x20000000, "NEWNET": 0x40000000,
              "NEWUTS": 0x04000000, "NEWIPC": 0x08000000, "NEWCGROUP": 0x02000000, "NEWTIME": 0x00000080}


def clone(flags):
    pid = raw_syscall(NR["clone"], flags | SIGCHLD, 0, 0, 0, 0)
    if pid == 0:  # the filter let it through: never run the rest twice
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


for name, flag in NAMESPACES.items():
    attempt("clone:" + name, clone, flag)
    attempt("unshare:" + name, raw_syscall, NR["unshare"], flag)
attempt("clone3", raw_syscall, NR["clone3"], 0, 0)
attempt("mknod:char", os.mknod, "/tmp/mem", stat.S_IFCHR | 0o600, os.makedev(1, 1))
attempt("mknod:block", os.mknod, "/tmp/sda", stat.S_IFBLK | 0o600, os.makedev(8, 0))
attempt("ioctl:TIOCSTI", fcntl.ioctl, 0, termios.TIOCSTI, b"x")
PR_CAPBSET_DROP, PR_SET_SECCOMP, PR_SET_MM = 24, 22, 35
attempt("prctl:CAPBSET_DROP", raw_syscall, NR["prctl"], PR_CAPBSET_DROP, 0)
attempt("prctl:SET_MM", raw_syscall, NR["prctl"], PR_SET_MM, 0)
attempt("setuid:0", os.setuid, 0)
attempt("chroot", os.chroot, "/tmp")

# Controls: what a guest needs keeps working under the same filter.
control("fork", lambda: os.waitpid(os.fork() or os._exit(0), 0))
control("socketpair:AF_UNIX", socket.socketpair)
control("mkfifo", os.mkfifo, "/tmp/fifo")

st = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
info("status", {k: st[k].strip() for k in ("Seccomp", "NoNewPrivs", "CapEff", "CapBnd", "CapPrm")})

# Set-user-ID programs give nothing: every bind is nosuid and no_new_privs
# is set. The guest runs the host's setuid-root mount and umount.
import subprocess


def run_program(name, argv):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    if p.returncode == 0:
        emit("ESCAPED", name, p.stdout[:100])
    else:
        emit("BLOCKED", name, "exit%d" % p.returncode)


os.mkdir("/tmp/mnt")
run_program("setuid:mount", ["/usr/bin/mount", "-t", "tmpfs", "none", "/tmp/mnt"])
run_program("setuid:umount", ["/usr/bin/umount", "/tmp"])
info("nosuid", {d: bool(os.statvfs(d).f_flag & os.ST_NOSUID) for d in ("/usr", "/opt/apysup", "/tmp", "/workspace", "/run/apysup")})
