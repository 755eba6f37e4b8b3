# os.nice and os.getloadavg as a script sees them: Linux's rules for a
# process without CAP_SYS_NICE (its niceness raised, never lowered,
# clamped at 19) and the machine's load (three non-negative floats).
import os

print("nice", os.nice(0), os.nice(3), os.nice(0))
for inc in (-1, -100):
    try:
        os.nice(inc)
    except OSError as e:
        print(inc, type(e).__name__, e.errno, e.strerror)
print("nice", os.nice(100), os.nice(0), os.nice(5))
for bad in ("1", 1.5, None):
    try:
        os.nice(bad)
    except TypeError as e:
        print(type(e).__name__, e)
avg = os.getloadavg()
print("loadavg", type(avg).__name__, len(avg), all(isinstance(x, float) and x >= 0 for x in avg))
try:
    os.getloadavg(1)
except TypeError as e:
    print(e)
print("exported", "nice" in os.__all__, "getloadavg" in os.__all__)
