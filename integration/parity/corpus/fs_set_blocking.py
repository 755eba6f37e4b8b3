# os.set_blocking on regular files and directories works, and reads back
# (it was ENOSYS under wazero): in the workspace, in a read-only mount, a
# directory; reads are unchanged. The standard streams take it too: stdin
# (/dev/null) reads EOF either way (it was ENOSYS under wazero).
import os

with open("blocking.txt", "w") as f:
    f.write("data")
for path in ("blocking.txt", "/opt/apysup/agent_runtime.py", "."):
    fd = os.open(path, os.O_RDONLY)
    os.set_blocking(fd, False)
    off = os.get_blocking(fd)
    os.set_blocking(fd, True)
    print(os.path.basename(path), off, os.get_blocking(fd))
    os.close(fd)
fd = os.open("blocking.txt", os.O_RDONLY)
os.set_blocking(fd, False)
print(os.read(fd, 10))
os.close(fd)
os.remove("blocking.txt")
for fd in (0, 1, 2):
    os.set_blocking(fd, False)
    off = os.get_blocking(fd)
    os.set_blocking(fd, True)
    print(fd, off, os.get_blocking(fd))
os.set_blocking(0, False)
print(os.read(0, 10), os.fstat(0).st_mode)
os.set_blocking(0, True)
