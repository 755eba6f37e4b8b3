# time.sleep, which CPython 3.11 implements with clock_nanosleep(TIMER_ABSTIME)
# where the platform has it.
import time

t0 = time.monotonic()
time.sleep(0.01)
print("slept at least 10 ms:", time.monotonic() - t0 >= 0.01)
time.sleep(0)
print("sleep(0) returned")
