# os.access with follow_symlinks=False asks about the last component
# itself: a link exists, and its bits are 0777, so only W_OK can fail, on
# a read-only mount. Under wazero every such answer was False: wasi-libc's
# faccessat refuses AT_SYMLINK_NOFOLLOW (os-access.patch).
import os

os.symlink("nowhere", "dangle")
os.symlink("target.txt", "good")
with open("target.txt", "w"):
    pass
os.mkdir("d")
os.symlink("d", "dlink")
os.chmod("target.txt", 0o400)
modes = (os.F_OK, os.R_OK, os.W_OK, os.X_OK)
for p in ("dangle", "good", "target.txt", "d", "dlink", "missing",
          "/usr/share/zoneinfo/GB", "/usr/share/zoneinfo/UTC", "/etc/passwd", "/tmp"):
    print(p, [os.access(p, m, follow_symlinks=False) for m in modes],
          [os.access(p, m) for m in modes])
fd = os.open(".", os.O_RDONLY)
print("dir_fd", [os.access("dangle", m, dir_fd=fd, follow_symlinks=False) for m in modes])
os.close(fd)
print("effective_ids", [os.access("target.txt", m, effective_ids=True, follow_symlinks=False) for m in modes])
print("supported", os.access in os.supports_follow_symlinks)
for p in ("dangle", "good", "dlink", "target.txt"):
    os.remove(p)
os.rmdir("d")
