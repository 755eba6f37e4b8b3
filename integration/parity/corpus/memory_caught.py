# Run with a 256 MiB memory limit: one allocation too large for it, caught.
try:
    big = bytearray(1 << 30)
    big[::4096] = b"x" * (1 << 18)
    print("allocated 1 GiB")
except MemoryError:
    print("MemoryError")
print("still running")
