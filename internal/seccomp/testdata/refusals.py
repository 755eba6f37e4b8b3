"""Refusals under the filter surface as Python exceptions, never as a crash.

Run only under the apysup seccomp policy (it asserts the filter's errnos).
"""

import ctypes
import errno
import fcntl
import os
import socket
import sys
import termios
import threading

failures = []


def expect(err, what, fn, *args):
    try:
        fn(*args)
    except OSError as e:
        if e.errno != err:
            failures.append(f"{what}: errno {e.errno}, want {err}")
    else:
        failures.append(f"{what}: succeeded, want errno {err}")


expect(errno.EAFNOSUPPORT, "socket(AF_INET)", socket.socket, socket.AF_INET)
expect(errno.EAFNOSUPPORT, "socket(AF_INET6)", socket.socket, socket.AF_INET6)
expect(errno.EAFNOSUPPORT, "socket(AF_NETLINK)", socket.socket, socket.AF_NETLINK, socket.SOCK_RAW)
expect(errno.EAFNOSUPPORT, "create_connection", socket.create_connection, ("127.0.0.1", 9))
expect(errno.EPERM, "chroot", os.chroot, "/")
expect(errno.EPERM, "setuid", os.setuid, os.getuid())
expect(errno.EPERM, "pidfd_open", os.pidfd_open, os.getpid())
r, w = os.pipe()
expect(errno.EPERM, "ioctl(TIOCSTI)", fcntl.ioctl, r, termios.TIOCSTI, b"x")

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def c_errno(what, want, ret):
    got = ctypes.get_errno() if ret == -1 else 0
    if got != want:
        failures.append(f"{what}: errno {got}, want {want}")


CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
c_errno("unshare(CLONE_NEWUSER)", errno.EPERM, libc.unshare(CLONE_NEWUSER))
c_errno("unshare(CLONE_NEWNET)", errno.EPERM, libc.unshare(CLONE_NEWNET))
c_errno("mount", errno.EPERM, libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
c_errno("ptrace(TRACEME)", errno.EPERM, libc.ptrace(0, 0, None, None))
SYS_clone3 = 435  # the same number on x86_64 and arm64
c_errno("clone3", errno.ENOSYS, libc.syscall(SYS_clone3, None, 0))

# What must keep working: AF_UNIX pairs and threads (clone3 -> clone).
a, b = socket.socketpair()
a.sendall(b"ok")
assert b.recv(2) == b"ok"
t = threading.Thread(target=lambda: None)
t.start()
t.join()

if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print("refusals ok")
