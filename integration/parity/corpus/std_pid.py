# The guest's process ids: natively pid 10 of the sandbox's pid namespace,
# the child of its init (pid 1), in init's process group and session, at
# every run (the init takes the pids below 10; the guest was pid 6, and at
# times 7 under load, before it did).
# Under wazero wasi-libc's emulated getpid answered 42;
# python/wasi/_apysup_host.c answers the native guest's pid. logging's
# %(process)d and os.kill's own-pid check read it.
import logging
import os
import signal
import sys

print(os.getpid(), os.getppid(), os.getpgrp(), os.getpgid(0), os.getsid(0))
print(os.getpgid(os.getpid()), os.getsid(os.getpid()))
os.kill(os.getpid(), 0)  # the guest itself: no error
try:
    os.kill(os.getpid() + 1, 0)
except OSError as e:
    print("next pid", e.errno)
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("%(process)d %(processName)s %(levelname)s %(message)s"))
log = logging.getLogger("pid")
log.addHandler(handler)
log.warning("logged")
print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
