# String and bytes operations under the interpreter, timed by the guest:
# milliseconds of 50 rounds of each. docs/parity.md, "Speed":
# apysup run [--backend wazero] integration/parity/testdata/string_ops.py
import time
s = ("abcdefghij" * 100000) + "Z"
b = s.encode()
u = ("é" * 1000 + "abc") * 100
ops = {
 "rfind_char": lambda: s.rfind("Q"),
 "brfind_char": lambda: b.rfind(b"Q"),
 "find_char": lambda: s.find("Z"),
 "in_sub": lambda: "hijZ" in s,
 "count": lambda: s.count("j"),
 "bytes_count": lambda: b.count(b"j"),
 "split": lambda: len(s.split("j")),
 "replace": lambda: len(s.replace("j", "JJ")),
 "upper": lambda: len(s.upper()),
 "encode": lambda: len(s.encode()),
 "decode": lambda: len(b.decode()),
 "u_encode": lambda: len(u.encode()),
 "strip": lambda: len(s.strip("aZ")),
 "join": lambda: len(",".join(s[i:i+10] for i in range(0, 100000, 10))),
 "int_str": lambda: [str(i) for i in range(20000)],
 "float_fmt": lambda: ["%.6f" % (i / 7) for i in range(20000)],
 "str_int": lambda: [int("12345") for i in range(20000)],
 "hash_new": lambda: [hash(s[i:i+20]) for i in range(0, 200000, 10)],
 "bytes_hex": lambda: b.hex(),
 "translate": lambda: s.translate({97: 98}),
}
res = []
for name, f in ops.items():
    t0 = time.perf_counter()
    for _ in range(50):
        f()
    res.append("%s=%.1f" % (name, (time.perf_counter() - t0) * 1000))
print(" ".join(res))
