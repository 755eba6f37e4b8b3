# A script that ends by a signal it sends itself. Natively it dies of
# SIGTERM: an error killed_by_signal:SIGTERM, exit status 143, with what it
# wrote before. Under wazero WASI has no signals; the WASI build's raise
# ends the guest the same way (python/wasi/_apysup_signal.c).
import os
import signal
import sys

print("before", flush=True)
sys.stderr.write("on stderr\n")
sys.stderr.flush()
os.kill(os.getpid(), signal.SIGTERM)
print("after")
