# os.utime(p) and Path.touch() set the current time on both backends (the
# WASI build once set the epoch: python/wasi/patches/python3.11/utime-now.patch).
import os
import pathlib
import time

p = "utime.txt"
open(p, "w").close()
for name, bump in (("os.utime", lambda: os.utime(p)), ("touch", lambda: pathlib.Path(p).touch())):
    os.utime(p, ns=(5, 7))
    before = time.time()
    bump()
    st = os.stat(p)
    print(name, st.st_mtime >= before - 2, st.st_atime >= before - 2)
os.utime(p, ns=(1_000_000_005, 2_000_000_007))
print("explicit", os.stat(p).st_atime_ns, os.stat(p).st_mtime_ns)
os.remove(p)
