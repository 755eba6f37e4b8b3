"""Write the WASI guest's standard library as a stored zip laid out as the
native guest's: each module's source and, beside it, its bytecode in
__pycache__.

Run by the native build python (the same CPython source, so the same bytecode
magic): mkstdlib.py LIB_DIR SYSCONFIGDATA_DIR OUT_ZIP.

The zip is deterministic: entries sorted, fixed timestamps, unchecked
hash-based pycs (the import system loads them without reading the source),
code objects named as the native guest names them
(/usr/lib/python3.11/...). The sources are there for what reads them
natively: a traceback's and a warning's source lines (linecache),
inspect.getsource, a module's __file__ ending in .py. Entries are stored,
not deflated: the guest reads them faster than it can inflate them.
"""

import importlib.util
import os
import sys
import zipfile

# Directories of Lib/ the guest never needs: test suites, GUI toolkits (no
# display under WASI) and pip bootstrapping.
EXCLUDED_DIRS = {
    "__pycache__",
    "test",
    "tests",
    "idle_test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "ensurepip",
    "site-packages",
    "dist-packages",
    "config-3.11-x86_64-linux-gnu",
}
EXCLUDED_FILES = {"turtle.py", "__phello__.foo.py"}
GUEST_LIB = "/usr/lib/python3.11"
EPOCH = (1980, 1, 1, 0, 0, 0)


def sources(lib_dir):
    for root, dirs, files in os.walk(lib_dir):
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS)
        for name in sorted(files):
            if name.endswith(".py") and name not in EXCLUDED_FILES:
                path = os.path.join(root, name)
                yield path, os.path.relpath(path, lib_dir)


def pyc(path, rel):
    with open(path, "rb") as f:
        source = f.read()
    code = compile(source, GUEST_LIB + "/" + rel, "exec", dont_inherit=True, optimize=0)
    return importlib._bootstrap_external._code_to_hash_pyc(
        code, importlib.util.source_hash(source), checked=False
    )


def cached(rel):
    """The bytecode's name beside the source rel, as the import system
    looks for it (importlib.util.cache_from_source, without optimisation)."""
    head, tail = os.path.split(rel)
    return os.path.join(head, "__pycache__", tail[:-3] + "." + sys.implementation.cache_tag + ".pyc")


def main():
    lib_dir, sysconfig_dir, out = sys.argv[1:4]
    entries = {}
    found = list(sources(lib_dir))
    for name in os.listdir(sysconfig_dir):
        if name.startswith("_sysconfigdata_") and name.endswith(".py"):
            found.append((os.path.join(sysconfig_dir, name), name))
    for path, rel in found:
        with open(path, "rb") as f:
            entries[rel] = f.read()
        entries[cached(rel)] = pyc(path, rel)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, EPOCH)
            info.external_attr = 0o644 << 16
            zf.writestr(info, entries[name])
    print(f"{len(found)} modules")


if __name__ == "__main__":
    main()
