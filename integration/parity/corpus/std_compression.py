# lzma and bz2 (built from Debian's xz-utils and bzip2 sources under WASI),
# and CPython's own test module _testcapi, as Debian's libpython3.11-stdlib
# ships it.
import bz2
import lzma
import os
import zlib

import _testcapi

data = b"apysup parity " * 500
for mod in (zlib, lzma, bz2):
    packed = mod.compress(data)
    print(mod.__name__, len(packed) < len(data), mod.decompress(packed) == data)
print("xz", lzma.compress(b"abc", format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64).hex()[:24])
print("bz2", bz2.compress(b"abc").hex())
with lzma.open("x.xz", "wb", check=lzma.CHECK_SHA256) as f:
    f.write(data)
with lzma.open("x.xz") as f:
    print("xz file", f.read() == data)
with bz2.open("x.bz2", "wt", encoding="utf-8") as f:
    f.write("text é")
with bz2.open("x.bz2", "rt", encoding="utf-8") as f:
    print("bz2 file", f.read())
os.remove("x.xz")
os.remove("x.bz2")
print("_testcapi", _testcapi.INT_MAX, _testcapi.UINT_MAX)
