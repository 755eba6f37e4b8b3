# A script that ends with an uncaught KeyboardInterrupt: `python
# script.py` prints its traceback, then kills itself with SIGINT
# (exit_sigint in CPython's Modules/main.c), so that whoever started it
# sees the interrupt. Both backends: an error killed_by_signal:SIGINT,
# exit status 130, with the traceback on stderr.
import atexit

atexit.register(print, "atexit ran")
print("before", flush=True)
raise KeyboardInterrupt
