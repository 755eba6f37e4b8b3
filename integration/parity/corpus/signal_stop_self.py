# A script that stops itself. SIGTSTP, SIGTTIN and SIGTTOU do nothing on
# both backends: the kernel discards them for a process whose group is
# orphaned, as the guest's is. SIGSTOP stops it for good: nothing in the
# sandbox can continue it, so the run ends at its timeout (a timer armed
# before, whose signal would end the script, never fires into it). Under
# wazero SIGSTOP did nothing and the script ended ok
# (python/wasi/_apysup_signal.c).
import os
import signal

for sig in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
    os.kill(os.getpid(), sig)
    print(sig.name, "ignored", flush=True)
signal.alarm(1)
os.kill(os.getpid(), signal.SIGSTOP)
print("continued")
