# Platform widths that differ between x86-64 and wasm32.
import struct
import sys

print("maxsize", sys.maxsize)
print("pointer", struct.calcsize("P"), "long", struct.calcsize("l"), "size_t", struct.calcsize("n"))
print("id-is-small", id(object()) < 2**32)
