# The C library's memory functions under the interpreter: comparisons
# (memcmp: bytes and str ordering, equality, prefixes), copies (memcpy:
# slices, concatenation, joins), overlapping moves (memmove: bytearray
# slice assignment, deletion, insertion), fills (memset: zeroed
# buffers) and searches for a character (memchr, memrchr: find, rfind,
# index, count, split, partition, in). Pairs differ at every position of
# every length up to 40, by bytes on both sides of 0x80 (memcmp compares
# unsigned chars).
import hashlib

h = hashlib.sha256()
signs = []
for n in range(41):
    base = bytes((i * 37 + 11) % 256 for i in range(n))
    for pos in range(n):
        for new in (0x00, 0x7F, 0x80, 0xFF, base[pos] ^ 1):
            other = bytearray(base)
            other[pos] = new
            other = bytes(other)
            got = (base < other, base == other, base > other, base <= other)
            s = (other > base) - (other < base)
            signs.append(s)
            h.update(repr((n, pos, new, got)).encode())
            t1, t2 = base.decode("latin-1"), other.decode("latin-1")
            if (t1 < t2) != got[0] or (t1 == t2) != got[1]:
                print("str and bytes disagree", n, pos, new)
    h.update(repr((base.startswith(base[: n // 2]), base.endswith(base[n // 2 :]), base[:n] + b"" == base)).encode())
print("comparisons", len(signs), signs.count(-1), signs.count(0), signs.count(1), h.hexdigest()[:16])

words = ["%s%04d" % (p, (i * 7919) % 4999) for i, p in enumerate(("alpha", "alp", "alphabet", "\xe9t\xe9", "z") * 200)]
print("sorted", hashlib.sha256("\n".join(sorted(words)).encode()).hexdigest()[:16], sorted(words)[:3], sorted(words)[-2:])
print("sets", len(set(words)), len({w.encode("latin-1") for w in words}))

blob = bytes(range(256)) * 64
h = hashlib.sha256()
for k in (0, 1, 7, 8, 9, 255, 4096, 16383):
    turned = blob[k:] + blob[:k]
    h.update(turned)
    h.update(b"".join([turned[: k + 1]] * 5))
    h.update(bytes(memoryview(turned)[k // 2 :]))
print("copies", h.hexdigest()[:16], blob[3:] + blob[:3] == blob, (blob[3:] + blob[:3])[-3:])

buf = bytearray(range(200))
buf[1:] = buf[:-1]          # overlapping, forward
buf[:-3] = buf[3:]          # overlapping, backward
del buf[10:20]
buf[5:5] = b"inserted"
buf[50:60] = buf[40:70]
print("moves", len(buf), hashlib.sha256(buf).hexdigest()[:16], bytes(buf[:12]))

zero = bytearray(100000)
print("fills", zero.count(0), bytes(7), b"\x00" * 3 == bytes(3), len(b"ab" * 50000), bytearray(b"xyz") * 2)
zero[10:20] = b"\xff" * 10
print("fills after a write", zero.count(0), zero.find(b"\xff"), zero.rfind(b"\xff"))

# Searches for one character from either end (memchr, memrchr): every start
# offset near the front meets every alignment of the search's first load.
text = "".join(chr(97 + (i * i) % 23) for i in range(5000)) + "\u00e9" + "xyz" * 10
raw = text.encode("latin-1")
h = hashlib.sha256()
for ch in "aqjv\u00e9z":
    for start in range(0, 40):
        h.update(repr((text.find(ch, start), text.rfind(ch, start), text.rfind(ch, 0, 4000 - start),
                       raw.find(ch.encode("latin-1"), start), raw.rfind(ch.encode("latin-1"), start))).encode())
print("searches", h.hexdigest()[:16], text.find("\u00e9"), text.rfind("a"), raw.rindex(b"j"), text.count("q"),
      len(text.split("k")), text.rpartition("b")[2][:8], "\u00e9xy" in text)
