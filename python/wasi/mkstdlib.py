"""Write the WASI guest's standard library as a stored zip laid out as the
native guest's: each module's source and, beside it, its bytecode in
__pycache__, and the data files Debian installs beside the modules
(lib2to3's grammars, pydoc's style sheet, venv's activation scripts,
LICENSE.txt).

Run by the native build python (the same CPython source, so the same bytecode
magic): mkstdlib.py LIB_DIR SYSCONFIGDATA_DIR LICENSE CHANGELOG OUT_ZIP. The
modules of stdlib/ beside it (pwd, grp) are added at the top level.

The zip is deterministic: entries sorted, every entry dated by the source's
Debian revision (CHANGELOG's latest entry: the time Debian's build gives
the native guest's files, SOURCE_DATE_EPOCH), unchecked
hash-based pycs (the import system loads them without reading the source),
code objects named as the native guest names them
(/usr/lib/python3.11/...). The sources are there for what reads them
natively: a traceback's and a warning's source lines (linecache),
inspect.getsource, a module's __file__ ending in .py. Entries are stored,
not deflated: the guest reads them faster than it can inflate them.
"""

import email.utils
import importlib.util
import os
import struct
import sys
import time
import zipfile

# Directories of Lib/ the guest never needs: test suites and GUI toolkits
# (no display under WASI).
EXCLUDED_DIRS = {
    "__pycache__",
    "test",
    "tests",
    "idle_test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "site-packages",
    "dist-packages",
    "config-3.11-x86_64-linux-gnu",
}
# Directories of Lib/ that the native guest's /usr/lib/python3.11 does not
# have either: CPython's make install leaves them out (LIBSUBDIRS in
# Makefile.pre.in), Debian's rules remove ctypes/macholib and ensurepip's
# bundled wheels (Debian's ensurepip takes them from python3-pip-whl).
NOT_INSTALLED_DIRS = {"msilib", "__phello__/ham", "venv/scripts/nt", "ctypes/macholib", "ensurepip/_bundled"}
EXCLUDED_FILES = {"turtle.py", "__phello__.foo.py"}
GUEST_LIB = "/usr/lib/python3.11"
# Modules the WASI build supplies in Python where native CPython has C
# modules WASI cannot build (pwd, grp): stdlib/ beside this file.
WASI_MODULES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stdlib")


def revision_time(changelog):
    """The time of the latest entry of a Debian changelog, in Unix seconds:
    its first trailer line, " -- NAME <EMAIL>  DATE"."""
    with open(changelog, encoding="utf-8") as f:
        for line in f:
            if line.startswith(" -- "):
                return int(email.utils.parsedate_to_datetime(line.split(">", 1)[1].strip()).timestamp())
    raise SystemExit(f"{changelog}: no trailer line")


def dated(name, when):
    """A ZipInfo for name dated when: the DOS date (two-second steps, UTC)
    and, exact, the extended timestamp field (0x5455, the modification time
    only), which Go's archive/zip reads."""
    info = zipfile.ZipInfo(name, time.gmtime(when)[:6])
    info.extra = struct.pack("<HHBl", 0x5455, 5, 1, when)
    return info


def files(lib_dir):
    """Every file of lib_dir the guest gets, as (path, name in the zip):
    modules, and the data files of the directories that have modules (the
    top level's other files are the source tree's, not an install's)."""
    for root, dirs, names in os.walk(lib_dir):
        rel_root = os.path.relpath(root, lib_dir)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in EXCLUDED_DIRS and os.path.normpath(os.path.join(rel_root, d)) not in NOT_INSTALLED_DIRS
        )
        for name in sorted(names):
            if name in EXCLUDED_FILES or name.endswith((".pyc", ".orig", "~")):
                continue
            if rel_root == "." and not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            yield path, os.path.normpath(os.path.join(rel_root, name))


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
    lib_dir, sysconfig_dir, license_file, changelog, out = sys.argv[1:6]
    when = revision_time(changelog)
    entries = {}
    found = list(files(lib_dir))
    for name in os.listdir(sysconfig_dir):
        if name.startswith("_sysconfigdata_") and name.endswith(".py"):
            found.append((os.path.join(sysconfig_dir, name), name))
    for name in sorted(os.listdir(WASI_MODULES_DIR)):
        if name.endswith(".py"):
            found.append((os.path.join(WASI_MODULES_DIR, name), name))
    # Debian installs the source's LICENSE as LICENSE.txt, where the
    # license() of the site module looks for it.
    found.append((license_file, "LICENSE.txt"))
    modules = 0
    for path, rel in found:
        with open(path, "rb") as f:
            entries[rel] = f.read()
        if rel.endswith(".py"):
            entries[cached(rel)] = pyc(path, rel)
            modules += 1
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name in sorted(entries):
            info = dated(name, when)
            info.external_attr = 0o644 << 16
            zf.writestr(info, entries[name])
    print(f"{modules} modules, {len(found) - modules} data files")


if __name__ == "__main__":
    main()
