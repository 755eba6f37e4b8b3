# errno as the native guest sees it: Linux's numbers and glibc's messages,
# in the errno module, os.strerror, OSError's subclasses and every OSError
# an operation raises (printed as scripts print them).
import errno
import os

names = sorted((n, getattr(errno, n)) for n in dir(errno) if n.startswith("E"))
print(len(names), "names:", " ".join("%s=%d" % nv for nv in names))
print("errorcode:", sorted(errno.errorcode.items()))
print("ENOENT", errno.ENOENT, "EACCES", errno.EACCES, "EEXIST", errno.EEXIST, "EROFS", errno.EROFS)
for n in range(0, 136):
    print("strerror", n, os.strerror(n))
print("strerror -1", os.strerror(-1), "| 1000", os.strerror(1000))
for n in range(0, 136):
    e = OSError(n, "x")
    if type(e) is not OSError:
        print("OSError(%d)" % n, type(e).__name__, e)
print(repr(FileNotFoundError(errno.ENOENT, "gone", "f.txt")))

os.makedirs("/workspace/errno/sub", exist_ok=True)
with open("/workspace/errno/file", "w") as f:
    f.write("x")


def attempt(what, fn):
    try:
        fn()
    except OSError as e:
        print(what, "->", type(e).__name__, e.errno, errno.errorcode.get(e.errno), "|", e)
    else:
        print(what, "-> no error")


attempt("open missing", lambda: open("/workspace/errno/missing"))
attempt("open missing dir", lambda: open("/workspace/nope/missing"))
attempt("open x existing", lambda: open("/workspace/errno/file", "x"))
attempt("open dir for write", lambda: open("/workspace/errno/sub", "w"))
attempt("open dir", lambda: open("/workspace/errno/sub"))
attempt("open through file", lambda: open("/workspace/errno/file/x"))
attempt("mkdir existing", lambda: os.mkdir("/workspace/errno/sub"))
attempt("mkdir read-only", lambda: os.mkdir("/usr/lib/errno-probe"))
attempt("write read-only", lambda: open("/usr/lib/errno-probe", "w"))
attempt("rmdir non-empty", lambda: os.rmdir("/workspace/errno"))
attempt("rmdir file", lambda: os.rmdir("/workspace/errno/file"))
attempt("rmdir missing", lambda: os.rmdir("/workspace/errno/missing"))
attempt("unlink dir", lambda: os.unlink("/workspace/errno/sub"))
attempt("unlink missing", lambda: os.unlink("/workspace/errno/missing"))
attempt("rename file over dir", lambda: os.rename("/workspace/errno/file", "/workspace/errno/sub"))
attempt("rename dir over file", lambda: os.rename("/workspace/errno/sub", "/workspace/errno/file"))
attempt("rename missing", lambda: os.rename("/workspace/errno/missing", "/workspace/errno/m2"))
attempt("rename into itself", lambda: os.rename("/workspace/errno", "/workspace/errno/sub/x"))
attempt("listdir file", lambda: os.listdir("/workspace/errno/file"))
attempt("listdir missing", lambda: os.listdir("/workspace/errno/missing"))
attempt("chdir file", lambda: os.chdir("/workspace/errno/file"))
attempt("stat missing", lambda: os.stat("/workspace/errno/missing"))
attempt("read closed fd", lambda: os.read(999, 1))
attempt("close closed fd", lambda: os.close(999))
attempt("fstat closed fd", lambda: os.fstat(999))
attempt("read dir fd", lambda: os.read(os.open("/workspace/errno/sub", os.O_RDONLY), 1))
attempt("write read-only fd", lambda: os.write(os.open("/workspace/errno/file", os.O_RDONLY), b"y"))
attempt("terminal size", lambda: os.get_terminal_size(1))
attempt("name too long", lambda: open("/workspace/errno/" + "n" * 300))
attempt("truncate negative", lambda: os.truncate("/workspace/errno/file", -1))
attempt("lseek negative", lambda: os.lseek(os.open("/workspace/errno/file", os.O_RDONLY), -5, os.SEEK_SET))
attempt("utime missing", lambda: os.utime("/workspace/errno/missing"))
attempt("chmod missing", lambda: os.chmod("/workspace/errno/missing", 0o600))
