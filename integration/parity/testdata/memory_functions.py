# Memory functions under the interpreter, timed by the guest: CPU seconds of
# 500 copies of 1 MiB of bytes and of a 1 MiB str, 500 list copies of
# 100,000 items, 500 comparisons of two equal 1 MiB bytes, 200 zeroed 1 MiB
# bytearrays. docs/parity.md, "Speed":
# apysup run [--backend wazero] integration/parity/testdata/memory_functions.py
import time
b = bytes(1 << 20)
t0 = time.process_time()
for i in range(500):
    c = b[1:]
t1 = time.process_time()
s = "x" * (1 << 20)
for i in range(500):
    d = s[1:] + "y"
t2 = time.process_time()
l = list(range(100000))
for i in range(500):
    m = l[:]
t3 = time.process_time()
x = b"a" * (1 << 20); y = b"a" * (1 << 20)
for i in range(500):
    x == y
t4 = time.process_time()
for i in range(200):
    bytearray(1 << 20)
t5 = time.process_time()
print("memcpy %.3f strcopy %.3f listcopy %.3f memcmp %.3f memset %.3f" % (t1-t0, t2-t1, t3-t2, t4-t3, t5-t4))
