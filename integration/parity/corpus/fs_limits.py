# The errors at the open-file and file-size limits, alike on both backends
# (wazero's budgets answer what the WASI build turns into the native
# errnos: python/wasi/_apysup_errno.c). Symlinks, once here, are
# fs_symlinks.py and fs_symlinks_dotdot.py.
import errno
import os

def code(e):
    return "%s %s" % (type(e).__name__, errno.errorcode.get(e.errno, e.errno))

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
