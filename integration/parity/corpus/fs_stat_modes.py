# Permission bits, owners and devices as stat answers them: the sandbox's
# mount points, the host's read-only files (nobody's, through the user
# namespace), what the guest writes (its uid, under umask 022), and the
# archives a script builds from them. Under wazero WASI has neither bits
# nor owners; the host and python/wasi/_apysup_stat.c give the native
# answers.
import os
import stat
import sys
import tarfile
import zipfile

paths = ["/", "/usr", "/usr/lib", "/usr/lib/python3.11", "/usr/lib/python3.11/json",
         "/usr/lib/python3.11/json/__init__.py", "/usr/share/zoneinfo", "/usr/share/zoneinfo/UTC",
         "/opt", "/opt/apysup", "/opt/apysup/agent_runtime.py", "/run", "/run/apysup", "/run/apysup/job",
         sys.argv[0], "/run/apysup/out", "/workspace", "/tmp", "/dev", "/dev/null", "/dev/urandom"]
os.mkdir("/tmp/d")
open("/tmp/d/f", "w").close()
os.makedirs("w/sub")
with open("w/f.txt", "w") as f:
    f.write("data")
paths += ["/tmp/d", "/tmp/d/f", "/workspace/w", "/workspace/w/sub", "/workspace/w/f.txt", "input.txt"]
for p in paths:
    st = os.stat(p)
    print(p, stat.filemode(st.st_mode), oct(st.st_mode), st.st_uid, st.st_gid)
with open("w/f.txt") as f:
    st = os.fstat(f.fileno())
print("fstat", oct(st.st_mode), st.st_uid, os.path.samestat(st, os.stat("w/f.txt")))
print("entries", sorted((e.name, oct(e.stat(follow_symlinks=False).st_mode)) for e in os.scandir("w")))
print("mounts", [os.path.ismount(p) for p in ("/workspace", "/tmp", "/workspace/w", "/usr/lib", "/")])
print("same device", os.stat("w").st_dev == os.stat("w/f.txt").st_dev, os.stat("/tmp").st_dev == os.stat("/workspace").st_dev)
os.utime("w/f.txt", (1700000000, 1700000000))
with zipfile.ZipFile("w.zip", "w") as z:
    z.write("w/f.txt")
print("zip", [(i.filename, oct(i.external_attr >> 16)) for i in zipfile.ZipFile("w.zip").infolist()])
with tarfile.open("/tmp/w.tar", "w") as t:
    t.add("w/f.txt")
print("tar", [(m.name, oct(m.mode), m.uid, m.gid) for m in tarfile.open("/tmp/w.tar").getmembers()])
