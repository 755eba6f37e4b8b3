import time

t0, p0 = time.perf_counter(), time.process_time()
x = sum(i * i for i in range(300000))
t1, p1 = time.perf_counter(), time.process_time()
print("perf_counter advances:", t1 > t0)
print("process_time advances:", p1 > p0)
print("thread_time:", hasattr(time, "thread_time"))
info = time.get_clock_info("process_time")
print("process_time clock:", info.implementation)
