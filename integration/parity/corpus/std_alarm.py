# The interval timers: signal.alarm, setitimer and getitimer, and a
# SIGALRM handler, the usual way to bound a computation, and the CPU-time
# timers.
# Natively the kernel's; under wazero the host's, delivered where CPython
# checks for signals (internal/sandbox/wazero/itimer.go). Timings are
# checked with wide margins: the machine may be loaded.
import signal, time

class Expired(Exception):
    pass

def expire(signum, frame):
    raise Expired(signum)

print("alarm idle", signal.alarm(0))
print("alarm set", signal.alarm(100), "left", signal.alarm(0))
print("names", signal.ITIMER_REAL, signal.SIGALRM, issubclass(signal.ItimerError, OSError))

signal.signal(signal.SIGALRM, expire)

# A computation cut short.
signal.setitimer(signal.ITIMER_REAL, 0.05)
n = 0
try:
    while True:
        n += 1
except Expired as e:
    print("loop interrupted by", signal.Signals(e.args[0]).name, n > 0)
print("after firing", signal.getitimer(signal.ITIMER_REAL))

# A sleep cut short: the handler raises inside time.sleep.
t0 = time.monotonic()
signal.setitimer(signal.ITIMER_REAL, 0.05)
try:
    time.sleep(30)
    print("slept on")
except Expired:
    print("sleep interrupted", time.monotonic() - t0 < 10)

# A handler that returns: the sleep goes on to its end (PEP 475).
calls = []
signal.signal(signal.SIGALRM, lambda s, f: calls.append(s))
t0 = time.monotonic()
signal.setitimer(signal.ITIMER_REAL, 0.05)
time.sleep(0.4)
print("sleep resumed", time.monotonic() - t0 >= 0.4, calls)

# An interval timer, and what getitimer reads while it runs.
calls.clear()
signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
value, interval = signal.getitimer(signal.ITIMER_REAL)
print("armed", 0 < value <= 0.05, interval)
deadline = time.monotonic() + 1.0
while time.monotonic() < deadline and len(calls) < 3:
    time.sleep(0.01)
print("interval fired at least 3 times", len(calls) >= 3)
print("disarmed", signal.setitimer(signal.ITIMER_REAL, 0)[1], signal.getitimer(signal.ITIMER_REAL))
n = len(calls)
time.sleep(0.15)
print("no more after disarming", len(calls) == n)

# pause waits for the timer's signal. The timer must not fire before pause
# is entered (the signal would be handled and pause wait for ever, on both
# backends): half a second covers a guest slowed by a loaded host.
calls.clear()
signal.setitimer(signal.ITIMER_REAL, 0.5)
t0 = time.monotonic()
signal.pause()
print("pause returned after the handler", calls, time.monotonic() - t0 < 10)

# alarm's answer: whole seconds left, rounded to the nearest.
signal.setitimer(signal.ITIMER_REAL, 2.4)
print("alarm left", signal.alarm(0))
signal.setitimer(signal.ITIMER_REAL, 0.3)
print("alarm left under a second", signal.alarm(0))

# select and poll waits cut short, as sleeps: the handler raises inside
# the wait; a handler that returns lets the wait go on for what is left of
# its timeout (PEP 475); a wait of no time is never interrupted. asyncio's
# loop waits in the same calls.
import asyncio, select
signal.signal(signal.SIGALRM, expire)
for label, wait in [("select", lambda: select.select([], [], [], 30)),
                    ("poll", lambda: select.poll().poll(30000)),
                    ("asyncio", lambda: asyncio.run(asyncio.sleep(30)))]:
    t0 = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    try:
        wait()
        print(label, "waited on")
    except Expired:
        print(label, "interrupted", time.monotonic() - t0 < 10)
calls.clear()
signal.signal(signal.SIGALRM, lambda s, f: calls.append(s))
for label, wait in [("select", lambda: select.select([], [], [], 0.4)),
                    ("poll", lambda: select.poll().poll(400))]:
    t0 = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    print(label, "resumed", wait(), time.monotonic() - t0 >= 0.39, calls)
    calls.clear()
signal.setitimer(signal.ITIMER_REAL, 0.0001)
time.sleep(0.01)
print("zero timeouts", select.select([], [], [], 0), select.poll().poll(0), calls)
calls.clear()

# Ignored: nothing happens.
signal.signal(signal.SIGALRM, signal.SIG_IGN)
signal.setitimer(signal.ITIMER_REAL, 0.02)
time.sleep(0.1)
print("ignored")

# The CPU-time timers: SIGPROF after CPU time (user and system), and
# SIGVTALRM after user time, delivered while the script computes.
for which, sig in ((signal.ITIMER_PROF, signal.SIGPROF), (signal.ITIMER_VIRTUAL, signal.SIGVTALRM)):
    signal.signal(sig, expire)
    signal.setitimer(which, 0.05)
    value, interval = signal.getitimer(which)
    # Natively the kernel rounds a CPU-time timer up to its tick (0.054).
    print(signal.Signals(sig).name, "armed", 0 < value <= 0.06, interval)
    t0 = time.process_time()
    try:
        while True:
            pass
    except Expired as e:
        print(signal.Signals(e.args[0]).name, "after CPU", time.process_time() - t0 >= 0.03)
    print("after firing", signal.getitimer(which))
    signal.setitimer(which, 10)
    print("disarmed", 9 < signal.setitimer(which, 0)[0] <= 10.01, signal.getitimer(which))
    signal.signal(sig, signal.SIG_DFL)

for bad in (-1, float("nan")):
    try:
        signal.setitimer(signal.ITIMER_REAL, bad)
        print("bad", bad, "accepted")
    except (signal.ItimerError, ValueError, OverflowError) as e:
        print("bad", bad, type(e).__name__)
try:
    signal.setitimer(99, 1)
except signal.ItimerError as e:
    print("which 99", e.errno)
