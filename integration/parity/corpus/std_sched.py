# The guest's scheduling policy, priority and CPUs: natively the guest
# (pid 10) and its init (pid 1) run under SCHED_OTHER on every online CPU,
# as uid 1000 without CAP_SYS_NICE, RLIMIT_RTPRIO and RLIMIT_NICE 0, so
# either may be moved to SCHED_BATCH or SCHED_IDLE (and not back out of
# SCHED_IDLE), never to a real-time policy (EPERM), and bound to fewer
# CPUs or all again. Under wazero, python/wasi/patches/python3.11/
# wasi-os-sched.patch answers with Linux's rules; before, only
# os.sched_getaffinity and os.sched_yield existed there. Policy 7, which
# Linux 6.12 and later accept as SCHED_EXT where the kernel has it, is
# left out: Python 3.11 has no name for it (RATIONALE.md).
import os
import pickle
import posix
import random

NAMES = ("SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH", "SCHED_IDLE",
         "SCHED_RESET_ON_FORK", "sched_param", "sched_get_priority_max",
         "sched_get_priority_min", "sched_getscheduler", "sched_setscheduler",
         "sched_getparam", "sched_setparam", "sched_rr_get_interval",
         "sched_getaffinity", "sched_setaffinity", "sched_yield")


def t(name, *args):
    shown = tuple(type(a).__name__ if type(a).__name__ in ("map", "list_iterator") else a for a in args)
    try:
        result = getattr(os, name)(*args)
    except (OSError, OverflowError, TypeError, ValueError) as e:
        result = "%s %s" % (type(e).__name__, getattr(e, "errno", None) or e)
    if isinstance(result, set):
        result = sorted(result) == sorted(os.sched_getaffinity(0)), len(result)
    print(name, shown, result)


print([getattr(os, n) for n in NAMES[:6]])
print(all(n in os.__all__ for n in NAMES if n != "sched_yield"))
print(all(getattr(posix, n) is getattr(os, n) for n in NAMES))
print(all(getattr(posix, n) is getattr(os, n) for n in (
    "getuid", "getgid", "getppid", "getpgid", "getsid", "setsid", "getpriority", "kill",
    "PRIO_PROCESS", "get_terminal_size")))
# Every public name of os that posix lacks is os's own on both backends
# (spawn* and P_* aside: WASI has no processes to spawn).
print(sorted(n for n in set(dir(os)) - set(dir(posix)) if not n.startswith(("_", "spawn", "P_"))))
for n in NAMES[7:]:
    f = getattr(os, n)
    print(n, f.__module__, f.__qualname__, f.__text_signature__, repr(f.__doc__))

P = os.sched_param
print(P, P.__module__, P.__qualname__, P.n_fields, P.n_sequence_fields, P.n_unnamed_fields,
      P.__match_args__, repr(P.__doc__))
p = P(3)
print(p, p[0], len(p), p == (3,), hash(p) == hash((3,)), p.__reduce__()[1], P(sched_priority=4))
print(P(None), P("x"), P(2**70).sched_priority)
for args, kwargs in (((), {}), ((1, 2), {}), ((), {"x": 1}), ((1,), {"sched_priority": 2})):
    try:
        P(*args, **kwargs)
    except TypeError as e:
        print("sched_param", args, kwargs, e)
try:
    pickle.loads(pickle.dumps(p))
except TypeError as e:  # structseq's __reduce__ and this constructor disagree
    print("pickle", e)

for policy in (0, 1, 2, 3, 4, 5, 6, 8, -1, 99, 0x40000000, 0x40000003):
    t("sched_get_priority_max", policy)
    t("sched_get_priority_min", policy)
t("sched_get_priority_max", 2**31)
t("sched_get_priority_min", "1")
for pid in (0, 10, 1, 2, 99999, -1, 2**31, 2**63, -2**63 - 1, 1.5):
    for name in ("sched_getscheduler", "sched_getparam", "sched_getaffinity"):
        t(name, pid)
