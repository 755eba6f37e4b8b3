# The distribution a script finds: natively the guest's /usr is the
# host's, so platform.freedesktop_os_release() reads the host's
# /usr/lib/os-release (the generated /etc has none). Under wazero /usr/lib
# was the stdlib alone, and the function raised FileNotFoundError; the
# stdlib tree now carries the host's file there (osrelease.go).
import os
import platform

info = platform.freedesktop_os_release()
print(sorted(info))
print(info["ID"], info.get("VERSION_ID"), info["NAME"])
print([os.path.exists(p) for p in ("/etc/os-release", "/usr/lib/os-release")])
with open("/usr/lib/os-release", "rb") as f:
    data = f.read()
print(len(data) == os.stat("/usr/lib/os-release").st_size, data == open("/usr/lib/os-release", "rb").read())
print(data.splitlines()[0])
for mode in ("a", "w"):
    try:
        open("/usr/lib/os-release", mode)
    except OSError as e:
        print(mode, type(e).__name__, e.errno)
try:
    os.remove("/usr/lib/os-release")
except OSError as e:
    print("remove", type(e).__name__, e.errno)
