# A missing path is missing wherever it is: outside every wazero mount too
# (ENOENT, as natively; it was a PermissionError from wasi-libc).
import errno
import os
import pathlib

for p in ("/nonexistent/x", "/parity-nope", "/usr/lib/parity-nope", "/run/parity-nope/x", "/opt/parity-nope"):
    try:
        os.stat(p)
        print(p, "exists")
    except OSError as e:
        print(p, pathlib.Path(p).exists(), os.path.exists(p), pathlib.Path(p).is_file(),
              type(e).__name__, errno.errorcode[e.errno])
print("/", pathlib.Path("/").is_dir(), "/usr", pathlib.Path("/usr").is_dir())
