# Shared by every escape guest: the Go test prepends this file to the guest
# script. Each attempt prints exactly one marker line:
#
#   BLOCKED <name> <ERRNO name or exception type>   the attempt failed in Python
#   ESCAPED <name> <what it got>                    the attempt succeeded
#   ALLOWED <name>                                  a control that must succeed
#   INFO <key> <json>                               an observation the test checks
#
# Names never contain spaces. Nothing here prints the secret values the test
# planted (the guest does not know them).
import ctypes
import errno
import json
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def _reason(exc):
    if isinstance(exc, OSError) and exc.errno:
        return errno.errorcode.get(exc.errno, "E%d" % exc.errno)
    return type(exc).__name__


def emit(*fields):
    print(*fields, flush=True)


def attempt(name, fn, *args, **kwargs):
    """Run one escape attempt: it must raise."""
    try:
        got = fn(*args, **kwargs)
    except Exception as exc:
        emit("BLOCKED", name, _reason(exc))
        return None
    emit("ESCAPED", name, repr(got)[:200].replace("\n", " "))
    return got


def control(name, fn, *args, **kwargs):
    """Run one control: it must succeed, so the probes are not vacuous."""
    try:
        fn(*args, **kwargs)
    except Exception as exc:
        emit("FAILED", name, _reason(exc))
        return
    emit("ALLOWED", name)


def info(key, value):
    emit("INFO", key, json.dumps(value, sort_keys=True))


def raw_syscall(nr, *args):
    """libc.syscall(nr, args...), raising OSError like os functions do."""
    ctypes.set_errno(0)
    ret = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if ret == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return ret


def open_for_write(path, flags=0):
    """Open path for writing without truncating or writing anything, then
    close it: for files whose mere modification would harm the host."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | flags)
    os.close(fd)
    return "opened"


def create_new(path):
    """Create a fresh file (never an existing one) and remove it again."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    os.close(fd)
    os.unlink(path)
    return "created"


def report_host_uid():
    """INFO host_uid: the host uid that uid 1000 maps to (from uid_map)."""
    for line in open("/proc/self/uid_map"):
        inside, outside, _ = line.split()
        if inside == str(os.getuid()):
            info("host_uid", int(outside))


def rpc_post(socket_path, envelope, credential):
    """POST one RPC envelope by hand (credential None: no Authorization
    header); returns (HTTP status, response document)."""
    import socket

    body = json.dumps(envelope).encode()
    head = b"POST /v1/calls HTTP/1.1\r\nHost: apysup\r\nContent-Type: application/json\r\n"
    if credential is not None:
        head += b"Authorization: Apysup-Credential " + credential.encode() + b"\r\n"
    head += b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    try:
        s.connect(socket_path)
        s.sendall(head + body)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    return data.split(b" ", 2)[1].decode(), json.loads(data.split(b"\r\n\r\n", 1)[1])


def rpc_attempt(name, socket_path, envelope, credential):
    """A hand-made request must be rejected: BLOCKED <name> <status>:<code>."""
    status, doc = rpc_post(socket_path, envelope, credential)
    if doc.get("status") == "completed":
        emit("ESCAPED", name, status)
    else:
        emit("BLOCKED", name, "%s:%s" % (status, doc.get("error_code")))


def envelope_for(channel, call):
    return {"schema_version": "apysup.rpc.v1", "channel_id": channel["channel_id"],
            "invocation_id": channel["invocation_id"], "execution_id": channel["execution_id"],
            "plan_sha256": channel["plan_sha256"], "call": call}
