# The guest's process group, session and scheduling priority: natively
# the guest (pid 10) starts in its init's (pid 1) group and session, both
# run as uid 1000, and RLIMIT_NICE is 0, so a niceness is raised, never
# lowered (EACCES; nice()'s EPERM). It may join init's group again or lead
# its own, start a session of its own (and not leave it), and renice
# init. Under wazero, python/wasi/patches/python3.11/wasi-os-ids.patch
# answers with the same rules; before, os.setsid, os.setpgid, os.setpgrp,
# os.getpriority and os.setpriority did not exist, and os.getpgid(1) and
# os.getsid(1) were ESRCH.
import os
import random


def t(name, *args):
    try:
        result = getattr(os, name)(*args)
    except (OSError, OverflowError, TypeError) as e:
        result = "%s %s" % (type(e).__name__, getattr(e, "errno", None) or e)
    print(name, args, result)


print(os.PRIO_PROCESS, os.PRIO_PGRP, os.PRIO_USER)
print(all(n in os.__all__ for n in ("setsid", "setpgid", "setpgrp", "getpriority", "setpriority", "PRIO_USER")))
print(os.getpid(), os.getppid(), os.getpgrp(), os.getpgid(0), os.getsid(0), os.getpgid(1), os.getsid(1))
for which in (os.PRIO_PROCESS, os.PRIO_PGRP, os.PRIO_USER, 7):
    for who in (0, 1, 10, 1000, 99):
        t("getpriority", which, who)
t("getpriority", os.PRIO_PROCESS, 2**40)
t("getpriority", os.PRIO_PROCESS, "0")
t("getpgid", 2**40)
t("getpgid", 2**63)  # past C long: PyLong_AsLong's own error first
t("getsid", -2**63 - 1)
t("setpgid", 0, 2**64)
t("getpgid", 1.5)
t("setpriority", os.PRIO_PROCESS, 1, 5)  # init's niceness: same user
t("setpriority", os.PRIO_PROCESS, 99, 5)
t("setpriority", os.PRIO_PGRP, 0, 3)  # the guest to 3, init refused (5 -> 3)
t("getpriority", os.PRIO_PROCESS, 0)
t("getpriority", os.PRIO_PGRP, 0)
t("setpriority", os.PRIO_USER, 0, 4)
t("getpriority", os.PRIO_USER, 1000)
t("nice", 0)
t("nice", -1)
t("setpgid", 1, 1)
t("setpgid", 99, 99)
t("setpgid", 0, 5)
t("setpgid", 0, -1)
t("setpgid", 0, 0)  # leads its own group
t("getpgrp")
t("getpriority", os.PRIO_PGRP, 1)
t("setsid")  # a group leader cannot
t("setpgid", 0, 1)  # back to init's group
t("setsid")
print(os.getpgrp(), os.getpgid(0), os.getsid(0), os.getsid(1))
t("setsid")
t("setpgid", 0, 0)
t("setpgid", 0, 1)
t("setpgrp")
t("getpriority", os.PRIO_PGRP, 10)
t("getpriority", os.PRIO_PGRP, 1)
t("setpriority", os.PRIO_PROCESS, 0, 100)  # clamped at 19
t("getpriority", os.PRIO_PROCESS, 0)
t("setpriority", os.PRIO_PROCESS, 0, -100)
t("nice", 5)
# A sequence of calls, the same on both backends.
r = random.Random(17)
pids = [0, 1, 10, 2, 99, -1, 1000]
for _ in range(60):
    k = r.randrange(6)
    if k == 0:
        t("getpriority", r.choice([0, 1, 2, 3]), r.choice(pids))
    elif k == 1:
        t("setpriority", r.choice([0, 1, 2]), r.choice(pids), r.choice([-1, 0, 3, 7, 19, 25]))
    elif k == 2:
        t("getpgid", r.choice(pids))
    elif k == 3:
        t("getsid", r.choice(pids))
    else:
        t("setpgid", r.choice([0, 1, 10, 99]), r.choice([0, 1, 10, 5, -1]))
