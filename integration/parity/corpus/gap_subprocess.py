import subprocess

try:
    r = subprocess.run(["/bin/echo", "hi"], capture_output=True)
    print("ran:", r.returncode, r.stdout)
except Exception as e:
    print("failed:", type(e).__name__, e)
import os

print("fork:", hasattr(os, "fork"), "posix_spawn:", hasattr(os, "posix_spawn"), "system:", hasattr(os, "system"))
# shutil.which finds the host's programs natively (the sandbox's /usr is
# the host's, read-only); under wazero there is none to find, nor to run.
import shutil

print("which:", shutil.which("python3.11"), shutil.which("sh"), shutil.which("tar"))
