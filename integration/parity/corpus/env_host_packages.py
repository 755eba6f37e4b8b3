# The host's own Python packages are not the guest's: natively the sandbox
# binds the host's whole /usr, where Debian's packages (and pip's) live,
# and site.main() or a directory appended to sys.path by hand imported
# them, and ran their .pth files (the eighth differential hunt). Each
# directory site.getsitepackages() names is now empty on both backends.
import importlib.metadata
import os
import site
import sys

site.main()
for d in site.getsitepackages():
    print(d, os.path.isdir(d) and os.listdir(d))
print("dist-packages on sys.path", sorted(p for p in sys.path if "packages" in p) == sorted(
    d for d in site.getsitepackages() if os.path.isdir(d)))
sys.path.append("/usr/lib/python3/dist-packages")
for name in ("yaml", "pip", "setuptools", "jwt", "pygments", "cryptography", "requests", "six"):
    try:
        __import__(name)
        print(name, "imported")
    except ImportError:
        print(name, "absent")
print("distributions", len(list(importlib.metadata.distributions())))
