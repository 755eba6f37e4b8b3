# str and bytes hashes are randomised on both backends (-I ignores
# PYTHONHASHSEED); Py_hash_t is 64 bits natively, 32 under wasm32.
import sys

h = hash("abc")
print("hash_randomization", sys.flags.hash_randomization)
print("stable within the run", h == hash("abc"), hash(b"abc") == h)
print("width", sys.hash_info.width)
print("modulus", sys.hash_info.modulus, "algorithm", sys.hash_info.algorithm)
print("hash(2.5)", hash(2.5), "hash((1, 2))", hash((1, 2)))
# What follows for a script: a set iterates in an order its members'
# hashes decide, so a set of members that hash differently on the two
# backends (floats, integers beyond 2**31, tuples) may print in another
# order: these tuples do. Small integers hash alike.
print("set of tuples", list({(1, 2), (3, 4), (5, 6), (7, 8)}))
print("set of small ints", list({5, 1, 4, 2, 3}))
