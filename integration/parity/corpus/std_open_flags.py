# The numbers a script passes to os.open, os.posix_fadvise and time's
# clock functions are Linux's on both backends: the constants, literal
# flags, the flags io hands a custom opener, and clock ids.
import os
import time

print(sorted((n, getattr(os, n)) for n in dir(os) if n.startswith(("O_", "POSIX_FADV_"))
             and n not in ("O_PATH", "O_TMPFILE")) == sorted(
    (n, v) for n, v in {
        "O_ACCMODE": 3, "O_APPEND": 1024, "O_ASYNC": 8192, "O_CLOEXEC": 524288, "O_CREAT": 64,
        "O_DIRECT": 16384, "O_DIRECTORY": 65536, "O_DSYNC": 4096, "O_EXCL": 128, "O_FSYNC": 1052672,
        "O_LARGEFILE": 0, "O_NDELAY": 2048, "O_NOATIME": 262144, "O_NOCTTY": 256, "O_NOFOLLOW": 131072,
        "O_NONBLOCK": 2048, "O_RDONLY": 0, "O_RDWR": 2, "O_RSYNC": 1052672, "O_SYNC": 1052672,
        "O_TRUNC": 512, "O_WRONLY": 1, "POSIX_FADV_DONTNEED": 4, "POSIX_FADV_NOREUSE": 5,
        "POSIX_FADV_NORMAL": 0, "POSIX_FADV_RANDOM": 1, "POSIX_FADV_SEQUENTIAL": 2,
        "POSIX_FADV_WILLNEED": 3}.items()))
for n in ("O_RDONLY", "O_WRONLY", "O_RDWR", "O_CREAT", "O_EXCL", "O_TRUNC", "O_APPEND", "O_NONBLOCK", "O_DIRECTORY", "O_NOFOLLOW", "O_CLOEXEC", "O_SYNC"):
    print(n, getattr(os, n))
for n in ("CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID"):
    print(n, getattr(time, n))

with open("flags.txt", "w") as f:
    f.write("data")


def attempt(flags, mode=0o644):
    try:
        fd = os.open("flags.txt", flags, mode)
    except OSError as e:
        return "open %s" % e
    out = []
    try:
        out.append(os.read(fd, 4))
    except OSError as e:
        out.append(e.strerror)
    try:
        out.append(os.write(fd, b"x"))
    except OSError as e:
        out.append(e.strerror)
    os.close(fd)
    return out


for flags in (0, 1, 2, 0o100, 0o101, 0o1101, 0o2001, 0o2002, 0o4000, 0o200101, 0o400000, 0o2000000, 0o100000):
    print(oct(flags), attempt(flags), repr(open("flags.txt").read()))
print("excl", attempt(os.O_WRONLY | os.O_CREAT | os.O_EXCL))
print("directory on a file", attempt(os.O_RDONLY | os.O_DIRECTORY))
fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
print("directory", sorted(os.listdir(fd)))
os.close(fd)

# The flags io hands a custom opener are the native ones.
seen = []


def opener(path, flags):
    seen.append(flags)
    return os.open(path, flags, 0o600)


for mode in ("r", "rb", "w", "wb", "a", "ab", "r+", "w+", "a+", "x"):
    if mode == "x":
        os.remove("flags.txt")
    with open("flags.txt", mode, opener=opener) as f:
        pass
    print("opener", mode, oct(seen[-1]))

fd = os.open("flags.txt", os.O_RDONLY)
for advice in ("NORMAL", "RANDOM", "SEQUENTIAL", "WILLNEED", "DONTNEED", "NOREUSE"):
    print("fadvise", advice, os.posix_fadvise(fd, 0, 0, getattr(os, "POSIX_FADV_" + advice)))
try:
    os.posix_fadvise(fd, 0, 0, 99)
except OSError as e:
    print("fadvise 99", e)
os.close(fd)

print("clocks", [type(time.clock_gettime(i)).__name__ for i in range(4)],
      time.clock_gettime(0) > 1.6e9, time.clock_gettime_ns(1) > 0, time.clock_getres(0) > 0)
for bad in (99, -1):
    try:
        time.clock_gettime(bad)
    except OSError as e:
        print("clock", bad, e)
