# os.statvfs, os.fstatvfs and shutil.disk_usage as a script sees them: the
# writable mounts are tmpfs of the run's limits (their size, their inodes,
# what the script's files use in whole pages, an inode per name), the root
# is the host's filesystem read-only, /dev a small tmpfs and its nodes the
# host's; errors as stat's.
import os
import shutil

def usage(path):
    u = shutil.disk_usage(path)
    return u.total, u.used, u.free

def fields(path_or_fd):
    s = os.statvfs(path_or_fd)
    return s.f_bsize, s.f_frsize, s.f_blocks, s.f_files, s.f_flag, s.f_namemax

for path in ("/workspace", "/tmp", ".", "/tmp/", b"/workspace"):
    print(path, usage(path), fields(path))
    s = os.statvfs(path)
    print(" free", s.f_bfree == s.f_bavail, s.f_ffree == s.f_favail, s.f_blocks - s.f_bfree, s.f_files - s.f_ffree)

# What files use: pages and inodes, credited back when they go.
before = os.statvfs("/tmp")
os.mkdir("/tmp/d")
for i, size in enumerate((0, 1, 4096, 4097, 100000)):
    with open("/tmp/d/f%d" % i, "wb") as f:
        f.write(b"x" * size)
os.link("/tmp/d/f4", "/tmp/d/hard")
after = os.statvfs("/tmp")
print("tmp used", after.f_bfree - before.f_bfree, after.f_ffree - before.f_ffree)
with open("/workspace/w.bin", "wb") as f:
    f.write(os.urandom(12345))
print("workspace", usage("/workspace"), usage("/workspace/w.bin") == usage("/workspace"))
shutil.rmtree("/tmp/d")
again = os.statvfs("/tmp")
print("tmp freed", again.f_bfree == before.f_bfree, again.f_ffree == before.f_ffree)
os.remove("/workspace/w.bin")

# Descriptors: os.fstatvfs and os.statvfs of one.
fd = os.open("/tmp", os.O_RDONLY)
print("fd", fields(fd) == fields("/tmp"), os.fstatvfs(fd) == os.statvfs("/tmp"), os.statvfs in os.supports_fd)
os.close(fd)
with open("/workspace/g.txt", "w") as f:
    print("file", os.fstatvfs(f.fileno()).f_blocks == os.statvfs("/workspace").f_blocks)
os.remove("/workspace/g.txt")

# The read-only root and the stdlib on it, and /dev.
root = os.statvfs("/")
# The host's root is live (other processes write there): only its size
# is the same from one call to the next.
print("root", root.f_flag & os.ST_RDONLY, root.f_bsize, root.f_namemax, root.f_blocks > 0,
      usage("/")[0] == usage("/")[0], root.f_fsid == os.statvfs("/").f_fsid)
print("stdlib", os.statvfs(os.__file__).f_blocks == root.f_blocks)
out = os.statvfs("/run/apysup/out")  # the runner's own tmpfs: its outcome, noexec
print("out", out.f_bsize, out.f_blocks, out.f_files, out.f_files - out.f_ffree, out.f_flag)
dev = os.statvfs("/dev")
print("dev", dev.f_bsize, dev.f_blocks, dev.f_bfree, dev.f_files, dev.f_flag)
null = os.statvfs("/dev/null")
print("null", null.f_flag, null.f_namemax, null.f_blocks == os.statvfs("/dev/zero").f_blocks)

# Errors, as stat's.
os.mkdir("/tmp/e")
open("/tmp/e/file", "w").close()
for bad in ("/nonexistent", "/tmp/e/file/x", "", "/workspace/missing", "/tmp/e/file/"):
    try:
        os.statvfs(bad)
        print(bad, "ok")
    except OSError as e:
        print(repr(bad), type(e).__name__, e.errno)
for bad in (None, 1.5, 99999):
    try:
        os.statvfs(bad)
    except (TypeError, ValueError, OSError) as e:
        print(repr(bad), type(e).__name__, getattr(e, "errno", None))
try:
    os.fstatvfs(99999)
except OSError as e:
    print("fstatvfs", type(e).__name__, e.errno)

print(sorted(n for n in dir(os) if n.startswith("ST_")), os.ST_RDONLY, os.ST_NOSUID, os.ST_RELATIME)
print(os.statvfs_result.n_fields, os.statvfs_result.n_sequence_fields, "disk_usage" in shutil.__all__)
print("exported", "statvfs" in os.__all__, "fstatvfs" in os.__all__)
