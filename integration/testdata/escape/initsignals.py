# Signals to pid 1, the guest init (the pid namespace's init, the script
# its child): it forwards the catchable ones to the script, and no process of
# the guest can make it fail or change how the run ends by signalling it,
# even while the script exits. argv: none.
import signal
import time

got = []
signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
os.kill(1, signal.SIGTERM)
end = time.monotonic() + 10
while not got and time.monotonic() < end:
    time.sleep(0.01)
control("forwarded:SIGTERM", lambda: got == [signal.SIGTERM] or 1 / 0)

# An orphan floods pid 1 with SIGUSR1 (which the script ignores) until the
# run ends; the script then exits with status 3.
signal.signal(signal.SIGUSR1, signal.SIG_IGN)
r, w = os.pipe()
if os.fork() == 0:
    if os.fork() == 0:
        os.close(r)
        os.write(w, b"x")
        while True:
            try:
                os.kill(1, signal.SIGUSR1)
            except OSError:
                pass
    os._exit(0)
os.wait()
os.close(w)
os.read(r, 1)
time.sleep(0.1)
sys.exit(3)
