import os

for path in ("/", "/usr/lib/python3.11/json", "/opt/apysup", "/run/apysup/job", "/tmp", "/etc", "/proc/self"):
    try:
        print(path, sorted(os.listdir(path))[:6])
    except OSError as e:
        print(path, "failed:", type(e).__name__, e.errno)
