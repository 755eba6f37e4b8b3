# Calls on a directory's descriptor that only files take, answered as the
# native guest's kernel answers them (wazero answered EISDIR to each):
# lseek moves the directory's reading position (tmpfs: SEEK_END is
# EINVAL), write and pwrite are EBADF (a directory is never open for
# writing), ftruncate EINVAL, posix_fallocate EBADF, as on a file opened
# read-only. python/wasi/_apysup_errno.c and _apysup_fcntl.c.
import errno
import os


def attempt(label, call):
    try:
        print(label, call())
    except OSError as e:
        print(label, type(e).__name__, errno.errorcode[e.errno])


os.mkdir("errnos_dir")
with open("errnos_file", "w") as f:
    f.write("abc")
for path in ("errnos_dir", ".", "/tmp"):
    fd = os.open(path, os.O_RDONLY)
    for label, call in [
        ("lseek set 0", lambda: os.lseek(fd, 0, os.SEEK_SET)),
        ("lseek set 5", lambda: os.lseek(fd, 5, os.SEEK_SET)),
        ("lseek cur 0", lambda: os.lseek(fd, 0, os.SEEK_CUR)),
        ("lseek cur 3", lambda: os.lseek(fd, 3, os.SEEK_CUR)),
        ("lseek cur -20", lambda: os.lseek(fd, -20, os.SEEK_CUR)),
        ("lseek cur 0", lambda: os.lseek(fd, 0, os.SEEK_CUR)),
        ("lseek end", lambda: os.lseek(fd, 0, os.SEEK_END)),
        ("lseek set -1", lambda: os.lseek(fd, -1, os.SEEK_SET)),
        ("lseek set 0", lambda: os.lseek(fd, 0, os.SEEK_SET)),
        ("ftruncate", lambda: os.ftruncate(fd, 0)),
        ("write", lambda: os.write(fd, b"x")),
        ("pwrite", lambda: os.pwrite(fd, b"x", 0)),
        ("writev", lambda: os.writev(fd, [b"x"])),
        ("read", lambda: os.read(fd, 1)),
        ("fsync", lambda: os.fsync(fd)),
        ("posix_fallocate", lambda: os.posix_fallocate(fd, 0, 1)),
    ]:
        attempt(f"{path} {label}", call)
    print(path, "listdir", sorted(os.listdir(fd)) if path == "errnos_dir" else "-")
    os.close(fd)

# A new descriptor of a directory starts at 0 again.
fd = os.open("errnos_dir", os.O_RDONLY)
attempt("reopened cur", lambda: os.lseek(fd, 0, os.SEEK_CUR))
os.close(fd)

# posix_fallocate checks the range, then that the file is open for
# writing, before it looks at the file; a writable file grows.
for flags in (os.O_RDONLY, os.O_WRONLY, os.O_RDWR):
    fd = os.open("errnos_file", flags)
    attempt(f"fallocate flags {flags} 1", lambda: os.posix_fallocate(fd, 0, 1))
    attempt(f"fallocate flags {flags} 0", lambda: os.posix_fallocate(fd, 0, 0))
    attempt(f"fallocate flags {flags} 100", lambda: os.posix_fallocate(fd, 0, 100 + flags))
    attempt(f"ftruncate flags {flags}", lambda: os.ftruncate(fd, 3))
    print("size", os.stat("errnos_file").st_size)
    os.close(fd)
