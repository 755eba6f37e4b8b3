# A byte other than 0 or 1 read as a native bool ('?' without a byte order,
# or '@', and memoryview's cast to '?'): natively any byte but 0 is True,
# and two such views compare byte for byte. Under wazero only the lowest
# bit counted (b"\x02" was False): reading a C _Bool that holds another
# value is undefined, and clang's wasm32 code differs from gcc's x86-64
# code (wasi-bool-bytes.patch).
import struct

raw = bytes(range(8)) + b"\x80\xfe\xff"
print("struct ?", [struct.unpack("?", bytes([b]))[0] for b in raw])
print("struct @?", struct.unpack("@11?", raw))
print("struct <?", struct.unpack("<11?", raw))
print("iter", [t[0] for t in struct.iter_unpack("?", raw)])
print("Struct", struct.Struct("3?").unpack(b"\x02\x03\x04"))
view = memoryview(raw).cast("?")
print("cast", view.tolist(), view[2], view[-2])
a = memoryview(b"\x02\x01\x00\x80").cast("?")
b = memoryview(b"\x01\x01\x00\x01").cast("?")
print("compare", a == b, a[0] == b[0], memoryview(b"\x02").cast("?") == memoryview(b"\x04").cast("?"))
print("pack", struct.pack("?", 2), struct.pack("3?", 0, 5, "x"), bytes(memoryview(bytearray(b"\x07")).cast("?")))
