# The resource module, as both backends answer it. Natively it is CPython's
# over glibc and the kernel: the limits the sandbox sets (RLIMIT_CPU at the
# run's CPU backstop, RLIMIT_FSIZE and RLIMIT_NOFILE at the run's limits,
# RLIMIT_CORE, RLIMIT_NICE and RLIMIT_RTPRIO at 0) and the supervisor's for
# the rest. Under wazero the module did not exist; now it is CPython's own,
# over the host's record of the guest's limits
# (internal/sandbox/wazero/rlimit.go, python/wasi/_apysup_resource.c).
import errno
import os
import resource as r

names = sorted(n for n in dir(r) if n.startswith("RLIMIT_"))
print("names", names)
for n in names:
    print(n, getattr(r, n), r.getrlimit(getattr(r, n)))
print("constants", r.RLIM_INFINITY, r.RUSAGE_SELF, r.RUSAGE_CHILDREN, r.RUSAGE_THREAD, r.getpagesize(), r.error is OSError)

u = r.getrusage(r.RUSAGE_SELF)
print("usage", type(u).__name__, len(u), u.ru_utime + u.ru_stime > 0, u.ru_maxrss > 1000, u.ru_ixrss, u.ru_nswap)
print("children", tuple(r.getrusage(r.RUSAGE_CHILDREN)))
print("thread", r.getrusage(r.RUSAGE_THREAD).ru_utime >= 0)


def attempt(what, f, *args):
    try:
        print(what, f(*args))
    except (ValueError, OSError, TypeError) as e:
        print(what, type(e).__name__, e)


attempt("invalid resource", r.getrlimit, 99)
attempt("invalid who", r.getrusage, 5)
attempt("raise the hard limit", r.setrlimit, r.RLIMIT_NOFILE, (512, 512))
attempt("soft above hard", r.setrlimit, r.RLIMIT_NOFILE, (300, 256))
attempt("not a pair", r.setrlimit, r.RLIMIT_NOFILE, (1, 2, 3))
attempt("lower", r.setrlimit, r.RLIMIT_NOFILE, (20, 256))
print("after", r.getrlimit(r.RLIMIT_NOFILE), os.sysconf("SC_OPEN_MAX"))

# A lowered RLIMIT_NOFILE bounds the files the guest may hold open.
held = []
try:
    for _ in range(40):
        held.append(open("/dev/null"))
except OSError as e:
    print("open files stop", e.errno == errno.EMFILE, len(held) < 20)
for f in held:
    f.close()
attempt("raise the soft limit to the hard one", r.setrlimit, r.RLIMIT_NOFILE, (256, 256))

attempt("prlimit self", r.prlimit, 0, r.RLIMIT_CORE)
attempt("prlimit own pid", r.prlimit, os.getpid(), r.RLIMIT_NOFILE)
attempt("prlimit init", r.prlimit, 1, r.RLIMIT_NOFILE)
attempt("prlimit set", r.prlimit, 0, r.RLIMIT_CORE, (0, 0))
attempt("prlimit no process", r.prlimit, 12345, r.RLIMIT_CORE)

# A lowered RLIMIT_FSIZE stops a write past it with EFBIG.
r.setrlimit(r.RLIMIT_FSIZE, (1 << 16, r.getrlimit(r.RLIMIT_FSIZE)[1]))
try:
    with open("/tmp/big", "wb") as f:
        f.write(b"x" * (1 << 17))
except OSError as e:
    print("file size stops", errno.errorcode[e.errno])
print("file size", os.path.getsize("/tmp/big"))

# A lowered RLIMIT_AS makes a large allocation fail with MemoryError, and
# the run goes on.
r.setrlimit(r.RLIMIT_AS, (256 << 20, r.RLIM_INFINITY))
try:
    block = bytearray(512 << 20)
except MemoryError:
    print("address space stops a 512 MiB bytearray")
print("done")
