# time.gmtime and time.localtime of times whose year passes 2**31 - 1900
# (C's tm_year is an int): the year is counted in 64 bits, as natively.
# Under wazero it was added in wasm32's 32-bit long and wrapped negative
# (python/wasi/patches/python3.11/wasi-wide-year.patch).
import time

for t in [67768036191676799, 67767976233532799, 67768036191676800 - 86400 * 366, -62135596800, 253402300799]:
    for f in (time.gmtime, time.localtime):
        try:
            print(f.__name__, t, tuple(f(t)))
        except (OverflowError, OSError, ValueError) as e:
            print(f.__name__, t, type(e).__name__, e)
