# The standard library's data files, which the WASI guest's stdlib zip
# holds as natively: lib2to3 builds its parser from Grammar.txt (under
# wazero it found neither the grammar nor a pickle of it), pydoc's HTML
# server serves its style sheet, venv writes its activation scripts, and
# LICENSE.txt sits beside os.py; ensurepip imports on both, and ctypes has
# no macholib on either.
import hashlib
import importlib.resources
import os
import warnings

warnings.simplefilter("ignore")
from lib2to3 import pygram, pytree
from lib2to3.pgen2 import driver

tree = driver.Driver(pygram.python_grammar_no_print_statement, convert=pytree.convert).parse_string("x = f(1, *a)\n")
print("lib2to3:", repr(str(tree)), [type(n).__name__ for n in tree.pre_order()][:6])
from lib2to3 import refactor

fixers = refactor.get_fixers_from_package("lib2to3.fixes")
out = refactor.RefactoringTool(["lib2to3.fixes.fix_print", "lib2to3.fixes.fix_has_key"]).refactor_string("print 'a'\nd.has_key(k)\n", "<s>")
print("2to3:", len(fixers), "fixers;", repr(str(out)))

lib = os.path.dirname(os.__file__)
for rel in ("lib2to3/Grammar.txt", "lib2to3/PatternGrammar.txt", "pydoc_data/_pydoc.css", "email/architecture.rst",
            "venv/scripts/common/activate", "venv/scripts/posix/activate.fish", "LICENSE.txt"):
    with open(os.path.join(lib, rel), "rb") as f:
        data = f.read()
    print(rel, len(data), hashlib.sha256(data).hexdigest()[:16])
print("css:", importlib.resources.files("pydoc_data").joinpath("_pydoc.css").read_text().splitlines()[1].strip())
print("venv scripts:", sorted(os.listdir(os.path.join(lib, "venv", "scripts"))))
# Debian's rules remove ctypes/macholib; the test packages are left aside.
print("ctypes:", sorted(n for n in os.listdir(os.path.join(lib, "ctypes")) if n.endswith(".py") or n == "macholib"))

import ensurepip

print("ensurepip:", ensurepip.__name__, callable(ensurepip.bootstrap))
