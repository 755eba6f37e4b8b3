# The out directory is bounded on both backends (a tmpfs natively, a
# budget under wazero): bytes and files, and what is freed is free again.
import errno
import os

OUT = "/run/apysup/out/"


def code(e):
    return "%s %s" % (type(e).__name__, errno.errorcode.get(e.errno, e.errno))


n = 0
try:
    with open(OUT + "big", "wb", buffering=0) as f:
        for _ in range(64):
            n += f.write(b"x" * (1 << 20))
    print("bytes: no limit")
except OSError as e:
    print("bytes stopped:", code(e), "at 5 MiB:", (5 << 20) - (64 << 10) <= n <= 5 << 20)
os.remove(OUT + "big")

made = 0
try:
    for i in range(1000):
        open(OUT + "f%d" % i, "wb").close()
        made += 1
    print("files: no limit")
except OSError as e:
    print("files stopped:", code(e), "at", made)
for i in range(made):
    os.remove(OUT + "f%d" % i)

with open(OUT + "again", "wb") as f:
    f.write(b"y" * (4 << 20))
os.remove(OUT + "again")
print("room again")
