# os.access answers as natively (under wazero wasi-libc checked only that
# the path existed: the read-only mounts were writable to it, and every
# file executable): the permission bits, which stat shows on both
# (fs_stat_modes.py) and chmod changes on both (fs_file_modes.py).
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
os.chmod("f", 0o755)
print("after chmod +x:", os.access("f", os.X_OK), shutil.which("f", path="."))
os.chmod("f", 0o200)
print("write only:", os.access("f", os.R_OK), os.access("f", os.W_OK), os.access("f", os.R_OK | os.W_OK))
os.chmod("d", 0o600)
print("directory without search:", os.access("d", os.X_OK), os.access("d", os.R_OK))
