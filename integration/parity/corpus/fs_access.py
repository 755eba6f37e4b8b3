# os.access answers W_OK as natively (under wazero wasi-libc checked only
# that the path existed: the read-only mounts were writable to it). X_OK is
# existence under wazero: WASI has no permission bits (gap_file_modes.py).
import os
import shutil

open("f", "w").write("x")
os.mkdir("d")
paths = ("f", "d", "/workspace", "/run/apysup/out", "missing", "d/missing", "/",
         "/usr/lib", "/usr/lib/python3.11", "/opt/apysup", "/opt/apysup/apysup_runner.py", "/dev/null")
for p in paths:
    print(p, "r" if os.access(p, os.R_OK) else "-", "w" if os.access(p, os.W_OK) else "-", os.access(p, os.F_OK))
print("X_OK:", [p for p in paths if os.access(p, os.X_OK)])
print("which:", shutil.which("f", path="."), shutil.which("d", path="."))
