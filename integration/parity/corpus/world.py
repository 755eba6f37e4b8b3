# The world the guest sees. sys.platform and os.name are in gap_platform.py.
import locale
import os
import sys

print("argv", sys.argv)
print("cwd", os.getcwd())
print("path", sys.path)
print("flags", sys.flags)
print("recursionlimit", sys.getrecursionlimit())
print("hash", hash(12345), hash(-1), hash(True), hash(None) == hash(None), hash("abc") == hash("abc"))
print("environ", sorted(os.environ.items()))
print("version_info", sys.version_info, sys.hexversion, sys.implementation.name)
print("version", sys.version.split()[0])
print("executable", sys.executable, "prefix", sys.prefix, sys.exec_prefix)
print("encodings", sys.getdefaultencoding(), sys.getfilesystemencoding(), sys.stdout.encoding, sys.stderr.encoding)
print("preferred", locale.getpreferredencoding(False), sys.flags.utf8_mode)
print("byteorder", sys.byteorder, "maxunicode", sys.maxunicode)
print("float", sys.float_info.dig, sys.float_info.mant_dig, sys.float_repr_style)
print("int", sys.int_info.bits_per_digit, sys.int_info.default_max_str_digits)
print("main", __name__, __file__, __spec__)
print("dont_write_bytecode", sys.dont_write_bytecode, "pycache_prefix", sys.pycache_prefix)
print("home", os.path.expanduser("~"), os.environ.get("HOME"))
print("stdin", sys.stdin is None or sys.stdin.read())
print("modules in sys.modules", sorted(m for m in sys.modules if m in ("agent_runtime", "echo", "notes", "files", "fail", "shape")))
print("warnoptions", sys.warnoptions, sys._xoptions)
