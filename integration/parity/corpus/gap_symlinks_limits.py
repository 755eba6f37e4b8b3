# Symlinks in the workspace, the errors at the open-file and file-size
# limits, and the CPU count: where WASI under wazero answers differently.
import errno
import os

def code(e):
    return "%s %s" % (type(e).__name__, errno.errorcode.get(e.errno, e.errno))

try:
    os.symlink("target.txt", "link.txt")
    print("symlink created", os.readlink("link.txt"))
    os.remove("link.txt")
except OSError as e:
    print("symlink refused:", code(e))

files = []
try:
    for i in range(100000):
        files.append(open("/workspace/fd-probe", "rb" if i else "wb"))
    print("no open-file limit reached")
except OSError as e:
    print("open files stopped:", code(e), len(files) > 10)
finally:
    for f in files:
        f.close()
    os.remove("/workspace/fd-probe")

try:
    with open("/workspace/big-probe", "wb") as f:
        chunk = b"x" * (1 << 20)
        for _ in range(300):
            f.write(chunk)
            f.flush()
    print("no file-size limit reached")
except OSError as e:
    print("file size stopped:", code(e))
finally:
    os.remove("/workspace/big-probe")

# Natively the host's online CPUs (the cgroup quota does not change it);
# under WASI always 1.
print("cpu_count", os.cpu_count())
