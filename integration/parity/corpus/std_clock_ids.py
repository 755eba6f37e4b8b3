# The clocks a script can name or number: the time module's CLOCK_
# constants are Linux's ids, and every clock Linux has reads (or answers
# EINVAL) as natively, with the same resolution. Under wazero the time
# module had only WASI's four clocks (python/wasi/_apysup_flags.c,
# internal/sandbox/wazero/wasiclock.go).
import time

print(sorted((n, getattr(time, n)) for n in dir(time) if n.startswith("CLOCK_")))
for clock in range(-1, 14):
    try:
        res = time.clock_getres(clock)
        before = time.clock_gettime_ns(clock)
        after = time.clock_gettime_ns(clock)
        print(clock, "resolution", res, "reads forward:", after >= before > 0)
    except OSError as e:
        print(clock, "errno", e.errno)

raw = time.clock_gettime(time.CLOCK_MONOTONIC_RAW)
mono = time.clock_gettime(time.CLOCK_MONOTONIC)
boot = time.clock_gettime(time.CLOCK_BOOTTIME)
print("raw and monotonic within a second:", abs(raw - mono) < 1)
print("boottime at least monotonic:", boot >= mono - 0.01)
tai = time.clock_gettime(time.CLOCK_TAI) - time.time()
print("TAI - UTC, seconds:", round(tai))
