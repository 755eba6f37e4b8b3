import subprocess

try:
    r = subprocess.run(["/bin/echo", "hi"], capture_output=True)
    print("ran:", r.returncode, r.stdout)
except Exception as e:
    print("failed:", type(e).__name__, e)
import os

print("fork:", hasattr(os, "fork"), "posix_spawn:", hasattr(os, "posix_spawn"), "system:", hasattr(os, "system"))
