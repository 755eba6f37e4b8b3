# A script that raised the recursion limit and recursed through C until
# the C stack ran out: repr() of a list nested a million deep. Natively it
# dies of SIGSEGV; under wazero the same overflow traps in wasm, which the
# backend reports as the same death: an error killed_by_signal:SIGSEGV,
# exit status 139, with what it printed before.
import sys

sys.setrecursionlimit(10**6)
nested = []
for _ in range(10**6):
    nested = [nested]
print("built", flush=True)
print(len(repr(nested)))
