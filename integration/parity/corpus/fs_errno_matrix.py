# The answer to each file operation on each kind of path the guest has:
# the read-only root, /etc, the stdlib, the job, /opt/apysup, the zoneinfo
# database, /dev and /proc, the writable mounts and their own directories,
# links, dangling links and missing names. Natively each is the kernel's;
# under wazero each mount answers for itself, and a systematic sweep (stop
# 66) found the mount points' unlink (EISDIR, natively EROFS), /dev's own
# directory, /proc's rmdir, link and symlink onto a taken name (EXDEV,
# EROFS or EACCES before EEXIST) and link of a missing file across mounts
# (EXDEV before ENOENT) answered otherwise. Times are left out: WASI passes
# "now" as a time, which the host cannot tell from one the script chose.
import errno
import os
import sys

stdlib = os.path.dirname(os.__file__)
open("/tmp/y", "w").close()
paths = ["/etc/passwd", "/etc", "/dev/null", "/dev", "/proc/cpuinfo", "/proc", "/usr/share/zoneinfo/UTC",
         "/usr/share/zoneinfo", os.__file__, stdlib, "/", "/usr", "/run/apysup", "/run/apysup/job", sys.argv[0],
         "/opt/apysup", "/usr/bin/python3.11", "/nonexistent", "/etc/nonexistent",
         "/workspace", "/tmp", "/workspace/f", "/workspace/d", "/tmp/f", "/run/apysup/out", "/workspace/l",
         "/workspace/dl", "/workspace/broken", "/workspace/missing"]


def e(f, *a):
    try:
        r = f(*a)
        if isinstance(r, int) and f is os.open:
            os.close(r)
        return "ok"
    except OSError as x:
        return errno.errorcode.get(x.errno, str(x.errno))


def remake():
    for make in (lambda: open("/workspace/f", "w").close(), lambda: os.mkdir("/workspace/d"),
                 lambda: open("/tmp/f", "w").close(), lambda: open("/tmp/y", "w").close(),
                 lambda: os.symlink("f", "/workspace/l"), lambda: os.symlink("d", "/workspace/dl"),
                 lambda: os.symlink("nowhere", "/workspace/broken")):
        try:
            make()
        except OSError:
            pass


flags = {"RDONLY": os.O_RDONLY, "WRONLY": os.O_WRONLY, "RDWR": os.O_RDWR, "CREAT": os.O_RDONLY | os.O_CREAT,
         "CREAT_EXCL": os.O_WRONLY | os.O_CREAT | os.O_EXCL, "TRUNC": os.O_RDONLY | os.O_TRUNC,
         "APPEND": os.O_WRONLY | os.O_APPEND, "DIRECTORY": os.O_RDONLY | os.O_DIRECTORY,
         "NOFOLLOW": os.O_RDONLY | os.O_NOFOLLOW, "WR_CREAT": os.O_WRONLY | os.O_CREAT}
for p in paths:
    remake()
    row = [name + "=" + e(os.open, p, fl) for name, fl in flags.items()]
    row += ["open/x=" + e(os.open, p + "/x", os.O_RDONLY), "open/=" + e(os.open, p + "/", os.O_RDONLY),
            "mkdir=" + e(os.mkdir, p), "mkdir/x=" + e(os.mkdir, p + "/x"), "rmdir=" + e(os.rmdir, p),
            "unlink=" + e(os.unlink, p), "chmod=" + e(lambda q: os.chmod(q, os.stat(q).st_mode & 0o7777), p),
            "chown=" + e(os.chown, p, 1000, 1000), "truncate=" + e(os.truncate, p, 0)]
    remake()
    row += ["link=" + e(os.link, p, "/tmp/l"), "linkto=" + e(os.link, "/tmp/y", p),
            "symlinkto=" + e(os.symlink, "x", p), "renamefrom=" + e(os.rename, p, "/tmp/r"),
            "renameto=" + e(os.rename, "/tmp/y", p)]
    remake()
    row += ["access_w=" + str(os.access(p, os.W_OK)), "access_x=" + str(os.access(p, os.X_OK)),
            "listdir=" + e(os.listdir, p), "readlink=" + e(os.readlink, p), "stat/=" + e(os.stat, p + "/"),
            "lstat=" + e(os.lstat, p)]
    print(p.replace(sys.argv[0], "SCRIPT").replace(stdlib, "STDLIB"), " ".join(row))
