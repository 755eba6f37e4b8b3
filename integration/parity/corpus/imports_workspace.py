# Modules in the workspace. The runner runs python -I, which puts neither
# the script's directory nor the working directory on sys.path: a module
# in /workspace is importable once the script puts the workspace there
# itself, and so are a module and a package the script writes, after
# importlib.invalidate_caches(); importlib.reload reads an edited source.
# The script removes what it wrote (bytecode included), so that the
# exported workspace is the seed on both backends.
import importlib
import os
import shutil
import sys

print("path:", sys.path[0], os.getcwd() in sys.path, "" in sys.path, sys.dont_write_bytecode)
with open("helper_mod.py", "w") as f:
    f.write("VALUE = 41 + 1\n\ndef twice(x):\n    return 2 * x\n")
try:
    import helper_mod
except ModuleNotFoundError as e:
    print("before:", type(e).__name__, e.name)
sys.path.insert(0, os.getcwd())
importlib.invalidate_caches()
import helper_mod  # noqa: E402

print("after:", helper_mod.VALUE, helper_mod.twice(21), os.path.relpath(helper_mod.__file__))
os.makedirs("pkg_w/sub")
for path, source in [
    ("pkg_w/__init__.py", "NAME = 'pkg'\n"),
    ("pkg_w/sub/__init__.py", ""),
    ("pkg_w/sub/leaf.py", "from .. import NAME\nLEAF = NAME + '.leaf'\n"),
]:
    with open(path, "w") as f:
        f.write(source)
importlib.invalidate_caches()
from pkg_w.sub import leaf  # noqa: E402

print("package:", leaf.LEAF, leaf.__name__, leaf.__package__, os.path.relpath(leaf.__file__))
with open("helper_mod.py", "w") as f:
    f.write("VALUE = 'reloaded, a longer source'\n")
importlib.reload(helper_mod)
print("reloaded:", helper_mod.VALUE, hasattr(helper_mod, "twice"))
print("bytecode written:", sorted(os.listdir("__pycache__")) if os.path.isdir("__pycache__") else None)
os.remove("helper_mod.py")
shutil.rmtree("pkg_w")
shutil.rmtree("__pycache__", ignore_errors=True)
print(sorted(os.listdir(".")))