interval = os.sched_rr_get_interval(0)  # the host kernel's fair slice
print("rr interval", type(interval).__name__, 0 <= interval < 1, interval == os.sched_rr_get_interval(1))
t("sched_rr_get_interval", -1)
t("sched_rr_get_interval", 2)

t("sched_setscheduler", 0, os.SCHED_FIFO, P(1))  # real-time: EPERM
t("sched_setscheduler", 0, os.SCHED_RR, P(0))  # real-time needs a priority: EINVAL
t("sched_setscheduler", 0, os.SCHED_OTHER, P(1))
t("sched_setscheduler", 0, 6, P(0))  # SCHED_DEADLINE needs its attributes
t("sched_setscheduler", 0, 4, P(0))
t("sched_setscheduler", -1, os.SCHED_OTHER, P(0))
t("sched_setscheduler", 2, os.SCHED_OTHER, P(0))
t("sched_setscheduler", 0, -1, P(0))
t("sched_setscheduler", 0, os.SCHED_OTHER, (0,))
t("sched_setscheduler", 0, os.SCHED_OTHER, P(None))
t("sched_setscheduler", 0, os.SCHED_OTHER, P(2**31))
t("sched_setscheduler", 0, os.SCHED_OTHER, P(2**63))
t("sched_setscheduler", 0, os.SCHED_OTHER, P(-1))
t("sched_setscheduler", 0, os.SCHED_BATCH, P(0))
t("sched_getscheduler", 0)
t("sched_setparam", 0, P(0))
t("sched_setparam", 0, P(5))
t("sched_setparam", -1, P(0))
t("sched_setparam", 0, 43)
t("sched_setscheduler", 1, os.SCHED_IDLE, P(0))  # init: the same user
t("sched_getscheduler", 1)
t("sched_setscheduler", 1, os.SCHED_OTHER, P(0))  # out of SCHED_IDLE: EPERM
t("sched_setparam", 1, P(0))
t("sched_setscheduler", 0, os.SCHED_OTHER | os.SCHED_RESET_ON_FORK, P(0))
t("sched_getscheduler", 0)
t("sched_setscheduler", 0, os.SCHED_BATCH, P(0))  # clears the flag: EPERM
t("sched_setscheduler", 0, os.SCHED_BATCH | os.SCHED_RESET_ON_FORK, P(0))
t("sched_getscheduler", 0)
print(os.getpriority(os.PRIO_PROCESS, 0), os.getpriority(os.PRIO_PROCESS, 1))
t("sched_yield")

cpus = sorted(os.sched_getaffinity(0))
t("sched_setaffinity", 0, [cpus[0]])
print("affinity", sorted(os.sched_getaffinity(0)) == cpus[:1], os.sched_getaffinity(1) == set(cpus))
t("sched_setaffinity", 1, [cpus[-1], 4096])
print("init", sorted(os.sched_getaffinity(1)) == cpus[-1:])
for mask in ([], [4096], [-1], [1.0], ["0"], [2**31 - 1], [2**63], [True], map(int, "0X"), 5):
    t("sched_setaffinity", 0, mask)
t("sched_setaffinity", -1, cpus)
t("sched_setaffinity", 2, cpus)
t("sched_setaffinity", 0, iter(cpus))
print("all again", sorted(os.sched_getaffinity(0)) == cpus)

# A sequence of calls, the same on both backends.
r = random.Random(23)
pids = [0, 1, 10, 2, -1]
policies = [0, 1, 2, 3, 5, 6, 4, -1, 0x40000000, 0x40000003, 0x40000005]
for _ in range(80):
    k = r.randrange(5)
    pid = r.choice(pids)
    if k == 0:
        t("sched_setscheduler", pid, r.choice(policies), P(r.choice([0, 0, 1, 99, 100, -1])))
    elif k == 1:
        t("sched_setparam", pid, P(r.choice([0, 0, 1, -1])))
    elif k == 2:
        t("sched_getscheduler", pid)
    elif k == 3:
        t("sched_getparam", pid)
    else:
        t("sched_setaffinity", pid, r.choice([cpus[:1], cpus, [], [4096], cpus + [4096]]))
        t("sched_getaffinity", pid)
