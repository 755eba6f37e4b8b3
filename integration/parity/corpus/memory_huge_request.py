# Run with a 256 MiB memory limit: one request of 2 GiB, which wasm32
# cannot make at all (CPython refuses it before the memory is asked to
# grow). Natively it is granted and, filled, ends the guest at the limit;
# under wazero it was a plain MemoryError, the run an error, and is now
# the run's memory limit too (wasi-memory-refused.patch; the exit status
# and stderr differ as for memory.py).
import echo

print(echo.say(text="before the allocation"), flush=True)
x = bytearray((1 << 31) - 1)
print("allocated", len(x))
