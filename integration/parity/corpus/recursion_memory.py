# Run with a 128 MiB memory limit: a script that raised the recursion
# limit out of reach and recursed until its memory ran out. Natively the
# cgroup's OOM killer ends it; under wazero the frame's allocation fails
# and CPython raises MemoryError (the WASI build keeps that error while
# the frames unwind: python/wasi/patches/python3.11/memory-exhausted-frames.patch;
# before, it was "SystemError: error return without exception set").
import sys

sys.setrecursionlimit(10**8)


def down(n):
    return down(n + 1) + 1


print("down", flush=True)
down(0)
