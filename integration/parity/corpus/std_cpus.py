# The machine's CPUs as a script that sizes a worker pool sees them: the
# host's online CPUs on both backends, all of them in the affinity (the
# run's CPU quota changes neither).
import multiprocessing
import os

n = os.cpu_count()
print("cpu_count", n, multiprocessing.cpu_count() == n)
cpus = os.sched_getaffinity(0)
print("affinity", type(cpus).__name__, len(cpus) == n, sorted(cpus) == list(range(n)))
print("own pid", os.sched_getaffinity(os.getpid()) == cpus)
for pid in (-1, 999999):
    try:
        os.sched_getaffinity(pid)
    except OSError as e:
        print(pid, type(e).__name__, e.errno, e.strerror)
for bad in ("0", 1.5, 2**40, -2**40, 2**70, None):
    try:
        os.sched_getaffinity(bad)
    except (TypeError, OverflowError) as e:
        print(type(e).__name__, e)
try:
    os.sched_getaffinity()
except TypeError as e:
    print(e)
print("exported", "sched_getaffinity" in os.__all__)
print(os.sched_getaffinity.__doc__)
print(os.sched_getaffinity.__text_signature__)
