# What the read-only mounts answer besides reads, on both backends as the
# native guest's kernel answers (the seventh differential hunt): readlink
# of a name that is not a link is EINVAL (it was ENOSYS under wazero),
# fsync of a file there is done (EBADF), a name over 255 bytes or a path
# over 4,096 is ENAMETOOLONG (ENOENT or EROFS), an exclusive create of a
# name there is EEXIST (EACCES or EISDIR), O_TRUNC of a directory EISDIR
# (allowed), and a /proc file copies and preads whole (shutil's copy of
# /proc/cpuinfo was empty under wazero).
import errno
import os
import shutil
import sys


def attempt(label, f, *args):
    try:
        r = f(*args)
        print(label, "ok", r if not isinstance(r, int) or r < 3 else "fd")
        if isinstance(r, int) and r >= 3:
            os.close(r)
    except OSError as e:
        print(label, errno.errorcode.get(e.errno, e.errno))


for path in ("/etc/passwd", "/etc/localtime", "/etc", sys.argv[0], os.__file__, "/usr/bin/python3.11",
             "/proc/cpuinfo", "/opt/apysup", "/etc/passwd/x", "/dev/null"):
    attempt("readlink " + path, os.readlink, path)
try:
    os.readlink("/etc/localtime")
    print("localtime is a link")
except FileNotFoundError:
    print("no /etc/localtime: UTC")

for path in ("/etc/passwd", os.__file__, sys.argv[0], "/etc", os.path.dirname(os.__file__)):
    fd = os.open(path, os.O_RDONLY)
    attempt("fsync " + path, os.fsync, fd)
    attempt("fdatasync " + path, os.fdatasync, fd)
    os.close(fd)

long_name = "a" * 256
for base in ("/etc", os.path.dirname(os.__file__), "/opt/apysup", "/", "/dev", "/proc", "/tmp", "/workspace"):
    attempt("stat long name in " + base, os.stat, os.path.join(base, long_name))
    attempt("create long name in " + base, os.open, os.path.join(base, long_name), os.O_CREAT | os.O_WRONLY)
    attempt("stat long path in " + base, os.stat, os.path.join(base, *(["b" * 200] * 21)))
    attempt("stat 255 in " + base, os.stat, os.path.join(base, "a" * 255))

for path in ("/etc/passwd", "/etc", os.__file__, sys.argv[0], "/"):
    attempt("exclusive create " + path, os.open, path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
for path in ("/etc", os.path.dirname(os.__file__), "/", "/tmp", "/workspace"):
    attempt("O_TRUNC of dir " + path, os.open, path, os.O_RDONLY | os.O_TRUNC)
attempt("mkdir /dev/null/x", os.mkdir, "/dev/null/x")
attempt("mkdir /dev/zero/x/y", os.mkdir, "/dev/zero/x/y")

for name in ("cpuinfo", "meminfo", "version"):
    src = "/proc/" + name
    shutil.copy(src, "/tmp/" + name)
    with open(src, "rb") as f:
        direct = f.read()
    copied = os.path.getsize("/tmp/" + name)
    print("copy", name, copied > 0, abs(copied - len(direct)) < 4096)
    fd = os.open(src, os.O_RDONLY)
    print("pread", name, len(os.pread(fd, 10, 0)), len(os.pread(fd, 10, 10**6)))
    attempt("seek end " + name, os.lseek, fd, 0, os.SEEK_END)
    print("seek past", os.lseek(fd, 10**6, os.SEEK_SET), os.read(fd, 5))
    os.close(fd)

# A writable mount's own directory is a name of the mount below it: a
# rename of it, or onto it, is across two mounts, EXDEV (the host's rename
# said EIO under wazero).
open("/workspace/f", "w").close()
os.mkdir("/workspace/d")
open("/tmp/g", "w").close()
for a, b in (("/workspace/f", "/workspace"), ("/workspace/d", "/workspace"), ("/workspace", "/workspace/x"),
             ("/tmp/g", "/tmp"), ("/tmp", "/tmp/x")):
    attempt("rename %s %s" % (a, b), os.rename, a, b)
