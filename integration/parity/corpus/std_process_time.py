import os
import time

t0, p0 = time.perf_counter(), time.process_time()
x = sum(i * i for i in range(300000))
t1, p1 = time.perf_counter(), time.process_time()
print("perf_counter advances:", t1 > t0)
print("process_time advances:", p1 > p0)
# Seconds of the interpreter's CPU, of the order of the wall clock's (under
# wazero the clock once counted nanoseconds as ticks: 10**7x). Not bounded
# by it: natively the process's other threads count too.
print("process_time in seconds:", 0 < p1 - p0 < 10 * (t1 - t0) + 0.1)
print("process_time since the start under a minute:", 0 < p1 < 60)
tms, p2 = os.times(), time.process_time()
print("os.times in seconds of CPU:", 0 <= tms.user + tms.system <= p2 + 0.02)
print("os.times children:", tms.children_user, tms.children_system)
print("os.times elapsed advances:", os.times().elapsed >= tms.elapsed > 0)
# The guest's one thread's CPU time is the process's (under wazero since
# wasi-thread-time.patch).
th0 = time.thread_time()
x = sum(i * i for i in range(300000))
th1, thn = time.thread_time(), time.thread_time_ns()
print("thread_time advances:", 0 < th1 - th0 < 10, thn >= int(th1 * 1e9) - 1000)
for name in ("process_time", "thread_time", "time", "monotonic", "perf_counter"):
    info = time.get_clock_info(name)
    print(name, "clock:", info.implementation, info.resolution)
print("CPU clocks:", [time.clock_gettime(getattr(time, c)) > 0 for c in ("CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID")])
