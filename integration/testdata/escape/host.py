# What a guest can see of, and do to, the host: processes, signals,
# environment, inherited descriptors, device nodes.
# argv: SHM_KEY HOST_PID... (a SysV shared memory segment of the host; the
# supervisor test process, its parent, a host sleeper).
import signal
import stat
import time

shm_key = int(sys.argv[1])
host_pids = [int(p) for p in sys.argv[2:]]

# The script is not pid 1: the guest init is (the pid namespace's init, which
# reaps orphans and forwards signals) and the script is its child. A child
# of the script's own, so that /proc shows one process more.
r, w = os.pipe()
child = os.fork()
if child == 0:
    os.close(r)
    os.write(w, b"x")
    time.sleep(60)
    os._exit(0)
os.close(w)
os.read(r, 1)
os.close(r)

procs = {}
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                procs[p] = f.read().split(b"\0")[0].decode()
        except OSError as e:
            procs[p] = "unreadable:" + errno.errorcode.get(e.errno, "?")
info("procs", procs)
info("self", {"pid": os.getpid(), "ppid": os.getppid(), "child": child, "uid": os.getuid(),
              "uid_map": open("/proc/self/uid_map").read().split(),
              "pid1": open("/proc/1/cmdline", "rb").read().decode().split("\0")[:4]})

for i, pid in enumerate(host_pids):
    attempt("kill:host%d" % i, os.kill, pid, signal.SIGKILL)
    attempt("kill0:host%d" % i, os.kill, pid, 0)
    attempt("proc:host%d" % i, os.stat, "/proc/%d" % pid)
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
# With its child gone, nothing else in reach: kill(-1) skips the caller and
# the namespace's init (the runner), so it finds no process.
attempt("kill:all", os.kill, -1, signal.SIGKILL)
attempt("setpriority:host", os.setpriority, os.PRIO_PROCESS, host_pids[0], 19)

# Scheduling: the guest may step aside, never push in. RLIMIT_NICE and
# RLIMIT_RTPRIO are 0 whatever the supervisor's are, and there is no
# CAP_SYS_NICE: no negative nice, no real-time policy (which the cgroup's
# CPU quota would not bound).
import resource  # noqa: E402
info("sched_rlimits", [resource.getrlimit(resource.RLIMIT_NICE), resource.getrlimit(resource.RLIMIT_RTPRIO)])
control("nice:lower", os.nice, 1)
control("sched_setaffinity:own", os.sched_setaffinity, 0, os.sched_getaffinity(0))
control("sched_setscheduler:batch", os.sched_setscheduler, 0, os.SCHED_BATCH, os.sched_param(0))
attempt("nice:raise", os.nice, -5)
attempt("setpriority:raise", os.setpriority, os.PRIO_PROCESS, 0, -20)
attempt("setpriority:user", os.setpriority, os.PRIO_USER, 0, -20)
attempt("sched_setscheduler:fifo", os.sched_setscheduler, 0, os.SCHED_FIFO, os.sched_param(1))
attempt("sched_setscheduler:rr", os.sched_setscheduler, 0, os.SCHED_RR, os.sched_param(99))
attempt("sched_setparam:rt", os.sched_setparam, 0, os.sched_param(1))
attempt("setrlimit:rtprio", resource.setrlimit, resource.RLIMIT_RTPRIO, (1, 1))
attempt("setrlimit:nice", resource.setrlimit, resource.RLIMIT_NICE, (40, 40))



def shmget(key):
    ctypes.set_errno(0)
    ret = libc.shmget(ctypes.c_int(key), ctypes.c_size_t(0), ctypes.c_int(0))
    if ret == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return ret


attempt("ipc:host-shm", shmget, shm_key)

# Kernel views runc masks: empty (a /dev/null or read-only tmpfs mount).
def read_masked(path):
    if os.path.isdir(path):
        got = os.listdir(path)
    else:
        with open(path, "rb") as f:
            got = f.read(256)
    if got:
        return got
    raise OSError(0, "empty")


for path in ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
             "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/proc/interrupts"]:
    try:
        got = read_masked(path)
        emit("ESCAPED", "masked:" + path, repr(got)[:100])
    except OSError as exc:
        emit("BLOCKED", "masked:" + path, "empty" if exc.errno == 0 else _reason(exc))
nonzero = 0
with open("/proc/kallsyms") as f:
    for line in f:
        nonzero += int(line.split()[0], 16) != 0
info("kallsyms_nonzero", nonzero)

# Environment: only what the runner documents.
info("environ", dict(os.environ))
info("proc_environ", sorted(set(open("/proc/self/environ", "rb").read().decode("utf-8", "replace").split("\0")) - {""}))

# Descriptors: /proc/self/fd, and every number up to the limit.
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink("/proc/self/fd/" + fd)
    except OSError:
        fds[fd] = "gone"  # the descriptor listdir itself used
open_fds = []
for fd in range(0, 4096):
    try:
        os.fstat(fd)
        open_fds.append(fd)
    except OSError:
        pass
info("fds", fds)
info("open_fds", open_fds)

# Device nodes: every entry under /dev with its type.
KINDS = [(stat.S_ISCHR, "c"), (stat.S_ISBLK, "b"), (stat.S_ISDIR, "d"), (stat.S_ISLNK, "l"), (stat.S_ISREG, "f"),
         (stat.S_ISSOCK, "s"), (stat.S_ISFIFO, "p")]
devs = {}
for root, dirs, names in os.walk("/dev", onerror=lambda e: None):
    for n in dirs + names:
        p = os.path.join(root, n)
        st = os.lstat(p)
        kind = next(k for f, k in KINDS if f(st.st_mode))
        devs[p] = kind + (":%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)) if kind in "cb" else "")
info("dev", devs)
for path in ["/dev/mem", "/dev/kmem", "/dev/port", "/dev/kmsg", "/dev/sda", "/dev/vda", "/dev/nvme0n1", "/dev/tty",
             "/dev/console", "/dev/net/tun", "/dev/fuse", "/dev/kvm", "/dev/loop0", "/dev/loop-control", "/dev/vsock"]:
    attempt("open:" + path, lambda p: os.close(os.open(p, os.O_RDONLY)), path)
control("read:/dev/urandom", lambda: len(open("/dev/urandom", "rb").read(16)) == 16 or 1 / 0)
control("write:/dev/null", lambda: open("/dev/null", "w").write("x"))
