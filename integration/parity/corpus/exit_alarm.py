# A timer whose SIGALRM has its default action ends the process: natively
# the kernel kills it, an error killed_by_signal:SIGALRM, exit status 142,
# with what it wrote before; under wazero the WASI build raises SIGALRM
# where CPython checks for signals, and its raise ends the guest the same
# way (python/wasi/_apysup_signal.c).
import signal
import time

print("before", flush=True)
signal.alarm(1)
time.sleep(30)
print("after")
