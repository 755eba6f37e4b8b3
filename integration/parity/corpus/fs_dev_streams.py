# /dev/stdin, /dev/stdout and /dev/stderr: links to /proc/self/fd/0, 1
# and 2 in root's /dev, through which the guest reaches /dev/null and its
# own output pipes, which are the guest's (the supervisor gives them its
# uid), so that they open for writing as on a host.
import errno, os, stat, sys

STREAMS = ("stdin", "stdout", "stderr")
DEVICES = ("full", "null", "random", "urandom", "zero")
print(sorted(n for n in os.listdir("/dev") if n in STREAMS + DEVICES))
for name in STREAMS:
    path = "/dev/" + name
    l, s = os.lstat(path), os.stat(path)
    print(name, stat.filemode(l.st_mode), l.st_uid, l.st_size, os.readlink(path), os.path.islink(path),
          stat.filemode(s.st_mode), s.st_uid, s.st_gid, s.st_size, os.path.exists(path))

sys.stdout.write("before\n")
sys.stdout.flush()
with open("/dev/stdout", "w") as f:
    print(f.writable(), f.seekable(), f.isatty(), f.fileno() > 2, file=f)
    st = os.fstat(f.fileno())
    print("fstat", stat.filemode(st.st_mode), st.st_uid, stat.S_ISFIFO(st.st_mode), file=f)
with open("/dev/stdout", "ab") as f:
    f.write(b"appended bytes\n")
print("after")
with open("/dev/stderr", "w") as f:
    f.write("to stderr through /dev/stderr\n")
with open("/dev/stdin") as f:
    print("stdin", repr(f.read()))
print("stdin bytes", os.read(os.open("/dev/stdin", os.O_RDONLY), 10))

fd = os.open("/dev/stdout", os.O_WRONLY)
print("os.write", os.write(fd, b"raw write\n"))
# Seeks: stdin is /dev/null, whose seeks land at 0; a pipe's fail (ESPIPE).
for n in (0, 1, 2, fd):
    try:
        print("lseek", n == fd or n, os.lseek(n, 0, os.SEEK_CUR), os.lseek(n, 5, os.SEEK_SET))
    except OSError as e:
        print("lseek", n == fd or n, errno.errorcode[e.errno])
os.close(fd)
print("stdin seekable", sys.stdin.seekable(), "stdout", sys.stdout.seekable(), "stderr", sys.stderr.seekable())
for name, op in (("nofollow", lambda: os.open("/dev/stdout", os.O_WRONLY | os.O_NOFOLLOW)),
                 ("utime", lambda: os.utime("/dev/stdout")),
                 ("unlink", lambda: os.unlink("/dev/stdout")),
                 ("mkdir", lambda: os.mkdir("/dev/stderr")),
                 ("symlink", lambda: os.symlink("/dev/null", "/dev/stdout")),
                 ("create", lambda: open("/dev/stdio", "w"))):
    try:
        r = op()
        print(name, "done", r is None)
    except OSError as e:
        print(name, errno.errorcode[e.errno])
# Writes to stdin, which is /dev/null opened for reading and writing: taken
# whole, and gone.
print("writes to stdin", os.write(0, b"into the void"), os.pwrite(0, b"abc", 5), os.writev(0, [b"ab", b"cde"]),
      repr(os.read(0, 10)))
