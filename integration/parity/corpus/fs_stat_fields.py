# The block size, block count and device number os.stat answers, and what
# Python builds on them, on both backends. WASI's filestat has none of the
# three: wasi-libc left them 0, so open() buffered files in 8 KiB where the
# native guest's st_blksize of 4096 gives 4 KiB (a binary file's writes
# reached the file at other points before it was flushed), st_blocks (disk
# usage) was 0, /dev's devices had no st_rdev and os.major, os.minor and
# os.makedev did not exist. The WASI build answers as the native guest's
# tmpfs and devices do (python/wasi/_apysup_stat.c), and the standard
# streams as the native guest's pipes and /dev/null.
import os
import stat

os.makedirs("d/e")
for name, size in (("empty", 0), ("one", 1), ("page", 4096), ("page1", 4097), ("big", 100000)):
    with open(name, "wb") as f:
        f.write(b"x" * size)
with open("/tmp/t", "wb") as f:
    f.write(b"y" * 5000)
for p in ("empty", "one", "page", "page1", "big", "d", "d/e", ".", "/tmp", "/tmp/t", "/dev", "/run/apysup/out"):
    st = os.stat(p)
    print(p, "blksize", st.st_blksize, "blocks", st.st_blocks, "rdev", st.st_rdev)
with open("big", "rb") as f:
    st = os.fstat(f.fileno())
    print("fstat", st.st_blksize, st.st_blocks, "buffer", f.raw._blksize)
for fd in (0, 1, 2):
    print("fd", fd, "blksize", os.fstat(fd).st_blksize)

# Disk usage as du reckons it.
total = 0
for root, dirs, files in os.walk("."):
    for name in dirs + files:
        total += os.lstat(os.path.join(root, name)).st_blocks * 512
print("du", total)

# The devices: character devices of the kernel's memory driver.
for name in ("null", "zero", "full", "random", "urandom"):
    st = os.stat("/dev/" + name)
    print(name, stat.S_ISCHR(st.st_mode), st.st_rdev, os.major(st.st_rdev), os.minor(st.st_rdev),
          os.makedev(os.major(st.st_rdev), os.minor(st.st_rdev)) == st.st_rdev, st.st_blocks)
for major, minor in ((0, 0), (1, 3), (8, 1), (4095, 255), (4096, 256), (2**31 - 1, 2**31 - 1), (-1, 0), (2**31, 1)):
    try:
        dev = os.makedev(major, minor)
        print("makedev", major, minor, dev, os.major(dev), os.minor(dev))
    except (OverflowError, ValueError) as e:
        print("makedev", major, minor, type(e).__name__, e)
for dev in (2**64 - 1, 2**63, -1, 2**64):
    try:
        print("split", dev, os.major(dev), os.minor(dev))
    except (OverflowError, ValueError) as e:
        print("split", dev, type(e).__name__, e)

# Buffered writes reach the file when the buffer (st_blksize) fills.
f = open("w.bin", "wb")
for chunk in (3000, 1000, 100, 5000, 10):
    f.write(b"z" * chunk)
    print("wrote", chunk, "file has", os.path.getsize("w.bin"))
f.close()
print("closed", os.path.getsize("w.bin"))
t = open("w.txt", "w")
for chunk in (5000, 5000):
    t.write("z" * chunk)
    print("text wrote", chunk, "file has", os.path.getsize("w.txt"))
t.close()

# The standard streams: stdin is /dev/null and stdout and stderr are pipes,
# all nobody's (under wazero, which serves them itself, the WASI build
# answers so: they carried no type, or a block device's).
for fd in (0, 1, 2):
    st = os.fstat(fd)
    print("stream", fd, stat.filemode(st.st_mode), st.st_uid, st.st_gid, st.st_nlink, st.st_size,
          st.st_blksize, st.st_blocks, os.major(st.st_rdev), os.minor(st.st_rdev),
          stat.S_ISFIFO(st.st_mode), stat.S_ISCHR(st.st_mode), os.isatty(fd), oct(st.st_mode))
# The file types' numbers are Linux's (a FIFO was wasi-libc's 0o140000, a
# socket's, under wazero).
print("types", [getattr(stat, n) for n in ("S_IFDIR", "S_IFCHR", "S_IFBLK", "S_IFREG", "S_IFIFO", "S_IFLNK", "S_IFSOCK")],
      stat.S_IFMT(0o177777), stat.S_ISFIFO(0o010644), stat.S_ISSOCK(0o140644), stat.S_ISFIFO(0o140644),
      stat.filemode(0o010644), stat.filemode(0o140644))
