# Platform widths that differ between x86-64 and wasm32.
import os
import struct
import sys

print("maxsize", sys.maxsize)
print("pointer", struct.calcsize("P"), "long", struct.calcsize("l"), "size_t", struct.calcsize("n"))
print("id-is-small", id(object()) < 2**32)
print("sysconf", *(os.sysconf(n) for n in ("SC_LONG_BIT", "SC_UINT_MAX", "SC_XBS5_ILP32_OFFBIG", "SC_XBS5_LP64_OFF64")))
