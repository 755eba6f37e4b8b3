# x86_64 only: the other system-call ABIs must not bypass the filter.
# x32 calls (number | 0x40000000) and i386 calls (int 0x80) are made in a
# child each, since the filter may kill the caller; the parent reports how
# the child's call failed (errno, or the signal that ended it).
import mmap
import signal

X32 = 0x40000000
CLONE_NEWUSER = 0x10000000
nr = {k: int(v) for k, v in (a.split("=") for a in sys.argv[1:])}


def in_child(name, fn):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            got = "ok:%r" % (fn(),)
        except OSError as exc:
            got = "errno:" + errno.errorcode.get(exc.errno, str(exc.errno))
        os.write(w, got.encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 200).decode()
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        emit("BLOCKED", name, signal.Signals(os.WTERMSIG(status)).name)
    elif out.startswith("errno:"):
        emit("BLOCKED", name, out[6:])
    else:
        emit("ESCAPED", name, out)


# x32: the x86_64 numbers with the x32 bit.
in_child("x32:unshare", lambda: raw_syscall(X32 | nr["unshare"], CLONE_NEWUSER))
in_child("x32:ptrace", lambda: raw_syscall(X32 | nr["ptrace"], 0, 0, 0, 0))
in_child("x32:getpid", lambda: raw_syscall(X32 | nr["getpid"]))


def int80(number, arg=0):
    """mov eax, number; mov ebx, arg; int 0x80; ret (the i386 ABI)."""
    code = (b"\xb8" + number.to_bytes(4, "little") + b"\xbb" + arg.to_bytes(4, "little") + b"\xcd\x80\xc3")
    buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(code)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    ret = ctypes.CFUNCTYPE(ctypes.c_int)(addr)()
    if -4096 < ret < 0:
        raise OSError(-ret, os.strerror(-ret))
    return ret


# i386 numbers: unshare 310, getpid 20.
in_child("i386:unshare", lambda: int80(310, CLONE_NEWUSER))
in_child("i386:getpid", lambda: int80(20))
