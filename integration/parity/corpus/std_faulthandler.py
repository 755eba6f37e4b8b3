# faulthandler's registration of a user signal: register, unregister
# (True when a handler was registered, False otherwise), and a traceback
# dumped to a file. Under wazero every unregister() ended the guest with
# SIGSEGV: the method is declared to take keywords, and WebAssembly traps
# on the mismatched call (python/wasi/patches/python3.11/
# wasi-faulthandler-unregister.patch).
import faulthandler
import signal
import sys

print("unregister before register:", faulthandler.unregister(signal.SIGUSR1))
faulthandler.register(signal.SIGUSR1, file=sys.stderr)
print("unregister after register:", faulthandler.unregister(signal.SIGUSR1))
print("unregister again:", faulthandler.unregister(signal.SIGUSR1))
print("SIGKILL, never registered:", faulthandler.unregister(signal.SIGKILL))
try:
    faulthandler.unregister()
except TypeError as e:
    print("no signal:", e)

faulthandler.enable()
print("enabled:", faulthandler.is_enabled())
faulthandler.disable()
print("disabled:", faulthandler.is_enabled())


def inner():
    with open("fh_dump.txt", "w") as f:
        faulthandler.dump_traceback(file=f, all_threads=False)


inner()
with open("fh_dump.txt") as f:
    print([line.split(", line")[0].strip() for line in f.read().splitlines()][:3])
