# The character devices scripts open by name work on both backends (under
# wazero /dev was missing: os.devnull raised FileNotFoundError).
import contextlib
import os
import stat

with open(os.devnull, "w") as f, contextlib.redirect_stdout(f):
    print("discarded")
print(os.devnull, stat.S_ISCHR(os.stat(os.devnull).st_mode))
print([n for n in ("full", "null", "random", "urandom", "zero") if n in os.listdir("/dev")])
print(repr(open("/dev/null", "rb").read()), open("/dev/zero", "rb").read(3), open("/dev/full", "rb").read(1))
print(len(open("/dev/urandom", "rb").read(16)), len(open("/dev/random", "rb").read(16)))
print(open("/dev/null", "ab").write(b"x"), open("/dev/zero", "r+b").read(1), open("/dev/null", "rb").seek(5))
try:
    with open("/dev/full", "wb", buffering=0) as f:
        f.write(b"x")
except OSError:
    print("/dev/full refused the write")
for name, f in (("create", lambda: open("/dev/x", "w")), ("unlink", lambda: os.unlink("/dev/null")), ("mkdir", lambda: os.mkdir("/dev/d"))):
    try:
        f()
    except PermissionError:
        print(name, "PermissionError")
print([os.access("/dev/null", m) for m in (os.R_OK, os.W_OK)])
