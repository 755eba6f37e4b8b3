# A file name that is not UTF-8: Linux takes any bytes but "/" and NUL,
# WASI's paths are UTF-8 strings. Natively the name is made (a workspace
# that still holds one at the end is not exported: no JSON string names it
# exactly); under wazero it is refused. Both remove what they made, so the
# workspaces agree.
import errno
import os

os.chdir("/workspace")
for name in (b"\xff", "caf\udce9", "café"):
    try:
        with open(name, "w") as f:
            f.write("x")
        print(repr(name), "made", os.fsencode(name) in os.listdir(b"."))
        os.remove(name)
    except OSError as e:
        print(repr(name), type(e).__name__, errno.errorcode.get(e.errno))
