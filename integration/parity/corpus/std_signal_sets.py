# The signals a script can name, as both backends answer it. Natively
# signal.valid_signals() is glibc's full set (1 to 64 but 32 and 33, which
# glibc keeps for its threads), SIGRTMIN and SIGRTMAX are 34 and 64, and
# SIGCLD is SIGCHLD's other name. Under wazero none of the four existed
# (python/wasi/patches/python3.11/wasi-signal-sets.patch).
import signal

valid = signal.valid_signals()
print("valid", len(valid), sorted(int(s) for s in valid))
print("enum members", all(isinstance(s, signal.Signals) for s in valid if s < signal.SIGRTMIN))
print("realtime", int(signal.SIGRTMIN), int(signal.SIGRTMAX), signal.NSIG)
print("SIGCLD", int(signal.SIGCLD), signal.SIGCLD is signal.SIGCHLD)
print("names", sorted(s.name for s in signal.Signals))
caught = []
signal.signal(signal.SIGRTMIN + 1, lambda sig, frame: caught.append(sig))
signal.raise_signal(signal.SIGRTMIN + 1)
print("a real-time signal's handler ran", caught)
print("strsignal", [(int(s), signal.strsignal(s)) for s in sorted(valid)])
