# os.set_blocking on regular files and directories works, and reads back
# (it was ENOSYS under wazero): in the workspace, in a read-only mount, a
# directory; reads are unchanged.
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
