# str and bytes hashes are randomised on both backends (-I ignores
# PYTHONHASHSEED); Py_hash_t is 64 bits natively, 32 under wasm32.
import sys

h = hash("abc")
print("hash_randomization", sys.flags.hash_randomization)
print("stable within the run", h == hash("abc"), hash(b"abc") == h)
print("width", sys.hash_info.width)
print("modulus", sys.hash_info.modulus, "algorithm", sys.hash_info.algorithm)
print("hash(2.5)", hash(2.5), "hash((1, 2))", hash((1, 2)))
