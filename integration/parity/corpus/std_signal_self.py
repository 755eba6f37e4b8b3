# A script signalling itself, as both backends answer it. os.kill of its
# own pid, and of its process group (0), raises the signal in the guest,
# where a handler catches it; pid 1, the native sandbox's init, forwards
# SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT and
# SIGWINCH to the guest and keeps the rest; any other pid is no process.
# Under wazero os.kill is python/wasi/patches/python3.11/wasi-kill.patch.
import errno
import os
import signal
import sys
import time

# pid 1 here is the sandbox's init: never run this on a host, where it is
# the host's and kill(-1, ...) reaches every process.
if not os.path.isdir("/run/apysup/job"):
    sys.exit("std_signal_self.py signals pid 1: run it only in an apysup sandbox")

S = signal.Signals
FORWARDED = [S.SIGHUP, S.SIGINT, S.SIGQUIT, S.SIGTERM, S.SIGUSR1, S.SIGUSR2, S.SIGALRM, S.SIGCONT, S.SIGWINCH]
KEPT = [S.SIGPIPE, S.SIGTRAP, S.SIGXFSZ, S.SIGTTIN, S.SIGKILL, S.SIGSTOP]
got = []


def handler(signum, frame):
    got.append(S(signum).name)


for s in FORWARDED + [S.SIGPIPE, S.SIGTRAP, S.SIGXFSZ, S.SIGTTIN]:
    signal.signal(s, handler)


def arrived(count, seconds):
    # Natively a signal the init forwards arrives a moment later.
    deadline = time.monotonic() + seconds
    while len(got) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return list(got)


def kill(pid, sig, wait=5.0, expect=1):
    del got[:]
    try:
        r = os.kill(pid, sig)
    except OSError as e:
        # errno's numbers differ under WASI, its names do not.
        return "%s %s" % (type(e).__name__, errno.errorcode[e.errno])
    return "%r %s" % (r, arrived(expect, wait) if expect else arrived(1, wait))


me = os.getpid()
print("self USR1:", kill(me, S.SIGUSR1))
print("self HUP:", kill(me, S.SIGHUP))
# Natively the group holds pid 1 too, which would forward a signal it
# forwards a second time, a moment later: SIGPIPE it keeps.
print("group PIPE:", kill(0, S.SIGPIPE))
print("self 0:", kill(me, 0, wait=0.05))
print("init 0:", kill(1, 0, wait=0.05))
for s in FORWARDED:
    print("init", s.name + ":", kill(1, s))
for s in KEPT:
    print("init", s.name + ":", kill(1, s, wait=0.2))
for pid, sig in [(4000000, 0), (4000000, S.SIGTERM), (-1, 0), (me, 1000), (me, -1), (me, signal.NSIG)]:
    print("kill(%s, %s):" % ("me" if pid == me else pid, int(sig)), kill(pid, sig, wait=0.05))
# A target that does not exist is ESRCH before a signal out of range is
# EINVAL; the signal is a Py_ssize_t that the kernel's C int truncates
# (2**32 is 0, and checks only that the target exists).
for pid, sig in [(4000000, 1000), (-1, 1000), (-5, -1), (1, 1000), (0, 1000), (me, 2**32),
                 (1, 2**32), (4000000, 2**32), (me, 2**32 + 65), (me, 2**31)]:
    print("kill(%s, %s):" % ("me" if pid == me else pid, sig), kill(pid, sig, wait=0.05))
for args, kwargs in [((1.5, 0), {}), ((me, "x"), {}), ((me,), {}), ((), {"pid": me, "signal": 0}),
                     ((2**31, 0), {}), ((-2**31 - 1, 0), {}), ((2**63, 0), {}), ((me, 2**63), {}),
                     ((me, -2**63 - 1), {})]:
    try:
        os.kill(*args, **kwargs)
    except (TypeError, OverflowError) as e:
        print(type(e).__name__, e)
# Its own process group by number, once it leads one: init's group (1)
# has no number of its own, -1 being every process.
os.setpgrp()
print("own group PIPE:", kill(-me, S.SIGPIPE))
print("own group 1000:", kill(-me, 1000))
os.setpgid(0, 1)
print("init's group again:", kill(-me, 0, wait=0.05))

# The default handler of SIGINT raises KeyboardInterrupt, from itself or
# through the init; SIG_IGN drops the signal.
for pid in (me, 1):
    signal.signal(S.SIGINT, signal.default_int_handler)
    try:
        os.kill(pid, S.SIGINT)
        time.sleep(5)
        print("no KeyboardInterrupt")
    except KeyboardInterrupt:
        print("KeyboardInterrupt from", "me" if pid == me else pid)
signal.signal(S.SIGTERM, signal.SIG_IGN)
print("ignored TERM:", kill(me, S.SIGTERM, wait=0.1))
print("ignored TERM through init:", kill(1, S.SIGTERM, wait=0.1))
