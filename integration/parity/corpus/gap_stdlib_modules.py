# Which modules of sys.stdlib_module_names import. Left out: those that act
# on import (this, antigravity, __hello__, __phello__) or only start GUIs,
# and those that natively depend on optional Debian packages of the host
# (python3-gdbm, python3-tk).
import importlib
import sys
import warnings

warnings.simplefilter("ignore")
skip = {"this", "antigravity", "__hello__", "__phello__", "idlelib", "turtledemo", "turtle", "tkinter", "_tkinter", "_gdbm"}
failed = []
for name in sorted(sys.stdlib_module_names - skip):
    try:
        importlib.import_module(name)
    except Exception as e:  # ImportError, and OSError from modules that probe the host
        failed.append(name)
print(len(sys.stdlib_module_names), "names;", len(failed), "do not import:")
print(" ".join(failed))
